"""The projection commands: journal, staging, outcome, review, reevaluate and replay --verify."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from oneiros.cli import app


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"ONEIROS_STORE": f"sqlite:///{tmp_path}/events.db", "ONEIROS_PROJECTIONS": f"sqlite:///{tmp_path}/proj.db"}


def _run(env: dict[str, str], *args: str) -> object:
    result = CliRunner().invoke(app, list(args), env=env)
    return result


def _json(env: dict[str, str], *args: str) -> object:
    result = CliRunner().invoke(app, [*args, "--json"], env=env)
    assert 0 == result.exit_code, result.output
    return json.loads(result.stdout)


def test_dream_then_journal_staging_outcome_review_verify(env: dict[str, str]) -> None:
    """After one dream the journal has its cycle and the buffer its staged outputs, ten of them
    active; an outcome moves an entry, a review rejects it, and replay --verify finds every
    projection equal to a rebuild."""
    dream = _json(env, "dream", "--sample")
    journal = _json(env, "journal")
    assert [dream["cycle_id"]] == [e["cycle_id"] for e in journal]  # type: ignore[index]
    staging = _json(env, "staging")
    assert 10 == len([e for e in staging if e["status"] == "proposed"])
    first = next(e for e in staging if e["status"] == "proposed" and e["kind"] == "novel_insight")
    moved = _json(
        env, "outcome", "--golem", "golem", "--tick", "1000", "--verdict", "confirms", "--entry", first["entry_id"]
    )
    assert [(first["entry_id"], round(first["confidence"] + 0.1, 2))] == [
        (e["entry_id"], e["confidence"])
        for e in moved["entries"]  # type: ignore[index]
    ]
    reviewed = _json(env, "review", first["entry_id"], "--decision", "reject", "--reason", "not useful")
    assert ("rejected", [["reject", "owner", "not useful"]]) == (
        reviewed["status"],  # type: ignore[index]
        [[r["decision"], r["who"], r["why"]] for r in reviewed["reviews"]],  # type: ignore[index]
    )
    verify = _json(env, "replay", "--verify")
    assert verify["ok"] is True  # type: ignore[index]
    names = [
        "journal",
        "staging",
        "beliefs",
        "noise",
        "observations",
        "memory",
        "golems",
        "schedule",
        "index",
        "recall",
        "profile",
    ]
    assert names == [
        p["projection"]
        for p in verify["projections"]  # type: ignore[index]
    ]
    markdown = _run(env, "journal", "--markdown")
    assert "#dream #consolidation" in markdown.stdout


def test_illegal_review_exits_2_with_message(env: dict[str, str]) -> None:
    """Reviewing an entry whose status forbids the decision prints the error and exits 2."""
    _json(env, "dream", "--sample")
    entry = next(e["entry_id"] for e in _json(env, "staging") if e["status"] == "proposed")
    _json(env, "review", entry, "--decision", "reject", "--reason", "no")
    result = _run(env, "review", entry, "--decision", "reinforce", "--reason", "yes")
    assert 2 == result.exit_code
    assert f"error: entry '{entry}' is rejected; decision 'reinforce' is not allowed" == " ".join(result.stderr.split())


def test_an_outcome_lists_only_the_entries_it_moved(env: dict[str, str]) -> None:
    """Two cycles dreamt with no reading command between, then an outcome that matches no entry:
    the staging process, catching up as the outcome is recorded, stages both cycles' entries and
    displaces some after the outcome's position, yet the outcome says it moved none (it listed
    every entry staged or displaced then as moved), and that it shares no word with any of the ten
    entries active when the sweep came to it; an outcome on one active entry lists that one."""
    _json(env, "dream", "--sample")
    _json(env, "dream")
    shown = _run(env, "outcome", "--golem", "golem", "--tick", "1000", "--verdict", "confirms", "--tag", "nothing")
    lines = shown.output.splitlines()
    assert (0, "0 entries moved") == (shown.exit_code, lines[0].split("; ")[-1])
    assert ["  it shares no word with the criterion or text of any of the 10 active entries"] == lines[1:]
    active = next(e["entry_id"] for e in _json(env, "staging", "--status", "proposed"))
    moved = _json(env, "outcome", "--golem", "golem", "--tick", "1001", "--verdict", "confirms", "--entry", active)
    assert [active] == [e["entry_id"] for e in moved["entries"]]  # type: ignore[index]


def test_bad_verdict_and_decision_are_refused(env: dict[str, str]) -> None:
    """A verdict or decision outside the vocabulary is refused before anything is written."""
    _json(env, "dream", "--sample")
    verdict = _run(env, "outcome", "--golem", "golem", "--tick", "1", "--verdict", "maybe")
    assert (2, "error: verdict 'maybe' must be 'confirms' or 'contradicts'") == (
        verdict.exit_code,
        verdict.stderr.strip(),
    )
    decision = _run(env, "review", "x", "--decision", "promote", "--reason", "r")
    assert 2 == decision.exit_code
    assert "error: decision 'promote' must be one of reinforce, stale, reject, promote_candidate, revoke" == " ".join(
        decision.stderr.split()
    )


def test_verify_right_after_a_dream_compares_every_projection_at_the_head(env: dict[str, str]) -> None:
    """``replay --verify`` as the first command after a dream (no projection read yet) compares
    every projection at the log head and finds them equal to a rebuild: it compared most of them at
    position 0, empty with empty, and said they matched having verified nothing."""
    _json(env, "dream", "--sample")
    verify = _json(env, "replay", "--verify")
    head = _json(env, "status")["position"]  # type: ignore[index]
    assert (True, {head}) == (verify["ok"], {p["position"] for p in verify["projections"]})  # type: ignore[index]


def test_verify_reports_a_tampered_projection(env: dict[str, str]) -> None:
    """A row changed behind the runner's back makes replay --verify report the mismatch and exit 1."""
    from oneiros.projections._db import open_projection_db

    _json(env, "dream", "--sample")
    _json(env, "journal")
    db = open_projection_db(env["ONEIROS_PROJECTIONS"])
    kind, key, _data = db.scan("journal")[0]
    db.close()
    with sqlite3.connect(env["ONEIROS_PROJECTIONS"].removeprefix("sqlite:///")) as conn:
        conn.execute("UPDATE oneiros_projection_rows SET data = ? WHERE kind = ? AND key = ?", (b"{}", kind, key))
    result = CliRunner().invoke(app, ["replay", "--verify", "--json"], env=env)
    assert 1 == result.exit_code
    report = json.loads(result.stdout)
    assert (False, ["journal"]) == (report["ok"], [p["projection"] for p in report["projections"] if not p["ok"]])


def test_memory_shows_diffs_writes_and_rolls_back(env: dict[str, str], tmp_path: Path) -> None:
    """Promotions by review write MEMORY.md versions; the command shows the newest, diffs two,
    writes the file and rolls back to an earlier version as a new one."""
    _json(env, "dream", "--sample")
    first, second = [e["entry_id"] for e in _json(env, "staging") if e["status"] == "proposed"][:2]
    for entry in (first, second):
        _json(env, "review", entry, "--decision", "promote_candidate", "--reason", "confirmed")
    shown = _json(env, "memory", "--golem", "golem")
    assert (2, f"promoted {second}") == (shown["memory"]["version"], shown["memory"]["reason"])  # type: ignore[index]
    diff = _json(env, "memory", "--golem", "golem", "--diff", "1", "2")["diff"]  # type: ignore[index]
    assert diff.startswith("--- MEMORY.md v1\n+++ MEMORY.md v2\n")
    written = _json(env, "memory", "--golem", "golem", "--write", str(tmp_path / "mem"))
    assert str(tmp_path / "mem" / "MEMORY.md") == written["written"]  # type: ignore[index]
    rolled = _json(env, "memory", "--golem", "golem", "--rollback", "1", "--reason", "too eager")
    assert (3, "rolled back to v1 by owner: too eager") == (
        rolled["memory"]["version"],  # type: ignore[index]
        rolled["memory"]["reason"],  # type: ignore[index]
    )


def test_a_reading_command_brings_up_only_the_projections_it_shows(env: dict[str, str]) -> None:
    """``journal`` brings the journal (and the sweep) to the log head and leaves the recall index
    where it was, so a large import does not make it wait for an index it does not show;
    ``staging`` then brings up the staging buffer, and neither moves the recall index."""
    from oneiros.projections._db import open_projection_db
    from oneiros.store._store import open_store

    _json(env, "dream", "--sample")
    _json(env, "journal")
    _json(env, "staging")
    with open_store(env["ONEIROS_STORE"], create=False) as store:
        head = store.head()
    db = open_projection_db(env["ONEIROS_PROJECTIONS"])
    try:
        positions = {name: db.position(name) for name in ("journal", "staging", "recall", "index")}
    finally:
        db.close()
    assert {"journal": head, "staging": head, "recall": 0, "index": 0} == positions


def test_an_error_naming_bracketed_text_prints_it_whole(env: dict[str, str]) -> None:
    """An error message is printed as written, brackets and all: rich would read ``[bold]`` in a
    user's verdict (or ``oneiros[postgres]`` in the missing-extra message) as markup and drop it."""
    _json(env, "dream", "--sample")
    verdict = _run(env, "outcome", "--golem", "golem", "--tick", "1", "--verdict", "[bold]yes")
    assert (2, "error: verdict '[bold]yes' must be 'confirms' or 'contradicts'") == (
        verdict.exit_code,
        verdict.stderr.strip(),
    )


def test_status_shows_what_a_replay_of_the_log_shows(env: dict[str, str]) -> None:
    """``status`` reads the golems from their projection, brought up to the head at each call: after
    a first and a second cycle it shows what ``replay`` (a fold of the whole log) shows."""
    _json(env, "dream", "--sample")
    first = _json(env, "status")
    _json(env, "dream", "--golem", "golem")
    _json(env, "dream", "--golem", "other", "--sample")
    second = _json(env, "status")
    replayed = _json(env, "replay")
    assert ([1], replayed["golems"]) == (  # type: ignore[index]
        [g["cycles_completed"] for g in first["golems"]],  # type: ignore[index]
        second["golems"],  # type: ignore[index]
    )
    assert [("golem", 2), ("other", 1)] == [(g["golem_id"], g["cycles_completed"]) for g in second["golems"]]  # type: ignore[index]


def test_ids_print_whole_ids_one_a_line_for_a_shell_variable(env: dict[str, str]) -> None:
    """`staging --ids` and `journal --ids` print the ids --json gives, whole, one a line and nothing
    else, even where --limit cut the list: README's blocks take an id with ENTRY=$(... --ids)."""
    _json(env, "dream", "--sample")
    entries = [e["entry_id"] for e in _json(env, "staging", "--status", "proposed", "--limit", "2")]
    shown = CliRunner().invoke(app, ["staging", "--status", "proposed", "--limit", "2", "--ids"], env=env)
    assert (0, entries, "") == (shown.exit_code, shown.stdout.splitlines(), shown.stderr)
    cycles = [e["cycle_id"] for e in _json(env, "journal")]
    assert cycles == CliRunner().invoke(app, ["journal", "--ids"], env=env).stdout.splitlines()
