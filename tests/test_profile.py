"""The profile (core memory, issue 36): the user's standing instructions, preferences and facts
about themselves, found by the dreams (offline rules, or a model through the ``profile`` prompt),
kept current per golem (a later entry on the same thing supersedes the earlier, which keeps when it
held), ranked by recall, listed by ``oneiros memory --profile``, carried by the wake-up report and
put first in the memory block."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, SequentialIds, open_store
from oneiros.app._oneiros import Oneiros
from oneiros.cli import app as cli
from oneiros.events._observations import DreamObservation
from oneiros.events._types import Episode
from oneiros.generators._lines import said_lines
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._protocol import GenerationRequest, TaskInputs
from oneiros.lab._quality import flaws
from oneiros.settings._prompts import PromptSet
from tests.chat_server import HARDENED, ChatServer
from tests.test_content_openai import _generator

_DAY = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _turn(tick: int, text: str, speaker: str = "user", day: int = 0) -> Episode:
    return Episode(tick=tick, summary=text, speaker=speaker, time=_DAY + timedelta(days=day, minutes=tick))


def _offline_profile(episodes: list[Episode]) -> list[dict[str, object]]:
    prompt = PromptSet().render("profile", episodes=said_lines(episodes))
    given = TaskInputs(episodes=tuple(episodes))
    request = GenerationRequest(call_key="c:nrem:profile:0", phase="nrem", task="profile", prompt=prompt, given=given)
    found: list[dict[str, object]] = json.loads(OfflineGenerator().generate(request).text)["profile"]
    return found


def test_the_offline_rules_find_instructions_preferences_and_who_the_user_is_never_the_assistants_words() -> None:
    """From a user's markdown turn: an "always" instruction in their words, a preference and an
    identity fact in grammatical third person, each keyed and naming its turn; the assistant's
    "I prefer" and "always" give nothing; every entry is a whole, clean sentence."""
    user = _turn(
        1,
        "I'm a data engineer at a bank.\n\n- Always use type hints in Python examples.\n"
        "- I prefer **Polars** over pandas.\nCan you help?",
    )
    assistant = _turn(2, "I prefer to explain first. Always test your code.", speaker="assistant")
    entries = _offline_profile([user, assistant])
    assert [(e["kind"], e["key"], e["text"], e["ticks"]) for e in entries] == [
        ("identity", "identity", "User is a data engineer at a bank.", [1]),
        ("instruction", "instruction:use type", "User's instruction: Always use type hints in Python examples.", [1]),
        ("preference", "preference:polars pandas", "User prefers Polars over pandas.", [1]),
    ]
    assert not any(flaws(str(e["text"])) for e in entries)


def test_a_when_i_ask_instruction_is_keyed_by_its_condition() -> None:
    """ "When I ask about X, do Y" is an instruction about X: a later one on X shares its key."""
    first = _offline_profile([_turn(1, "When I ask about deployments, list the rollback steps first.")])
    later = _offline_profile([_turn(9, "When I ask about deployments, include the canary plan.")])
    assert first[0]["key"] == later[0]["key"] == "instruction:deployments"


def _app(tmp_path: Path) -> Oneiros:
    app = Oneiros(f"sqlite:///{tmp_path}/events.db")
    app.create_golem("g")
    return app


def test_a_later_instruction_supersedes_the_earlier_which_keeps_when_it_held(tmp_path: Path) -> None:
    """Two dreams, the second over a turn that says the opposite on the same thing: the profile
    holds the new entry, the history the old one with when it held and what replaced it; recall
    finds the current one (the superseded one is no longer indexed); the report carries the profile
    and the memory block opens with it."""
    with _app(tmp_path) as app:
        app.record_episodes("g", [_turn(1, "Always use tabs for indentation."), _turn(2, "Sounds good.", "assistant")])
        app.dream("g")
        app.record_episodes("g", [_turn(3, "Never use tabs for indentation, spaces only.", day=3)])
        app.dream("g")
        current = app.profile("g")
        every = app.profile("g", history=True)
        assert [(p.text, p.source_ticks, p.current) for p in current] == [
            ("User's instruction: Never use tabs for indentation, spaces only.", (3,), True)
        ]
        old = next(p for p in every if not p.current)
        assert (old.text, old.superseded_by, old.until) == (
            "User's instruction: Always use tabs for indentation.",
            current[0].ref,
            current[0].since,
        )
        assert old.since is not None
        assert old.until is not None
        assert old.since < old.until
        ranked = app.recall("g", "which indentation tabs?", record=False).ranking()
        profile_refs = {p.ref for p in every}
        assert [i.ref for i in ranked if i.ref in profile_refs] == [current[0].ref]
        assert app.report("g").profile == current
        block = app.memory_block("g", "indentation")
        assert block.text.startswith(
            "## Who I work for (profile)\n"
            "- User's instruction: Never use tabs for indentation, spaces only. (2026-03-05"
        )


def test_oneiros_memory_profile_lists_it(tmp_path: Path) -> None:
    """`oneiros memory --golem g --profile` prints each entry in force with its day, key and turns;
    --json answers the same entries as the Python read."""
    store = f"sqlite:///{tmp_path}/events.db"
    with _app(tmp_path) as app:
        app.record_episodes("g", [_turn(1, "My project uses Django 4.2 and Postgres.")])
        app.dream("g")
        expected = app.profile("g")
    runner = CliRunner()
    shown = runner.invoke(cli, ["memory", "--golem", "g", "--profile", "--store", store])
    assert shown.exit_code == 0, shown.output
    assert "2026-03-02 [project] User's project uses Django 4.2 and Postgres. (1)" in shown.output
    as_json = runner.invoke(cli, ["memory", "--golem", "g", "--profile", "--json", "--store", store])
    assert [e["ref"] for e in json.loads(as_json.output)] == [e.ref for e in expected]


def test_a_models_profile_comes_through_the_versioned_prompt(chat_server: ChatServer) -> None:
    """With a model, the user's turns go to the profile prompt (the assistant's do not), and its
    answer becomes profile entries naming only ticks it was shown, keyed by kind and what they are about."""
    golems = Golems(
        open_store("memory://"),
        deps=Deps(clock=FixedClock(datetime(2026, 3, 9, tzinfo=UTC)), ids=SequentialIds(), seed=3),
    )
    golems.create("g")
    reply = _turn(2, "Bien sûr, je répondrai en français.", "assistant")
    golems.record_episodes("g", [_turn(1, "Answer me in French from now on."), reply])
    said = {"text": "The user wants answers in French.", "key": "language", "kind": "instruction", "ticks": [1, 2, 77]}
    chat_server.replies = {"what the user stands by": json.dumps({"profile": [said]})}
    InProcessExecutor(golems, _generator(chat_server), settings=HARDENED).run_cycle("g")
    prompts = [r["messages"][-1]["content"] for r in chat_server.requests]
    asked = [p for p in prompts if "what the user stands by" in p]
    assert len(asked) == 1
    assert "Bien sûr" not in asked[0]
    made = [
        r.event
        for r in golems.store.read_stream("g", types=(DreamObservation,))
        if isinstance(r.event, DreamObservation) and r.event.kind == "profile"
    ]
    assert [(o.text, o.key, o.source_episode_ticks) for o in made] == [
        ("The user wants answers in French.", "instruction:language", (1,))
    ]


def test_a_long_tool_output_leaves_the_night_to_what_was_said(tmp_path: Path) -> None:
    """A coding session's tool output (tens of KB, in parts) is a record of work, not a statement:
    the night's observations skip it, so the budget reaches the user's instruction, which becomes a
    profile entry; no observation restates the output."""
    with Oneiros(f"sqlite:///{tmp_path}/events.db") as app:
        app.create_golem("me")
        output = "PASSED tests/test_api.py::test_list\n" * 400
        app.record_episodes(
            "me",
            [
                Episode(
                    tick=1, summary="Always use type hints in the Python you write for me.", speaker="user", time=_DAY
                ),
                Episode(tick=2, summary="Bash pytest -q", speaker="assistant", time=_DAY, tags=("tool-call", "bash")),
                *(
                    Episode(
                        tick=3 + n,
                        summary=output,
                        speaker="tool",
                        source="tool",
                        time=_DAY,
                        tags=("tool-result", "bash"),
                    )
                    for n in range(3)
                ),
            ],
        )
        app.dream("me")
        assert ["Always use type hints"] == [e.text.split(": ", 1)[-1][:21] for e in app.profile("me")]
        assert not [o for o in app.observations("me").items if "PASSED" in o.text]
