"""The read routes the web inspector uses, against a real ``oneiros serve`` on SQLite and PostgreSQL:
the machine's declaration, whoami, should-dream, one cycle's journal entry, a dream's history."""

from __future__ import annotations

import pytest

from oneiros.fsm._machine import MACHINE_STATES, destination
from tests.server.conftest import Server
from tests.server.test_rest import _dreamt, _ok

pytestmark = pytest.mark.timeout(180)


def test_the_machine_route_is_the_fsm_declaration(server: Server) -> None:
    """States in declared order with their parents; each move is what ``destination`` says, and a
    child does not repeat a move it inherits from its parent."""
    machine = _ok(server.client("read").get("/machine"))
    assert list(MACHINE_STATES) == [s["name"] for s in machine["states"]]
    assert {"Dreaming_NREM": "Dreaming", "Waking": None} == {
        s["name"]: s["parent"] for s in machine["states"] if s["name"] in ("Dreaming_NREM", "Waking")
    }
    moves = [(t["trigger"], t["source"], t["dest"]) for t in machine["transitions"] if not t["internal"]]
    assert all(destination(source, trigger) == dest for trigger, source, dest in moves)
    assert ("fall_asleep", "Waking", "Dreaming_HypnagogicOnset") in moves
    assert ("interrupt", "Dreaming", "Waking") in moves
    assert not any(source.startswith("Dreaming_") and trigger == "interrupt" for trigger, source, _ in moves)
    assert ["Dreaming_HypnagogicOnset", "Dreaming_NREM", "Dreaming_REM", "Dreaming_Integration",
            "Dreaming_HypnopompicReturn"] == [p["state"] for p in machine["phases"]]  # fmt: skip


def test_whoami_names_the_token_and_its_scopes(server: Server) -> None:
    """A read token learns it cannot write; a golem-bound writer learns its golem."""
    assert {"name": "reader", "scopes": ["read"], "golems": [], "write": False} == _ok(
        server.client("read").get("/whoami")
    )
    assert {"name": "g1-agent", "scopes": ["write"], "golems": ["g1"], "write": True} == _ok(
        server.client("g1").get("/whoami")
    )


def test_should_dream_cycle_entry_and_dream_history(server: Server) -> None:
    """should-dream explains every check with its values; a cycle's entry is its journal row; a
    dream's history names the outcome behind each confidence step; another golem's token gets 403
    for the golem routes and 404 for the dream, as if it did not exist."""
    http = server.client("admin")
    cycle = _dreamt(http)
    decision = _ok(http.get("/golems/g1/should-dream"))
    assert (False, "g1") == (decision["dream"], decision["golem_id"])
    assert {"name": "episodes", "passed": False, "detail": "24 < 150 for a stable golem"} in decision["checks"]
    assert set(decision["blocked_by"]) == {c["name"] for c in decision["checks"] if not c["passed"]}

    entry = _ok(http.get(f"/golems/g1/cycles/{cycle['cycle_id']}"))
    [journal] = _ok(http.get("/golems/g1/journal"))["items"]
    assert journal == entry
    assert [
        "hypnagogic_onset", "nrem", "rem", "integration", "hypnopompic_return"
    ] == [p["phase"] for p in entry["phases"]]  # fmt: skip

    dream = _ok(http.get("/dreams", params={"golem": "g1", "status": "proposed"}))["items"][0]["entry_id"]
    outcome = _ok(http.post("/golems/g1/outcomes", json={"tick": 30, "verdict": "confirms", "entry_id": dream}), 201)
    history = _ok(http.get(f"/dreams/{dream}/history"))
    assert ["EntryStaged", "ConfidenceChanged"] == [s["type"] for s in history["steps"]]
    step = history["steps"][1]
    assert (outcome["position"], "OutcomeRecorded", "confirms") == (
        step["outcome"]["position"], step["outcome"]["type"], step["outcome"]["payload"]["verdict"]
    )  # fmt: skip
    assert 10 == step["payload"]["after_pct"] - step["payload"]["before_pct"]

    other = server.client("g2")
    assert 403 == other.get("/golems/g1/should-dream").status_code
    assert 403 == other.get(f"/golems/g1/cycles/{cycle['cycle_id']}").status_code
    assert "EntryNotFound" == other.get(f"/dreams/{dream}/history").json()["error"]["type"]
    missing = http.get("/golems/g1/cycles/nope")
    assert (404, "CycleNotFound") == (missing.status_code, missing.json()["error"]["type"])
