"""The application layer on its own: what the CLI, REST and MCP rely on it for."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from oneiros import GolemNotFound
from oneiros.app import CycleOptions, Oneiros
from oneiros.config._load import OneirosConfig
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.validation._review import OutcomeInput


def _config(tier: str = "core") -> OneirosConfig:
    config = OneirosConfig()
    budget = config.cycle.budget.at_tier(tier)  # type: ignore[arg-type]
    return msgspec.structs.replace(config, cycle=msgspec.structs.replace(config.cycle, budget=budget))


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Oneiros]:
    """An application over a fresh SQLite store with golem g1, its sample episodes recorded."""
    with Oneiros(f"sqlite:///{tmp_path}/events.db", _config()) as made:
        made.create_golem("g1")
        made.record_episodes("g1", load_episodes(sample_episodes_path())[:24])
        yield made


def test_each_read_sees_the_writes_before_it(app: Oneiros) -> None:
    """With no follower, a read brings up what it reads first: the cycle just dreamt is the status's
    latest run and stages what the buffer lists; a review and an outcome show in the next read."""
    run = app.dream("g1", CycleOptions(max_outputs=3))
    assert ("complete", 3) == (run.status, len(app.entries("g1", ["proposed"]).items))
    assert (run.cycle_id, 3) == (app.status("g1").latest_run.cycle_id, app.status("g1").pending_count)  # type: ignore[union-attr]
    first, second = app.entries("g1", ["proposed"]).items[:2]
    app.review(first.entry_id, "reject", who="me", why="no")
    moved = app.record_outcome("g1", OutcomeInput(tick=900, verdict="confirms", entry_id=second.entry_id))
    assert [second.entry_id] == [e.entry_id for e in moved.entries]
    assert ("rejected", round(second.confidence + 0.1, 2)) == (
        app.entry(first.entry_id).status,
        app.entry(second.entry_id).confidence,
    )
    assert 2 == app.status("g1").pending_count  # one rejected; the confirmed one still awaits


_READS: dict[str, Callable[[Oneiros], Any]] = {
    "golem": lambda a: a.golem("nobody"),
    "status": lambda a: a.status("nobody"),
    "runs": lambda a: a.runs("nobody"),
    "entries": lambda a: a.entries("nobody"),
    "journal": lambda a: a.journal("nobody"),
    "report": lambda a: a.report("nobody"),
    "budget": lambda a: a.budget("nobody"),
    "beliefs": lambda a: a.beliefs("nobody"),
    "memory": lambda a: a.memory("nobody"),
    "memory_versions": lambda a: a.memory_versions("nobody"),
    "recall": lambda a: a.recall("nobody", "eth"),
    "should_dream": lambda a: a.should_dream("nobody"),
    "health": lambda a: a.health("nobody"),
    "lineage": lambda a: a.lineage("c:001", "nobody"),
}


@pytest.mark.parametrize("read", sorted(_READS))
def test_a_golem_that_does_not_exist_is_one_error_on_every_read(app: Oneiros, read: str) -> None:
    """Every read naming a golem that was never created raises GolemNotFound (an empty list would
    say it has no dreams), and writes nothing to the log."""
    head = app.store.head()
    with pytest.raises(GolemNotFound) as raised:
        _READS[read](app)
    assert ("golem 'nobody' does not exist", head) == (str(raised.value), app.store.head())


def test_a_cycle_is_judged_by_the_caps_it_recorded(app: Oneiros, tmp_path: Path) -> None:
    """A cycle dreamt at the hardened tier, read by an application configured for core: its budget
    (by cycle, and the golem's latest) is judged by the hardened 60,000-token cycle cap it recorded;
    ``recorded=False`` judges by this config's, ``tier`` by the tier asked for."""
    with Oneiros(app.store, _config("hardened")) as hardened:
        cycle_id = hardened.dream("g1").cycle_id
    assert cycle_id is not None
    caps = {
        "cycle": app.budget("g1", cycle_id),
        "latest": app.budget("g1"),
        "this config": app.budget("g1", recorded=False),
        "core asked": app.budget("g1", cycle_id, tier="core"),
    }
    assert {
        "cycle": ("hardened", 60_000),
        "latest": ("hardened", 60_000),
        "this config": ("core", 12_000),
        "core asked": ("core", 12_000),
    } == {name: (b.tier, b.caps[0].token_cap) for name, b in caps.items()}
    assert sum(p.tokens for p in caps["cycle"].phases) == caps["cycle"].caps[0].tokens


def test_where_a_follower_serves_reads_a_read_in_the_writes_consistency_sees_it(tmp_path: Path) -> None:
    """With ``catch_up=False`` (the server: a follower keeps the projections) a write settles
    nothing and answers with its log position; reads made within ``consistent`` of that position
    (or of the call's own writes) see the golem, the cycle and what it staged."""
    stop = threading.Event()
    with Oneiros(f"sqlite:///{tmp_path}/events.db", _config(), catch_up=False) as served:
        follower = threading.Thread(target=served.follow, args=(stop,))
        follower.start()
        try:
            with served.consistent() as call:
                served.create_golem("g1")
                appended = served.record_episodes("g1", load_episodes(sample_episodes_path())[:24])
            assert appended.positions[-1] == appended.position == call.written
            with served.consistent(call.written):
                assert 24 == served.golem("g1").episodes
            with served.consistent():
                run = served.dream("g1", CycleOptions(max_outputs=2))
                latest = served.runs("g1").items[0]
                assert (run.cycle_id, "complete") == (latest.cycle_id, latest.status)
                assert 2 == len(served.entries("g1", ["proposed"]).items)
        finally:
            stop.set()
            follower.join()


def test_dense_mems_toggles_shape_the_cycle(app: Oneiros) -> None:
    """``dream`` off stages nothing though every phase runs (so the cycle ends ``empty``); with
    ``reflect`` off too no cycle starts and only re-evaluation runs."""
    quiet = app.dream("g1", CycleOptions(dream=False))
    entry = app.cycle("g1", quiet.cycle_id or "")
    assert ("empty", 0, 5) == (quiet.status, entry.staged, len({p.phase for p in entry.phases}))
    only = app.dream("g1", CycleOptions(reflect=False, dream=False, reevaluate=True))
    assert (None, "reevaluated") == (only.cycle_id, only.status)
    assert 1 == app.golem("g1").cycles_completed


def test_the_app_judges_a_tier_and_a_golem_that_cannot_fall_asleep(app: Oneiros) -> None:
    """The application, not a front end, refuses a tier there is not (InputError naming the ones
    there are) and a dream of a golem already dreaming (the machine's IllegalCommand, saying how to
    resume or end the cycle): REST and MCP say what the CLI says, and nothing is written."""
    from oneiros import IllegalCommand, InputError

    with pytest.raises(InputError, match=r"^unknown tier 'ultra'; use core or hardened$"):
        app.budget("g1", tier="ultra")
    cycle = app.state("g1")
    app.factory.golems(app.store).fall_asleep("g1", "owner", budget_tokens=100)
    head = app.store.head()
    with pytest.raises(IllegalCommand) as raised:
        app.dream("g1")
    assert cycle.mode == "Waking"
    assert "`oneiros interrupt --golem g1 --reason ...` ends it" in str(raised.value)
    assert head == app.store.head()


def test_where_a_follower_serves_reads_a_write_reads_its_own_write_outside_any_consistency(app: Oneiros) -> None:
    """A write declared with its read models waits for them itself: with ``catch_up=False`` and no
    ``consistent`` block around the call, an outcome's answer lists the entry the sweep moved for it
    (the follower's decision on the outcome, read once it has been made), and a review answers with
    the status it recorded."""
    run = app.dream("g1", CycleOptions(max_outputs=2))
    first, second = app.entries("g1", ["proposed"]).items[:2]
    stop = threading.Event()
    with Oneiros(app.store, _config(), catch_up=False) as served:
        follower = threading.Thread(target=served.follow, args=(stop,))
        follower.start()
        try:
            moved = served.record_outcome("g1", OutcomeInput(tick=900, verdict="confirms", entry_id=first.entry_id))
            reviewed = served.review(second.entry_id, "reject", who="me", why="no")
        finally:
            stop.set()
            follower.join()
    assert run.status == "complete"
    assert ([first.entry_id], "rejected") == ([e.entry_id for e in moved.entries], reviewed.status)
