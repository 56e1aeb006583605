"""The writes: creating a golem, recording what it lived through (episodes, activity, outcomes),
recall (logged: it counts toward promotion), and deciding on what it dreamt (reviews,
re-evaluation, MEMORY.md rollbacks)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import msgspec

from oneiros._errors import MemoryVersionNotFound
from oneiros.app._concerns import command, use_case
from oneiros.app._core import Core
from oneiros.app._reads import Reads
from oneiros.app._shapes import Appended, Entry, Golem, Memory, OutcomeMoved, RecallResult
from oneiros.events._schedule import ActivityKind, ActivityRecorded
from oneiros.events._staging import ReviewDecided, ReviewDecision
from oneiros.events._types import Episode
from oneiros.projections._recall import recall_golem
from oneiros.projections._sinks import memory_version
from oneiros.store._store import Recorded
from oneiros.store._unit import UnitOfWork
from oneiros.validation._explain import explain_outcome
from oneiros.validation._recalls import record_recall
from oneiros.validation._review import OutcomeInput

__all__ = ["Imported", "Records"]


class Imported(msgspec.Struct, frozen=True, kw_only=True):
    """Episodes recorded from files, and those skipped because the golem had them already (their
    ticks, or their refs for an import ``by_ref``)."""

    recorded: int
    skipped: int


def _entry_golem(part: Records, entry_id: str) -> str:
    """The golem whose key stream holds a review's idempotency key: the entry's."""
    return part.reads.entry(entry_id).golem_id


class Records:
    """The use cases that write: creating golems, recording what they lived through, deciding on
    what they dreamt."""

    def __init__(self, core: Core, reads: Reads) -> None:
        self.core = core
        self.reads = reads

    # -- golems and what they lived through ---------------------------------------------------

    @command(idempotent=("name",), writes=("golems",), shown=False)
    def create_golem(
        self, unit: UnitOfWork, golem_id: str, name: str = "", *, idempotency_key: str | None = None
    ) -> Golem:
        """Create ``golem_id`` (GolemExists if it is there already; with an ``idempotency_key`` it
        came with before, the golem as that call answered)."""
        golems = self.core.golems(unit)
        golems.create(golem_id, name)
        # The state its own append left (checked against the stream's tail), as the golems
        # projection will hold it: the answer need not wait for that projection.
        return Golem.of(golems.state(golem_id))

    @command(golem="created", idempotent=("episodes",), writes=("golems",), shown=False, rebuild=Appended.of)
    def record_episodes(
        self, unit: UnitOfWork, golem_id: str, episodes: Iterable[Episode], *, idempotency_key: str | None = None
    ) -> Appended:
        """Record waking episodes in one transaction; a tick recorded before is replaced. With an
        ``idempotency_key`` it came with before (the same episodes), nothing is recorded again and
        the answer is the first one."""
        return Appended.of(self.core.golems(unit).record_episodes(golem_id, list(episodes)))

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
        golems = self.core.golems()
        if not self.reads.golem_exists(golem_id):
            golems.create(golem_id)
        # From the fold a cycle reads anyway (a snapshot and what came since), not a full read.
        known: set[int] | None = None
        refs: set[str] = set()
        after = 0
        recorded = skipped = 0
        for batch in batches:
            if known is None:
                columns = self.core.logs().read(golem_id).memory.columns()
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

    @command(golem="created", idempotent=("kind", "detail"), writes=("schedule",), shown=False, rebuild=Appended.of)
    def record_activity(
        self,
        unit: UnitOfWork,
        golem_id: str,
        kind: ActivityKind,
        detail: str = "",
        *,
        idempotency_key: str | None = None,
    ) -> Appended:
        """The golem was busy (a message in, an action, a turn): silence and fatigue count these."""
        return Appended.of(self.core.golems(unit).record(golem_id, [ActivityRecorded(kind=kind, detail=detail)]))

    @command(golem="created", idempotent=("outcome", "explain"), writes=("staging", "index"))
    def record_outcome(
        self,
        unit: UnitOfWork,
        golem_id: str,
        outcome: OutcomeInput,
        *,
        explain: bool = False,
        idempotency_key: str | None = None,
    ) -> OutcomeMoved:
        """Record a waking outcome; the sweep moves the staged entries it is relevant to, and the
        answer lists those it moved, with ``explain`` why, and why the nearest others did not."""
        return self._moved(golem_id, self.core.feedback(unit).record_outcome(golem_id, outcome), explain)

    @use_case(reads=("staging", "index"))
    def _moved(self, golem_id: str, record: Recorded, explain: bool) -> OutcomeMoved:
        """What the sweep moved because of the outcome at ``record``, once it has decided on it."""
        moved = self.core.feedback().moved_by(record)
        return OutcomeMoved(
            position=record.position,
            entries=[Entry.of(e) for e in self.core.staged(golem_id) if e.entry_id in moved],
            explain=explain_outcome(self.core.store, record, self.core.config.staging) if explain else None,
        )

    # -- recall ------------------------------------------------------------------------------

    @command(idempotent=("query", "limit"), only_if="record", reads=(), golem="exists")
    def recall(  # noqa: PLR0913 - `unit` is the command decorator's (app/_concerns.py), never a caller's
        self,
        unit: UnitOfWork,
        golem_id: str,
        query: str,
        limit: int = 10,
        *,
        record: bool = True,
        idempotency_key: str | None = None,
    ) -> RecallResult:
        """What the golem knows that matches ``query``: episodes, beliefs, promoted insights and
        MEMORY.md lines; matching dreams come back apart, in ``related_dreams``. With ``record``
        the recall is logged (it counts toward recall-driven promotion); a reader that may not
        write passes False and gets the same answer. A recall retried with its ``idempotency_key``
        is counted once."""
        settings = self.core.projections.settings.recall
        result = recall_golem(self.core.projections.db, golem_id, query, limit, settings=settings)
        if record:
            record_recall(unit, golem_id, result, self.core.deps)
        return result

    # -- decisions on what it dreamt ----------------------------------------------------------

    @command(idempotent=("entry_id", "decision", "who", "why"), keyed_by=_entry_golem, writes=("staging", "index"))
    def review(  # noqa: PLR0913 - `unit` is the command decorator's (app/_concerns.py), never a caller's
        self,
        unit: UnitOfWork,
        entry_id: str,
        decision: ReviewDecision,
        *,
        who: str,
        why: str,
        idempotency_key: str | None = None,
    ) -> Entry:
        """Decide on a staged entry (Dense-Mem's feedback): reinforce, stale, reject or promote_candidate,
        or revoke a promoted one (MEMORY.md's next version drops its line)."""
        self.core.feedback(unit).review(entry_id, decision, who=who, why=why)
        return self.reads.entry(entry_id)

    @command(golem="created", writes=(), shown=False)
    def reevaluate(self, unit: UnitOfWork, golem_id: str) -> list[ReviewDecided]:
        """Dense-Mem's re_evaluate: active entries whose source episodes are all gone become stale,
        proposed ones whose sources are intact reinforced; the decisions made."""
        records = self.core.feedback(unit).reevaluate(golem_id)
        return [r.event for r in records if isinstance(r.event, ReviewDecided)]

    @command(golem="created", writes=("memory",))
    def rollback_memory(self, unit: UnitOfWork, golem_id: str, version: int, *, who: str, why: str = "") -> Memory:
        """Restore MEMORY.md ``version`` as a new, newest version."""
        feedback = self.core.feedback(unit)
        newest = feedback.memory_versions(golem_id)
        if not 1 <= version <= newest:
            raise MemoryVersionNotFound(golem_id, version, newest)
        feedback.rollback_memory(golem_id, version, who=who, why=why)
        return self._memory(golem_id)

    @use_case(reads=("memory",))
    def _memory(self, golem_id: str) -> Memory:
        return Memory(memory=memory_version(self.core.projections.db, golem_id))
