"""Per-golem indexes over the journal and the staging buffer, so an API page costs reads of that
golem's rows only, never a scan of every cycle and entry in the store.

Rows of the ``index`` projection:

* ``run/<golem>/<started position>``: a cycle's id, in the order cycles started;
* ``dream/<golem>/<staged position>/<entry id>``: a staged entry's status;
* ``where/<entry id>``: the golem an entry belongs to;
* ``pending/<golem>``: how many entries are proposed or reinforced (Dense-Mem's pending count).

The rows themselves stay in the ``journal`` and ``staging`` projections.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from oneiros.events._staging import (
    EntryDisplaced,
    EntryExpired,
    EntryPromoted,
    EntryRefuted,
    EntryReviewed,
    EntryStaged,
)
from oneiros.events._types import DreamStart, Event
from oneiros.projections._db import ProjectionDB
from oneiros.projections._journal import JournalEntry
from oneiros.projections._runner import Rows
from oneiros.projections._staging import STAGING_EVENTS, StagedEntry
from oneiros.store._store import Recorded

__all__ = [
    "PENDING",
    "GolemIndex",
    "entry_golem",
    "golem_dreams",
    "golem_runs",
    "journal_entries",
    "journal_entry",
    "pending_count",
    "staged_entries",
    "staged_entry",
]

PENDING = ("proposed", "reinforced")


class _Id(msgspec.Struct, kw_only=True):
    id: str


class _Status(msgspec.Struct, kw_only=True):
    status: str


class _Where(msgspec.Struct, kw_only=True):
    golem_id: str
    key: str


class _Count(msgspec.Struct, kw_only=True):
    n: int = 0


def _key(position: int) -> str:
    return f"{position:015d}"


class GolemIndex:
    name = "index"
    types: tuple[type[Event], ...] = (DreamStart, *STAGING_EVENTS)

    def apply(self, record: Recorded, rows: Rows) -> None:
        match record.event:
            case DreamStart(cycle_id=cycle_id):
                rows.put("run", f"{record.meta.golem_id}/{_key(record.position)}", _Id(id=cycle_id))
            case EntryStaged(golem_id=golem, entry_id=entry_id):
                key = f"{golem}/{_key(record.position)}/{entry_id}"
                rows.put("dream", key, _Status(status="proposed"))
                rows.put("where", entry_id, _Where(golem_id=golem, key=key))
                pending = rows.get("pending", golem, _Count) or _Count()
                pending.n += 1
                rows.put("pending", golem, pending)
            case EntryReviewed(golem_id=golem, entry_id=entry_id, status=status):
                _move(rows, golem, entry_id, status)
            case EntryPromoted(golem_id=golem, entry_id=entry_id):
                _move(rows, golem, entry_id, "promoted")
            case EntryRefuted(golem_id=golem, entry_id=entry_id):
                _move(rows, golem, entry_id, "refuted")
            case EntryDisplaced(golem_id=golem, entry_id=entry_id):
                _move(rows, golem, entry_id, "displaced")
            case EntryExpired(golem_id=golem, entry_id=entry_id):
                _move(rows, golem, entry_id, "expired")


def _move(rows: Rows, golem: str, entry_id: str, status: str) -> None:
    """The entry's row under its new ``status``, and the golem's count of pending entries."""
    where = rows.get("where", entry_id, _Where)
    if where is None:
        return
    before = rows.get("dream", where.key, _Status)
    if before is not None and before.status != status:
        pending = rows.get("pending", golem, _Count) or _Count()
        pending.n += (status in PENDING) - (before.status in PENDING)
        rows.put("dream", where.key, _Status(status=status))
        rows.put("pending", golem, pending)


def golem_runs(db: ProjectionDB, golem_id: str) -> list[tuple[str, str]]:
    """``(position key, cycle id)`` of the golem's cycles, in the order they started."""
    return [(key, msgspec.json.decode(d, type=_Id).id) for _k, key, d in db.scan("index", "run", f"{golem_id}/")]


def golem_dreams(db: ProjectionDB, golem_id: str, statuses: Sequence[str] = ()) -> list[tuple[str, str]]:
    """``(position key, entry id)`` of the golem's staged entries in ``statuses`` (all if empty), in
    staging order."""
    out: list[tuple[str, str]] = []
    for _k, key, data in db.scan("index", "dream", f"{golem_id}/"):
        if not statuses or msgspec.json.decode(data, type=_Status).status in statuses:
            out.append((key, key.rsplit("/", 1)[1]))
    return out


def entry_golem(db: ProjectionDB, entry_id: str) -> str | None:
    data = db.get("index", "where", entry_id)
    return None if data is None else msgspec.json.decode(data, type=_Where).golem_id


def pending_count(db: ProjectionDB, golem_id: str) -> int:
    data = db.get("index", "pending", golem_id)
    return 0 if data is None else msgspec.json.decode(data, type=_Count).n


def staged_entries(db: ProjectionDB, entry_ids: Sequence[str]) -> list[StagedEntry]:
    """The staging rows of ``entry_ids`` that exist, in that order, read in one query."""
    rows = db.get_many("staging", "entry", entry_ids)
    return [msgspec.json.decode(rows[i], type=StagedEntry) for i in entry_ids if i in rows]


def journal_entries(db: ProjectionDB, cycle_ids: Sequence[str]) -> list[JournalEntry]:
    """The journal rows of ``cycle_ids`` that exist, in that order, read in one query."""
    rows = db.get_many("journal", "cycle", cycle_ids)
    return [msgspec.json.decode(rows[i], type=JournalEntry) for i in cycle_ids if i in rows]


def staged_entry(db: ProjectionDB, entry_id: str) -> StagedEntry | None:
    data = db.get("staging", "entry", entry_id)
    return None if data is None else msgspec.json.decode(data, type=StagedEntry)


def journal_entry(db: ProjectionDB, cycle_id: str) -> JournalEntry | None:
    data = db.get("journal", "cycle", cycle_id)
    return None if data is None else msgspec.json.decode(data, type=JournalEntry)
