"""What the validation layer's processes share: follow the log like a projection, but record what
they decide as events in each golem's side stream, together with their tracking position, in one
transaction of the event store (eventsourcing's process-recorder pattern). A crash between
deciding and recording cannot lose or double a decision; a second runner conflicts and reloads.

A process's memory is a fold of the log (its inputs up to its tracked position, and every decision
recorded), so a process that starts anew need not fold it all: the memory is snapshotted beside the
log (:func:`oneiros.store._snapshots.open_snapshots`, like a golem's state) and a new process restores the
latest snapshot the log still agrees with and folds only what came after it. A process with nothing
new to decide does not load its memory at all: every reading command runs the processes first.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import zlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar, Self

import msgspec

from oneiros._errors import OneirosError, ProjectionConflict, StreamConflict
from oneiros.events._staging import side_stream
from oneiros.events._types import Event, EventMeta
from oneiros.projections._runner import RunnerSettings
from oneiros.store._snapshots import Snapshot, SnapshotStore, open_snapshots, seal_parts, unseal
from oneiros.store._store import Checkpoint, EventStore, Recorded, StreamAppend

__all__ = ["DecidingProcess"]

_KIND = "process-memory"
_PROGRESS_EVERY = 5_000
"""Inputs between two calls of :attr:`DecidingProcess.on_progress` (about ten a second on a large import)."""


@functools.cache
def _memory_format(memory_type: Any, version: int) -> int:
    """A snapshot format that changes with the memory type's shape (its JSON schema) or ``version``."""
    schema = msgspec.json.encode(msgspec.json.schema(memory_type))
    return zlib.crc32(schema + b"\0" + str(version).encode())


class DecidingProcess:
    """A process that decides events from the log. Subclasses say what they read
    (:meth:`input_types`), how they rebuild their memory (:meth:`rebuild`), what they observe and
    decide, and how a decision of theirs changes their memory (:meth:`remember`)."""

    name = ""
    topic = ""
    """The side stream (``<golem>:<topic>``) the decisions go to."""
    decision_types: ClassVar[tuple[type[Event], ...]] = ()
    """The events it decides, read back into memory on load (:meth:`remember`)."""
    memory_type: ClassVar[Any] = None
    """The type of :meth:`memory`'s value, for its snapshots (None: the process takes none)."""
    memory_format: ClassVar[int] = 1
    """Raise it when what :meth:`observe` or :meth:`remember` keep changes meaning without the
    memory type changing shape: snapshots of another format are ignored. (A change of shape is
    caught without it: the format includes a digest of the type's schema.)"""

    def __init__(self, store: EventStore, runner: RunnerSettings | None = None) -> None:
        self.store = store
        self.runner = runner or RunnerSettings()
        self.position = 0
        self._loaded = False
        self._decisions_through = 0
        """Every decision at or before this log position is in memory, and none after it."""
        self._snapshot_position = 0
        self._snapshots: SnapshotStore | None = None
        self.on_progress: Callable[[int], None] | None = None
        """Called with the log position reached every few thousand inputs while deciding, and at
        the end: for a progress bar over a long catch-up."""

    # -- what a subclass says ---------------------------------------------------------------------

    def input_types(self) -> tuple[type[Event], ...]:
        raise NotImplementedError

    def forget(self) -> None:
        """Empty the memory, to fold the log into from the start."""
        raise NotImplementedError

    def memory(self) -> Any:
        """The memory as a value of :attr:`memory_type`, for a snapshot."""
        raise NotImplementedError

    def restore(self, memory: Any) -> None:
        """Take ``memory`` (a value of :attr:`memory_type` a snapshot held) as the memory."""
        raise NotImplementedError

    def observe(self, record: Recorded) -> None:
        raise NotImplementedError

    def decide(self, record: Recorded) -> list[Event]:
        raise NotImplementedError

    def next_version(self, golem_id: str) -> int:
        """The version of ``golem_id``'s side stream the next decision takes (and counts it)."""
        raise NotImplementedError

    def remember(self, golem_id: str, record: Recorded) -> None:
        """Apply one of this process's decisions to memory."""
        raise NotImplementedError

    def placed(self, record: Recorded) -> None:
        """A decision :meth:`remember` took at its cause's position now has its own in the log:
        where memory keeps positions, keep this one, as a fold of the log would."""

    # -- memory -----------------------------------------------------------------------------------

    def rebuild(self, tracked: int) -> None:
        """Memory as of the log: inputs up to ``tracked`` and every decision recorded, from the
        latest good snapshot on (or from the start). The two folds touch disjoint parts of the
        memory, so each may start from its own position."""
        inputs_after, decisions_after = self._restored(tracked)
        head = self.store.head()
        for record in self.store.read_all(after=inputs_after, until=tracked, types=self.input_types()):
            self.observe(record)
        for record in self.store.read_all(after=decisions_after, until=head, types=self.decision_types):
            self.remember(record.event.golem_id, record)  # type: ignore[attr-defined]
        self._decisions_through = max(head, decisions_after)

    def _format(self) -> int:
        return _memory_format(self.memory_type, self.memory_format)

    def _snapshot_store(self) -> SnapshotStore:
        if self._snapshots is None:
            self._snapshots = open_snapshots(self.store)
        return self._snapshots

    def _event_at(self, position: int) -> Recorded | None:
        return next(iter(self.store.read_all(after=position - 1, until=position, page=1)), None)

    def _restored(self, tracked: int) -> tuple[int, int]:
        """Restore the latest snapshot the log agrees with, taken at or before ``tracked``; the
        positions its two folds reached, or ``(0, 0)`` with the memory emptied."""
        self.forget()
        self._snapshot_position = 0
        if self.memory_type is None or not self.runner.snapshot_every:
            return 0, 0
        snapshot = unseal(self._snapshot_store().get(self.name, _KIND))
        if snapshot is None or (snapshot.kind, snapshot.stream, snapshot.format) != (_KIND, self.name, self._format()):
            return 0, 0
        try:
            inputs, decisions, memory = msgspec.msgpack.decode(
                snapshot.body,
                type=tuple[int, int, self.memory_type],  # type: ignore[name-defined]
            )
        except (msgspec.MsgspecError, ValueError, TypeError):
            return 0, 0  # damaged past its checksum, or of a shape the format did not tell apart
        anchor = self._event_at(snapshot.position)
        if inputs > tracked or anchor is None or not snapshot.taken_at(anchor):
            return 0, 0  # ahead of the tracked position, or of a log that is no longer this one
        try:
            self.restore(memory)
        except (ValueError, TypeError, KeyError, OneirosError):
            self.forget()
            return 0, 0
        self._snapshot_position = inputs
        return inputs, decisions

    def _snapshot(self) -> None:
        """Snapshot the memory once the process has passed ``snapshot_every`` log events since the
        last one, and a tenth of the log: each snapshot writes the whole memory, so spacing them
        with the log's size keeps their total cost linear in it."""
        every = self.runner.snapshot_every
        if self.memory_type is None or not every or not self._loaded:
            return
        if self.position - self._snapshot_position < max(every, self.position // 10):
            return
        anchor = self._event_at(max(self.position, self._decisions_through))
        if anchor is None:
            return
        body = msgspec.msgpack.encode((self.position, self._decisions_through, self.memory()))
        taken = msgspec.structs.replace(Snapshot.of(_KIND, self._format(), anchor, body), stream=self.name)
        self._snapshot_store().put(self.name, _KIND, seal_parts(taken))
        self._snapshot_position = self.position

    # -- running ----------------------------------------------------------------------------------

    def load(self) -> int:
        # The tracked position and the memory rebuilt from the log must be of one moment: a runner
        # committing between the two reads would leave its decision in memory but its input after
        # the position, and this runner would decide that input again at the next free version.
        # A commit changes the position with its decisions, so a position read the same before and
        # after the rebuild is the one the memory holds.
        recorder = self.store.backend.recorder
        tracked = recorder.max_tracking_id(self.name) or 0
        while True:
            self.rebuild(tracked)
            again = recorder.max_tracking_id(self.name) or 0
            if again == tracked:
                break
            tracked = again
        self.position = tracked
        self._loaded = True
        return tracked

    def loaded(self) -> Self:
        """This process with its memory loaded, for a reader of the memory: catching up leaves it
        unloaded when there was nothing to decide."""
        if not self._loaded:
            self.load()
        return self

    def low_position(self) -> int:
        return self.loaded().position

    def catch_up(self, until: int | None = None, stop: threading.Event | None = None) -> int:
        """Decide on every input up to the head (or ``until``); returns the tracked position. Once
        ``stop`` is set it records its decisions and position at the next progress step (every
        5,000 inputs) and returns, taking a snapshot if one is due, so the work is kept."""
        head = self.store.head()
        target = head if until is None else min(until, head)
        if not self._loaded and self._nothing_to_decide(target):
            return self.position
        if not self._loaded:
            self.load()
        if target <= self.position:
            return self.position
        self._run(self.store.read_all(after=self.position, until=target, types=self.input_types()), target, stop)
        self._snapshot()
        return self.position

    def _nothing_to_decide(self, target: int) -> bool:
        """True, with the position moved to ``target`` where it was behind, when no input lies
        between the tracked position and ``target``: then the memory need not be loaded."""
        self.position = self.store.backend.recorder.max_tracking_id(self.name) or 0
        if target <= self.position:
            return True
        inputs = self.store.read_all(after=self.position, until=target, types=self.input_types(), page=1)
        if next(iter(inputs), None) is not None:
            return False
        # Past events it ignores, so that whoever waits on its position does not wait on them; a
        # runner that moved meanwhile is ahead, which serves as well.
        with contextlib.suppress(ProjectionConflict):
            self._write([], target)
        return True

    def take(self, batch: Sequence[Recorded]) -> None:
        """Decide on the inputs among a stretch of the log a subscription delivered."""
        try:
            if not self._loaded:
                self.load()
            first, last = batch[0].position, batch[-1].position
            if self.position >= last:
                return
            if self.position < first - 1:
                self.catch_up(until=first - 1)
            types = frozenset(self.input_types())
            start = self.position
            self._run((r for r in batch if r.position > start and type(r.event) in types), last)
            self._snapshot()
        except ProjectionConflict:
            # Another process decided first: carry on from what it recorded, or, if it is still
            # racing this one, leave the stretch to it; the next batch fills any gap from the log.
            with contextlib.suppress(ProjectionConflict):
                self.catch_up()

    def _run(self, inputs: Iterable[Recorded], target: int, stop: threading.Event | None = None) -> None:
        pending: list[tuple[str, int, EventMeta, Event]] = []
        progress = self.on_progress
        try:
            for seen, record in enumerate(inputs, start=1):
                self.observe(record)
                for event in self.decide(record):
                    pending.append(self._record_new(event, record))
                if len(pending) >= self.runner.batch_events:
                    self._write(pending, record.position)
                    pending = []
                if seen % _PROGRESS_EVERY == 0:
                    if progress is not None:
                        progress(record.position)
                    if stop is not None and stop.is_set():
                        target = record.position  # every input up to it is decided
                        break
            self._write(pending, target)
            if progress is not None:
                progress(target)
        except BaseException:
            # Memory may hold decisions that were never written; rebuild it from the log.
            self._loaded = False
            raise

    def _record_new(self, event: Event, cause: Recorded) -> tuple[str, int, EventMeta, Event]:
        """Apply a fresh decision to memory; it goes to the golem's side stream at the version
        returned."""
        golem_id: str = event.golem_id  # type: ignore[attr-defined]
        version = self.next_version(golem_id)
        meta = self._meta(event, cause)
        self.remember(golem_id, Recorded(cause.position, version, meta, event))
        return meta.golem_id, version, meta, event

    def _meta(self, event: Event, cause: Recorded) -> EventMeta:
        golem_id: str = event.golem_id  # type: ignore[attr-defined]
        cycle = getattr(event, "cycle_id", None) or getattr(getattr(event, "lineage", None), "cycle_id", None)
        # Derived from the cause, so the decision's id is the same however often it is decided.
        what = getattr(event, "entry_id", None) or getattr(event, "alarm", "")
        return EventMeta(
            time=cause.meta.time,
            event_id=f"{cause.meta.event_id}/{type(event).type_name}/{what}",
            golem_id=side_stream(golem_id, self.topic),
            cycle_id=cycle,
            causation_id=cause.meta.event_id,
            correlation_id=cause.meta.correlation_id or cycle,
        )

    def _write(self, pending: Sequence[tuple[str, int, EventMeta, Event]], position: int) -> None:
        if not pending and position <= self.position:
            return
        appends: dict[str, tuple[int, list[tuple[EventMeta, Event]]]] = {}
        for stream, version, meta, event in pending:
            appends.setdefault(stream, (version - 1, []))[1].append((meta, event))
        batch = [StreamAppend(stream, expected, items) for stream, (expected, items) in appends.items()]
        try:
            # A second process that decided the same stretch first makes this a ProjectionConflict.
            written = self.store.append_streams(batch, checkpoint=Checkpoint(self.name, self.position, position))
        except StreamConflict:
            raise ProjectionConflict(
                self.name, self.position, self.store.backend.recorder.max_tracking_id(self.name)
            ) from None
        self.position = position
        for record in written:
            self.placed(record)
        if written:
            # No other runner's decision can lie between the last load and these: its checkpoint
            # would have made this append conflict.
            self._decisions_through = max(self._decisions_through, written[-1].position)
