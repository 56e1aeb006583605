"""The reads: golems, the staging buffer, the journal, a cycle's events, report and budget, the
sinks and MEMORY.md, recall, the schedule's decision and the log itself."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeGuard, TypeVar, get_args

import msgspec

from oneiros._errors import CycleNotFound, EntryNotFound, GolemNotFound, InputError, MemoryVersionNotFound
from oneiros.app._concerns import use_case
from oneiros.app._core import Core
from oneiros.app._pages import Page, page_of
from oneiros.app._profile import profile_items
from oneiros.app._shapes import (
    Belief,
    Budget,
    CapSpend,
    CycleConfig,
    DreamingStatus,
    Entry,
    EntryHistory,
    EntryStep,
    Golem,
    JournalEntry,
    LogEvent,
    Machine,
    MachinePhase,
    MachineState,
    MachineTransition,
    MemoryVersion,
    NoiseFragment,
    Observation,
    Report,
    Run,
    ShouldDream,
)
from oneiros.events._types import DreamStart
from oneiros.fsm._machine import SEPARATOR, canonical_machine
from oneiros.fsm._service import replay
from oneiros.projections._index import (
    golem_dreams,
    golem_runs,
    journal_entries,
    journal_entry,
    pending_count,
    staged_entries,
    staged_entry,
)
from oneiros.projections._journal import JournalSettings, dream_reports, journal_markdown, quality_basis
from oneiros.projections._sinks import (
    beliefs,
    memory_diff,
    memory_version,
    memory_versions,
    noise_fragments,
    observations,
    write_memory_file,
)
from oneiros.settings._cycle import CycleBudget, CycleSettings
from oneiros.settings._runtime import DEFAULT_SPANS_PATH
from oneiros.settings._vocabulary import Tier
from oneiros.store._snapshots import read_cycle, read_stream_pages
from oneiros.store._store import Recorded, decode_rows
from oneiros.telemetry._spanfile import SpanRecord, cycle_spans, read_spans

__all__ = ["Reads"]

_T = TypeVar("_T")


class Reads:
    """The use cases that read: golems, the staging buffer, the journal and one cycle, the sinks
    and MEMORY.md, the schedule's decision and the log."""

    def __init__(self, core: Core) -> None:
        self.core = core

    # -- golems -------------------------------------------------------------------------------

    def golem(self, golem_id: str, at: int | None = None) -> Golem:
        """The golem's state at the log head, or rebuilt as of log position ``at``."""
        if at is not None:
            return Golem.of(self.core.golems().state(golem_id, until=at))
        return self._golem(golem_id)

    @use_case(reads=("golems",), sweep=False)
    def _golem(self, golem_id: str) -> Golem:
        state = self.core.projections.golem(golem_id)
        if state is None:
            raise self.core.unknown(golem_id)
        return Golem.of(state)

    def golem_exists(self, golem_id: str) -> bool:
        """Whether ``golem_id`` was created, from its own stream."""
        try:
            self.core.golems().state(golem_id)
        except GolemNotFound:
            return False
        return True

    @use_case(reads=("golems",), sweep=False)
    def golems(self, limit: int | None = None, cursor: str | None = None, *, within: Sequence[str] = ()) -> Page[Golem]:
        """Every golem (only those ``within``, if given), by id."""
        mine = [s for s in self.core.projections.golems() if not within or s.golem_id in within]
        return page_of(mine, lambda s: s.golem_id, limit, cursor, lambda chosen: [Golem.of(s) for s in chosen])

    @use_case(reads=("golems", "index", "journal"))
    def status(self, golem_id: str) -> DreamingStatus:
        """Dense-Mem's dreaming status: the golem, the effective config, its latest run, how many
        entries await review."""
        state = self.core.projections.golem(golem_id)
        if state is None:
            raise self.core.unknown(golem_id)
        db = self.core.projections.db
        runs = golem_runs(db, golem_id)
        latest = journal_entry(db, runs[-1][1]) if runs else None
        return DreamingStatus(
            golem=Golem.of(state),
            config=CycleConfig(
                schedule=self.core.config.schedule,
                budget=self.core.config.cycle.budget,
                cycles_run_on="workers" if self.core.config.queue else "server",
            ),
            latest_run=Run.of(latest) if latest else None,
            pending_count=pending_count(db, golem_id),
        )

    # -- the staging buffer -------------------------------------------------------------------

    @use_case(reads=("staging",))
    def entry(self, entry_id: str) -> Entry:
        """One staged entry by its exact id (EntryNotFound if there is none)."""
        found = staged_entry(self.core.projections.db, entry_id)
        if found is None:
            raise EntryNotFound(entry_id)
        return Entry.of(found)

    def entries(
        self,
        golem_id: str | None = None,
        statuses: Sequence[str] = (),
        *,
        limit: int | None = None,
        cursor: str | None = None,
        newest_first: bool = False,
    ) -> Page[Entry]:
        """Staged entries in ``statuses`` (all if empty) of ``golem_id`` (every golem's if None), in
        staging order or newest first."""
        # Every golem's: the buffer alone, so a large import does not wait for the golems' index.
        keyed = self._every_entry(statuses) if golem_id is None else self._golem_entries(golem_id, statuses)
        db = self.core.projections.db

        def rows(ids: list[str]) -> list[Entry]:
            return [Entry.of(e) for e in staged_entries(db, ids)]

        return page_of(keyed, lambda kv: kv[0], limit, cursor, _ids(rows), newest_first=newest_first)

    @use_case(reads=("staging",))
    def _every_entry(self, statuses: Sequence[str]) -> list[tuple[str, str]]:
        every = self.core.projections.staging(None, statuses)
        return [(f"{e.staged_position:015d}", e.entry_id) for e in every]

    @use_case(reads=("golems", "index", "staging"), golem="exists")
    def _golem_entries(self, golem_id: str, statuses: Sequence[str]) -> list[tuple[str, str]]:
        return golem_dreams(self.core.projections.db, golem_id, statuses)

    def entry_history(self, entry_id: str) -> EntryHistory:
        """A staged entry's events in order; each confidence step carries the outcome behind it."""
        entry = self.entry(entry_id)
        steps: list[EntryStep] = []
        for record in self.core.store.read_stream(f"{entry.golem_id}:staging"):
            if getattr(record.event, "entry_id", None) != entry_id:
                continue
            outcome_at = getattr(record.event, "outcome_position", None)
            outcome = None
            if isinstance(outcome_at, int):
                found = next(iter(self.core.store.read_all(after=outcome_at - 1, until=outcome_at)), None)
                outcome = LogEvent.of(found) if found is not None else None
            steps.append(EntryStep(**msgspec.structs.asdict(LogEvent.of(record)), outcome=outcome))
        return EntryHistory(entry_id=entry_id, confidence=entry.confidence, status=entry.status, steps=steps)

    # -- the journal and one cycle ------------------------------------------------------------

    def runs(self, golem_id: str, limit: int | None = None, cursor: str | None = None) -> Page[Run]:
        """The golem's cycles, newest first, as Dense-Mem's runs list shows them."""
        return self._cycles(golem_id, limit, cursor, lambda entries: [Run.of(e) for e in entries])

    def journal(
        self, golem_id: str | None = None, *, limit: int | None = None, cursor: str | None = None
    ) -> Page[JournalEntry]:
        """One entry per dream cycle of ``golem_id`` (every golem's if None), newest first."""
        if golem_id is not None:
            return self._cycles(golem_id, limit, cursor, lambda entries: entries)
        return self._journal(limit, cursor)

    @use_case(reads=("journal",))
    def _journal(self, limit: int | None, cursor: str | None) -> Page[JournalEntry]:
        every = self.core.projections.journal()
        return page_of(every, lambda e: f"{e.started_position:015d}", limit, cursor, lambda es: es, newest_first=True)

    def journal_markdown(self, golem_id: str | None = None, *, limit: int | None = None) -> str:
        """The journal as journal.md (Bumblebee's shape): the latest ``limit`` cycles, oldest first."""
        return journal_markdown(reversed(self.journal(golem_id, limit=limit).items))

    @use_case(reads=("golems", "index", "journal"), golem="exists")
    def _cycles(
        self, golem_id: str, limit: int | None, cursor: str | None, rows: Callable[[list[JournalEntry]], list[_T]]
    ) -> Page[_T]:
        db = self.core.projections.db
        return page_of(
            golem_runs(db, golem_id),
            lambda kv: kv[0],
            limit,
            cursor,
            _ids(lambda ids: rows(journal_entries(db, ids))),
            newest_first=True,
        )

    @use_case(reads=("journal",))
    def cycle(self, golem_id: str, cycle_id: str) -> JournalEntry:
        """One cycle's journal entry: phases, fragments and thread, counts, tokens and cost."""
        return self.core.journal_entry(golem_id, cycle_id)

    @use_case(reads=("journal",))
    def cycle_events(self, golem_id: str, cycle_id: str, after: int = 0, limit: int = 50) -> Page[LogEvent]:
        """A cycle's events in log order, after log position ``after``."""
        entry = self.core.journal_entry(golem_id, cycle_id)
        rows: list[LogEvent] = []
        more = False
        for record in self.core.store.read_all(after=max(after, entry.started_position - 1)):
            if record.meta.cycle_id != cycle_id or record.meta.golem_id.partition(":")[0] != golem_id:
                continue
            if len(rows) == limit:
                more = True
                break
            rows.append(LogEvent.of(record))
        return Page(items=rows, next_cursor=str(rows[-1].position) if more else None)

    @use_case(reads=("golems", "index", "journal", "profile", "recall"), golem="exists")
    def report(self, golem_id: str, cycle_id: str | None = None) -> Report:
        """What the golem woke up with after cycle ``cycle_id`` (default: its latest that made a
        report): the DreamReport, the wake-up summary and the staged outputs."""
        if cycle_id is not None:
            self.core.journal_entry(golem_id, cycle_id)
        reports = [r for r in dream_reports(self.core.store, golem_id) if cycle_id is None or r[0].cycle_id == cycle_id]
        if reports:
            report, wake_up, staged = reports[-1]
            chosen = report.cycle_id
        else:  # the cycle (or every cycle) ended before its report: an interrupted one
            runs = golem_runs(self.core.projections.db, golem_id)
            last = cycle_id or (runs[-1][1] if runs else None)
            if last is None:
                raise CycleNotFound(golem_id, None)
            chosen, report, wake_up, staged = last, None, None, []
        entry = journal_entry(self.core.projections.db, chosen)
        quality = entry.quality_pct if entry is not None else None
        if quality is None and report is not None:
            quality = round(report.journal.dream_quality_score * 100)
        # A journal row from before the basis was kept has none: made now from what the row holds.
        basis = (entry.quality_basis or quality_basis(entry, JournalSettings())) if entry is not None else None
        return Report(
            golem_id=golem_id,
            cycle_id=chosen,
            report=report,
            wake_up=wake_up,
            staged=staged,
            quality_pct=quality,
            quality_basis=basis,
            profile=profile_items(self.core.projections.db, golem_id),
        )

    def budget(
        self, golem_id: str, cycle_id: str | None = None, *, tier: str | None = None, recorded: bool = True
    ) -> Budget:
        """What dreaming spent against each cap, judged by the caps the cycle ran with (as its
        DreamStart recorded them), else this config's. For one cycle: as of its last event, with
        its spend by phase; else as of the golem's latest event, its last cycle judged. The window,
        day and month caps count everything the golem spent in them, as the cycle's guard did.
        ``recorded=False`` judges by this config's caps, ``tier`` by those caps at another tier
        (a cap someone set holds; those the tier gave follow it); InputError for a tier there is not."""
        from oneiros.runtime._budget import Ledger, budget_report  # noqa: PLC0415 - NumPy, on first use

        if tier is not None and not _is_tier(tier):  # the caps take any string: none would show
            raise InputError(f"unknown tier {tier!r}; use {' or '.join(get_args(Tier))}")
        if cycle_id is None:
            version = self.core.store.stream_version(golem_id)
            if not version:
                raise self.core.unknown(golem_id)
            # Only what the ledger reads (a long-lived golem's stream is mostly episodes), and the
            # time of the stream's last event, which the caps' windows end at.
            end = self.core.store.read_stream(golem_id, after_version=version - 1)[-1]
            ledger = self.core.store.read_stream(golem_id, types=(DreamStart, *Ledger.reads))
            started = [r.event.settings for r in ledger if isinstance(r.event, DreamStart)]
            caps = self._caps(started[-1] if started and recorded else None, tier)
            last_cycle, rows = budget_report(ledger, caps, now=end.meta.time)
            return Budget(golem_id=golem_id, cycle_id=last_cycle, tier=caps.tier, caps=_spends(rows))
        return self._cycle_budget(golem_id, cycle_id, tier=tier, recorded=recorded)

    @use_case(reads=("journal",))
    def _cycle_budget(self, golem_id: str, cycle_id: str, *, tier: Tier | None, recorded: bool) -> Budget:
        from oneiros.runtime._budget import Ledger, budget_report  # noqa: PLC0415 - NumPy, on first use

        entry = self.core.journal_entry(golem_id, cycle_id)
        history = read_cycle(self.core.store, golem_id, cycle_id) or [
            r for r in self.core.store.read_stream(golem_id) if r.position >= entry.started_position
        ]
        start = next((r.event for r in history if isinstance(r.event, DreamStart)), None)
        caps = self._caps(start.settings if start is not None and recorded else None, tier)
        end = history[-1]
        ledger = self.core.store.read_stream(golem_id, until=end.position, types=(DreamStart, *Ledger.reads))
        _last, rows = budget_report(ledger, caps, now=end.meta.time)
        return Budget(
            golem_id=golem_id,
            cycle_id=cycle_id,
            tier=caps.tier,
            caps=_spends(rows),
            phases=entry.phases,
            tokens_in=entry.tokens_in,
            tokens_out=entry.tokens_out,
            cost_usd=entry.cost_usd,
        )

    def _caps(self, recorded: CycleSettings | None, tier: Tier | None) -> CycleBudget:
        """The caps that judge a cycle: those it recorded when it started, since a worker's or
        another shell's config may differ from this one (judging a hardened cycle by core's 12,000
        tokens showed a hard overrun that never happened); a cycle recorded without settings ran
        with the config of the day, this config the best guess left."""
        caps = recorded.budget if recorded is not None else self.core.config.cycle.budget
        return caps.at_tier(tier) if tier is not None else caps

    @use_case(reads=("journal",))
    def trace(self, golem_id: str, cycle_id: str) -> list[SpanRecord]:
        """A cycle's OpenTelemetry spans across every process that ran it, from the span file
        (``tracing.spans_path``, ``$ONEIROS_SPANS``)."""
        self.core.journal_entry(golem_id, cycle_id)
        path = self.core.config.tracing.spans_path or DEFAULT_SPANS_PATH
        spans = read_spans(path) if path != "off" and os.path.exists(path) else []
        return cycle_spans(spans, cycle_id)

    # -- the sinks and MEMORY.md --------------------------------------------------------------

    def beliefs(self, golem_id: str, limit: int | None = None, cursor: str | None = None) -> Page[Belief]:
        """Dream beliefs (Bumblebee), in the order the sink keeps them."""
        return self._sink(golem_id, "beliefs", beliefs, limit, cursor)

    def noise(self, golem_id: str, limit: int | None = None, cursor: str | None = None) -> Page[NoiseFragment]:
        """``[dream]`` noise fragments (Bumblebee)."""
        return self._sink(golem_id, "noise", noise_fragments, limit, cursor)

    def observations(self, golem_id: str, limit: int | None = None, cursor: str | None = None) -> Page[Observation]:
        """Observations with RED/YLW/GRN priority (OpenSeed)."""
        return self._sink(golem_id, "observations", observations, limit, cursor)

    def _sink(
        self, golem_id: str, name: str, read: Callable[[Any, str], list[_T]], limit: int | None, cursor: str | None
    ) -> Page[_T]:
        self.core.fresh("golems", name)  # the sink is named by the caller: read as it names it
        self.core.exists(golem_id)
        rows = list(enumerate(read(self.core.projections.db, golem_id)))
        return page_of(rows, lambda r: f"{r[0]:09d}", limit, cursor, lambda chosen: [r[1] for r in chosen])

    @use_case(reads=("golems", "memory"), golem="exists")
    def memory(self, golem_id: str, version: int | None = None) -> MemoryVersion | None:
        """MEMORY.md at ``version`` (the newest if None); None when nothing was promoted yet."""
        found = memory_version(self.core.projections.db, golem_id, version)
        if found is None and version is not None:
            raise self._no_version(golem_id, version)
        return found

    @use_case(reads=("golems", "memory"), golem="exists")
    def memory_versions(
        self, golem_id: str, limit: int | None = None, cursor: str | None = None
    ) -> Page[MemoryVersion]:
        """Every MEMORY.md version, newest first."""
        every = memory_versions(self.core.projections.db, golem_id)
        return page_of(every, lambda v: f"{v.version:09d}", limit, cursor, lambda vs: vs, newest_first=True)

    @use_case(reads=("golems", "memory"), golem="exists")
    def memory_diff(self, golem_id: str, old: int, new: int) -> str:
        """A unified diff of two MEMORY.md versions."""
        for version in (old, new):
            if memory_version(self.core.projections.db, golem_id, version) is None:
                raise self._no_version(golem_id, version)
        return memory_diff(self.core.projections.db, golem_id, old, new)

    @use_case(reads=("memory",))
    def write_memory(self, golem_id: str, directory: str | Path) -> Path | None:
        """Write the newest MEMORY.md into ``directory`` (keeping the one it replaces as
        ``MEMORY.md.v<N>``); None when there is none yet."""
        try:
            return write_memory_file(self.core.projections.db, golem_id, directory)
        except OSError as exc:
            raise InputError(f"cannot write MEMORY.md into {str(directory)!r}: {exc.strerror or exc}") from None

    def _no_version(self, golem_id: str, version: int) -> MemoryVersionNotFound:
        newest = memory_version(self.core.projections.db, golem_id)
        return MemoryVersionNotFound(golem_id, version, newest.version if newest else 0)

    # -- the schedule, the log ----------------------------------------------------------------

    @use_case(reads=("schedule",), sweep=False)
    def should_dream(self, golem_id: str, at: datetime | None = None, tick: int = 0) -> ShouldDream:
        """Whether the golem would dream at ``at`` (now if None): every gate and trigger with the
        values it compared. From the ``schedule`` projection: a fold of the golem's stream would sum
        every episode since its last dream, on every call."""
        from oneiros.scheduling._scheduler import should_dream  # noqa: PLC0415 - the read path stays light

        state = self.core.projections.schedule(golem_id)
        if state is None:
            raise self.core.unknown(golem_id)
        now = at if at is not None else datetime.now(UTC)
        if now.tzinfo is None:
            now = now.replace(tzinfo=UTC)
        decision = should_dream(
            self.core.config.schedule, state, now, tick=tick, tick_seconds=self.core.config.daemon.tick_seconds
        )
        return ShouldDream.of(golem_id, now, decision)

    @use_case(golem="created")  # else a typo listed no event, as if the golem had none
    def events(self, golem_id: str | None = None, *, after: int = 0, limit: int = 200) -> Page[LogEvent]:
        """The first ``limit`` events of the log (or of ``golem_id``'s stream) after position ``after``."""
        records: list[Recorded] = []
        if golem_id is not None:
            # Counted from stored rows, and only the events shown decoded: a golem's stream may
            # hold a million episodes.
            total = 0
            for page in read_stream_pages(self.core.store, golem_id):
                fresh = [stored for stored in page if stored[0] > after]
                records.extend(decode_rows(fresh[: limit - len(records)]))
                total += len(fresh)
        else:
            for record in self.core.store.read_all(after=after):
                records.append(record)
                if len(records) >= limit:
                    break
            # What lies after the last one shown is the rest of the log.
            total = len(records) + (self.core.store.head() - records[-1].position if records else 0)
        more = total > len(records)
        return Page(
            items=[LogEvent.of(r) for r in records],
            next_cursor=str(records[-1].position) if more and records else None,
            total=total,
        )

    def replay(self, until: int | None = None, on_progress: Callable[[int], None] | None = None) -> list[Golem]:
        """Every golem's state rebuilt from the log (as of position ``until``), with no side
        effects; ``on_progress`` hears the position reached."""
        states = replay(self.core.store, until=until, on_progress=on_progress)
        return [Golem.of(s) for s in states.values()]

    @staticmethod
    def machine() -> Machine:
        """The GolemMode/DreamPhase machine as it declares itself: its state tree and the
        transitions each state declares (not those it inherits from its parent); and the phase
        table, whose labels the states of the phases carry."""
        canonical = canonical_machine()
        labels = {canonical.phase_state(p.name): p.label for p in canonical.phases}
        states = [
            MachineState(name=s, parent=_parent(s), label=labels.get(s, s.rpartition(SEPARATOR)[2]))
            for s in canonical.states
        ]
        transitions: list[MachineTransition] = []
        for state in canonical.states:
            parent = _parent(state)
            for trigger in canonical.triggers:
                dest = canonical.destination(state, trigger)
                inherited = parent is not None and dest is not None and canonical.destination(parent, trigger) == dest
                if dest is None or inherited:
                    continue
                transitions.append(MachineTransition(trigger=trigger, source=state, dest=dest, internal=dest == state))
        phases = [
            MachinePhase(
                phase=p.name,
                state=canonical.phase_state(p.name),
                label=p.label,
                stream=p.stream,
                description=p.description,
            )
            for p in canonical.phases
        ]
        return Machine(states=states, transitions=transitions, phases=phases, initial=canonical.states[0])


def _parent(state: str) -> str | None:
    head, sep, _tail = state.rpartition(SEPARATOR)
    return head if sep and head in canonical_machine().states else None


def _ids(rows: Callable[[list[str]], list[_T]]) -> Callable[[list[tuple[str, str]]], list[_T]]:
    """Rows of index ``(key, id)`` pairs, read by their ids in one query."""
    return lambda chosen: rows([item_id for _key, item_id in chosen])


def _is_tier(name: str) -> TypeGuard[Tier]:
    return name in get_args(Tier)


def _spends(rows: list[dict[str, Any]]) -> list[CapSpend]:
    return [msgspec.convert(row, CapSpend) for row in rows]
