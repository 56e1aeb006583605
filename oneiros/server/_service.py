"""What every interface of the server does, once: REST routes and MCP tools both call these.

The service holds no state of its own. Reads come from the projections (kept up with the log by a
follower thread, or by ``oneiros follow`` elsewhere); writes go through the commands the CLI uses
(``Golems``, ``Feedback``, the executors), and a write returns only once the projections include
it, so a client reads its own writes. Any number of servers can run side by side on one store.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import msgspec

from oneiros._deps import Deps
from oneiros._errors import CycleNotFound, EntryNotFound, GolemNotFound, MemoryVersionNotFound, ProjectionConflict
from oneiros.config._load import OneirosConfig
from oneiros.daemon._catch_up import follow, update
from oneiros.events._schedule import ActivityKind, ActivityRecorded
from oneiros.events._staging import ReviewDecision
from oneiros.events._types import DreamStart
from oneiros.fsm._golem import GolemState
from oneiros.fsm._service import Golems
from oneiros.projections._db import ProjectionDB, open_projection_db
from oneiros.projections._db import default_projection_url as _default_projection_url
from oneiros.projections._index import (
    entry_golem,
    golem_dreams,
    golem_runs,
    journal_entries,
    journal_entry,
    pending_count,
    staged_entries,
    staged_entry,
)
from oneiros.projections._journal import JournalEntry, dream_reports, journal_markdown
from oneiros.projections._recall import RecallResult, recall_golem
from oneiros.projections._service import Projections, ProjectionSettings
from oneiros.projections._sinks import (
    beliefs,
    memory_diff,
    memory_version,
    memory_versions,
    noise_fragments,
    observations,
)
from oneiros.projections._staging import StagedEntry
from oneiros.scheduling._schedule_state import ScheduleState
from oneiros.server._auth import Principal
from oneiros.server._background import BackgroundCycles
from oneiros.server._cycles import start_cycle
from oneiros.server._models import CycleIn, EpisodesIn
from oneiros.server._pages import Page, page_of
from oneiros.settings._runtime import DEFAULT_SPANS_PATH
from oneiros.store._snapshots import read_cycle
from oneiros.store._store import EventStore, Recorded, record_row
from oneiros.validation._recalls import record_recall
from oneiros.validation._review import Feedback, OutcomeInput

__all__ = ["Service", "dream_row", "run_row"]


def dream_row(e: StagedEntry) -> dict[str, Any]:
    """A staged entry as Dense-Mem 002_* shows a dream: a hypothesis for review, never a fact."""
    return {
        "dream_id": e.entry_id,
        "golem_id": e.golem_id,
        "status": e.status,
        "kind": e.kind,
        "hypothesis": e.text,
        "confidence": e.confidence_pct / 100,
        "confirmations": e.confirmations,
        "contradictions": e.contradictions,
        "criterion": msgspec.to_builtins(e.criterion),
        "source_refs": msgspec.to_builtins(e.lineage),
        "staged_position": e.staged_position,
        "updated_position": e.updated_position,
        "resolved_by": e.resolved_by,
        "reviews": msgspec.to_builtins(e.reviews),
        "quarantine": None if e.quarantine is None else e.quarantine.as_row(),
    }


def run_row(e: JournalEntry) -> dict[str, Any]:
    """One cycle as Dense-Mem's runs list shows it."""
    return {
        "cycle_id": e.cycle_id,
        "golem_id": e.golem_id,
        "status": e.status,
        "trigger": e.trigger,
        "started_at": e.started_at.isoformat(),
        "ended_at": e.ended_at.isoformat() if e.ended_at else None,
        "started_position": e.started_position,
        "phases": [p.phase for p in e.phases],
        "staged": e.staged,
        "promoted": e.promoted,
        "tokens": e.tokens_in + e.tokens_out,
        "cost_usd": e.cost_usd,
        "quality": e.quality_pct / 100,
        "interrupted_by": e.interrupted_by,
        "empty": e.empty,
    }


class Service:
    """The server's operations on one store, each checked against the caller's principal."""

    def __init__(self, store: EventStore, config: OneirosConfig, *, deps: Deps | None = None) -> None:
        self.store = store
        self.config = config
        self.settings = config.server
        self.deps = deps or Deps()
        url = self.settings.projections or os.environ.get("ONEIROS_PROJECTIONS") or _default_projection_url(store.url)
        self.projections = Projections(store, open_projection_db(url), ProjectionSettings())
        # One thread moves the projections at a time: the follower, or a write settling.
        self._moving = threading.Lock()
        self._stop = threading.Event()
        self._follower: threading.Thread | None = None
        self.cycles = BackgroundCycles(
            store, self.settings.max_cycles, self.settings.shutdown_grace_seconds, on_end=self.settle
        )

    # -- keeping the projections up ---------------------------------------------------------

    def start(self) -> None:
        self.settle()
        if self.settings.follow:
            self._follower = threading.Thread(target=self._follow, name="oneiros-projections", daemon=True)
            self._follower.start()

    def close(self) -> None:
        self.cycles.close()  # first: a cycle's last events still reach the projections
        self._stop.set()
        if self._follower is not None:
            self._follower.join(timeout=5)
        self.projections.close()

    def _follow(self) -> None:
        # The sweep and the projections on one subscription; a conflict with another server's
        # follower leaves the stretch to whichever is ahead (oneiros.daemon.follow).
        follow(self.projections, self._stop, self.config.staging, self.config.health)

    def settle(self, on_progress: Callable[[str, int], None] | None = None) -> None:
        """Bring the staging process and every projection to the head; ``on_progress`` hears what
        is moving and the position it reached (``oneiros serve`` shows it before it listens)."""
        with self._moving:
            for _attempt in range(20):
                try:
                    update(self.projections, self.config.staging, self.config.health, on_progress=on_progress)
                    return
                except ProjectionConflict:
                    continue  # another server moved them first; catch up from where it got

    # -- access -----------------------------------------------------------------------------

    def golem_state(self, who: Principal, golem_id: str, at: int | None = None) -> GolemState:
        who.require("read", golem_id)
        if at is not None:
            return Golems(self.store).state(golem_id, until=at)
        state = self.projections.golem(golem_id)
        if state is None:
            raise GolemNotFound(golem_id)
        return state

    def _readable(self, who: Principal, golem_id: str) -> None:
        """Check ``who`` may read ``golem_id`` and that it exists: an empty page would say a golem
        that was never created has no dreams, where every other route says it does not exist."""
        who.require("read", golem_id)
        if self.projections.golem(golem_id) is None:
            raise GolemNotFound(golem_id)

    def schedule_state(self, who: Principal, golem_id: str) -> ScheduleState:
        """What the scheduler knows of the golem, from the ``schedule`` projection (a fold of its
        stream would sum every episode since its last dream, on every request)."""
        who.require("read", golem_id)
        state = self.projections.schedule(golem_id)
        if state is None:
            raise GolemNotFound(golem_id)
        return state

    def _entries(self, golem_id: str, statuses: tuple[str, ...] = ()) -> list[StagedEntry]:
        """The golem's staged entries in ``statuses`` (all if empty), in staging order."""
        db = self.projections.db
        return staged_entries(db, [entry_id for _key, entry_id in golem_dreams(db, golem_id, statuses)])

    def _journal(self, golem_id: str) -> list[JournalEntry]:
        db = self.projections.db
        return journal_entries(db, [cycle_id for _key, cycle_id in golem_runs(db, golem_id)])

    def _page(
        self,
        keys: list[tuple[str, str]],
        read: Callable[[ProjectionDB, list[str]], list[Any]],
        row: Callable[[Any], Any],
        limit: int,
        cursor: str | None,
        *,
        newest_first: bool = False,
    ) -> Page:
        """A page of index ``keys``, reading the rows of that page only, in one query."""
        page = page_of(keys, lambda kv: kv[0], limit, cursor, lambda kv: kv[1], newest_first=newest_first)
        page["items"] = [row(item) for item in read(self.projections.db, page["items"])]
        return page

    def _cycle(self, golem_id: str, cycle_id: str) -> JournalEntry:
        found = journal_entry(self.projections.db, cycle_id)
        if found is None or found.golem_id != golem_id:
            raise CycleNotFound(golem_id, cycle_id)
        return found

    # -- Dense-Mem's routes -----------------------------------------------------------------

    def status(self, who: Principal, golem_id: str) -> dict[str, Any]:
        """Effective config, latest run and pending count (Dense-Mem ``GET /dreaming/status``)."""
        state = self.golem_state(who, golem_id)
        runs = golem_runs(self.projections.db, golem_id)
        latest = journal_entry(self.projections.db, runs[-1][1]) if runs else None
        return {
            "golem": state.summary(),
            "config": {
                "schedule": msgspec.to_builtins(self.config.schedule),
                "budget": msgspec.to_builtins(self.config.cycle.budget),
                "cycles_run_on": "workers" if self.settings.queue else "server",
            },
            "latest_run": run_row(latest) if latest else None,
            "pending_count": pending_count(self.projections.db, golem_id),
        }

    def runs(self, who: Principal, golem_id: str, limit: int, cursor: str | None) -> Page:
        self._readable(who, golem_id)
        keys = golem_runs(self.projections.db, golem_id)
        return self._page(keys, journal_entries, run_row, limit, cursor, newest_first=True)

    def dreams(self, who: Principal, golem_id: str, statuses: tuple[str, ...], limit: int, cursor: str | None) -> Page:
        self._readable(who, golem_id)
        keys = golem_dreams(self.projections.db, golem_id, statuses)
        return self._page(keys, staged_entries, dream_row, limit, cursor, newest_first=True)

    def dream(self, who: Principal, dream_id: str) -> StagedEntry:
        who.require("read")
        golem = entry_golem(self.projections.db, dream_id)
        entry = staged_entry(self.projections.db, dream_id) if golem is not None and who.sees(golem) else None
        if entry is None:
            raise EntryNotFound(dream_id)  # another golem's dream is as absent as a missing one
        return entry

    def feedback(self, who: Principal, dream_id: str, decision: ReviewDecision, why: str) -> StagedEntry:
        entry = self.dream(who, dream_id)
        who.require("write", entry.golem_id)
        Feedback(self.store, deps=self.deps).review(dream_id, decision, who=who.name, why=why)
        self.settle()
        return self.dream(who, dream_id)

    # -- golems, episodes, activity, outcomes -----------------------------------------------

    def golems(self, who: Principal, limit: int, cursor: str | None) -> Page:
        who.require("read")
        mine = [s for s in self.projections.golems() if who.sees(s.golem_id)]
        return page_of(mine, lambda s: s.golem_id, limit, cursor, GolemState.summary)

    def create_golem(self, who: Principal, golem_id: str, name: str) -> GolemState:
        who.require("write", golem_id)
        Golems(self.store, deps=self.deps).create(golem_id, name)
        self.settle()
        return self.golem_state(who, golem_id)

    def record_episodes(self, who: Principal, golem_id: str, body: EpisodesIn) -> list[Recorded]:
        who.require("write", golem_id)
        records = Golems(self.store, deps=self.deps).record_episodes(golem_id, body.episodes)
        self.settle()
        return records

    def record_activity(self, who: Principal, golem_id: str, kind: ActivityKind, detail: str) -> list[Recorded]:
        who.require("write", golem_id)
        event = ActivityRecorded(kind=kind, detail=detail)
        records = Golems(self.store, deps=self.deps).record(golem_id, [event])
        self.settle()
        return records

    def record_outcome(self, who: Principal, golem_id: str, outcome: OutcomeInput) -> dict[str, Any]:
        who.require("write", golem_id)
        feedback = Feedback(self.store, deps=self.deps)
        record = feedback.record_outcome(golem_id, outcome)
        self.settle()
        moved = feedback.moved_by(record)
        touched = [e for e in self._entries(golem_id) if e.entry_id in moved]
        return {"position": record.position, "dreams": [dream_row(e) for e in touched]}

    def start_cycle(self, who: Principal, golem_id: str, body: CycleIn) -> dict[str, Any]:
        """Dense-Mem's ``run_dreaming_cycle`` (see ``_cycles``)."""
        who.require("write", golem_id)
        out = start_cycle(self.store, self.config, self.deps, golem_id, body, background=self.cycles)
        self.settle()
        return out

    # -- what dreaming produced -------------------------------------------------------------

    def journal(self, who: Principal, golem_id: str, limit: int, cursor: str | None) -> Page:
        self._readable(who, golem_id)
        keys = golem_runs(self.projections.db, golem_id)
        return self._page(keys, journal_entries, msgspec.to_builtins, limit, cursor, newest_first=True)

    def journal_markdown(self, who: Principal, golem_id: str) -> str:
        self._readable(who, golem_id)
        return journal_markdown(self._journal(golem_id))

    def staging(self, who: Principal, golem_id: str, statuses: tuple[str, ...], limit: int, cursor: str | None) -> Page:
        self._readable(who, golem_id)
        keys = golem_dreams(self.projections.db, golem_id, statuses)
        return self._page(keys, staged_entries, dream_row, limit, cursor)

    def sink(self, who: Principal, golem_id: str, which: str, limit: int, cursor: str | None) -> Page:
        """Beliefs, noise fragments or observations, in the order the sink keeps them."""
        self._readable(who, golem_id)
        db = self.projections.db
        found: list[Any] = (
            beliefs(db, golem_id)
            if which == "beliefs"
            else noise_fragments(db, golem_id)
            if which == "noise"
            else observations(db, golem_id)
        )
        rows = list(enumerate(found))
        return page_of(rows, lambda r: f"{r[0]:09d}", limit, cursor, lambda r: msgspec.to_builtins(r[1]))

    def memory_versions(self, who: Principal, golem_id: str, limit: int, cursor: str | None) -> Page:
        self._readable(who, golem_id)
        return page_of(
            memory_versions(self.projections.db, golem_id),
            lambda v: f"{v.version:09d}",
            limit,
            cursor,
            msgspec.to_builtins,
            newest_first=True,
        )

    def memory(self, who: Principal, golem_id: str, version: int | None) -> dict[str, Any] | None:
        """MEMORY.md at ``version`` (the newest if None); None when nothing was promoted yet."""
        self._readable(who, golem_id)
        found = memory_version(self.projections.db, golem_id, version)
        if found is None and version is not None:
            raise self._no_version(golem_id, version)
        return None if found is None else msgspec.to_builtins(found)

    def memory_diff(self, who: Principal, golem_id: str, old: int, new: int) -> str:
        self._readable(who, golem_id)
        for version in (old, new):
            if memory_version(self.projections.db, golem_id, version) is None:
                raise self._no_version(golem_id, version)
        return memory_diff(self.projections.db, golem_id, old, new)

    def _no_version(self, golem_id: str, version: int) -> MemoryVersionNotFound:
        newest = memory_version(self.projections.db, golem_id)
        return MemoryVersionNotFound(golem_id, version, newest.version if newest else 0)

    # -- one cycle --------------------------------------------------------------------------

    def cycle_events(self, who: Principal, golem_id: str, cycle_id: str, after: int, limit: int) -> dict[str, Any]:
        who.require("read", golem_id)
        entry = self._cycle(golem_id, cycle_id)
        rows: list[dict[str, Any]] = []
        more = False
        for record in self.store.read_all(after=max(after, entry.started_position - 1)):
            if record.meta.cycle_id != cycle_id or record.meta.golem_id.partition(":")[0] != golem_id:
                continue
            if len(rows) == limit:
                more = True
                break
            rows.append(record_row(record))
        return {"items": rows, "next_cursor": str(rows[-1]["position"]) if more else None}

    def cycle_report(self, who: Principal, golem_id: str, cycle_id: str) -> dict[str, Any]:
        who.require("read", golem_id)
        self._cycle(golem_id, cycle_id)
        for report, wake_up, staged in dream_reports(self.store, golem_id):
            if report.cycle_id == cycle_id:
                return {
                    "report": msgspec.to_builtins(report),
                    "wake_up": msgspec.to_builtins(wake_up) if wake_up else None,
                    "staged": msgspec.to_builtins(staged),
                }
        return {"report": None, "wake_up": None, "staged": []}

    def cycle_budget(self, who: Principal, golem_id: str, cycle_id: str) -> dict[str, Any]:
        from oneiros.runtime._budget import Ledger, budget_report  # noqa: PLC0415 - workers loads RQ and OpenTelemetry

        who.require("read", golem_id)
        entry = self._cycle(golem_id, cycle_id)
        cycle_history = read_cycle(self.store, golem_id, cycle_id) or [
            r for r in self.store.read_stream(golem_id) if r.position >= entry.started_position
        ]
        # The caps the cycle ran under, as its DreamStart recorded them: the server's own config may
        # have another tier or caps, and judging a hardened cycle by core's 12,000 tokens showed a
        # hard budget overrun that never happened. A cycle recorded without settings ran with the
        # config of the day, the server's the best guess left.
        start = next((r.event for r in cycle_history if isinstance(r.event, DreamStart)), None)
        recorded = start.settings if start is not None else None
        caps_of = recorded.budget if recorded is not None else self.config.cycle.budget
        # The window, day and month caps count all the golem spent in them, as the cycle's guard did:
        # from this cycle's events alone the gauges showed one cycle's spend against a day's cap.
        end = cycle_history[-1]
        ledger = self.store.read_stream(golem_id, until=end.position, types=(DreamStart, *Ledger.reads))
        _last, caps = budget_report(ledger, caps_of, now=end.meta.time)
        return {
            "cycle_id": cycle_id,
            "tier": caps_of.tier,
            "phases": msgspec.to_builtins(entry.phases),
            "tokens_in": entry.tokens_in,
            "tokens_out": entry.tokens_out,
            "cost_usd": entry.cost_usd,
            "caps": caps,
        }

    def cycle_trace(self, who: Principal, golem_id: str, cycle_id: str) -> list[Any]:
        from oneiros.telemetry._tracing import cycle_spans, read_spans  # noqa: PLC0415 - workers loads RQ and OpenTelemetry

        who.require("read", golem_id)
        self._cycle(golem_id, cycle_id)
        # The config's tracing.spans_path: oneiros.toml or ONEIROS_SPANS, as `oneiros trace` reads it.
        path = self.config.tracing.spans_path or DEFAULT_SPANS_PATH
        spans = read_spans(path) if path != "off" and os.path.exists(path) else []
        return [msgspec.to_builtins(s) for s in cycle_spans(spans, cycle_id)]

    # -- recall -----------------------------------------------------------------------------

    def recall(self, who: Principal, golem_id: str, query: str, limit: int) -> RecallResult:
        state = self.golem_state(who, golem_id)
        result = recall_golem(self.projections.db, state.golem_id, query, limit)
        # A read scope never writes: its recalls are answered but not recorded, so they neither show
        # in the log nor count toward recall-driven promotion (which would rewrite MEMORY.md).
        if who.has("write"):
            record_recall(self.store, golem_id, result, self.deps)
        return result
