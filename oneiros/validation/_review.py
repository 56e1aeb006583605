"""What people and the waking agent tell the staging buffer: outcomes, review decisions,
re-evaluation and MEMORY.md rollbacks (Dense-Mem review lifecycle, Bardo outcomes).

Each is checked against the log before anything is written, then appended to the golem's
``<golem>:feedback`` side stream; the staging process turns it into the buffer's own events.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from oneiros._deps import Deps
from oneiros._errors import EntryNotFound, GolemNotFound, IllegalReview, InputError
from oneiros.events._content import EpisodeTriaged
from oneiros.events._staging import (
    FEEDBACK_STREAM,
    STAGING_STREAM,
    EntryPromoted,
    EntryReviewed,
    EntryStaged,
    MemoryRolledBack,
    OutcomeRecorded,
    ReviewDecided,
    ReviewDecision,
    Verdict,
    side_stream,
)
from oneiros.events._types import MAX_TICK, EpisodeRecorded, Event, EventMeta
from oneiros.fsm._races import retry_race
from oneiros.fsm._service import Golems
from oneiros.projections._staging import STAGING_EVENTS, StagedEntry
from oneiros.settings._races import RaceSettings
from oneiros.store._store import EventStore, Recorded
from oneiros.validation._explain import staged_entries
from oneiros.validation._sweep import review_decisions, review_status

__all__ = ["Feedback", "OutcomeInput", "RemovedTicks", "append_side", "removed_ticks"]

RemovedTicks = Callable[[Event], Sequence[int]]
"""The episode ticks an event removes; re-evaluation marks entries whose sources all went stale."""


def removed_ticks(event: Event) -> Sequence[int]:
    """The episodes ``event`` removes: NREM triage's "forget" (Stickgold and Walker, via Bardo)
    is how an episode goes today. A host with events of its own that remove episodes gives
    :class:`Feedback` a function that knows them (and calls this one for the rest)."""
    match event:
        case EpisodeTriaged(decision="forget", episode_tick=tick):
            return (tick,)
    return ()


class OutcomeInput(msgspec.Struct, frozen=True, kw_only=True):
    """A waking outcome as the API and CLI take it."""

    tick: int
    verdict: Verdict
    summary: str = ""
    tags: tuple[str, ...] = ()
    regime: str | None = None
    entry_id: str | None = None


class Feedback:
    """Records outcomes and review decisions, checked first so a bad one writes nothing."""

    def __init__(
        self,
        store: EventStore,
        *,
        deps: Deps | None = None,
        retries: int | None = None,
        removed: RemovedTicks = removed_ticks,
        golems: Golems | None = None,
    ) -> None:
        self.store = store
        self.deps = deps or Deps()
        self.retries = retries
        self.removed = removed
        self.golems = golems
        """Whose states an outcome checks the golem against: one that has read the golem before
        reads only what came since (a fresh one folds it from its last snapshot)."""
        """Which episodes an event removes, for :meth:`reevaluate`."""

    # -- reading -------------------------------------------------------------------------------

    def entries(self, golem_id: str) -> dict[str, StagedEntry]:
        """The golem's staged entries as the staging process has decided them so far."""
        return staged_entries(self.store, golem_id)

    def find(self, entry_id: str) -> StagedEntry:
        """The entry ``entry_id`` of whichever golem staged it."""
        for record in self.store.read_all(types=[EntryStaged]):
            event = record.event
            assert isinstance(event, EntryStaged)
            if event.entry_id == entry_id:
                return self.entries(event.golem_id)[entry_id]
        raise EntryNotFound(entry_id)

    # -- commands ------------------------------------------------------------------------------

    def record_outcome(self, golem_id: str, outcome: OutcomeInput) -> Recorded:
        """Record a waking outcome for the validation sweep."""
        if self.golems is not None:
            self.golems.state(golem_id)
        elif not self.store.stream_version(golem_id):  # a golem's stream begins with its creation
            raise GolemNotFound(golem_id)
        if outcome.entry_id is not None and outcome.entry_id not in self.entries(golem_id):
            raise EntryNotFound(outcome.entry_id)
        if not 0 <= outcome.tick <= MAX_TICK:  # the episodes' bound: a tick is one moment of the golem
            raise InputError(f"outcome tick {outcome.tick} must be 0-{MAX_TICK}")
        event = OutcomeRecorded(golem_id=golem_id, **msgspec.structs.asdict(outcome))
        return self._append(golem_id, [event])[0]

    def moved_by(self, outcome: Recorded) -> frozenset[str]:
        """The entries the sweep decided on because of ``outcome`` (moved, promoted, refuted,
        expired), by causation: settling may also stage and displace entries of a cycle not staged
        yet, after the outcome's position, and the outcome did not move those. Reads only the
        staging events after it."""
        cause = outcome.meta.event_id
        after = self.store.read_all(after=outcome.position, types=STAGING_EVENTS)
        return frozenset(r.event.entry_id for r in after if r.meta.causation_id == cause)  # type: ignore[attr-defined]

    def review(self, entry_id: str, decision: ReviewDecision, *, who: str, why: str) -> Recorded:
        """Record a review decision on ``entry_id`` if its current status allows it."""
        if not who.strip() or not why.strip():
            raise InputError("a review decision needs who made it and why")
        entry = self.find(entry_id)
        if review_status(entry.status, decision) is None:
            raise IllegalReview(entry_id, entry.status, decision, review_decisions(entry.status))
        event = ReviewDecided(golem_id=entry.golem_id, entry_id=entry_id, decision=decision, who=who, why=why)
        return self._append(entry.golem_id, [event])[0]

    def reevaluate(self, golem_id: str, *, who: str = "re_evaluate") -> list[Recorded]:
        """Dense-Mem's re_evaluate: active entries whose source episodes are all gone become stale;
        proposed entries whose sources are intact become reinforced."""
        present: set[int] = set()
        for record in self.store.read_stream(golem_id):
            match record.event:
                case EpisodeRecorded(episode=episode):
                    present.add(episode.tick)
                case event:
                    present.difference_update(self.removed(event))
        decisions: list[Event] = []
        for entry in sorted(self.entries(golem_id).values(), key=lambda e: e.lineage.source_position):
            sources = entry.lineage.source_episode_ticks
            if not entry.active or not sources:
                continue
            gone = [t for t in sources if t not in present]
            if len(gone) == len(sources):
                why = f"source episodes gone: {', '.join(map(str, gone))}"
                decisions.append(
                    ReviewDecided(golem_id=golem_id, entry_id=entry.entry_id, decision="stale", who=who, why=why)
                )
            elif entry.status == "proposed" and not gone:
                why = "source episodes intact"
                decisions.append(
                    ReviewDecided(golem_id=golem_id, entry_id=entry.entry_id, decision="reinforce", who=who, why=why)
                )
        return self._append(golem_id, decisions)

    def rollback_memory(self, golem_id: str, to_version: int, *, who: str, why: str = "") -> Recorded:
        """Restore MEMORY.md to ``to_version``; the restored text becomes the newest version."""
        versions = self.memory_versions(golem_id)
        if not 1 <= to_version <= versions:
            raise InputError(f"MEMORY.md of golem {golem_id!r} has versions 1-{versions}, not {to_version}")
        return self._append(golem_id, [MemoryRolledBack(golem_id=golem_id, to_version=to_version, who=who, why=why)])[0]

    def memory_versions(self, golem_id: str) -> int:
        """How many MEMORY.md versions the log implies: one per promotion, revocation and rollback."""
        promoted = sum(
            1
            for r in self.store.read_stream(side_stream(golem_id, STAGING_STREAM))
            if isinstance(r.event, EntryPromoted)
            or (isinstance(r.event, EntryReviewed) and r.event.status == "revoked")
        )
        rolled = sum(
            1
            for r in self.store.read_stream(side_stream(golem_id, FEEDBACK_STREAM))
            if isinstance(r.event, MemoryRolledBack)
        )
        return promoted + rolled

    def _append(self, golem_id: str, events: Sequence[Event]) -> list[Recorded]:
        return append_side(self.store, self.deps, golem_id, FEEDBACK_STREAM, events, retries=self.retries)


def append_side(  # noqa: PLR0913 - an append's store, ids, stream and events; retries keyword-only
    store: EventStore, deps: Deps, golem_id: str, topic: str, events: Sequence[Event], *, retries: int | None = None
) -> list[Recorded]:
    """Append ``events`` to the golem's ``topic`` side stream, retrying a lost version race (at most
    ``retries`` tries, ``races.attempts`` by default, with ``oneiros.fsm._races.retry_race``'s jittered backoff)."""
    if not events:
        return []
    stream = side_stream(golem_id, topic)

    def attempt() -> list[Recorded]:
        version = store.stream_version(stream)
        causation = deps.ids()
        items = [
            (EventMeta(time=deps.clock(), event_id=deps.ids(), golem_id=stream, causation_id=causation), e)
            for e in events
        ]
        return store.append(stream, version, items)

    return retry_race(attempt, RaceSettings.from_env(), deps, attempts=retries)
