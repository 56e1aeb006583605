"""The writes: creating a golem, recording what it lived through (episodes, activity, outcomes),
and deciding on what it dreamt (reviews, re-evaluation, MEMORY.md rollbacks)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import msgspec

from oneiros._errors import EntryNotFound, GolemNotFound, MemoryVersionNotFound
from oneiros.app._core import Core
from oneiros.app._idempotency import once
from oneiros.app._shapes import Appended, Entry, Golem, Memory, OutcomeMoved
from oneiros.events._schedule import ActivityKind, ActivityRecorded
from oneiros.events._staging import ReviewDecided, ReviewDecision
from oneiros.events._types import Episode
from oneiros.projections._index import staged_entry
from oneiros.projections._sinks import memory_version
from oneiros.validation._explain import explain_outcome
from oneiros.validation._review import OutcomeInput

__all__ = ["Imported", "Recording"]


class Imported(msgspec.Struct, frozen=True, kw_only=True):
    """Episodes recorded from files, and those skipped because the golem had them already (their
    ticks, or their refs for an import ``by_ref``)."""

    recorded: int
    skipped: int


class Recording(Core):
    """The use cases that write."""

    # -- golems and what they lived through ---------------------------------------------------

    def create_golem(self, golem_id: str, name: str = "", *, idempotency_key: str | None = None) -> Golem:
        """Create ``golem_id`` (GolemExists if it is there already; with an ``idempotency_key`` it
        came with before, the golem as that call answered)."""

        def create() -> Golem:
            golems = self._golems()
            golems.create(golem_id, name)
            # The state its own append left (checked against the stream's tail), as the golems
            # projection will hold it: the answer need not wait for that projection.
            state = golems.state(golem_id)
            self._written(state.position, "golems", shown=False)
            return Golem.of(state)

        request = ("create_golem", name)
        return once(self.store, self.deps, golem_id, idempotency_key, request=request, kind=Golem, run=create)

    def golem(self, golem_id: str, at: int | None = None) -> Golem:
        """The golem's state at the log head, or rebuilt as of log position ``at``."""
        if at is not None:
            return Golem.of(self._golems().state(golem_id, until=at))
        self._fresh("golems", sweep=False)
        state = self.projections.golem(golem_id)
        if state is None:
            raise self._unknown(golem_id)
        return Golem.of(state)

    def golem_exists(self, golem_id: str) -> bool:
        """Whether ``golem_id`` was created, from its own stream."""
        try:
            self._golems().state(golem_id)
        except GolemNotFound:
            return False
        return True

    def record_episodes(
        self, golem_id: str, episodes: Iterable[Episode], *, idempotency_key: str | None = None
    ) -> Appended:
        """Record waking episodes in one transaction; a tick recorded before is replaced. With an
        ``idempotency_key`` it came with before (the same episodes), nothing is recorded again and
        the answer is the first one."""
        self.require_golem(golem_id)
        chosen = list(episodes)

        def record() -> Appended:
            records = self._golems().record_episodes(golem_id, chosen)
            appended = Appended.of(records)
            self._written(appended.position, "golems", shown=False)
            return appended

        request = ("record_episodes", chosen)
        return once(
            self.store, self.deps, golem_id, idempotency_key, request=request, kind=Appended, run=record,
            rebuild=Appended.of,
        )  # fmt: skip

    def import_episodes(
        self,
        golem_id: str,
        batches: Iterable[Sequence[Episode]],
        *,
        on_batch: Callable[[int], None] | None = None,
        by_ref: bool = False,
    ) -> Imported:
        """Create ``golem_id`` if it is new and record the episodes of ``batches`` (checked whole
        already: ``count_episodes``, an importer's plan) whose ticks it does not have yet, a batch a
        transaction, so an import cut short is finished by running it again. ``on_batch`` hears how
        many episodes each batch held.

        ``by_ref``: an episode is known by its ``ref`` instead (a session event's id): one whose ref
        the golem has (or that has none) is skipped, and the others are ticked on after its last tick where their own
        would not follow it, so files that grew, or a folder that gained a session between older
        ones, record only what is new and never overwrite an episode."""
        golems = self._golems()
        if not self.golem_exists(golem_id):
            golems.create(golem_id)
        # From the fold a cycle reads anyway (a snapshot and what came since), not a full read.
        known: set[int] | None = None
        refs: set[str] = set()
        after = 0
        recorded = skipped = 0
        for batch in batches:
            if known is None:
                columns = self._logs().read(golem_id).memory.columns()
                known = set(columns.ticks.tolist())
                if by_ref:
                    refs = {e.ref for e in columns if e.ref is not None}
                    after = max(known, default=-1) + 1
            if by_ref:
                new = []
                for episode in batch:
                    if episode.ref is None or episode.ref in refs:
                        continue
                    refs.add(episode.ref)
                    after = max(after, episode.tick) + 1
                    new.append(
                        episode if episode.tick == after - 1 else msgspec.structs.replace(episode, tick=after - 1)
                    )
            else:
                new = [e for e in batch if e.tick not in known]
            recorded += len(golems.record_episodes(golem_id, new)) if new else 0
            skipped += len(batch) - len(new)
            if on_batch is not None:
                on_batch(len(batch))
        return Imported(recorded=recorded, skipped=skipped)

    def record_activity(
        self, golem_id: str, kind: ActivityKind, detail: str = "", *, idempotency_key: str | None = None
    ) -> Appended:
        """The golem was busy (a message in, an action, a turn): silence and fatigue count these."""
        self.require_golem(golem_id)

        def record() -> Appended:
            records = self._golems().record(golem_id, [ActivityRecorded(kind=kind, detail=detail)])
            appended = Appended.of(records)
            self._written(appended.position, "schedule", shown=False)
            return appended

        request = ("record_activity", [kind, detail])
        return once(
            self.store, self.deps, golem_id, idempotency_key, request=request, kind=Appended, run=record,
            rebuild=Appended.of,
        )  # fmt: skip

    def record_outcome(
        self, golem_id: str, outcome: OutcomeInput, *, explain: bool = False, idempotency_key: str | None = None
    ) -> OutcomeMoved:
        """Record a waking outcome; the sweep moves the staged entries it is relevant to, and the
        answer lists those it moved, with ``explain`` why, and why the nearest others did not."""
        self.require_golem(golem_id)
        request = ("record_outcome", [outcome, explain])
        return once(
            self.store, self.deps, golem_id, idempotency_key, request=request, kind=OutcomeMoved,
            run=lambda: self._record_outcome(golem_id, outcome, explain),
        )  # fmt: skip

    def _record_outcome(self, golem_id: str, outcome: OutcomeInput, explain: bool) -> OutcomeMoved:
        feedback = self._feedback()
        record = feedback.record_outcome(golem_id, outcome)
        self._written(record.position, "staging", "index")
        moved = feedback.moved_by(record)
        return OutcomeMoved(
            position=record.position,
            entries=[Entry.of(e) for e in self._staged(golem_id) if e.entry_id in moved],
            explain=explain_outcome(self.store, record, self.config.staging) if explain else None,
        )

    # -- decisions on what it dreamt ----------------------------------------------------------

    def entry(self, entry_id: str) -> Entry:
        """One staged entry by its exact id (EntryNotFound if there is none)."""
        self._fresh("staging")
        found = staged_entry(self.projections.db, entry_id)
        if found is None:
            raise EntryNotFound(entry_id)
        return Entry.of(found)

    def review(
        self, entry_id: str, decision: ReviewDecision, *, who: str, why: str, idempotency_key: str | None = None
    ) -> Entry:
        """Decide on a staged entry (Dense-Mem's feedback): reinforce, stale, reject or promote_candidate,
        or revoke a promoted one (MEMORY.md's next version drops its line)."""

        def decide() -> Entry:
            record = self._feedback().review(entry_id, decision, who=who, why=why)
            self._written(record.position, "staging", "index")
            return self.entry(entry_id)

        golem_id = self.entry(entry_id).golem_id if idempotency_key is not None else ""
        request = ("review", [entry_id, decision, who, why])
        return once(self.store, self.deps, golem_id, idempotency_key, request=request, kind=Entry, run=decide)

    def reevaluate(self, golem_id: str) -> list[ReviewDecided]:
        """Dense-Mem's re_evaluate: active entries whose source episodes are all gone become stale,
        proposed ones whose sources are intact reinforced; the decisions made."""
        self.require_golem(golem_id)
        records = self._feedback().reevaluate(golem_id)
        self._written(records[-1].position if records else 0, shown=False)
        return [r.event for r in records if isinstance(r.event, ReviewDecided)]

    def rollback_memory(self, golem_id: str, version: int, *, who: str, why: str = "") -> Memory:
        """Restore MEMORY.md ``version`` as a new, newest version."""
        self.require_golem(golem_id)
        feedback = self._feedback()
        newest = feedback.memory_versions(golem_id)
        if not 1 <= version <= newest:
            raise MemoryVersionNotFound(golem_id, version, newest)
        record = feedback.rollback_memory(golem_id, version, who=who, why=why)
        self._written(record.position, "memory")
        return Memory(memory=memory_version(self.projections.db, golem_id))
