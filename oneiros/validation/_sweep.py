"""The staging process: admits dream outputs to the buffer and runs the validation sweep.

It follows the log like a projection, but what it decides are events: entries staged and
displaced, confidence moved by waking outcomes, promotions, refutations, expiries and applied
review decisions. It appends them to each golem's ``<golem>:staging`` side stream together with its
tracking position, through :meth:`EventStore.append_streams`, in one transaction of the event store
(eventsourcing's process-recorder pattern: ``insert_events(..., tracking=...)``), so a crash between
deciding and recording cannot lose or double a decision.

Its memory is a fold of its own past decisions, plus what it has observed of the inputs (the
golems' ticks, episodes, current phase and recorded generations); on start it rebuilds both from
the log up to its tracking position and carries on from there.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from oneiros.episodes._stored import StoredEpisodes
from oneiros.events._lineage import OutputsSourced
from oneiros.events._quarantine import EpisodeTrust
from oneiros.events._recall import MemoryRecalled
from oneiros.events._staging import (
    STAGING_STREAM,
    ConfidenceChanged,
    EntryDisplaced,
    EntryExpired,
    EntryPromoted,
    EntryRefuted,
    EntryReviewed,
    EntryStaged,
    Lineage,
    OutcomeRecorded,
    ReviewDecided,
    ReviewDecision,
    StagingStatus,
)
from oneiros.events._types import (
    CycleEvent,
    DreamOutput,
    DreamPhase,
    DreamPhaseName,
    DreamStart,
    EpisodeRecorded,
    Event,
    GenerationRecorded,
    event_subtypes,
)
from oneiros.projections._runner import RunnerSettings
from oneiros.projections._staging import STAGING_EVENTS, StagedEntry, apply_staging_event
from oneiros.store._store import EventStore, Recorded
from oneiros.validation._match import relevance
from oneiros.validation._process import DecidingProcess
from oneiros.validation._recall_policy import RecallStats, observe_recall, recall_promotions
from oneiros.validation._staged import (
    StagedOutput,
    StagedOutputOf,
    StagingSettings,
    displacement_order,
    entry_utility,
    staged_output,
)
from oneiros.validation._trust import judge_all, quarantine_for

__all__ = ["REVIEW_MOVES", "GolemBook", "StagingProcess", "matches", "review_decisions", "review_status"]

PROCESS_NAME = "oneiros.staging"

# Dense-Mem: the statuses each feedback decision may start from, and where it leads.
REVIEW_MOVES: dict[ReviewDecision, tuple[frozenset[StagingStatus], StagingStatus]] = {
    "reinforce": (frozenset({"proposed", "reinforced", "stale"}), "reinforced"),
    "stale": (frozenset({"proposed", "reinforced"}), "stale"),
    "reject": (frozenset({"proposed", "reinforced", "stale"}), "rejected"),
    "promote_candidate": (frozenset({"proposed", "reinforced", "stale"}), "promoted"),
    # What a dream wrote into memory leaves only by a decision with who and why: MEMORY.md's next
    # version drops the line, the belief is withdrawn, the entry's history keeps the revocation.
    "revoke": (frozenset({"promoted"}), "revoked"),
}


def review_status(status: StagingStatus, decision: ReviewDecision) -> StagingStatus | None:
    """The status ``decision`` moves an entry in ``status`` to, or None if it may not."""
    allowed, dest = REVIEW_MOVES[decision]
    return dest if status in allowed else None


def review_decisions(status: StagingStatus) -> tuple[ReviewDecision, ...]:
    """The decisions an entry in ``status`` may take now."""
    return tuple(d for d, (allowed, _dest) in REVIEW_MOVES.items() if status in allowed)


def matches(entry: StagedEntry, outcome: OutcomeRecorded, settings: StagingSettings | None = None) -> bool:
    """Whether ``outcome`` bears on ``entry`` judged alone: named by id, or relevant to it at
    ``staging.min_relevance`` (the sweep judges an entry among the golem's other active entries)."""
    (found,) = relevance(outcome, [entry])
    return found.relevance >= (settings or StagingSettings()).min_relevance


def _staged_order(entry: StagedEntry) -> tuple[int, str]:
    # The position of the output that was staged: the same live and after a reload.
    return entry.lineage.source_position, entry.entry_id


@dataclass
class GolemBook:
    """What the staging process knows of one golem."""

    golem_id: str
    entries: dict[str, StagedEntry] = field(default_factory=dict)
    version: int = 0
    """The version of the golem's staging stream."""
    tick: int = 0
    episodes: dict[int, bytes] = field(default_factory=dict)
    """Every episode by tick, as its JSON: read through :attr:`sources`, decoded when asked for.
    A golem's outputs may name any episode it ever had, but a decision reads a few, and a million
    decoded episodes held (and snapshotted) as objects took twice the memory and restored 5x
    slower than their bytes."""
    cycle_id: str | None = None
    phase: DreamPhaseName | None = None
    generations: dict[str, GenerationRecorded] = field(default_factory=dict)
    """The current cycle's generations by response text, for the lineage of cycles recorded
    before outputs named their calls."""
    by_key: dict[str, GenerationRecorded] = field(default_factory=dict)
    """The current cycle's generations by call key: lineage's exact link."""
    sourced: bool = False
    """Whether the current cycle's engines named the call behind each output (``OutputsSourced``)."""
    phase_of: dict[str, DreamPhaseName] = field(default_factory=dict)
    """The phase in which each output type first appeared in the current cycle, for lineage."""
    suspect: dict[int, EpisodeTrust] = field(default_factory=dict)
    """Episodes judged trusted below the minimum or flagged, by tick."""
    unjudged: dict[int, None] = field(default_factory=dict)
    """Episodes not judged yet, in the order recorded: judging runs the instruction detector, so
    it waits until an output drawn from them is staged (a reading command that loads the process
    and stages nothing never pays for it)."""
    recalls: dict[str, RecallStats] = field(default_factory=dict)
    """Every recall of each staged entry, for the recall-driven policy."""

    @property
    def sources(self) -> StoredEpisodes:
        return StoredEpisodes(self.episodes)

    def active(self) -> list[StagedEntry]:
        return [e for e in self.entries.values() if e.active]

    def generation_of(self, event: Event, text: str) -> GenerationRecorded | None:
        """The generation a staged output came from: by the call key it names, exactly; in a cycle
        recorded before outputs named their calls, by its text."""
        if self.sourced:
            key = str(getattr(event, "call_key", "") or "")
            return self.by_key.get(key) if key else None
        return self.generation_for(text)

    def generation_for(self, text: str) -> GenerationRecorded | None:
        """The current cycle's generation an output's text came from: the same text, or failing
        that the latest generation the text quotes (an engine may prefix or wrap it)."""
        exact = self.generations.get(text)
        if exact is not None:
            return exact
        quoted = [g for t, g in self.generations.items() if t and t in text]
        return quoted[-1] if quoted else None


class StagingProcess(DecidingProcess):
    """Decides the staging buffer's events. Run one per store; a second one conflicts and reloads.

    ``staged`` says how a dream output enters the buffer (``staged_output``: integration's
    DreamStaged); every dream output is an input, so a host's own output type can be staged too."""

    name = PROCESS_NAME
    topic = STAGING_STREAM
    decision_types = STAGING_EVENTS
    memory_type = dict[str, GolemBook]

    def __init__(
        self,
        store: EventStore,
        settings: StagingSettings | None = None,
        *,
        runner: RunnerSettings | None = None,
        staged: StagedOutputOf = staged_output,
    ) -> None:
        super().__init__(store, runner)
        self.settings = settings or StagingSettings()
        self.staged = staged
        self.books: dict[str, GolemBook] = {}

    # -- inputs --------------------------------------------------------------------------------

    def input_types(self) -> tuple[type[Event], ...]:
        return (
            EpisodeRecorded,
            DreamStart,
            DreamPhase,
            GenerationRecorded,
            OutcomeRecorded,
            ReviewDecided,
            MemoryRecalled,
            *event_subtypes(DreamOutput),
        )

    def book(self, golem_id: str) -> GolemBook:
        book = self.books.get(golem_id)
        if book is None:
            book = self.books[golem_id] = GolemBook(golem_id)
        return book

    # -- loading ---------------------------------------------------------------------------------

    def forget(self) -> None:
        self.books = {}

    def memory(self) -> dict[str, GolemBook]:
        return self.books

    def restore(self, memory: dict[str, GolemBook]) -> None:
        self.books = memory

    def _apply(self, golem_id: str, record: Recorded) -> None:
        book = self.book(golem_id)
        entry_id: str = record.event.entry_id  # type: ignore[attr-defined]
        entry = apply_staging_event(book.entries.get(entry_id), record)
        if entry is not None:
            book.entries[entry_id] = entry
        book.version = max(book.version, record.version)

    def next_version(self, golem_id: str) -> int:
        book = self.book(golem_id)
        book.version += 1
        return book.version

    def remember(self, golem_id: str, record: Recorded) -> None:
        self._apply(golem_id, record)

    def placed(self, record: Recorded) -> None:
        event = record.event
        entry = self.book(event.golem_id).entries.get(event.entry_id)  # type: ignore[attr-defined]
        if entry is not None:
            if type(event) is EntryStaged:
                entry.staged_position = record.position
            entry.updated_position = record.position

    # -- observing and deciding -----------------------------------------------------------------

    def observe(self, record: Recorded) -> None:
        event = record.event
        golem_id = getattr(event, "golem_id", None) or record.meta.golem_id
        book = self.book(golem_id)
        match event:
            case EpisodeRecorded(episode=episode):
                book.episodes[episode.tick] = StoredEpisodes.encode(episode)
                book.tick = max(book.tick, episode.tick)
                book.suspect.pop(episode.tick, None)
                book.unjudged.pop(episode.tick, None)
                book.unjudged[episode.tick] = None
            case GenerationRecorded(text=text, call_key=key):
                book.generations[text] = event
                book.by_key[key] = event
            case OutcomeRecorded(tick=tick):
                book.tick = max(book.tick, tick)
            case DreamStart(cycle_id=cycle_id):
                book.cycle_id, book.phase, book.generations, book.phase_of = cycle_id, None, {}, {}
                book.by_key, book.sourced = {}, False
            case DreamPhase(phase=phase):
                book.phase = phase
            case OutputsSourced(cycle_id=book.cycle_id):
                book.sourced = True
            case MemoryRecalled():
                observe_recall(book.recalls, event, record.meta.time)
        if book.phase is not None and isinstance(event, CycleEvent) and event.cycle_id == book.cycle_id:
            book.phase_of.setdefault(event.type_name, book.phase)

    def decide(self, record: Recorded) -> list[Event]:
        event = record.event
        golem_id = getattr(event, "golem_id", None) or record.meta.golem_id
        book = self.book(golem_id)
        spec = self.staged(event)
        if spec is not None:
            return self._stage(book, record, spec)
        match event:
            case OutcomeRecorded():
                return [*self._expire(book), *self._validate(book, record, event)]
            case EpisodeRecorded():
                return self._expire(book)
            case ReviewDecided():
                return self._review(book, record, event)
            case MemoryRecalled() if self.settings.promotion != "outcomes":
                s = self.settings
                return recall_promotions(
                    book.entries,
                    book.recalls,
                    event,
                    time=record.meta.time,
                    settings=s.recall,
                    review_only=s.review_only_kinds,
                )
        return []

    def _stage(self, book: GolemBook, record: Recorded, spec: StagedOutput) -> list[Event]:
        event = record.event
        text = spec.text(event)
        generation = book.generation_of(event, text)
        # The output type the dream classified (DreamStaged.source), for the phase that made it.
        source = str(getattr(event, "source", "") or type(event).type_name)
        cycle_id = getattr(event, "cycle_id", None) or record.meta.cycle_id or ""
        entry_id = spec.entry_id(event) or f"stg-{record.meta.event_id}"
        if entry_id in book.entries:
            return []  # a re-run phase restaged an entry it already had
        staged = EntryStaged(
            golem_id=book.golem_id,
            entry_id=entry_id,
            kind=spec.kind(event),
            text=text,
            confidence_pct=max(0, min(100, spec.confidence_pct(event, self.settings))),
            criterion=spec.criterion(event, book.sources),
            lineage=Lineage(
                cycle_id=cycle_id,
                phase=generation.phase if generation is not None else book.phase_of.get(source, book.phase),
                source_event_id=record.meta.event_id,
                source_position=record.position,
                source_episode_ticks=spec.source_ticks(event),
                prompt=generation.prompt if generation is not None else "",
                model=generation.model if generation is not None else "",
                call_key=generation.call_key if generation is not None else "",
                request_hash=generation.request_hash if generation is not None else "",
            ),
            tick=book.tick,
        )
        out: list[Event] = []
        active = book.active()
        if len(active) >= self.settings.cap:
            by = self.settings.displace_by
            sources = book.sources
            victim = min(active, key=lambda e: (displacement_order(e, sources, by), e.entry_id))
            score = entry_utility(victim, sources) if by == "utility" else victim.confidence_pct / 100
            out.append(
                EntryDisplaced(
                    golem_id=book.golem_id,
                    entry_id=victim.entry_id,
                    cycle_id=victim.cycle_id,
                    by_entry_id=entry_id,
                    utility_pct=round(score * 100),
                )
            )
        out.append(staged)
        ticks = spec.source_ticks(event)
        self._judge(book, ticks or list(book.unjudged))
        quarantine = quarantine_for(staged, ticks, book.suspect, self.settings.trust)
        if quarantine is not None:
            out.append(quarantine)
        return out

    def _judge(self, book: GolemBook, ticks: Iterable[int]) -> None:
        """Judge the not yet judged episodes among ``ticks``: untrusted or flagged ones are suspect."""
        unjudged, sources = book.unjudged, book.sources
        chosen = [tick for tick in ticks if unjudged.pop(tick, 0) is None]
        for judged in judge_all(((tick, sources[tick]) for tick in chosen), self.settings.trust):
            book.suspect[judged.tick] = judged

    def _expire(self, book: GolemBook) -> list[Event]:
        limit = self.settings.expire_after_ticks
        if limit is None:
            return []
        return [
            EntryExpired(golem_id=book.golem_id, entry_id=e.entry_id, cycle_id=e.cycle_id, tick=book.tick)
            for e in sorted(book.active(), key=_staged_order)
            if book.tick - e.staged_tick >= limit
        ]

    def _validate(self, book: GolemBook, record: Recorded, outcome: OutcomeRecorded) -> list[Event]:
        s = self.settings
        out: list[Event] = []
        active = sorted(book.active(), key=_staged_order)
        for entry, match in zip(active, relevance(outcome, active), strict=True):
            # Entries past their time expire in this same step (see decide) and are not validated.
            expired = s.expire_after_ticks is not None and book.tick - entry.staged_tick >= s.expire_after_ticks
            if expired or entry.kind in s.review_only_kinds:
                continue
            if match.relevance < s.min_relevance:
                continue
            step = s.confirm_step_pct if outcome.verdict == "confirms" else -s.contradict_step_pct
            after = max(0, min(100, entry.confidence_pct + step))
            base = {"golem_id": book.golem_id, "entry_id": entry.entry_id, "cycle_id": entry.cycle_id}
            out.append(
                ConfidenceChanged(
                    **base,
                    before_pct=entry.confidence_pct,
                    after_pct=after,
                    verdict=outcome.verdict,
                    outcome_position=record.position,
                    relevance=None if outcome.entry_id is not None else match.relevance,
                )
            )
            # A quarantined entry's confidence still moves, for its reviewer to see; only a review
            # promotes it.
            if after >= s.promote_at_pct and s.promotion != "recalls" and entry.quarantine is None:
                out.append(
                    EntryPromoted(
                        **base, confidence_pct=after, by="sweep", reason=f"confirmed by outcome at {record.position}"
                    )
                )
            elif after < s.refute_below_pct:
                out.append(EntryRefuted(**base, confidence_pct=after))
        return out

    def _review(self, book: GolemBook, record: Recorded, review: ReviewDecided) -> list[Event]:
        entry = book.entries.get(review.entry_id)
        if entry is None:
            return []
        dest = review_status(entry.status, review.decision)
        if dest is None:
            # The entry moved on between the reviewer's check and now; the decision is moot.
            return []
        base = {"golem_id": book.golem_id, "entry_id": entry.entry_id, "cycle_id": entry.cycle_id}
        out: list[Event] = [
            EntryReviewed(
                **base,
                decision=review.decision,
                status=dest,
                who=review.who,
                why=review.why,
                review_position=record.position,
            )
        ]
        if dest == "promoted":
            out.append(
                EntryPromoted(
                    **base, confidence_pct=entry.confidence_pct, by="review", reason=f"{review.who}: {review.why}"
                )
            )
        return out
