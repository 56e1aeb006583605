"""Lineage shows every move: an entry's quarantine (and the review that lifted it), and a
recall-driven promotion with each recall that counted, in the tree and the JSON of
`oneiros lineage`, in log order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from oneiros import open_store
from oneiros.config._load import load_config
from oneiros.projections._lineage import entry_lineage
from oneiros.projections._recall import RecallItem, RecallResult
from oneiros.settings._trust import TrustSettings
from oneiros.validation._recalls import record_recall
from tests.cli_runner import run_cli
from tests.projections_support import World, staged

OPENCLAW = load_config(preset="openclaw", path="/dev/null", environ={}).staging
TEXT = "Enter ETH mean reversion trades at the range floor after a second confirmation"
QUERIES = ("eth range floor", "mean reversion confirmation", "second confirmation trades")


def _world(tmp_path: Path, **settings: object) -> tuple[World, str]:
    """A golem on a SQLite store (so the CLI can read it) with one staged strategy hypothesis."""
    world = World(open_store(f"sqlite:///{tmp_path}/events.db"), "g1", **settings)
    world.episodes(1)
    world.dream([staged("CYCLE", 0, "strategy_hypothesis", TEXT, 0.2)])
    (entry_id,) = world.entries()
    return world, entry_id


def _cli(tmp_path: Path, entry_id: str, *extra: str) -> str:
    store = f"sqlite:///{tmp_path}/events.db"
    env = {"PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    done = run_cli(["lineage", entry_id, "--store", store, *extra], cwd=tmp_path, env=env)
    assert 0 == done.returncode, done.stderr
    return done.stdout


def _moves(tmp_path: Path, entry_id: str) -> list[dict[str, Any]]:
    moves: list[dict[str, Any]] = json.loads(_cli(tmp_path, entry_id, "--json"))["moves"]
    return moves


def test_lineage_shows_the_quarantine_and_the_review_that_lifted_it(tmp_path: Path) -> None:
    """An entry whose text matches an instruction pattern: its first move is the quarantine, with
    why and the flags; then the review that promoted it and the promotion by review."""
    trust = TrustSettings(instruction_patterns={"floor_order": r"range floor"})
    world, entry_id = _world(tmp_path, trust=trust)
    world.feedback.review(entry_id, "promote_candidate", who="ana", why="read it")
    world.update()
    why = "its text flagged floor_order; minimum trust medium"
    found = entry_lineage(world.store, entry_id)
    assert [("quarantined", why), ("review", "read it"), ("promoted", "ana: read it")] == [
        (m.kind, m.why) for m in found.moves
    ]
    moves = _moves(tmp_path, entry_id)
    assert ["quarantined", "review", "promoted"] == [m["kind"] for m in moves]
    assert (["floor_order"], why) == (moves[0]["quarantine"]["output_flags"], moves[0]["quarantine"]["why"])
    assert [m.position for m in found.moves] == [m["position"] for m in moves]
    tree = _cli(tmp_path, entry_id)
    assert f"@{moves[0]['position']} quarantined, only a review promotes it: {why}" in tree


def test_lineage_shows_a_recall_driven_promotion_and_each_recall_that_counted(tmp_path: Path) -> None:
    """Under the openclaw preset three recalls under three queries promote the entry: the moves are
    the three recalls (query and score) in order, then the promotion by recall with its score."""
    world, entry_id = _world(tmp_path, promotion=OPENCLAW.promotion, recall=OPENCLAW.recall)
    for query in QUERIES:
        item = RecallItem(kind="dream", ref=entry_id, text=TEXT, score=1.0, status="proposed")
        result = RecallResult(query=query, results=[], related_dreams=[item])
        record_recall(world.store, world.golem, result, world.deps)
    world.update()
    found = entry_lineage(world.store, entry_id)
    assert [("recall", q, 1.0) for q in QUERIES] + [("promoted", None, None)] == [
        (m.kind, m.query, m.score) for m in found.moves
    ]
    promoted = found.moves[-1]
    reason = "recall score 0.93 from 3 recalls under 3 distinct queries"
    assert ("recall", reason) == (promoted.who, promoted.why)
    moves = _moves(tmp_path, entry_id)
    expected = [(m.kind, m.position, m.query) for m in found.moves]
    assert expected == [(m["kind"], m["position"], m["query"]) for m in moves]
    tree = _cli(tmp_path, entry_id)
    first = found.moves[0].position
    assert f"@{first} recalled under 'eth range floor' (score 1.00)" in tree
    assert f"@{promoted.position} promoted at {promoted.after_pct}% by recall: {reason}" in tree
