"""Observers of committed events: on entering or leaving a mode or phase, and by event type.

They run after the events are durably appended, from :meth:`Observers.dispatch`, which the golem
service calls after each append and a log follower may call for events written elsewhere. Replay
never dispatches.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence

import msgspec

from oneiros.events._types import Event
from oneiros.fsm._golem import GolemState, fold
from oneiros.fsm._machine import Machine, machine_for
from oneiros.settings._phases import PHASES, PhaseTable
from oneiros.store._store import EventStore, LogSubscription, Recorded

__all__ = ["Observers", "Transition", "follow_log"]

_log = logging.getLogger("oneiros.observers")


class Transition(msgspec.Struct, frozen=True):
    """A committed move of one golem between machine states, and the event that made it."""

    golem_id: str
    state: str
    source: str
    dest: str
    record: Recorded


TransitionObserver = Callable[[Transition], None]
EventObserver = Callable[[Recorded], None]


class Observers:
    """A registry of callbacks. An observer that raises is logged and the others still run.

    States are named as the machine of ``phases`` names them (the canonical table by default)."""

    def __init__(self, phases: PhaseTable = PHASES) -> None:
        self._machine = machine_for(phases)
        self._enter: defaultdict[str, list[TransitionObserver]] = defaultdict(list)
        self._exit: defaultdict[str, list[TransitionObserver]] = defaultdict(list)
        self._events: defaultdict[type[Event], list[EventObserver]] = defaultdict(list)

    def on_enter(self, state: str, fn: TransitionObserver) -> TransitionObserver:
        """Call ``fn`` when a golem enters ``state`` (``"Dreaming"``, ``"Dreaming_REM"`` or ``"rem"``)."""
        self._enter[self._state_name(state)].append(fn)
        return fn

    def on_exit(self, state: str, fn: TransitionObserver) -> TransitionObserver:
        """Call ``fn`` when a golem leaves ``state``."""
        self._exit[self._state_name(state)].append(fn)
        return fn

    def on_event(self, cls: type[Event], fn: EventObserver) -> EventObserver:
        """Call ``fn`` with every committed event of type ``cls``."""
        self._events[cls].append(fn)
        return fn

    def __bool__(self) -> bool:
        return bool(self._enter or self._exit or self._events)

    def _state_name(self, name: str) -> str:
        machine = self._machine
        if name in machine.states:
            return name
        if name in machine.phases.names:
            return machine.phase_state(name)
        raise ValueError(f"unknown state {name!r}; expected one of {', '.join(machine.states + machine.phases.names)}")

    def dispatch(self, before: GolemState, records: Sequence[Recorded], machine: Machine | None = None) -> None:
        """Run the observers for ``records``, committed on top of ``before`` (left untouched), moving
        between the states of ``machine`` (by default, that of the phases these observers were made for)."""
        if not self:
            return
        machine = machine or self._machine
        state = before.snapshot()
        for record in records:
            source = state.machine_state
            state.apply(record)
            dest = state.machine_state
            exited, entered = machine.transition_path(source, dest)
            for name in exited:
                self._call(self._exit.get(name, ()), Transition(state.golem_id, name, source, dest, record))
            for name in entered:
                self._call(self._enter.get(name, ()), Transition(state.golem_id, name, source, dest, record))
            for fn in self._events.get(type(record.event), ()):
                self._safe(fn, record)

    def _call(self, fns: Sequence[TransitionObserver], transition: Transition) -> None:
        for fn in fns:
            self._safe(fn, transition)

    @staticmethod
    def _safe(fn: Callable[[object], None] | Callable[..., None], arg: object) -> None:
        try:
            fn(arg)
        except Exception:  # an observer's failure must not undo or block committed events
            _log.exception("observer %r failed", fn)


def follow_log(
    store: EventStore,
    observers: Observers,
    stop: threading.Event,
    *,
    after: int | None = None,
    poll_interval: float = 0.05,
) -> int:
    """Dispatch events that any process appends to ``store`` until ``stop`` is set.

    Starts after position ``after`` (default: the current head, so only new events are observed).
    Returns the last position dispatched. Woken by the store's subscription: LISTEN/NOTIFY on
    PostgreSQL, a poll every ``poll_interval`` on SQLite, which has no notifications. Each golem's
    state is folded from its stream once, on its first new event.
    """
    position = store.head() if after is None else after
    states: dict[str, GolemState] = {}
    with store.subscribe(after=position, poll_interval=poll_interval) as events:
        done = threading.Event()
        # The subscription blocks between events; this ends it as soon as ``stop`` is set.
        watcher = threading.Thread(target=_stop_on, args=(stop, done, events), daemon=True)
        watcher.start()
        try:
            for record in events:
                if stop.is_set():
                    break
                golem_id = record.meta.golem_id
                state = states.get(golem_id)
                if state is None:
                    state = states[golem_id] = fold(golem_id, store.read_stream(golem_id, until=record.position - 1))
                observers.dispatch(state, [record])
                state.apply(record)
                position = record.position
        finally:
            done.set()
            watcher.join()
    return position


def _stop_on(stop: threading.Event, done: threading.Event, events: LogSubscription) -> None:
    while not done.is_set():
        if stop.wait(0.05):
            events.stop()
            return
