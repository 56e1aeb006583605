"""Reads the web inspector needs besides the agent's routes: the machine's own declaration, who
the token is, the should-dream decision, and a staged entry's confidence history with the outcome
behind each step. Every read is one golem's rows or streams, never the whole log."""

from __future__ import annotations

from datetime import UTC, datetime
from importlib.resources import files
from pathlib import Path
from typing import Any

import msgspec

from oneiros._errors import CycleNotFound
from oneiros.fsm._machine import MACHINE, SEPARATOR
from oneiros.projections._index import journal_entry
from oneiros.server._auth import Principal
from oneiros.server._service import Service
from oneiros.store._store import record_row

__all__ = ["cycle_entry", "dream_history", "machine", "should_dream_now", "static_dir", "whoami"]


def static_dir() -> Path:
    """The built inspector, shipped as package data (``inspector/`` holds its sources)."""
    return Path(str(files("oneiros.server") / "static"))


def _parent(state: str) -> str | None:
    head, sep, _tail = state.rpartition(SEPARATOR)
    return head if sep and head in MACHINE.states else None


def machine() -> dict[str, Any]:
    """The GolemMode/DreamPhase machine as it declares itself: its state tree and the transitions
    each state declares (not those it inherits from its parent), read through ``destination``; and
    the phase table, whose labels the states of the phases carry."""
    labels = {MACHINE.phase_state(p.name): p.label for p in MACHINE.phases}
    states = [
        {"name": s, "parent": _parent(s), "label": labels.get(s, s.rpartition(SEPARATOR)[2])} for s in MACHINE.states
    ]
    transitions: list[dict[str, Any]] = []
    for state in MACHINE.states:
        parent = _parent(state)
        for trigger in MACHINE.triggers:
            dest = MACHINE.destination(state, trigger)
            inherited = parent is not None and dest is not None and MACHINE.destination(parent, trigger) == dest
            if dest is None or inherited:
                continue
            transitions.append({"trigger": trigger, "source": state, "dest": dest, "internal": dest == state})
    phases = [
        {
            "phase": p.name,
            "state": MACHINE.phase_state(p.name),
            "label": p.label,
            "stream": p.stream,
            "description": p.description,
        }
        for p in MACHINE.phases
    ]
    return {"states": states, "transitions": transitions, "phases": phases, "initial": MACHINE.states[0]}


def whoami(who: Principal) -> dict[str, Any]:
    """The token's name, scopes and golems, so a client shows only the actions it may take."""
    return {"name": who.name, "scopes": list(who.scopes), "golems": list(who.golems), "write": who.has("write")}


def should_dream_now(service: Service, who: Principal, golem_id: str) -> dict[str, Any]:
    """``oneiros should-dream`` now: every gate and trigger with the values it compared."""
    from oneiros.scheduling._scheduler import should_dream  # noqa: PLC0415 - the read path stays light

    config = service.config
    state = service.schedule_state(who, golem_id)
    now = datetime.now(UTC)
    decision = should_dream(config.schedule, state, now, tick_seconds=config.daemon.tick_seconds)
    return {
        "golem_id": golem_id,
        "at": now.isoformat(),
        "dream": decision.dream,
        "trigger": decision.trigger,
        "blocked_by": list(decision.blocked_by),
        "urgency": decision.urgency,
        "threshold": decision.threshold,
        "deep": decision.deep,
        "checks": [{"name": c.name, "passed": c.passed, "detail": c.detail} for c in decision.checks],
    }


def dream_history(service: Service, who: Principal, dream_id: str) -> dict[str, Any]:
    """A staged entry's events in order; each confidence step carries the outcome that caused it."""
    entry = service.dream(who, dream_id)
    steps: list[dict[str, Any]] = []
    for record in service.store.read_stream(f"{entry.golem_id}:staging"):
        payload = msgspec.to_builtins(record.event)
        if payload.get("entry_id") != dream_id:
            continue
        row = record_row(record)
        outcome_at = payload.get("outcome_position")
        if isinstance(outcome_at, int):
            found = next(iter(service.store.read_all(after=outcome_at - 1, until=outcome_at)), None)
            row["outcome"] = record_row(found) if found is not None else None
        steps.append(row)
    return {"dream_id": dream_id, "confidence": entry.confidence_pct / 100, "status": entry.status, "steps": steps}


def cycle_entry(service: Service, who: Principal, golem_id: str, cycle_id: str) -> dict[str, Any]:
    """One cycle's journal entry: phases, fragments and thread, counts, tokens and cost."""
    who.require("read", golem_id)
    found = journal_entry(service.projections.db, cycle_id)
    if found is None or found.golem_id != golem_id:
        raise CycleNotFound(golem_id, cycle_id)
    entry: dict[str, Any] = msgspec.to_builtins(found)
    return entry
