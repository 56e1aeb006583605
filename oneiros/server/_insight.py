"""Insight routes: a golem's dreaming-health alarms and a staged entry's exact lineage. Both read
the log (the golem's health stream; the entry's golem and staging streams), never a whole log."""

from __future__ import annotations

from typing import Any

import msgspec

from oneiros.health._health import health_report
from oneiros.projections._lineage import entry_lineage
from oneiros.server._auth import Principal
from oneiros.server._service import Service

__all__ = ["dream_lineage", "golem_health"]


def golem_health(service: Service, who: Principal, golem_id: str) -> dict[str, Any]:
    """The alarms raised now and every alarm raised and cleared (``oneiros health``'s JSON
    without the metrics, which need the health process's whole fold)."""
    who.require("read", golem_id)
    service.golem_state(who, golem_id, None)  # a missing golem is a 404, not an empty report
    out: dict[str, Any] = msgspec.to_builtins(health_report(service.store, golem_id))
    return out


def dream_lineage(service: Service, who: Principal, dream_id: str) -> dict[str, Any]:
    """``oneiros lineage``'s JSON for one dream (by its exact id)."""
    entry = service.dream(who, dream_id)
    out: dict[str, Any] = msgspec.to_builtins(entry_lineage(service.store, dream_id, entry.golem_id))
    return out
