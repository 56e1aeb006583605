"""Revoking a promotion: what a dream wrote into memory leaves it only by a decision with who and why,
and the revocation stays visible in the entry's history, its lineage and the memory diff."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from oneiros._errors import IllegalReview
from oneiros.cli import app
from oneiros.daemon._catch_up import update
from oneiros.events._staging import EntryReviewed
from oneiros.projections._db import open_projection_db
from oneiros.projections._service import Projections
from oneiros.projections._sinks import beliefs, memory_diff, memory_version, observations
from oneiros.store._store import open_store
from tests.projections_support import World

runner = CliRunner()


@pytest.fixture
def world() -> World:
    w = World(open_store("memory://"))
    w.episodes(1)
    return w


def test_revoking_a_promotion_drops_its_memory_line_and_withdraws_its_belief(world: World) -> None:
    """Two insights promoted (one by review, one by the sweep), then the first revoked: it is
    ``revoked`` with who, why and when among its reviews; MEMORY.md's next version keeps the other
    line and drops its own, saying who revoked it and why; its belief is withdrawn; the agent's
    observations say it was revoked and why."""
    world.dream(insights=2)
    first, second = sorted(world.entries())
    world.feedback.review(first, "promote_candidate", who="ana", why="held twice")
    for _ in range(4):
        world.outcome("confirms", second)
    world.update()
    db = world.projections.db
    before = memory_version(db, "g1")
    assert before is not None
    assert 2 == before.version
    assert 2 == len([line for line in before.content.splitlines() if line.startswith("- ")])

    world.feedback.review(first, "revoke", who="bo", why="the rally was a one-off")
    entry = world.entry(first)
    assert "revoked" == entry.status
    note = entry.reviews[-1]
    assert ("revoke", "bo", "the rally was a one-off") == (note.decision, note.who, note.why)
    assert note.time.startswith("2026-05-24T03:")
    after = memory_version(db, "g1")
    assert after is not None
    assert (3, f"revoked {first} by bo: the rally was a one-off") == (after.version, after.reason)
    kept = [line for line in before.content.splitlines() if entry.text not in line and line.startswith("- ")]
    assert kept == [line for line in after.content.splitlines() if line.startswith("- ")]
    removed = [line for line in memory_diff(db, "g1", 2, 3).splitlines() if line.startswith("-- ")]
    assert [f"-- [eth] insight 0 of {entry.cycle_id} (dream:{entry.cycle_id}, confidence 0.30, by review)"] == removed
    assert [second] == [b.entry_id for b in beliefs(db, "g1")]
    assert observations(db, "g1")[-1].text == f"revoked: {entry.text} (bo: the rally was a one-off)"
    assert 3 == world.feedback.memory_versions("g1")


def test_only_a_promoted_entry_is_revoked_and_a_promoted_one_takes_nothing_else(world: World) -> None:
    """``revoke`` on a proposed entry, and ``reject`` on a promoted one, are refused with the
    decisions the status does allow; a revoked entry takes no decision; nothing is appended."""
    world.dream(insights=1)
    (entry_id,) = world.entries()
    head = world.store.head()
    with pytest.raises(IllegalReview) as early:
        world.feedback.review(entry_id, "revoke", who="ana", why="too soon")
    assert (
        f"entry {entry_id!r} is proposed; decision 'revoke' is not allowed "
        "(a proposed entry takes reinforce, stale, reject, promote_candidate)"
    ) == str(early.value)
    world.feedback.review(entry_id, "promote_candidate", who="ana", why="true")
    world.update()
    with pytest.raises(IllegalReview) as late:
        world.feedback.review(entry_id, "reject", who="ana", why="changed my mind")
    assert f"entry {entry_id!r} is promoted; decision 'reject' is not allowed (a promoted entry takes revoke)" == str(
        late.value
    )
    assert ("promoted", ("revoke",)) == (late.value.status, late.value.allowed)
    world.feedback.review(entry_id, "revoke", who="ana", why="changed my mind")
    world.update()
    head = world.store.head()
    with pytest.raises(IllegalReview) as again:
        world.feedback.review(entry_id, "revoke", who="ana", why="twice")
    assert f"entry {entry_id!r} is revoked; decision 'revoke' is not allowed" == str(again.value)
    assert head == world.store.head()


def test_a_revocation_after_a_rollback_took_the_line_out_changes_no_text(world: World) -> None:
    """Rolled back to before the promotion, MEMORY.md no longer has the line: revoking the entry
    writes a version with the same text, which still records who revoked it and why."""
    world.dream(insights=2)
    first, second = sorted(world.entries())
    world.feedback.review(first, "promote_candidate", who="ana", why="true")
    world.feedback.review(second, "promote_candidate", who="ana", why="true too")
    world.update()
    world.feedback.rollback_memory("g1", 1, who="ana", why="too eager")
    world.feedback.review(second, "revoke", who="ana", why="for the record")
    world.update()
    db = world.projections.db
    rolled, revoked = memory_version(db, "g1", 3), memory_version(db, "g1", 4)
    assert rolled is not None
    assert revoked is not None
    assert (rolled.content, f"revoked {second} by ana: for the record") == (revoked.content, revoked.reason)


def test_the_staging_process_applies_a_revocation_once_on_replay(world: World) -> None:
    """The revocation is one ``EntryReviewed`` in the staging stream, with who and why, and the
    projections rebuilt from the log give the same MEMORY.md."""
    world.dream(insights=1)
    (entry_id,) = world.entries()
    world.feedback.review(entry_id, "promote_candidate", who="ana", why="true")
    world.update()
    world.feedback.review(entry_id, "revoke", who="bo", why="wrong")
    world.update()
    revoked = [r.event for r in world.store.read_stream("g1:staging") if isinstance(r.event, EntryReviewed)]
    assert [("revoke", "revoked", "bo", "wrong")] == [
        (e.decision, e.status, e.who, e.why) for e in revoked if e.decision == "revoke"
    ]
    rebuilt = Projections(world.store, open_projection_db("memory://"))
    update(rebuilt, world.staging)
    assert memory_version(world.projections.db, "g1") == memory_version(rebuilt.db, "g1")


def test_promote_by_review_then_revoke_through_the_cli(sqlite_url: str) -> None:
    """``oneiros review ENTRY --decision promote_candidate``, then ``--decision revoke --reason``:
    the newest MEMORY.md no longer has the entry's line (the version before did), and ``oneiros
    lineage ENTRY`` shows both decisions, who made them, when and why."""
    assert 0 == runner.invoke(app, ["dream", "--sample", "--store", sqlite_url, "--json"]).exit_code
    listed = json.loads(runner.invoke(app, ["staging", "--store", sqlite_url, "--json"]).output)
    entry = next(e for e in listed if e["status"] == "proposed")
    entry_id, text = entry["entry_id"], entry["text"]
    promoted = runner.invoke(
        app, ["review", entry_id, "--decision", "promote_candidate", "--reason", "held twice", "--store", sqlite_url]
    )
    assert 0 == promoted.exit_code, promoted.output
    memory = json.loads(runner.invoke(app, ["memory", "--store", sqlite_url, "--json"]).output)["memory"]
    assert text in memory["content"]
    argv = ["review", entry_id, "--decision", "revoke", "--reason", "a one-off", "--store", sqlite_url]
    revoked = runner.invoke(app, argv, env={"COLUMNS": "200"})
    assert 0 == revoked.exit_code, revoked.output
    version = memory["version"] + 1
    assert [
        f"{entry_id} is now revoked (owner: a one-off)",
        f"MEMORY.md v{version}: revoked {entry_id} by owner: a one-off (oneiros memory --diff {version - 1} {version})",
    ] == revoked.output.splitlines()
    newest = json.loads(runner.invoke(app, ["memory", "--store", sqlite_url, "--json"]).output)["memory"]
    assert (version, False) == (newest["version"], text in newest["content"])
    argv = ["memory", "--store", sqlite_url, "--diff", str(version - 1), str(version), "--json"]
    diff = json.loads(runner.invoke(app, argv).output)["diff"]
    assert [f"-- {text}"] == [line[: len(text) + 3] for line in diff.splitlines() if line.startswith("-- ")]
    lineage = runner.invoke(app, ["lineage", entry_id, "--store", sqlite_url], env={"COLUMNS": "300"})
    assert 0 == lineage.exit_code, lineage.output
    reviews = [line.split("@", 1)[1] for line in lineage.output.splitlines() if " review " in line]
    assert 2 == len(reviews)
    assert " review promote_candidate by owner at " in reviews[0]
    assert reviews[0].endswith(" → promoted: held twice")
    assert " review revoke by owner at " in reviews[1]
    assert reviews[1].endswith(" → revoked: a one-off")
