"""Outcomes find their hypotheses: a waking outcome moves the staged entries it is relevant to (BM25
over its summary, tags and regime against each entry's criterion and text), with the document's
arithmetic unchanged for what it moves, and ``outcome --explain`` says why."""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, SequentialIds, open_store
from oneiros.cli import app
from oneiros.daemon._catch_up import update
from oneiros.episodes._episodes import load_episodes
from oneiros.events._staging import (
    ConfidenceChanged,
    EntryPromoted,
    EntryRefuted,
    Lineage,
    OutcomeRecorded,
    ValidationCriterion,
)
from oneiros.projections._db import open_projection_db
from oneiros.projections._service import Projections
from oneiros.projections._staging import StagedEntry
from oneiros.projections._terms import terms
from oneiros.validation._explain import explain_outcome
from oneiros.validation._match import relevance, spelled, words_of
from oneiros.validation._review import Feedback, OutcomeInput
from oneiros.validation._staged import StagingSettings
from tests.projections_support import World, staged

ROOT = Path(__file__).resolve().parents[1]
WEEK = ROOT / "examples" / "episodes.jsonl"
runner = CliRunner()

WORD = st.text("abcdefghijklmnopqrstuvwxyz", min_size=4, max_size=9).filter(lambda w: terms(w) == [w])


def _entry(n: int, terms: tuple[str, ...], regime: str | None, text: str) -> StagedEntry:
    return StagedEntry(
        entry_id=f"e{n}",
        golem_id="g",
        kind="novel_insight",
        text=text,
        status="proposed",
        confidence_pct=30,
        criterion=ValidationCriterion(all_of=terms, regime=regime),
        lineage=Lineage(cycle_id="c"),
        staged_tick=0,
        staged_position=n,
    )


@pytest.mark.parametrize(
    ("written", "tag"),
    [
        ("Deployed it on Friday", "deploy"),
        ("three canaries in a row", "canary"),
        ("we rolled it back", "rollback"),
        ("asked first this time", "ask-first"),
        ("reviews were skipped", "review"),
    ],
)
def test_a_persons_wording_meets_a_tag(written: str, tag: str) -> None:
    """A person's ``rolled it back`` carries the tag ``rollback``: recall's stems, and neighbours
    joined, make every term of the tag one of the wording's."""
    assert set(spelled(tag)) <= set(words_of(written))


@settings(max_examples=60, deadline=None)
@given(
    entries=st.lists(
        st.tuples(st.lists(WORD, min_size=1, max_size=3, unique=True), st.none() | WORD, st.lists(WORD, max_size=12)),
        min_size=1,
        max_size=8,
    ),
    extra=st.lists(WORD, max_size=6),
    chosen=st.integers(0, 7),
)
def test_an_outcome_with_all_of_a_criterion_is_fully_relevant_and_relevance_ignores_order(
    entries: list[tuple[list[str], str | None, list[str]]], extra: list[str], chosen: int
) -> None:
    """Relevance is in 0-1 for every entry; an outcome that carries every term of an entry's
    criterion and its regime (whatever else it says) scores 1 for it, as it matched before
    relevance; and the figures do not depend on the order the entries come in."""
    staged = [_entry(n, tuple(t), r, " ".join(text)) for n, (t, r, text) in enumerate(entries)]
    target = staged[chosen % len(staged)]
    outcome = OutcomeRecorded(
        golem_id="g",
        tick=1,
        verdict="confirms",
        summary=" ".join(extra),
        tags=target.criterion.all_of,
        regime=target.criterion.regime,
    )
    found = {m.entry_id: m.relevance for m in relevance(outcome, staged)}
    assert all(0.0 <= r <= 1.0 for r in found.values())
    assert 1.0 == found[target.entry_id]
    assert found == {m.entry_id: m.relevance for m in relevance(outcome, staged[::-1])}


def test_words_of_the_text_alone_never_move_an_entry() -> None:
    """An outcome that shares words of an entry's text but none of its criterion stays under the
    default threshold: the criterion says what bears the entry out."""
    entry = _entry(0, ("deploy", "canary"), "routine", "the nightly migration backfill stalled on the replica lag")
    outcome = OutcomeRecorded(
        golem_id="g", tick=1, verdict="confirms", summary="nightly migration backfill stalled, replica lag again"
    )
    (match,) = relevance(outcome, [entry])
    assert match.relevance <= 0.25 < StagingSettings().min_relevance
    assert ("deploy", "canary", "routine") == match.missing


def _week() -> tuple[Golems, Projections]:
    deps = Deps(clock=FixedClock(datetime(2026, 10, 6, tzinfo=UTC), timedelta(seconds=1)), ids=SequentialIds("w"))
    store = open_store("memory://")
    golems = Golems(store, deps=deps)
    golems.create("coder")
    golems.record_episodes("coder", load_episodes(WEEK))
    assert InProcessExecutor(golems).run_cycle("coder").complete
    projections = Projections(store, open_projection_db("memory://"))
    update(projections)
    return golems, projections


# The next week, as the agent's owner writes it down: what happened, in their words, and whether
# it bore the dreams out. Not the criteria's tags: the sweep has to find what each one is about.
NEXT_WEEK = [
    (13, "confirms", "Shipped the release behind a canary again; error rate stayed flat", "routine"),
    (14, "confirms", "Rolled the config change out to 5% first, canary looked clean, finished by lunch", "routine"),
    (15, "confirms", "Canaried deploy of the billing service; no alerts, no rollback needed", "routine"),
    (16, "confirms", "Another deploy behind the canary with the new config; smooth", "routine"),
    (17, "confirms", "Config and code deployed together through the canary; nothing paged", "routine"),
    (18, "contradicts", "Merged without review to make the deadline and nothing broke this time", "incident"),
    (19, "contradicts", "Skipped the second review under deadline pressure; the release was fine", "incident"),
    (20, "contradicts", "Rushed a review-less merge for the demo deadline; no incident followed", "incident"),
]


def test_a_coding_week_and_the_next_weeks_outcomes_promote_one_entry_and_refute_another() -> None:
    """examples/episodes.jsonl dreamt once, then a week of outcomes written the way a person writes
    them: at least one entry is promoted and one refuted by the sweep, on outcomes alone (no
    review, no outcome naming an entry), each step +0.1 or -0.05 with the relevance recorded."""
    golems, projections = _week()
    feedback = Feedback(golems.store, deps=golems.deps)
    for tick, verdict, summary, regime in NEXT_WEEK:
        feedback.record_outcome("coder", OutcomeInput(tick=tick, verdict=verdict, summary=summary, regime=regime))  # type: ignore[arg-type]
        update(projections)
    decided = [r.event for r in golems.store.read_stream("coder:staging")]
    promoted = [e for e in decided if isinstance(e, EntryPromoted)]
    refuted = [e for e in decided if isinstance(e, EntryRefuted)]
    assert promoted
    assert refuted
    assert {"sweep"} == {e.by for e in promoted}
    steps = [e for e in decided if isinstance(e, ConfidenceChanged)]
    assert {10, -5} == {e.after_pct - e.before_pct for e in steps}
    assert all(e.relevance is not None and e.relevance >= 0.6 for e in steps)


def test_readmes_outcome_moves_entries_on_readmes_golem_and_explain_says_why(tmp_path: Path) -> None:
    """README's golem (``dream --golem g1 --episodes examples/episodes.jsonl``) and README's outcome:
    it moves entries, and ``--explain`` gives for each the relevance, the words it shares and lacks
    and the step, then the nearest it did not move with why."""
    env = {"ONEIROS_STORE": f"sqlite:///{tmp_path}/events.db", "COLUMNS": "200"}
    assert 0 == runner.invoke(app, ["dream", "--golem", "g1", "--episodes", str(WEEK), "--json"], env=env).exit_code
    readme = (ROOT / "README.md").read_text()
    line = next(line for line in readme.splitlines() if line.startswith("oneiros outcome "))
    argv = shlex.split(line.split("   #")[0])[1:]
    assert ["outcome", "--golem", "g1", "--tick", "900"] == argv[:5]
    shown = runner.invoke(app, [*argv, "--json"], env=env)
    assert 0 == shown.exit_code, shown.output
    answer = json.loads(shown.output)
    assert answer["entries"]
    explained = answer["explain"]
    assert [e["entry_id"] for e in answer["entries"]] == sorted(
        (m["entry_id"] for m in explained["moved"]), key=[e["entry_id"] for e in answer["entries"]].index
    )
    assert all(m["relevance"] >= explained["min_relevance"] for m in explained["moved"])
    assert all(" >= staging.min_relevance 0.60 " in m["why"] for m in explained["moved"])
    assert all(n["relevance"] < explained["min_relevance"] for n in explained["nearest"])
    assert all("< staging.min_relevance 0.60" in n["why"] for n in explained["nearest"])
    printed = runner.invoke(app, argv, env=env)
    assert 0 == printed.exit_code, printed.output
    lines = printed.output.splitlines()
    moved = len(answer["entries"])
    assert lines[0].endswith(f"{moved} {'entry' if moved == 1 else 'entries'} moved")
    assert ["moved:", "nearest not moved:"] == [line for line in lines if line.endswith(":")]


def test_explain_says_why_each_entry_moved_or_stayed() -> None:
    """For an outcome the sweep decided on: a moved entry with its relevance, words and step; one
    under the threshold with what it shares and lacks; a contradiction, only moved by review; and an
    outcome that names an entry moves it alone, the others 'named another entry'."""
    world = World(open_store("memory://"))
    world.episodes(1, tags=("eth", "breakout"), regime="trending")
    world.dream(
        [
            staged("CYCLE", 0, "strategy_hypothesis", "hypothesis about breakouts", 0.2),
            staged("CYCLE", 1, "contradiction", "breakouts fail", 0.2),
        ]
    )
    world.episodes(2, tags=("gas",), regime="volatile")
    world.dream([staged("CYCLE", 2, "strategy_hypothesis", "gas spikes cost", 0.2, ticks=(2,))])
    hypothesis, contradiction, gas = sorted(world.entries(), key=lambda e: world.entry(e).lineage.source_position)
    world.outcome("confirms", summary="ETH breakout held in a trending market")
    world.update()
    outcome = list(world.store.read_stream("g1:feedback"))[-1]
    why = explain_outcome(world.store, outcome, world.staging)
    assert (3, [hypothesis], [contradiction, gas]) == (
        why.active,
        [r.entry_id for r in why.moved],
        [r.entry_id for r in why.nearest],
    )
    assert [
        "relevance 1.00 >= staging.min_relevance 0.60 (shares breakout, eth, trending): 20% -> 30%",
        "relevance 1.00 (shares breakout, eth, trending), but a contradiction moves only by review "
        "(staging.review_only_kinds)",
        "relevance 0.00 < staging.min_relevance 0.60 (lacks gas, volatile)",
    ] == [r.why for r in (*why.moved, *why.nearest)]
    world.outcome("contradicts", gas)
    world.update()
    named = explain_outcome(world.store, list(world.store.read_stream("g1:feedback"))[-1], world.staging)
    assert ["named by the outcome: 20% -> 15%"] == [r.why for r in named.moved]
    assert {"the outcome names another entry"} == {r.why for r in named.nearest}
