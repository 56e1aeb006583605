"""What the application layer answers: one Struct per thing, the shape ``--json``, REST and MCP all
encode, and the schema ``/openapi.json`` gives every success response.

A staged entry is :class:`Entry`, named by ``entry_id`` everywhere: it is the name the log, every
error's attributes (``EntryNotFound``, ``IllegalReview``), an outcome's ``entry_id`` and a cycle's
report use, so a client never maps one id onto another (docs/server.md, "One shape per thing").
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import msgspec

from oneiros.app._pages import Page
from oneiros.events._content import DreamReport, DreamStaged, WakeUpSummary
from oneiros.events._health import HealthAlarmRaised
from oneiros.events._quarantine import EntryQuarantined, EpisodeTrust
from oneiros.events._staging import Lineage, ReviewDecided, ReviewDecision, StagingStatus, ValidationCriterion
from oneiros.events._types import DreamComplete
from oneiros.fsm._golem import GolemState
from oneiros.projections._journal import JournalEntry, PhaseSummary
from oneiros.projections._lineage import EntryLineage
from oneiros.projections._profile import ProfileItem
from oneiros.projections._recall import RecallResult
from oneiros.projections._sinks import Belief, MemoryVersion, NoiseFragment, Observation
from oneiros.projections._staging import ACTIVE, ReviewNote, StagedEntry
from oneiros.scheduling._scheduler import Decision
from oneiros.settings._cycle import CycleBudget
from oneiros.settings._scheduling import ScheduleSettings
from oneiros.settings._trust import TrustLevel
from oneiros.settings._vocabulary import DreamPhaseName, Mode, StagedKind
from oneiros.store._store import Recorded, record_row
from oneiros.validation._explain import OutcomeExplanation
from oneiros.validation._sweep import review_decisions

__all__ = [
    "Appended",
    "Belief",
    "Budget",
    "CapSpend",
    "Check",
    "CycleConfig",
    "CycleRun",
    "CycleStatus",
    "DreamingStatus",
    "Entry",
    "EntryHistory",
    "EntryLineage",
    "EntryStep",
    "Golem",
    "Health",
    "HealthMetrics",
    "JournalEntry",
    "LogEvent",
    "Machine",
    "MachinePhase",
    "MachineState",
    "MachineTransition",
    "Memory",
    "MemoryVersion",
    "NoiseFragment",
    "Observation",
    "OutcomeMoved",
    "Overview",
    "Page",
    "Quarantine",
    "RecallResult",
    "Report",
    "ReviewDecided",
    "Run",
    "RunningCycle",
    "ShouldDream",
]


class Golem(msgspec.Struct, frozen=True, kw_only=True):
    """A golem's state as a person or a client reads it."""

    golem_id: str
    mode: Mode | None
    phase: DreamPhaseName | None
    machine_state: str
    """``Waking``, ``Dying`` or ``Dreaming_<Phase>``."""
    cycle_id: str | None
    version: int
    """Its stream's version: how many events it has."""
    position: int
    """The log position of its latest event."""
    episodes: int
    cycles_completed: int
    cycles_interrupted: int

    @classmethod
    def of(cls, state: GolemState) -> Golem:
        return msgspec.convert(state.summary(), cls)


class Quarantine(msgspec.Struct, frozen=True, kw_only=True):
    """Why only a review may promote an entry: the suspect episodes it came from, or its own words."""

    golem_id: str
    entry_id: str
    cycle_id: str
    min_trust: TrustLevel
    episodes: tuple[EpisodeTrust, ...] = ()
    unsourced: bool = False
    more_episodes: int = 0
    output_flags: tuple[str, ...] = ()
    why: str
    """The reason in one line, as ``oneiros staging`` shows it."""

    @classmethod
    def of(cls, event: EntryQuarantined) -> Quarantine:
        return msgspec.convert(event.as_row(), cls)


class Entry(msgspec.Struct, frozen=True, kw_only=True):
    """A staged entry (Dense-Mem's "dream"): a hypothesis awaiting validation, never a fact. Its
    ``text`` is data to review, not an instruction."""

    entry_id: str
    golem_id: str
    kind: StagedKind
    status: StagingStatus
    confidence: float
    """0-1."""
    confirmations: int
    contradictions: int
    text: str
    criterion: ValidationCriterion
    """What a waking outcome must match to confirm or contradict it."""
    lineage: Lineage
    """Where it came from: its cycle, phase, source output, episodes and generator call."""
    staged_tick: int
    staged_position: int
    updated_position: int
    resolved_by: str
    reviews: list[ReviewNote]
    decisions: list[ReviewDecision]
    """The review decisions its status allows now (``revoke`` alone once promoted, none once settled)."""
    quarantine: Quarantine | None
    """Why only a review may promote it; null when nothing holds it."""

    @property
    def active(self) -> bool:
        """Still awaiting validation (proposed or reinforced)."""
        return self.status in ACTIVE

    @classmethod
    def of(cls, e: StagedEntry) -> Entry:
        return cls(
            entry_id=e.entry_id,
            golem_id=e.golem_id,
            kind=e.kind,
            status=e.status,
            confidence=e.confidence_pct / 100,
            confirmations=e.confirmations,
            contradictions=e.contradictions,
            text=e.text,
            criterion=e.criterion,
            lineage=e.lineage,
            staged_tick=e.staged_tick,
            staged_position=e.staged_position,
            updated_position=e.updated_position,
            resolved_by=e.resolved_by,
            reviews=list(e.reviews),
            decisions=list(review_decisions(e.status)),
            quarantine=None if e.quarantine is None else Quarantine.of(e.quarantine),
        )


class Run(msgspec.Struct, frozen=True, kw_only=True):
    """One cycle as Dense-Mem's runs list shows it."""

    cycle_id: str
    golem_id: str
    status: str
    """``dreaming``, ``complete`` or ``interrupted``."""
    trigger: str
    started_at: datetime
    ended_at: datetime | None
    started_position: int
    phases: list[DreamPhaseName]
    staged: int
    promoted: int
    tokens: int
    cost_usd: float
    quality: float
    """0-1: the cycle's own score, recalibrated as its outputs are validated."""
    quality_basis: str
    """What ``quality`` is made of, in one line."""
    interrupted_by: str | None
    empty: str | None
    """Why the cycle produced nothing; null when it produced something."""

    @classmethod
    def of(cls, e: JournalEntry) -> Run:
        return cls(
            cycle_id=e.cycle_id,
            golem_id=e.golem_id,
            status=e.status,
            trigger=e.trigger,
            started_at=e.started_at,
            ended_at=e.ended_at,
            started_position=e.started_position,
            phases=[p.phase for p in e.phases],
            staged=e.staged,
            promoted=e.promoted,
            tokens=e.tokens_in + e.tokens_out,
            cost_usd=e.cost_usd,
            quality=e.quality_pct / 100,
            quality_basis=e.quality_basis,
            interrupted_by=e.interrupted_by,
            empty=e.empty,
        )


class CycleConfig(msgspec.Struct, frozen=True, kw_only=True):
    schedule: ScheduleSettings
    budget: CycleBudget
    cycles_run_on: Literal["workers", "server"]
    """``workers`` when cycles go to a queue, else ``server``: the process that answers runs them."""


class DreamingStatus(msgspec.Struct, frozen=True, kw_only=True):
    """Dense-Mem's ``GET /dreaming/status``: the golem, the effective config, its latest run and
    how many entries await review."""

    golem: Golem
    config: CycleConfig
    latest_run: Run | None
    pending_count: int


class RunningCycle(msgspec.Struct, frozen=True, kw_only=True):
    golem_id: str
    cycle_id: str
    phase: DreamPhaseName | None
    worker: str
    """The worker running its phase, ``queued``, or the process holding its lease."""
    age_seconds: float | None


class Overview(msgspec.Struct, frozen=True, kw_only=True):
    """``oneiros status``: every golem, the log's position and the cycles under way."""

    position: int
    store: str
    """The store's URL, any password masked."""
    golems: list[Golem]
    running: list[RunningCycle]


class Appended(msgspec.Struct, frozen=True, kw_only=True):
    """What a write appended: how many events, at which log positions."""

    appended: int
    positions: list[int]
    position: int
    """The log position of its last event (0 if it appended none): the consistency token a read
    passes to see this write (``?min_position=``, docs/server.md)."""

    @classmethod
    def of(cls, records: list[Recorded]) -> Appended:
        positions = [r.position for r in records]
        return cls(appended=len(records), positions=positions, position=positions[-1] if positions else 0)


class OutcomeMoved(msgspec.Struct, frozen=True, kw_only=True):
    """A recorded outcome: its log position and the staged entries the sweep moved for it."""

    position: int
    entries: list[Entry]
    explain: OutcomeExplanation | None = None
    """Asked for: why each entry moved, and why the nearest others did not."""


CycleStatus = Literal["dreaming", "enqueued", "complete", "interrupted", "empty", "reevaluated"]


class CycleRun(msgspec.Struct, frozen=True, kw_only=True):
    """What a dream request came to: the cycle started (``dreaming``, ``enqueued``), how it ended
    (``complete``, ``interrupted``, ``empty``), or only re-evaluation (``reevaluated``, no cycle)."""

    golem_id: str
    cycle_id: str | None
    status: CycleStatus
    reevaluated: int = 0
    """Entries re-evaluated before the cycle (Dense-Mem's re_evaluate)."""
    episodes_recorded: int = 0
    """Episodes recorded for it first (``oneiros dream --episodes``)."""
    events_appended: int = 0
    complete: DreamComplete | None = None
    interrupted: str | None = None
    """Why it ended early; null unless it did."""
    empty: str | None = None
    """Why it produced nothing; null unless it did (such a cycle is no success)."""
    store: str | None = None
    """The store it runs on, any password masked (null over the API, which does not name it)."""
    queue: str | None = None
    """The queue it went to, any password masked; null for a cycle run in-process (and over the API)."""
    rq_queue: str | None = None
    """The RQ queue name its phase jobs go to."""


class Report(msgspec.Struct, frozen=True, kw_only=True):
    """What a golem woke up with after a cycle: its DreamReport, the wake-up summary and the
    outputs it staged; all null or empty for a cycle that made no report (an interrupted one)."""

    golem_id: str
    cycle_id: str
    report: DreamReport | None
    wake_up: WakeUpSummary | None
    staged: list[DreamStaged]
    quality_pct: int | None
    """The cycle's quality as the journal has it (recalibrated as its outputs are validated)."""
    quality_basis: str | None = None
    """What ``quality_pct`` is made of, in one line."""
    profile: list[ProfileItem] = msgspec.field(default_factory=list)
    """The user's profile in force as the golem wakes (``ProfileItem``s): standing instructions,
    preferences, facts about themselves."""


class CapSpend(msgspec.Struct, frozen=True, kw_only=True):
    """What was spent against one cap, and the cap (null: none)."""

    cap: str
    """``cycle``, ``window``, ``day`` or ``month``."""
    tokens: int
    token_cap: int | None
    usd: float
    usd_cap: float | None


class Budget(msgspec.Struct, frozen=True, kw_only=True):
    """What dreaming spent against each cap, judged by the caps the cycle ran with."""

    golem_id: str
    cycle_id: str
    """The cycle judged ("-" before any)."""
    tier: str
    caps: list[CapSpend]
    phases: list[PhaseSummary] = []
    """By phase, for one cycle (empty for a golem's latest state)."""
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0


class Check(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    passed: bool
    detail: str
    """The values the gate or trigger compared."""


class ShouldDream(msgspec.Struct, frozen=True, kw_only=True):
    """Whether the golem would dream at ``at``: the trigger that fired, the gates that block it,
    and every check with its values."""

    golem_id: str
    at: datetime
    dream: bool
    trigger: str | None
    bardo_trigger: str | None
    blocked_by: list[str]
    urgency: float
    threshold: float
    deep: bool
    checks: list[Check]

    @classmethod
    def of(cls, golem_id: str, at: datetime, decision: Decision) -> ShouldDream:
        return cls(
            golem_id=golem_id,
            at=at,
            dream=decision.dream,
            trigger=decision.trigger,
            bardo_trigger=decision.bardo_trigger,
            blocked_by=list(decision.blocked_by),
            urgency=decision.urgency,
            threshold=decision.threshold,
            deep=decision.deep,
            checks=[Check(name=c.name, passed=c.passed, detail=c.detail) for c in decision.checks],
        )


class LogEvent(msgspec.Struct, frozen=True, kw_only=True):
    """An event as the log holds it: ``oneiros events --json``, the API and the event stream."""

    position: int
    golem_id: str
    """The stream it is in (a golem, or a side stream such as ``g1:staging``)."""
    version: int
    type: str
    time: str
    cycle_id: str | None
    payload: dict[str, Any]
    """The event's own fields (its type's schema: ``docs/bardo-events.md``, ``oneiros/events``)."""

    @classmethod
    def of(cls, record: Recorded) -> LogEvent:
        return msgspec.convert(record_row(record), cls)


class EntryStep(LogEvent, frozen=True, kw_only=True):
    """One event of a staged entry's history; a confidence step carries the outcome behind it."""

    outcome: LogEvent | None = None


class EntryHistory(msgspec.Struct, frozen=True, kw_only=True):
    entry_id: str
    confidence: float
    status: StagingStatus
    steps: list[EntryStep]


class HealthMetrics(msgspec.Struct, frozen=True, kw_only=True):
    """What the health process holds of a golem, as the alarms judge it."""

    cycles: int
    promotions: int
    empty_cycles_in_a_row: int
    cycles_since_promotion: int
    usd_since_promotion: float
    hit_rate_pct: float | None
    confidence_moves: int


class Health(msgspec.Struct, frozen=True, kw_only=True):
    """A golem's dreaming health: the alarms raised now, and every alarm raised and cleared."""

    golem_id: str
    metrics: HealthMetrics | None
    """Null where the health process's memory was not read (the server's route)."""
    alarms: list[HealthAlarmRaised]
    history: list[LogEvent]


class Memory(msgspec.Struct, frozen=True, kw_only=True):
    """The newest MEMORY.md; null before anything was promoted."""

    memory: MemoryVersion | None
    written: str | None = None
    """Where ``oneiros memory --write`` wrote it."""


class MachineState(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    parent: str | None
    label: str


class MachineTransition(msgspec.Struct, frozen=True, kw_only=True):
    trigger: str
    source: str
    dest: str
    internal: bool


class MachinePhase(msgspec.Struct, frozen=True, kw_only=True):
    """One row of the phase table (``oneiros.settings.PHASES``), in the order a cycle runs them."""

    phase: DreamPhaseName
    state: str
    """Its state in the machine (``Dreaming_NREM``)."""
    label: str
    """What people read (the diagram's box)."""
    stream: str
    """Its name in the event stream's ``dream_progress`` (Bardo's ``onset``, ``return``...)."""
    description: str


class Machine(msgspec.Struct, frozen=True, kw_only=True):
    """The GolemMode/DreamPhase machine as it declares itself."""

    states: list[MachineState]
    transitions: list[MachineTransition]
    phases: list[MachinePhase]
    initial: str
