"""The dream journal: one entry per cycle (Bardo ``DreamJournalEntry``), and its Markdown
export in the Bumblebee journal shape.

An interrupted cycle keeps the partial entry it had reached (Bardo: "even incomplete dreams produce
useful data"). The quality score starts from how far the cycle got and is recalibrated as its
staged outputs are validated: Bardo's "dreams that produced predictions later confirmed by live
trading receive higher quality scores".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

import msgspec

from oneiros._text import counted
from oneiros.events._content import (
    DreamFragments,
    DreamJournal,
    DreamJournalEntry,
    DreamQualityAssessed,
    DreamReport,
    DreamStaged,
    WakeUpSummary,
)
from oneiros.events._outcome import DreamEmpty
from oneiros.events._staging import EntryPromoted, EntryRefuted, EntryStaged
from oneiros.events._types import (
    DreamComplete,
    DreamCounterfactual,
    DreamHypothesis,
    DreamInsight,
    DreamInterrupted,
    DreamPhase,
    DreamPhaseName,
    DreamStart,
    Event,
    GenerationRecorded,
    ReplayBatch,
)
from oneiros.projections._runner import Rows
from oneiros.settings._phases import PHASES
from oneiros.store._store import EventStore, Recorded

__all__ = ["JournalEntry", "JournalProjection", "JournalSettings", "dream_reports", "journal_markdown", "quality_basis"]


class JournalSettings(msgspec.Struct, frozen=True, kw_only=True):
    tick_seconds: int = 60
    """Seconds in one tick of dream duration (Bardo: "1 tick/minute")."""
    completion_weight_pct: int = 50
    """Share of the quality score earned by the cycle's self-assessment (or, without one, by how
    far it got); the rest by the share of its validated outputs promoted rather than refuted.
    Until one of its outputs is validated, the score is the self-assessment alone."""


class PhaseSummary(msgspec.Struct, kw_only=True):
    phase: DreamPhaseName
    budget_tokens: int
    tokens: int = 0
    calls: int = 0


class JournalEntry(msgspec.Struct, kw_only=True):
    """One dream cycle, as far as it got."""

    cycle_id: str
    golem_id: str
    trigger: str
    started_at: datetime
    started_position: int
    status: str = "dreaming"
    """``dreaming``, ``complete`` or ``interrupted``."""
    ended_at: datetime | None = None
    interrupted_by: str | None = None
    interrupted_reason: str = ""
    phases: list[PhaseSummary] = msgspec.field(default_factory=list)
    patterns: list[str] = msgspec.field(default_factory=list)
    episodes_replayed: list[int] = msgspec.field(default_factory=list)
    hypotheses: list[str] = msgspec.field(default_factory=list)
    counterfactuals: list[str] = msgspec.field(default_factory=list)
    insights: list[str] = msgspec.field(default_factory=list)
    fragments: list[str] = msgspec.field(default_factory=list)
    thread: str = ""
    """Bumblebee's FRAGMENTS and THREAD, from the cycle's DreamFragments."""
    staged: int = 0
    promoted: int = 0
    refuted: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    duration_ticks: int = 0
    quality_pct: int = 0
    quality_basis: str = ""
    """What ``quality_pct`` is made of, in one line (:func:`quality_basis`)."""
    self_assessed_pct: int | None = None
    """The cycle's own DreamQualityAssessed score, when its integration phase made one."""
    self_assessed_notes: str = ""
    """What the self-assessment judged (its DreamQualityAssessed notes)."""
    staged_kinds: dict[str, int] = msgspec.field(default_factory=dict)
    """Entries of each kind the staging buffer took from the cycle."""
    complete: DreamComplete | None = None
    bardo: DreamJournal | None = None
    """The integration phase's DreamJournalEntry fields, when it wrote one."""
    empty: str | None = None
    """Why the cycle produced nothing (its DreamEmpty's detail); such a cycle is no success."""


def _reached(entry: JournalEntry) -> int:
    """How far the cycle got, in the canonical table's phases (a complete cycle got all the way)."""
    return len({p.phase for p in entry.phases}) if entry.status != "complete" else len(PHASES)


def _quality(entry: JournalEntry, settings: JournalSettings) -> int:
    completion = min(100, _reached(entry) * 100 // len(PHASES))
    if entry.self_assessed_pct is not None:
        completion = entry.self_assessed_pct
    judged = entry.promoted + entry.refuted
    if not judged:
        # Nothing validated yet: the cycle's own figure stands (report shows the same), rather
        # than a 0% hit rate no output has earned.
        return completion
    hit_rate = entry.promoted * 100 // judged
    w = settings.completion_weight_pct
    return (completion * w + hit_rate * (100 - w)) // 100


def quality_basis(entry: JournalEntry, settings: JournalSettings) -> str:
    """What the cycle's quality is made of: its self-assessment (or how far it got) and what it
    judged, what it staged, and the share of its validated outputs promoted, with their weights."""
    if entry.self_assessed_pct is not None:
        notes = f" ({entry.self_assessed_notes})" if entry.self_assessed_notes else ""
        own = f"self-assessed {entry.self_assessed_pct}%{notes}"
    else:
        own = f"reached {_reached(entry)} of {len(PHASES)} phases"
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(entry.staged_kinds.items(), key=lambda kv: (-kv[1], kv[0])))
    staged = f"; staged {kinds or entry.staged or 'nothing'}"  # a row from before kinds were counted has only the count
    judged = entry.promoted + entry.refuted
    if not judged:
        return f"{own}{staged}; nothing validated yet"
    w = settings.completion_weight_pct
    hits = f"{entry.promoted} promoted, {entry.refuted} refuted: hit rate {entry.promoted * 100 // judged}%"
    return f"{own}{staged}; {hits}; weighed {w}/{100 - w}"


class JournalProjection:
    """Rows ``cycle/<cycle_id>``: one :class:`JournalEntry` per dream cycle."""

    name = "journal"
    types: tuple[type[Event], ...] = (
        DreamStart,
        DreamPhase,
        ReplayBatch,
        DreamHypothesis,
        DreamCounterfactual,
        DreamInsight,
        GenerationRecorded,
        DreamComplete,
        DreamInterrupted,
        DreamEmpty,
        DreamFragments,
        DreamJournalEntry,
        DreamQualityAssessed,
        EntryStaged,
        EntryPromoted,
        EntryRefuted,
    )

    def __init__(self, settings: JournalSettings | None = None) -> None:
        self.settings = settings or JournalSettings()

    def apply(self, record: Recorded, rows: Rows) -> None:
        event: Any = record.event
        kind = type(event)
        if kind is DreamStart:
            entry = JournalEntry(
                cycle_id=event.cycle_id,
                golem_id=record.meta.golem_id,
                trigger=event.trigger,
                started_at=record.meta.time,
                started_position=record.position,
            )
            self._judge(entry)
            rows.put("cycle", entry.cycle_id, entry)
            return
        found = rows.edit("cycle", event.lineage.cycle_id if kind is EntryStaged else event.cycle_id, JournalEntry)
        if found is not None and _UPDATES[kind](self, found, record, event):
            self._judge(found)

    def _judge(self, entry: JournalEntry) -> None:
        entry.quality_pct = _quality(entry, self.settings)
        entry.quality_basis = quality_basis(entry, self.settings)

    def _end(self, entry: JournalEntry, record: Recorded, event: Event) -> bool:
        entry.ended_at = record.meta.time
        seconds = (record.meta.time - entry.started_at).total_seconds()
        entry.duration_ticks = max(0, int(seconds // self.settings.tick_seconds))
        match event:
            case DreamComplete():
                entry.status = "complete"
                entry.complete = event
            case DreamInterrupted(source=source, reason=reason):
                entry.status = "interrupted"
                entry.interrupted_by = source
                entry.interrupted_reason = reason
        return True


# Each returns whether the quality score may have changed. A table rather than a match (the idiom
# elsewhere): the journal reads most of a log, and this is its inner loop; the same handlers behind
# a match ordered by frequency caught up about 7% slower (benchmarks/projections.py, 4 runs).
_Update = Callable[[JournalProjection, JournalEntry, Recorded, Any], bool]


def _phase(_p: JournalProjection, entry: JournalEntry, _r: Recorded, event: DreamPhase) -> bool:
    entry.phases.append(PhaseSummary(phase=event.phase, budget_tokens=event.budget_tokens))
    return True


def _replay(_p: JournalProjection, entry: JournalEntry, _r: Recorded, event: ReplayBatch) -> bool:
    entry.patterns.append(event.pattern)
    entry.episodes_replayed = sorted(set(entry.episodes_replayed) | set(event.episode_ticks))
    return False


def _hypothesis(_p: JournalProjection, entry: JournalEntry, _r: Recorded, event: DreamHypothesis) -> bool:
    entry.hypotheses.append(event.hypothesis)
    return False


def _counterfactual(_p: JournalProjection, entry: JournalEntry, _r: Recorded, event: DreamCounterfactual) -> bool:
    entry.counterfactuals.append(f"{event.outcome} | lesson: {event.lesson}")
    return False


def _insight(_p: JournalProjection, entry: JournalEntry, _r: Recorded, event: DreamInsight) -> bool:
    entry.insights.append(event.insight)
    return False


def _generation(_p: JournalProjection, entry: JournalEntry, _r: Recorded, event: GenerationRecorded) -> bool:
    entry.tokens_in += event.tokens_in
    entry.tokens_out += event.tokens_out
    entry.cost_usd += event.cost_usd
    for phase in reversed(entry.phases):
        if phase.phase == event.phase:
            phase.tokens += event.tokens_in + event.tokens_out
            phase.calls += 1
            break
    return False


def _fragments(_p: JournalProjection, entry: JournalEntry, _r: Recorded, event: DreamFragments) -> bool:
    entry.fragments.extend(event.fragments)
    entry.thread = entry.thread or event.thread
    return False


def _bardo(_p: JournalProjection, entry: JournalEntry, _r: Recorded, event: DreamJournalEntry) -> bool:
    entry.bardo = event.journal
    return False


def _assessed(_p: JournalProjection, entry: JournalEntry, _r: Recorded, event: DreamQualityAssessed) -> bool:
    entry.self_assessed_pct = round(event.score * 100)
    entry.self_assessed_notes = event.notes
    return True


def _staged(_p: JournalProjection, entry: JournalEntry, _r: Recorded, event: EntryStaged) -> bool:
    entry.staged += 1
    entry.staged_kinds[event.kind] = entry.staged_kinds.get(event.kind, 0) + 1
    return True


def _promoted(_p: JournalProjection, entry: JournalEntry, _r: Recorded, _event: EntryPromoted) -> bool:
    entry.promoted += 1
    return True


def _refuted(_p: JournalProjection, entry: JournalEntry, _r: Recorded, _event: EntryRefuted) -> bool:
    entry.refuted += 1
    return True


def _empty(_p: JournalProjection, entry: JournalEntry, _r: Recorded, event: DreamEmpty) -> bool:
    entry.empty = event.detail
    return False


_UPDATES: dict[type[Event], _Update] = {
    DreamPhase: _phase,
    ReplayBatch: _replay,
    DreamHypothesis: _hypothesis,
    DreamCounterfactual: _counterfactual,
    DreamInsight: _insight,
    GenerationRecorded: _generation,
    DreamComplete: JournalProjection._end,
    DreamInterrupted: JournalProjection._end,
    DreamEmpty: _empty,
    DreamFragments: _fragments,
    DreamJournalEntry: _bardo,
    DreamQualityAssessed: _assessed,
    EntryStaged: _staged,
    EntryPromoted: _promoted,
    EntryRefuted: _refuted,
}


def journal_markdown(entries: Iterable[JournalEntry]) -> str:
    """Entries as Bumblebee's journal.md: a ``## <time> #dream #consolidation`` heading, the
    ``*[dream]*`` fragments indented, and the ``*thread: ...*`` line."""
    blocks: list[str] = []
    for entry in entries:
        stamp = entry.started_at.strftime("%Y-%m-%d %H:%M:%S")
        # The cycle's own FRAGMENTS and THREAD when it made them; else what replay and REM produced.
        fragments = entry.fragments or [
            *entry.patterns,
            *entry.hypotheses,
            *(c.split(" | lesson: ")[0] for c in entry.counterfactuals),
        ]
        thread = entry.thread or (entry.insights[0] if entry.insights else "")
        lines = [f"## {stamp} #dream #consolidation", "", "*[dream]*", ""]
        lines += [f"  {f}" for f in fragments] or ["  (no fragments)"]
        lines.append("")
        if thread:
            lines += [f"*thread: {thread}*", ""]
        status = entry.status if entry.status != "interrupted" else f"interrupted by {entry.interrupted_by}"
        if entry.empty:
            status = f"{status}, EMPTY: {entry.empty}"
        lines.append(
            f"<!-- cycle {entry.cycle_id} of {entry.golem_id} · {status} · {entry.staged} staged · "
            f"{counted(entry.tokens_in + entry.tokens_out, 'token')} · ${entry.cost_usd:.4f} · "
            f"{counted(entry.duration_ticks, 'tick')} · quality {entry.quality_pct}% -->"
        )
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + ("\n" if blocks else "")


def dream_reports(store: EventStore, golem: str) -> list[tuple[DreamReport, WakeUpSummary | None, list[DreamStaged]]]:
    """Each DreamReport of ``golem``, oldest first, with the cycle's wake-up summary and staged outputs."""
    out: list[tuple[DreamReport, WakeUpSummary | None, list[DreamStaged]]] = []
    staged: dict[str, list[DreamStaged]] = {}
    summaries: dict[str, WakeUpSummary] = {}
    reports: list[DreamReport] = []
    for record in store.read_stream(golem, types=(DreamStaged, WakeUpSummary, DreamReport)):
        match record.event:
            case DreamStaged(cycle_id=cycle_id) as output:
                staged.setdefault(cycle_id, []).append(output)
            case WakeUpSummary(cycle_id=cycle_id) as summary:
                summaries[cycle_id] = summary
            case DreamReport() as report:
                reports.append(report)
    for report in reports:
        out.append((report, summaries.get(report.cycle_id), staged.get(report.cycle_id, [])))
    return out
