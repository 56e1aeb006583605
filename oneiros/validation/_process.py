"""What the validation layer's processes share: follow the log like a projection, but record what
they decide as events in each golem's side stream, together with their tracking position, in one
transaction of the event store (eventsourcing's process-recorder pattern). A crash between
deciding and recording cannot lose or double a decision; a second runner conflicts and reloads.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence

from oneiros._errors import ProjectionConflict, StreamConflict
from oneiros.events import Checkpoint, Event, EventMeta, EventStore, Recorded, StreamAppend, side_stream
from oneiros.projections import RunnerSettings

__all__ = ["DecidingProcess"]


class DecidingProcess:
    """A process that decides events from the log. Subclasses say what they read
    (:meth:`input_types`), how they rebuild their memory (:meth:`rebuild`), what they observe and
    decide, and how a decision of theirs changes their memory (:meth:`remember`)."""

    name = ""
    topic = ""
    """The side stream (``<golem>:<topic>``) the decisions go to."""

    def __init__(self, store: EventStore, runner: RunnerSettings | None = None) -> None:
        self.store = store
        self.runner = runner or RunnerSettings()
        self.position = 0
        self._loaded = False

    # -- what a subclass says ---------------------------------------------------------------------

    def input_types(self) -> tuple[type[Event], ...]:
        raise NotImplementedError

    def rebuild(self, tracked: int) -> None:
        """Rebuild memory from the log: inputs up to ``tracked`` and every decision recorded."""
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

    def low_position(self) -> int:
        if not self._loaded:
            self.load()
        return self.position

    def catch_up(self, until: int | None = None) -> int:
        """Decide on every input up to the head (or ``until``); returns the tracked position."""
        if not self._loaded:
            self.load()
        head = self.store.head()
        target = head if until is None else min(until, head)
        if target <= self.position:
            return self.position
        self._run(self.store.read_all(after=self.position, until=target, types=self.input_types()), target)
        return self.position

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
        except ProjectionConflict:
            # Another process decided first: carry on from what it recorded, or, if it is still
            # racing this one, leave the stretch to it; the next batch fills any gap from the log.
            with contextlib.suppress(ProjectionConflict):
                self.catch_up()

    def _run(self, inputs: Iterable[Recorded], target: int) -> None:
        pending: list[tuple[str, int, EventMeta, Event]] = []
        try:
            for record in inputs:
                self.observe(record)
                for event in self.decide(record):
                    pending.append(self._record_new(event, record))
                if len(pending) >= self.runner.batch_events:
                    self._write(pending, record.position)
                    pending = []
            self._write(pending, target)
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
            self.store.append_streams(batch, checkpoint=Checkpoint(self.name, self.position, position))
        except StreamConflict:
            raise ProjectionConflict(
                self.name, self.position, self.store.backend.recorder.max_tracking_id(self.name)
            ) from None
        self.position = position
