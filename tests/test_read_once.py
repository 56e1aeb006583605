"""A cycle reads the log once, a phase reads only what came since, and recording never re-folds
the stream: counted through a store that counts what its reads return, never timed."""

from __future__ import annotations

from pathlib import Path

import msgspec

from oneiros import InProcessExecutor
from oneiros.events._types import DreamStart, Event
from oneiros.generators._offline import OfflineGenerator
from oneiros.runtime._budget import phase_budget
from oneiros.runtime._golem_log import GolemLogs
from oneiros.runtime._phase import run_phase
from oneiros.settings._cycle import CycleBudget, CycleSettings
from oneiros.settings._phases import PHASES
from tests.scale_support import fixed_episodes
from tests.test_snapshots import CountingStore, _golems


def _counting(golems: object) -> CountingStore:
    store = getattr(golems, "store", None)
    assert isinstance(store, CountingStore)
    return store


def test_a_cycle_in_a_fresh_process_reads_each_episode_once(tmp_path: Path) -> None:
    """A cycle run by a process that has never read this log (no snapshot yet) decodes every
    recorded episode exactly once across its five phases and every command, however many reads."""
    url = f"sqlite:///{tmp_path}/events.db"
    writer = _golems(url)
    writer.create("g")
    writer.record_episodes("g", fixed_episodes(300))
    golems = _golems(url)
    store = _counting(golems)
    result = InProcessExecutor(golems).run_cycle("g")
    assert result.interrupted is None
    # Every episode once; only the latest comes back again, as the known event each later read
    # starts from (to check the log still holds it there).
    latest = max(store.episode_reads)
    assert {1} == {n for position, n in store.episode_reads.items() if position != latest}
    assert 300 == len(store.episode_reads)
    assert store.records <= 300 + 2 * result.events_appended + store.reads


def test_a_cycle_after_a_snapshot_reads_no_episode_from_the_log(tmp_path: Path) -> None:
    """Once a snapshot holds the episodes, the next cycle, in a fresh process, reads none of them
    from the log: only the events after the snapshot (and the one it was taken at)."""
    url = f"sqlite:///{tmp_path}/events.db"
    first = _golems(url, every=100)
    first.create("g")
    first.record_episodes("g", fixed_episodes(300))
    InProcessExecutor(first).run_cycle("g", cycle_id="one")
    golems = _golems(url, every=100)
    store = _counting(golems)
    result = InProcessExecutor(golems).run_cycle("g", cycle_id="two")
    assert result.interrupted is None
    assert len(store.episode_reads) <= 1


def test_phases_on_separate_processes_each_start_from_the_snapshot(tmp_path: Path) -> None:
    """Phase jobs as RQ runs them, each in a process of its own (a fresh Golems and GolemLogs per
    phase): with a snapshot taken before the cycle, no phase reads an episode from the log, and
    the cycle gives the events an in-process run gives."""
    url = f"sqlite:///{tmp_path}/events.db"
    setup = _golems(url, every=100)
    setup.create("g")
    setup.record_episodes("g", fixed_episodes(300))
    GolemLogs.of(setup).read("g")  # what the heartbeat or the last cycle leaves: a snapshot
    reference = _golems("memory://")
    reference.create("g")
    reference.record_episodes("g", fixed_episodes(300))
    InProcessExecutor(reference).run_cycle("g", cycle_id="c")

    opener = _golems(url)
    opener.fall_asleep(
        "g", "owner", budget_tokens=phase_budget(CycleBudget(), "stable", "hypnagogic_onset"), cycle_id="c"
    )
    episodes_read: set[int] = set()
    for phase in PHASES.names:
        worker = _golems(url)
        outcome = run_phase(worker, "g", "c", phase, OfflineGenerator(seed=5), CycleSettings())
        assert outcome.ran
        episodes_read |= set(_counting(worker).episode_reads)
    assert [300 + 1] == sorted(episodes_read)  # only the snapshot's own event, the last episode
    # DreamStart's settings are what a cycle is given (the executor records its seed), not an output.
    ours = [(r.version, _output(r.event)) for r in opener.store.read_stream("g") if r.meta.cycle_id == "c"]
    theirs = [(r.version, _output(r.event)) for r in reference.store.read_stream("g") if r.meta.cycle_id == "c"]
    assert theirs == ours


def _output(event: Event) -> Event:
    return msgspec.structs.replace(event, settings=None) if isinstance(event, DreamStart) else event


def test_each_phase_reads_only_what_came_after_the_last(tmp_path: Path) -> None:
    """In one process the phases share the fold: each phase makes one read, of the record it
    already knows (to check the log still holds it) and the events appended since (the phase
    before's)."""
    url = f"sqlite:///{tmp_path}/events.db"
    golems = _golems(url)
    golems.create("g")
    golems.record_episodes("g", fixed_episodes(200))
    store = _counting(golems)
    executor = InProcessExecutor(golems)
    executor.logs.read("g")
    golems.fall_asleep(
        "g", "owner", budget_tokens=phase_budget(CycleBudget(), "stable", "hypnagogic_onset"), cycle_id="c"
    )
    since = 3  # fall_asleep's events
    for phase in PHASES.names:
        before = golems.store.head()
        store.reset()
        run_phase(golems, "g", "c", phase, OfflineGenerator(seed=5), CycleSettings(), logs=executor.logs)
        assert store.episodes <= 1  # at most the last episode, as the known event a read starts from
        assert (1, 1 + since) == (store.reads, store.records)  # the known event, and what came since
        since = golems.store.head() - before


def test_recording_reads_only_the_last_known_event_each_time(tmp_path: Path) -> None:
    """Recording episodes in many calls never re-folds the stream: each call appends on the state
    it already knows and reads nothing (the store's version check stands in for a read: another
    writer's append makes it refuse, and only then is the stream read), so the work per call stays
    flat as the log grows."""
    golems = _golems(f"sqlite:///{tmp_path}/events.db")
    golems.create("g")
    store = _counting(golems)
    episodes = fixed_episodes(1000)
    per_call = []
    for start in range(0, 1000, 50):
        store.reset()
        golems.record_episodes("g", episodes[start : start + 50])
        per_call.append((store.reads, store.records))
    assert [(0, 0)] * 20 == per_call
    other = _golems(f"sqlite:///{tmp_path}/events.db")
    other.record_episodes("g", fixed_episodes(1001)[1000:])
    store.reset()
    golems.record_episodes("g", fixed_episodes(1002)[1001:])  # the state it knows is stale: refused, then read
    assert (1002, True, True) == (golems.state("g").episodes, store.reads > 0, store.records >= 1)


def test_recording_in_fresh_processes_starts_from_the_state_snapshot(tmp_path: Path) -> None:
    """A process that records (as each ``oneiros`` command is) starts from the state snapshot the
    last one left, so it reads at most ``every`` events, not the whole stream."""
    url = f"sqlite:///{tmp_path}/events.db"
    first = _golems(url, every=100)
    first.create("g")
    first.record_episodes("g", fixed_episodes(1000)[:950])
    later = _golems(url, every=100)
    later.record_episodes("g", fixed_episodes(1000)[950:])
    assert _counting(later).records <= 100 + 1


def test_reading_a_past_cycle_reads_only_the_stretch_up_to_the_next_cycle(tmp_path: Path) -> None:
    """What a finished cycle came to (``cycle_result``, which ``dream --wait`` reports), its
    recorded settings (a resumed phase's) and its summary (``oneiros diff``) come from typed reads
    and the stretch of the stream between the cycle's start and the next cycle's: no episode
    recorded before the cycle or after the next one starts comes back from the log."""
    from oneiros.events._types import DreamStart, Episode
    from oneiros.lab._diff import summarize_cycle
    from oneiros.runtime._executor import cycle_result, recorded_settings

    url = f"sqlite:///{tmp_path}/events.db"
    writer = _golems(url)
    writer.create("g")
    writer.record_episodes("g", fixed_episodes(300))
    ran = InProcessExecutor(writer, settings=CycleSettings(seed=3)).run_cycle("g", cycle_id="c")
    writer.record_episodes("g", [Episode(tick=1_000 + i, summary=f"between {i}") for i in range(300)])
    InProcessExecutor(writer).run_cycle("g", cycle_id="d")
    writer.record_episodes("g", [Episode(tick=2_000 + i, summary=f"after {i}") for i in range(300)])
    starts = [r.position for r in writer.store.read_stream("g", types=[DreamStart])]
    golems = _golems(url)
    store = _counting(golems)
    result = cycle_result(golems, "g", "c")
    settings = recorded_settings(golems, "g", "c")
    summary = summarize_cycle(store, "c")
    assert (ran.events_appended, ran.complete, 3, "c") == (
        result.events_appended, result.complete, settings.seed if settings else None, summary.cycle_id
    )  # fmt: skip
    assert store.episode_reads  # the stretch between the cycles is read, as rows
    assert all(starts[0] < p < starts[1] for p in store.episode_reads)
