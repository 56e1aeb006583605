"""Exact lineage: a staged entry names the one GenerationRecorded it came from (call key and
request hash, recorded at creation, never by matching text) and every decision that moved it."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from oneiros import InProcessExecutor
from oneiros._errors import EntryNotFound, InputError
from oneiros.events._content import DreamStaged
from oneiros.events._lineage import OutputsSourced, output_digest
from oneiros.events._staging import EntryStaged
from oneiros.events._types import EpisodeRecorded, GenerationRecorded
from oneiros.generators._offline import OfflineGenerator
from oneiros.projections._lineage import entry_lineage
from oneiros.store._history import import_history
from oneiros.store._store import EventStore, open_store
from oneiros.validation._review import Feedback, OutcomeInput
from oneiros.validation._sweep import StagingProcess
from tests.chat_server import sample_golems
from tests.cli_runner import run_cli

HISTORIES = Path(__file__).parent / "histories"


def _cycle() -> tuple[EventStore, Feedback, list[str]]:
    golems = sample_golems(4)
    InProcessExecutor(golems, OfflineGenerator(seed=4)).run_cycle("g")
    StagingProcess(golems.store).catch_up()
    feedback = Feedback(golems.store, deps=golems.deps)
    active = sorted(k for k, e in feedback.entries("g").items() if e.active)
    return golems.store, feedback, active


def test_lineage_names_the_exact_generation_and_each_outcome_that_moved_the_entry() -> None:
    """An entry confirmed twice and contradicted once: its lineage names the GenerationRecorded
    whose call key the engine recorded for the entry's source output (OutputsSourced), with that
    record's request hash, tokens and cost, and the three moves with before/after and outcome."""
    store, feedback, active = _cycle()
    entry = active[0]
    for tick, verdict in ((3000, "confirms"), (3001, "confirms"), (3002, "contradicts")):
        feedback.record_outcome("g", OutcomeInput(tick=tick, verdict=verdict, entry_id=entry, summary=f"at {tick}"))  # type: ignore[arg-type]
    StagingProcess(store).catch_up()
    found = entry_lineage(store, entry)
    staged = next(r.event for r in store.read_all(types=[DreamStaged]) if r.event.entry_id == entry)
    assert isinstance(staged, DreamStaged)
    # The call the engine named for the staged output's source, by the source output's own digest.
    named = {s.digest: s.call_key for r in store.read_all(types=[OutputsSourced]) for s in r.event.sources}
    sources = [r.event for r in store.read_all() if output_digest(r.event) in named]
    # The staged output's source is an output the engine named, with the call the entry carries.
    assert any(type(e).type_name == staged.source and named[output_digest(e)] == staged.call_key for e in sources)
    generations = [
        (r.position, r.event) for r in store.read_all(types=[GenerationRecorded]) if r.event.call_key == staged.call_key
    ]
    [(position, generation)] = generations
    assert isinstance(generation, GenerationRecorded)
    assert found.exact
    assert found.generation is not None
    assert (generation.call_key, generation.request_hash, position) == (
        found.generation.call_key,
        found.generation.request_hash,
        found.generation.position,
    )
    assert (generation.tokens_in, generation.tokens_out, generation.cost_usd, generation.model) == (
        found.generation.tokens_in,
        found.generation.tokens_out,
        found.generation.cost_usd,
        found.generation.model,
    )
    assert found.prompt_template is not None
    assert (generation.task, False) == (found.prompt_template.task, found.prompt_template.overridden)
    start = found.staged_confidence_pct
    assert [
        ("outcome", start, start + 10, "confirms", 3000),
        ("outcome", start + 10, start + 20, "confirms", 3001),
        ("outcome", start + 20, start + 15, "contradicts", 3002),
    ] == [(m.kind, m.before_pct, m.after_pct, m.verdict, m.outcome["tick"]) for m in found.moves]  # type: ignore[index]
    assert start + 15 == found.confidence_pct


def test_lineage_names_a_review_that_promoted_the_entry() -> None:
    """A review decision's move names the decision, who, why and the status it led to, then the
    promotion it caused."""
    store, feedback, active = _cycle()
    entry = active[1]
    feedback.review(entry, "promote_candidate", who="ana", why="seen it hold live")
    StagingProcess(store).catch_up()
    found = entry_lineage(store, entry)
    assert [
        ("review", "promote_candidate", "ana", "seen it hold live", "promoted"),
        ("promoted", None, "review", "ana: seen it hold live", None),
    ] == [(m.kind, m.decision, m.who, m.why, m.status) for m in found.moves]


def test_an_entry_is_found_by_a_unique_prefix_and_a_bad_one_is_named() -> None:
    """A unique prefix finds the entry; one that matches several lists them; none is EntryNotFound."""
    store, _feedback, active = _cycle()
    cycle = active[0].split(":")[0]
    assert active[0] == entry_lineage(store, active[0]).entry_id
    with pytest.raises(InputError) as ambiguous:
        entry_lineage(store, cycle)
    assert str(ambiguous.value).startswith(f"entry prefix {cycle!r} matches ")
    with pytest.raises(EntryNotFound) as missing:
        entry_lineage(store, "nope")
    assert "no staged entry 'nope'" == str(missing.value)


def test_a_v1_staged_log_lifts_and_its_lineage_falls_back_to_prompt_and_model() -> None:
    """staged_v1.jsonl was written before outputs named their calls (DreamStaged v1, EntryStaged v1):
    each lifts with an empty call key, and its lineage finds the generation by the prompt and model
    the v1 lineage recorded (exact False), with the outcome that moved it."""
    store = open_store("memory://")
    count = import_history(store, HISTORIES / "staged_v1.jsonl")
    staged = [r.event for r in store.read_all(types=[EntryStaged])]
    assert 13 == len(staged)
    assert {("", "")} == {(e.lineage.call_key, e.lineage.request_hash) for e in staged}
    assert {""} == {r.event.call_key for r in store.read_all(types=[DreamStaged])}
    assert 128 == count
    found = entry_lineage(store, "cycle-s1:003")
    with_prompt = next(e for e in staged if e.entry_id == "cycle-s1:003")
    assert found.generation is not None
    assert (False, with_prompt.lineage.prompt) == (found.exact, found.generation.prompt)
    assert [("outcome", 20, 30)] == [(m.kind, m.before_pct, m.after_pct) for m in found.moves]


def test_source_episodes_are_the_named_ticks_recorded_before_the_output() -> None:
    """Lineage reads episodes decoded only as far as their tick (older versions whole, through
    their upcasters: staged_v1.jsonl holds EpisodeRecorded v2, stored as written): for every
    entry, its source episodes are exactly the episodes of its ticks recorded up to its output, as
    a decoded read finds them."""
    from eventsourcing.persistence import StoredEvent

    store = open_store("memory://")
    # As an older version wrote them, topics and all (an import would store them upcast).
    lines = [json.loads(line) for line in (HISTORIES / "staged_v1.jsonl").read_text().splitlines()]
    store.backend.recorder.insert_events(
        [StoredEvent(x["golem_id"], x["version"], x["topic"], json.dumps(x["state"]).encode()) for x in lines]
    )
    sourced = 0
    for record in store.read_all(types=[EntryStaged]):
        entry: EntryStaged = record.event  # type: ignore[assignment]
        lineage = entry.lineage
        recorded = {
            r.event.episode.tick: r.event.episode
            for r in store.read_stream(entry.golem_id, until=lineage.source_position, types=[EpisodeRecorded])
        }
        expected = tuple(recorded[t] for t in lineage.source_episode_ticks if t in recorded)
        assert expected == entry_lineage(store, entry.entry_id).source_episodes
        sourced += bool(expected)
    assert sourced > 0


def test_oneiros_lineage_prints_the_tree_and_json(tmp_path: Path) -> None:
    """Through the CLI: --json names the call key and request hash of a GenerationRecorded in the
    log; the tree shows the call key; an unknown entry is one line on stderr and exit 2."""
    run_cli(["dream", "--sample", "--json"], cwd=tmp_path, check=True)
    entries = json.loads(run_cli(["staging", "--json"], cwd=tmp_path, check=True).stdout)
    entry = next(e["entry_id"] for e in entries if e["status"] == "proposed")
    out = run_cli(["lineage", entry, "--json"], cwd=tmp_path, check=True)
    found = json.loads(out.stdout)
    store = open_store(f"sqlite:///{tmp_path}/.oneiros/events.db", create=False)
    recorded = {r.event.call_key: r.event.request_hash for r in store.read_all(types=[GenerationRecorded])}
    store.close()
    assert recorded[found["generation"]["call_key"]] == found["generation"]["request_hash"]
    tree = run_cli(["lineage", entry], cwd=tmp_path, check=True)
    assert found["generation"]["call_key"] in tree.stdout.replace("\n", "").replace(" ", "").replace("│", "")
    bad = run_cli(["lineage", "nope"], cwd=tmp_path)
    assert (2, "error: no entry matches 'nope'\n", "") == (bad.returncode, bad.stderr, bad.stdout)
    assert msgspec.json.decode(out.stdout)["entry_id"] == entry


def test_an_outcome_without_a_summary_is_a_move_without_a_dangling_colon(tmp_path: Path) -> None:
    """An outcome recorded without --summary shows in the lineage tree as ``(tick 1000)``, where it
    showed ``(tick 1000: )``; one with a summary keeps it, as the docs show."""
    run_cli(["dream", "--sample", "--json"], cwd=tmp_path, check=True)
    entries = json.loads(run_cli(["staging", "--json"], cwd=tmp_path, check=True).stdout)
    entry = next(e["entry_id"] for e in entries if e["status"] == "proposed")
    for tick, summary in ((1000, ()), (1001, ("--summary", "held again"))):
        outcome = ["outcome", "--tick", str(tick), "--verdict", "confirms", "--entry", entry, *summary]
        run_cli(outcome, cwd=tmp_path, check=True)
    tree = run_cli(["lineage", entry], cwd=tmp_path, check=True)
    moves = [line.split(" (", 1)[1] for line in tree.stdout.splitlines() if " outcome confirms: " in line]
    assert ["tick 1000)", "tick 1001: held again)"] == moves
