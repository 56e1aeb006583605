"""Consolidation with no model: what a night's episodes become (dated facts, answers with their
questions, shared images, salient episodes whole, threads across nights), which episodes a night
is, and what each output names as its sources."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, SequentialIds, open_store
from oneiros._errors import InvalidSetting
from oneiros.episodes._fold import EpisodeMemory
from oneiros.events._content import DreamStaged
from oneiros.events._observations import DreamObservation
from oneiros.events._types import Episode, GenerationRecorded, SharedImage
from oneiros.generators._lines import said_lines
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._prose import resolve_dates, third_person
from oneiros.generators._protocol import GenerationRequest, TaskInputs
from oneiros.runtime._golem_log import GolemLog, GolemLogs
from oneiros.settings._cycle import ConsolidationSettings, CycleSettings, EngineSettings
from oneiros.settings._prompts import PromptSet

_SPOKEN = datetime(2026, 11, 24, 9, 30, tzinfo=UTC)


def _observe(
    episodes: Sequence[Episode], before: Episode | None = None, salient: float = 0.7
) -> list[dict[str, object]]:
    """What the offline generator answers an observe step over ``episodes``."""
    prompt = PromptSet().render("observe", episodes=said_lines(episodes, before), salient=salient, sources=2)
    given = TaskInputs(episodes=tuple(episodes), before=before, salient=salient)
    request = GenerationRequest(call_key="c:nrem:observe:0", phase="nrem", task="observe", prompt=prompt, given=given)
    found: list[dict[str, object]] = json.loads(OfflineGenerator().generate(request).text)["observations"]
    return found


def test_relative_dates_become_absolute_from_the_day_they_were_said() -> None:
    """'yesterday', 'last week', 'last year', 'two days ago', 'next month' and 'last Friday' name the
    day, week, month or year counted from the day the sentence was said; only single days are returned."""
    said = date(2026, 11, 24)  # a Tuesday
    text, days, resolved = resolve_dates(
        "I went yesterday, again two days ago and last Friday; last week was long, last year too, and next month",
        said,
    )
    assert (
        "I went on 23 November 2026, again on 22 November 2026 and on 20 November 2026; the week before "
        "24 November 2026 was long, in 2025 too, and in December 2026"
    ) == text
    assert [date(2026, 11, 23), date(2026, 11, 22), date(2026, 11, 20)] == days
    assert 6 == resolved


@given(st.text(alphabet=st.sampled_from("abcxyz .,!?"), max_size=80))
def test_text_without_relative_dates_comes_back_as_it_was(text: str) -> None:
    """A sentence that names no time relative to when it was said is left exactly as it was."""
    assert (text, [], 0) == resolve_dates(text, date(2026, 11, 24))


def test_first_person_becomes_the_speaker_and_the_golem_needs_no_subject() -> None:
    """A speaker's 'I', 'my' and 'are you' name the speaker and the other party; the golem's own
    record drops a leading 'I'."""
    assert "Is Nate going? Joanna's dog is sure." == third_person("Are you going? My dog is sure.", "Joanna", "Nate")
    assert "Rolled back the deploy on 23 November 2026" == third_person(
        "I rolled back the deploy on 23 November 2026", None
    )


def test_a_coding_agents_dated_sentence_becomes_a_dated_fact_of_its_own() -> None:
    """'I rolled back the deploy yesterday', the golem's own episode, becomes a fact opening with
    the day it was said, its date absolute, with no subject, naming its one episode and the day."""
    episode = Episode(tick=7, summary="I rolled back the deploy yesterday. Lunch was fine.", time=_SPOKEN)
    assert [
        {
            "text": "24 November 2026: Rolled back the deploy on 23 November 2026.",
            "ticks": [7],
            "priority": "GRN",
            "subject": None,
            "about": "2026-11-23",
        }
    ] == _observe([episode])


def test_an_answer_is_joined_to_the_question_before_it_with_both_as_sources() -> None:
    """The answer of one speaker to the other's question is one fact naming both turns, 'you'
    resolved to the other party; a sentence that adds nothing to its turn is not restated."""
    turns = [
        Episode(tick=1, summary="What made you pick that shelter?", speaker="Ann", time=_SPOKEN),
        Episode(tick=2, summary="They help older dogs find homes.", speaker="Bob", time=_SPOKEN),
    ]
    (fact,) = _observe(turns)
    assert (
        "24 November 2026: Ann asked: What made Bob pick that shelter? Bob answered: They help older dogs find homes."
        == (fact["text"])
    )
    assert ([1, 2], "Bob") == (fact["ticks"], fact["subject"])


def test_the_turn_before_a_batch_answers_for_pairing_but_says_nothing_itself() -> None:
    """A batch carries the episode before it marked as context: the first turn pairs with it, and
    the context turn gets no fact of its own."""
    question = Episode(tick=1, summary="Did you go sailing yesterday?", speaker="Ann", time=_SPOKEN)
    answer = Episode(tick=2, summary="Yes, to the old harbor.", speaker="Bob", time=_SPOKEN)
    facts = _observe([answer], before=question)
    assert [[1, 2]] == [f["ticks"] for f in facts]


def test_a_shared_image_is_kept_and_a_salient_episode_restated_whole() -> None:
    """An image an episode shares (its ``shared`` field) becomes a fact; an episode at or above the
    salient significance is restated whole, with the level its significance gives (RED at 0.8 and
    above). A ``[shares ...]`` in the text is only text: the field is what says an image was shared."""
    boat = SharedImage(caption="a photo of a red boat")
    shared = Episode(tick=3, summary="Look!", speaker="Ann", time=_SPOKEN, shared=boat)
    deploy = Episode(tick=4, summary="Deployed without a canary; errors doubled", time=_SPOKEN, significance=0.9)
    written = Episode(tick=5, summary="Look! [shares a photo of a blue car]", speaker="Ann", time=_SPOKEN)
    facts = _observe([shared, deploy, written])
    assert [
        ("24 November 2026: Ann shared a photo of a red boat.", [3], "GRN"),
        ("24 November 2026: Deployed without a canary; errors doubled.", [4], "RED"),
    ] == [(f["text"], f["ticks"], f["priority"]) for f in facts]


def _golems(seed: int = 3) -> tuple[Golems, FixedClock]:
    clock = FixedClock(datetime(2026, 11, 1, 9, 0, tzinfo=UTC), timedelta(seconds=1))
    golems = Golems(open_store("memory://"), deps=Deps(clock=clock, ids=SequentialIds("c"), seed=seed))
    golems.create("g")
    return golems, clock


def _night(day: int, first_tick: int, lines: Sequence[tuple[str, str]]) -> list[Episode]:
    when = datetime(2026, 11, day, 20, 0, tzinfo=UTC)
    return [
        Episode(tick=first_tick + n, summary=text, speaker=who, time=when + timedelta(minutes=n))
        for n, (who, text) in enumerate(lines)
    ]


_FIRST = _night(
    2,
    1,
    [
        ("Ann", "Yesterday I adopted a puppy called Shadow."),
        ("Bob", "What breed is he?"),
        ("Ann", "A border collie, very fast."),
    ],
)
_SECOND = _night(
    9,
    10,
    [
        ("Ann", "Last week Shadow learned to fetch."),
        ("Bob", "Where do you train him?"),
        ("Ann", "In the park by the river."),
    ],
)


def _outputs(golems: Golems, cycle: str) -> list[DreamObservation]:
    records = golems.store.read_stream("g", types=(DreamObservation,))
    return [r.event for r in records if isinstance(r.event, DreamObservation) and r.event.cycle_id == cycle]


def test_each_cycle_consolidates_only_the_episodes_recorded_since_the_last_one() -> None:
    """The first cycle restates the first night; the second restates only the second night's
    episodes, and joins the name both nights use (Shadow) in one thread naming an episode of each."""
    golems, clock = _golems()
    executor = InProcessExecutor(golems)
    golems.record_episodes("g", _FIRST)
    first = executor.run_cycle("g").cycle_id
    clock.advance(timedelta(days=7))
    golems.record_episodes("g", _SECOND)
    second = executor.run_cycle("g").cycle_id

    night_one = {e.tick for e in _FIRST}
    night_two = {e.tick for e in _SECOND}
    made_first = [o for o in _outputs(golems, first) if o.kind == "observation"]
    made_second = [o for o in _outputs(golems, second) if o.kind == "observation"]
    assert made_first
    assert {t for o in made_first for t in o.source_episode_ticks} <= night_one
    assert made_second
    assert {t for o in made_second for t in o.source_episode_ticks} <= night_two
    (thread,) = [o for o in _outputs(golems, second) if o.kind == "thread"]
    assert ("Shadow", (1, 10)) == (thread.subject, thread.source_episode_ticks)
    assert thread.text.startswith("Shadow, across days. 2 November 2026: ")


def test_an_interrupted_cycles_night_is_the_next_cycles_too() -> None:
    """A cycle that did not complete leaves its episodes to the next cycle's night."""
    golems, _clock = _golems()
    golems.record_episodes("g", _FIRST)
    golems.fall_asleep("g", "owner", budget_tokens=100)
    golems.interrupt("g", "owner", "woken")
    golems.record_episodes("g", _SECOND)
    log = GolemLogs.of(golems).read("g")
    assert (0, len(_FIRST) + len(_SECOND)) == (log.night[0], log.memory.rows) == (0, 6)
    golems.fall_asleep("g", "owner", budget_tokens=100)
    assert (0, 6) == GolemLogs.of(golems).read("g").night


def test_the_night_survives_a_snapshot() -> None:
    """A cycle reader restored from its snapshot knows where the current night starts and ends."""
    golems, _clock = _golems()
    executor = InProcessExecutor(golems)
    golems.record_episodes("g", _FIRST)
    executor.run_cycle("g")
    golems.record_episodes("g", _SECOND)
    golems.fall_asleep("g", "owner", budget_tokens=100)
    log = GolemLogs.of(golems).read("g")
    assert log.last is not None
    restored = GolemLog.from_snapshot(log.to_snapshot(), log.last)
    assert (3, 6) == log.night == restored.night


def test_observations_count_against_the_budget_and_are_not_staged() -> None:
    """Each observation step is a generator call the cycle pays for in (estimated) tokens at $0, and
    no observation enters the staging buffer."""
    golems, _clock = _golems()
    golems.record_episodes("g", _FIRST)
    cycle = InProcessExecutor(golems).run_cycle("g").cycle_id
    calls = [r.event for r in golems.store.read_stream("g", types=(GenerationRecorded,)) if r.event.task == "observe"]
    assert calls
    assert all(c.tokens_in > 0 and c.tokens_out > 0 and c.cost_usd == 0.0 for c in calls)
    staged = [r.event for r in golems.store.read_stream("g", types=(DreamStaged,))]
    assert _outputs(golems, cycle)
    assert all(s.source != DreamObservation.type_name for s in staged)


def _settings(**consolidation: object) -> CycleSettings:
    return CycleSettings(engines=EngineSettings(consolidation=ConsolidationSettings(**consolidation)))  # type: ignore[arg-type]


def test_observations_threads_and_summaries_follow_their_settings() -> None:
    """Observations off and threads at 0 make none; summaries on make one per speaker of a batch,
    naming at most ``summary_sources`` episodes."""
    golems, clock = _golems()
    golems.record_episodes("g", _FIRST)
    executor = InProcessExecutor(golems, settings=_settings(observations=False, threads=0, summaries=True))
    executor.run_cycle("g")
    clock.advance(timedelta(days=7))
    golems.record_episodes("g", _SECOND)
    cycle = executor.run_cycle("g").cycle_id
    made = _outputs(golems, cycle)
    assert {"summary"} == {o.kind for o in made}
    assert {"Ann", "Bob"} == {o.subject for o in made}
    assert all(1 <= len(o.source_episode_ticks) <= 3 for o in made)


def test_a_thread_cap_a_thread_cannot_have_is_refused_in_one_line() -> None:
    """``thread_sources`` past the mentions the episode memory keeps, or under the two episodes a
    thread joins, fails when the settings are made."""
    for bad in (9, 1):
        with pytest.raises(InvalidSetting) as info:
            ConsolidationSettings(thread_sources=bad)
        assert f"invalid setting cycle.engines.consolidation.thread_sources = {bad}: expected from 2 to 8" == str(
            info.value
        )


_WORDS = st.sampled_from(["Shadow", "Boston", "the", "park", "Door Dash", "fetch", "Max", "river"])


@given(
    st.lists(st.lists(_WORDS, min_size=1, max_size=6).map(" and ".join), min_size=1, max_size=30),
    st.lists(st.integers(min_value=0, max_value=30), max_size=4),
)
def test_the_mentions_index_read_in_stretches_is_the_index_read_at_once(texts: list[str], cuts: list[int]) -> None:
    """However the rows are caught up (one stretch, or several cut anywhere), the subjects, their
    counts and their latest ticks are the same, and a snapshot of the memory keeps them."""
    episodes = [Episode(tick=n, summary=f"We met {t}.", speaker="Ann") for n, t in enumerate(texts, start=1)]
    whole, pieces = EpisodeMemory(episodes), EpisodeMemory(episodes)
    for cut in sorted(cuts):
        pieces.mentions(min(cut, len(episodes)))
    expected = whole.mentions(len(episodes))
    assert msgspec.to_builtins(expected) == msgspec.to_builtins(pieces.mentions(len(episodes)))
    restored = EpisodeMemory.from_bytes(pieces.to_bytes())
    assert msgspec.to_builtins(expected) == msgspec.to_builtins(restored.mentions(len(episodes)))


def test_a_users_own_prompt_changes_what_a_model_is_told_not_what_the_offline_generator_reads() -> None:
    """The offline generator writes from the request's inputs, not from the prompt's text: an observe
    prompt rewritten in a user's own words (no threshold, no episode lines in oneiros's format)
    gets the same observations, threshold included."""
    turns = [
        Episode(tick=1, summary="What made you pick that shelter?", speaker="Ann", time=_SPOKEN),
        Episode(tick=2, summary="I moved to Lisbon last week.", speaker="Bob", time=_SPOKEN, significance=0.9),
    ]
    given = TaskInputs(episodes=tuple(turns), salient=0.8)
    ours = GenerationRequest(
        call_key="c:nrem:observe:0",
        phase="nrem",
        task="observe",
        prompt=PromptSet().render("observe", episodes=said_lines(turns), salient=0.8, sources=2),
        given=given,
    )
    theirs = msgspec.structs.replace(ours, prompt="Summarise these turns for me, briefly please.")
    assert OfflineGenerator().generate(ours).text == OfflineGenerator().generate(theirs).text
    facts = json.loads(OfflineGenerator().generate(theirs).text)["observations"]
    assert any(f["ticks"] == [2] and "Lisbon" in f["text"] for f in facts)
