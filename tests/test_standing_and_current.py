"""What the user stands by and which value is current, in recall (issue 36): a preference said in
passing inside a long request becomes a profile entry; an instruction whose condition a question
matches ranks first; a turn whose preference is in force weighs more; of two values on the same
thing the later comes first and names what it replaced; all of it set from ``[recall]``."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oneiros.app._oneiros import Oneiros
from oneiros.config._load import load_config
from oneiros.events._types import Episode
from oneiros.generators._lines import said_lines
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._protocol import GenerationRequest, TaskInputs
from oneiros.lab._quality import flaws
from oneiros.projections._current import current_order
from oneiros.settings._prompts import PromptSet
from oneiros.settings._recall import RecallSettings

_DAY = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _turn(tick: int, text: str, speaker: str = "user", day: int = 0) -> Episode:
    return Episode(tick=tick, summary=text, speaker=speaker, time=_DAY + timedelta(days=day, minutes=tick))


def _offline_profile(episodes: list[Episode]) -> list[dict[str, object]]:
    prompt = PromptSet().render("profile", episodes=said_lines(episodes))
    given_ = TaskInputs(episodes=tuple(episodes))
    request = GenerationRequest(call_key="c:nrem:profile:0", phase="nrem", task="profile", prompt=prompt, given=given_)
    found: list[dict[str, object]] = json.loads(OfflineGenerator().generate(request).text)["profile"]
    return found


def test_a_preference_said_in_passing_inside_a_long_request_is_a_profile_entry() -> None:
    """The clause "so I prefer X" inside a long request becomes "User prefers X." (cut where the
    request resumes, ", rather than ..." kept with it); "like I prefer" names nothing and gives
    nothing; an assistant's preference in passing gives nothing."""
    long_request = (
        "I'm trying to keep my weather app under 2.5MB, so I prefer lightweight, dependency-free solutions "
        "over heavy frameworks, rather than big libraries, can you help me implement a simple cache for API "
        "responses without any external library, maybe something with localStorage?"
    )
    entries = _offline_profile(
        [
            _turn(1, long_request),
            _turn(2, "I'm adding video samples to my portfolio like I prefer, can you help?"),
            _turn(3, "Sure, and since I prefer short answers, here it is.", speaker="assistant"),
        ]
    )
    assert [(e["kind"], e["text"], e["ticks"]) for e in entries] == [
        (
            "preference",
            "User prefers lightweight, dependency-free solutions over heavy frameworks, rather than big libraries.",
            [1],
        )
    ]
    assert not any(flaws(str(e["text"])) for e in entries)


def _app(tmp_path: Path, settings: RecallSettings | None = None) -> Oneiros:
    settings = settings or RecallSettings()
    (tmp_path / "oneiros.toml").write_text(
        f"[recall]\ninstructions = {settings.instructions}\nprofile_weight = {settings.profile_weight}\n"
    )
    app = Oneiros(f"sqlite:///{tmp_path}/events.db", config=load_config(tmp_path / "oneiros.toml"))
    app.create_golem("g")
    return app


_CHAT = [
    _turn(1, "Always include version numbers when I ask about software dependencies or libraries used."),
    _turn(2, "Never use emoji when I ask about release notes."),
    *(
        _turn(3 + n, f"The project uses library number {n} in this project, a project library we used for charts.")
        for n in range(12)
    ),
]


def test_an_instruction_whose_condition_the_question_matches_ranks_first(tmp_path: Path) -> None:
    """Asked which libraries the project uses, the instruction on "libraries used" ranks first though
    a dozen turns match more of the question's words; the instruction on release notes, whose
    condition the question does not match, is not put first; with ``instructions = 0`` nothing is."""
    question = "Which libraries are used in this project?"
    with _app(tmp_path) as app:
        app.record_episodes("g", _CHAT)
        app.dream("g")
        first = app.recall("g", question, 5, record=False).ranking()[0]
        assert (first.kind, first.source_ticks) == ("profile", (1,))
        assert "version numbers" in first.text
        ranked = app.recall("g", "What do the release notes say?", 5, record=False).ranking()
        assert ranked[0].source_ticks == (2,)
    (tmp_path / "off").mkdir()
    with _app(tmp_path / "off", RecallSettings(instructions=0)) as app:
        app.record_episodes("g", _CHAT)
        app.dream("g")
        assert app.recall("g", question, 5, record=False).ranking()[0].source_ticks != (1,)


def test_a_turn_whose_preference_is_in_force_weighs_more_as_the_setting_says(tmp_path: Path) -> None:
    """Two turns that match a question alike: with ``profile_weight`` 3 the one stating a preference
    in force ranks above the other, whatever their order in the log; with 1 the weight changes nothing."""
    chat = [
        _turn(1, "For the cache of the weather app I set a limit of fifty entries in memory today."),
        _turn(2, "For the cache of the weather app, I prefer an in-memory map over localStorage."),
    ]
    question = "How should the weather app cache work?"
    places = {}
    for weight in (1.0, 3.0):
        where = tmp_path / str(weight)
        where.mkdir()
        with _app(where, RecallSettings(profile_weight=weight)) as app:
            app.record_episodes("g", chat)
            app.dream("g")
            ranked = app.recall("g", question, 5, record=False).ranking()
            places[weight] = {t: i.rank for i in ranked for t in i.source_ticks}
            plain = app.recall("g", question, 5, record=False).ranking()
            assert [i.ref for i in plain] == [i.ref for i in ranked]
    assert places[3.0][2] < places[3.0][1]
    assert places[3.0][2] <= places[1.0][2]


def test_the_later_value_on_the_same_thing_ranks_first_and_names_what_it_replaced(tmp_path: Path) -> None:
    """ "The sprint deadline is April 1" then, days later, "the new sprint deadline is April 5": asked
    for the sprint deadline, the later turn comes first though the earlier matches more words, and
    says which item it replaced; an assistant's later restatement moves nothing."""
    chat = [
        _turn(1, "The deadline for the first sprint, the sprint on layout, is April 1: a first deadline."),
        _turn(2, "Noted.", speaker="assistant"),
        _turn(
            3, "After a long planning call with the whole team, the new deadline of the first sprint is April 5.", day=9
        ),
        _turn(4, "As discussed, the first sprint deadline is now April 9.", "assistant", day=12),
    ]
    with _app(tmp_path) as app:
        app.record_episodes("g", chat)
        ranked = [i for i in app.recall("g", "What is the deadline of the first sprint?", record=False).ranking()]
        ticks = [i.source_ticks for i in ranked]
        assert ticks.index((3,)) < ticks.index((1,))
        later = ranked[ticks.index((3,))]
        assert later.replaces == ranked[ticks.index((1,))].ref
        assert ticks.index((1,)) < ticks.index((4,)) or ranked[ticks.index((4,))].replaces is None


_stated = st.tuples(
    st.sampled_from(
        ["the deadline is now April 5", "the deadline is April 1", "we talked about cats", "new deadline 7"]
    ),
    st.one_of(st.none(), st.sampled_from(["2026-03-01T09:00:00+00:00", "2026-03-05T09:00:00+00:00"])),
    st.floats(min_value=0.1, max_value=10.0),
    st.booleans(),
)


@given(st.lists(_stated, max_size=8))
def test_current_order_only_reorders_and_names_an_earlier_statement(
    items: list[tuple[str, str | None, float, bool]],
) -> None:
    """Whatever the items, the new order is a permutation of them, and an item moved up names an
    item that was said before it, on which it was put."""
    order = current_order(items, ["deadlin"], {"deadlin": 1.0})
    assert sorted(n for n, _ in order) == list(range(len(items)))
    for place, (n, replaced) in enumerate(order):
        if replaced is not None:
            earlier, later = items[replaced][1], items[n][1]
            assert earlier is not None
            assert later is not None
            assert earlier < later
            assert [m for m, _ in order].index(replaced) > place


def test_recall_settings_come_from_the_config_file_and_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``[recall]`` in oneiros.toml sets recall's ranking, ``ONEIROS_RECALL__*`` overrides it, and an
    unknown key is refused by name."""
    path = tmp_path / "oneiros.toml"
    path.write_text("[recall]\nprofile_weight = 2.5\ninstructions = 1\n")
    assert load_config(path).recall == RecallSettings(profile_weight=2.5, instructions=1)
    monkeypatch.setenv("ONEIROS_RECALL__INSTRUCTIONS", "3")
    assert load_config(path).recall.instructions == 3
    path.write_text("[recall]\nprofile_wieght = 2.5\n")
    with pytest.raises(Exception, match="profile_wieght"):
        load_config(path)
