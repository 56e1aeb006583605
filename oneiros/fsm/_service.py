"""The golem service: loads a golem from its stream, checks a command against the machine, appends
the events it yields and tells the observers."""

from __future__ import annotations

import contextlib
import copy
import re
from collections.abc import Callable, Iterable, Sequence

import msgspec

from oneiros._deps import Deps
from oneiros._errors import GolemExists, GolemNotFound, IllegalCommand, InputError, InvalidEvent, StreamConflict
from oneiros.events._liveness import PhaseResumed
from oneiros.events._types import (
    BardoTrigger,
    BehavioralPhase,
    DreamInterrupted,
    DreamOutput,
    DreamPhase,
    DreamStart,
    DreamTrigger,
    Episode,
    EpisodeRecorded,
    Event,
    EventMeta,
    GolemCreated,
    InterruptSource,
    ModeChanged,
    episode_out_of_bounds,
)
from oneiros.fsm._golem import GolemState, fold
from oneiros.fsm._machine import machine_for
from oneiros.fsm._observers import Observers
from oneiros.fsm._races import is_host_fact, retry_race
from oneiros.settings._cycle import CycleSettings
from oneiros.settings._phases import PHASES, PhaseTable
from oneiros.settings._races import RaceSettings
from oneiros.settings._runtime import SnapshotSettings
from oneiros.store._snapshots import Snapshot, SnapshotKind, open_snapshots, read_from_snapshot, seal_parts
from oneiros.store._store import EventStore, Recorded

__all__ = ["Golems", "replay"]

# Ids end up in stream keys, file names and span attributes: keep them plain.
_GOLEM_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_STATE_SNAPSHOT = "state"
_STATE_FORMAT = 2  # 2: cycle counts carry generation calls, failures and staged entries
Build = Callable[[GolemState], list[Event]]
# A phase's commands: their events come from the state the phase ran on, never from a fresh read.
_PHASE_TRIGGERS = frozenset({"record_output", "advance", "complete", "wake"})


class Golems:
    """Commands on golems, each checked by the machine and recorded as events."""

    def __init__(  # noqa: PLR0913 - optional collaborators and settings, keyword-only, each defaulted
        self,
        store: EventStore,
        *,
        deps: Deps | None = None,
        observers: Observers | None = None,
        trace_context: Callable[[], dict[str, str]] | None = None,
        snapshots: SnapshotSettings | None = None,
        races: RaceSettings | None = None,
        phases: PhaseTable = PHASES,
    ) -> None:
        self.store = store
        # The phases a cycle runs through, and the machine that orders them.
        self.phases = phases
        self.machine = machine_for(phases)
        self.deps = deps or Deps()
        # Not ``observers or ...``: observers with nothing registered yet are falsy, and callbacks
        # registered on them after this would never run.
        self.observers = observers if observers is not None else Observers(phases)
        # Gives the W3C trace context (``traceparent``) each appended event's metadata carries.
        self.trace_context = trace_context
        self.snapshot_settings = snapshots or SnapshotSettings.from_env()
        # How a command that lost its version race tries again (see ``oneiros.fsm._races``).
        self.races = races or RaceSettings.from_env()
        self.snapshots = open_snapshots(store)
        # The latest state seen of each golem, with its last event: the next read folds only what
        # came after it, once the log shows that very event where it was.
        self._known: dict[str, tuple[GolemState, Recorded]] = {}
        self._snapshot_versions: dict[str, int] = {}

    def through(self, store: EventStore) -> Golems:
        """These commands appending through ``store`` (a unit of work over this one's store): the
        same machine, observers, snapshots and states known, shared with this object."""
        twin = copy.copy(self)
        twin.store = store
        return twin

    # -- reading -----------------------------------------------------------------------------

    def state(self, golem_id: str, until: int | None = None) -> GolemState:
        """The golem's state from its stream, as of global position ``until`` if given."""
        if until is not None:
            state = fold(golem_id, self.store.read_stream(golem_id, until=until))
        else:
            state = self._current(golem_id)
        if not state.exists:
            raise GolemNotFound(golem_id)
        return state

    def created(self, golem_id: str) -> bool:
        """Whether ``golem_id`` was created: a golem whose state this process holds was (the log
        never takes a creation back), else one indexed lookup of its stream's version."""
        return golem_id in self._known or bool(self.store.stream_version(golem_id))

    def _current(self, golem_id: str) -> GolemState:
        """The state at the head: the last state known (here, or in a snapshot) plus the events
        after it, in one stream read; the whole stream when nothing known agrees with the log."""
        state: GolemState | None = None
        tail: Iterable[Recorded] = ()
        known = self._known.get(golem_id)
        if known is not None:
            held, seen = known
            records = self.store.read_stream(golem_id, after_version=seen.version - 1)
            if records and records[0] == seen:
                state, tail = held.snapshot(), records[1:]
        if state is None:
            state, tail = read_from_snapshot(
                self.store, self.snapshots, golem_id, SnapshotKind(_STATE_SNAPSHOT, _STATE_FORMAT), self._restore
            )
            if state is None:
                state = GolemState(golem_id=golem_id)
            else:
                self._snapshot_versions[golem_id] = state.version
        newest: Recorded | None = None
        for newest in tail:
            state.apply(newest)
        if newest is not None:
            self.remember(state, newest)
        return state

    @staticmethod
    def _restore(snapshot: Snapshot, _last: Recorded) -> GolemState:
        return msgspec.msgpack.decode(snapshot.body, type=GolemState)

    def remember(self, state: GolemState, last: Recorded) -> None:
        """Keep ``state`` (as of ``last``, its latest event) for the next read, and snapshot it every
        so many events. A reader that folded the stream elsewhere hands its state over here; the
        next read still checks the log holds ``last`` where it was before trusting it."""
        self._known[state.golem_id] = (state.snapshot(), last)
        every = self.snapshot_settings.every
        if every > 0 and state.version - self._snapshot_versions.get(state.golem_id, 0) >= every:
            snapshot = Snapshot.of(_STATE_SNAPSHOT, _STATE_FORMAT, last, msgspec.msgpack.encode(state))
            self.snapshots.put(state.golem_id, _STATE_SNAPSHOT, seal_parts(snapshot))
            self._snapshot_versions[state.golem_id] = state.version

    def history(self, golem_id: str) -> list[Recorded]:
        return self.store.read_stream(golem_id)

    # -- commands ----------------------------------------------------------------------------

    @staticmethod
    def check_id(golem_id: str) -> None:
        """Raise :class:`InputError` unless ``golem_id`` could name a golem (for whatever names one
        before it exists: a token bound to it)."""
        if not _GOLEM_ID.fullmatch(golem_id):
            raise InputError(
                f"golem id {golem_id!r} must be 1-128 letters, digits, '-', '_' or '.', starting with a letter or digit"
            )

    def create(self, golem_id: str, name: str = "", behavioral_phase: BehavioralPhase = "stable") -> GolemState:
        self.check_id(golem_id)

        def attempt() -> GolemState:
            state = self._current(golem_id)
            if state.exists:
                raise GolemExists(golem_id)
            self._commit(state, [GolemCreated(name=name, behavioral_phase=behavioral_phase)])
            return state

        return retry_race(attempt, self.races, self.deps)  # a creator that lost the race finds it exists

    def record_episodes(self, golem_id: str, episodes: Iterable[Episode]) -> list[Recorded]:
        """Record waking episodes, all or none: the store refuses the batch before writing anything if
        one value cannot be stored as it is (a range, NaN, bad Unicode), naming the field."""
        given = list(episodes)
        _check_bounds(given)
        checked: list[Event] = [EpisodeRecorded(episode=episode) for episode in given]
        return self._command(golem_id, "record_episode", lambda _s: checked)

    def record(self, golem_id: str, events: Sequence[Event]) -> list[Recorded]:
        """Record events that are neither episodes nor dream outputs (activity, requests, scheduler
        decisions, held messages): legal while waking or dreaming, never once dying."""
        return self._command(golem_id, "record", lambda _s: list(events))

    def record_built(self, golem_id: str, build: Build) -> list[Recorded]:
        """As :meth:`record`, with the events built by ``build`` from the golem's state, and built
        again on a fresh read whenever the append loses a race: for events that claim something
        the stream must not hold twice (an episode's new tick, the newest session item). Episodes
        past the bounds are refused as by :meth:`record_episodes`."""

        def checked(state: GolemState) -> list[Event]:
            events = build(state)
            _check_bounds([e.episode for e in events if isinstance(e, EpisodeRecorded)])
            return events

        return self._command(golem_id, "record", checked)

    def fall_asleep(  # noqa: PLR0913 - the DreamStart's own optional fields, keyword-only
        self,
        golem_id: str,
        trigger: DreamTrigger,
        *,
        budget_tokens: int,
        cycle_id: str | None = None,
        detail: str = "",
        bardo_trigger: BardoTrigger | None = None,
        settings: CycleSettings | None = None,
    ) -> str:
        """Start a dream cycle; returns its id. The cycle opens in the first phase and records the
        ``settings`` every phase of it runs with. ``bardo_trigger`` is the cause in Bardo's
        terms (the scheduler knows it; by default it follows ``trigger``)."""
        cycle = cycle_id or self.deps.ids()
        self._command(
            golem_id,
            "fall_asleep",
            lambda _s: [
                DreamStart(
                    cycle_id=cycle, trigger=trigger, bardo_trigger=bardo_trigger, detail=detail, settings=settings
                ),
                ModeChanged(from_mode="Waking", to_mode="Dreaming", reason=f"dream:{trigger}"),
                self._entered(cycle, self.phases.first.name, budget_tokens),
            ],
            cycle_id=cycle,
        )
        return cycle

    def record_outputs(
        self, golem_id: str, outputs: Sequence[Event], *, expected_version: int | None = None
    ) -> list[Recorded]:
        """Record what the current phase produced, without leaving it."""
        return self._command(
            golem_id, "record_output", lambda _s: list(outputs), outputs=outputs, expected_version=expected_version
        )

    def record_outputs_on(self, state: GolemState, outputs: Sequence[Event]) -> list[Recorded]:
        """Like :meth:`record_outputs`, for a caller holding the golem's current ``state``: the stream
        is not read again, and ``state`` moves by what was appended (and by the host facts it was
        rebased over). StreamConflict still reaches the caller if another writer appended anything
        but host facts first."""
        records = self._command(state.golem_id, "record_output", lambda _s: list(outputs), outputs=outputs, known=state)
        for record in records:
            state.apply(record)
        return records

    def advance(
        self,
        golem_id: str,
        *,
        budget_tokens: int,
        outputs: Sequence[Event] = (),
        expected_version: int | None = None,
        known: GolemState | None = None,
    ) -> list[Recorded]:
        """Record the phase's ``outputs`` and move to the next phase, in one append."""

        def build(state: GolemState) -> list[Event]:
            assert state.phase is not None
            assert state.cycle_id is not None
            following = self.machine.next_phase(state.phase)
            assert following is not None  # the machine allowed ``advance``, so a phase follows
            return [*outputs, self._entered(state.cycle_id, following, budget_tokens)]

        return self._command(
            golem_id, "advance", build, outputs=outputs, expected_version=expected_version, known=known
        )

    def complete(
        self,
        golem_id: str,
        *,
        budget_tokens: int,
        outputs: Sequence[Event] = (),
        expected_version: int | None = None,
        known: GolemState | None = None,
    ) -> list[Recorded]:
        """Close the cycle's work (integration): its ``outputs``, DreamComplete with the cycle's true
        counts, then the phase it wakes from."""

        def build(state: GolemState) -> list[Event]:
            assert state.cycle_id is not None
            assert state.phase is not None
            following = self.machine.next_phase(state.phase)
            assert following is not None  # the machine allowed ``complete``, so a phase follows
            counts = msgspec.structs.replace(state.counts)
            for event in outputs:
                if isinstance(event, DreamOutput):  # anything else is refused by _check_outputs
                    counts.add(event)
            return [
                *outputs,
                counts.complete_event(state.cycle_id),
                self._entered(state.cycle_id, following, budget_tokens),
            ]

        return self._command(
            golem_id, "complete", build, outputs=outputs, expected_version=expected_version, known=known
        )

    def wake(
        self,
        golem_id: str,
        *,
        outputs: Sequence[Event] = (),
        expected_version: int | None = None,
        known: GolemState | None = None,
    ) -> list[Recorded]:
        """End the cycle from the return phase and go back to waking; a cycle that produced nothing
        (every generator call failed, or nothing staged) ends flagged with DreamEmpty."""

        def build(state: GolemState) -> list[Event]:
            assert state.cycle_id is not None
            counts = msgspec.structs.replace(state.counts)
            for event in outputs:
                if isinstance(event, DreamOutput):  # anything else is refused by _check_outputs
                    counts.add(event)
            empty = counts.empty_event(state.cycle_id)
            woke = ModeChanged(from_mode="Dreaming", to_mode="Waking", reason="cycle complete")
            return [*outputs, *([empty] if empty is not None else []), woke]

        return self._command(
            golem_id,
            "wake",
            build,
            outputs=outputs,
            expected_version=expected_version,
            known=known,
        )

    def interrupt(
        self, golem_id: str, source: InterruptSource, reason: str = "", *, known: GolemState | None = None
    ) -> list[Recorded]:
        """Wake mid-dream; what the cycle produced so far stays in the log. A lost race is retried
        while the same cycle is on; once it ended, the interrupt is refused (IllegalCommand). With
        ``known`` (a reconciler's view), the interrupt lands only on that state, rebased over host
        facts at most: a cycle that moved on meanwhile refuses it with :class:`StreamConflict`."""
        build = _interruption(source, reason)
        if known is not None:
            return self._command(golem_id, "interrupt", build, known=known)
        cycle_id = self.state(golem_id).cycle_id

        def pinned(state: GolemState) -> list[Event]:
            if state.cycle_id != cycle_id:
                raise IllegalCommand(golem_id, state.machine_state, "interrupt", f"cycle {cycle_id!r} ended")
            return build(state)

        return self._command(golem_id, "interrupt", pinned)

    def end_cycle(self, golem_id: str, cycle_id: str, source: InterruptSource, reason: str = "") -> list[Recorded]:
        """Interrupt cycle ``cycle_id`` with ``reason``, retrying every lost version race until the
        interrupt lands or the cycle has ended already (then nothing is appended). No bound on the
        retries: each lost race means another writer's append landed, so the log moves on."""

        def attempt() -> list[Recorded]:
            state = self.state(golem_id)
            if state.mode != "Dreaming" or state.cycle_id != cycle_id:
                return []
            return self._attempt(state, "interrupt", _interruption(source, reason), (), cycle_id)

        return retry_race(attempt, self.races, self.deps, attempts=0)

    def resume_phase(self, known: GolemState, attempt: int, reason: str) -> list[Recorded]:
        """Record that ``known``'s phase, which nothing ran, is being resumed (attempt ``attempt``).

        Appended at ``known``'s version, so of two reconcilers deciding at once one records it and
        the other gets :class:`StreamConflict`; a phase that moved meanwhile refuses it the same way."""
        assert known.cycle_id is not None, "only a dreaming golem's phase resumes"
        assert known.phase is not None, "only a dreaming golem's phase resumes"
        event = PhaseResumed(cycle_id=known.cycle_id, phase=known.phase, attempt=attempt, reason=reason)
        return self._command(known.golem_id, "record", lambda _s: [event], known=known)

    def die(self, golem_id: str, reason: str = "") -> list[Recorded]:
        """Move to Dying, for good. A dream in progress ends interrupted and keeps its outputs."""

        def build(state: GolemState) -> list[Event]:
            events: list[Event] = []
            if state.mode == "Dreaming" and state.cycle_id is not None:
                events.append(
                    DreamInterrupted(cycle_id=state.cycle_id, source="death", reason=reason, phase=state.phase)
                )
            assert state.mode is not None
            events.append(ModeChanged(from_mode=state.mode, to_mode="Dying", reason=reason or "death"))
            return events

        return self._command(golem_id, "die", build)

    # -- machinery ---------------------------------------------------------------------------

    def _entered(self, cycle_id: str, phase: str, budget_tokens: int) -> DreamPhase:
        """The event of entering ``phase``, named as the machine names it."""
        state = self.phases.spec(phase).state
        return DreamPhase(cycle_id=cycle_id, phase=phase, budget_tokens=budget_tokens, bardo_phase=state)

    def _command(  # noqa: PLR0913 - private; the command's optional guards, keyword-only
        self,
        golem_id: str,
        trigger: str,
        build: Build,
        *,
        outputs: Sequence[Event] = (),
        expected_version: int | None = None,
        cycle_id: str | None = None,
        known: GolemState | None = None,
    ) -> list[Recorded]:
        if known is None and expected_version is None and trigger not in _PHASE_TRIGGERS:
            held = self._known.get(golem_id)
            if held is not None:
                # The state this process last saw: the append expects its version, so if another
                # writer appended since, the store refuses it and the stream is read as below. A
                # writer that alone appends to its golem (an agent recording episodes) never reads.
                with contextlib.suppress(StreamConflict, IllegalCommand):
                    return self._attempt(held[0].snapshot(), trigger, build, outputs, cycle_id)
            # Built from the state read, so a lost race is retried on a fresh read while still legal.
            return retry_race(
                lambda: self._attempt(self.state(golem_id), trigger, build, outputs, cycle_id), self.races, self.deps
            )
        # ``known`` is a state the caller holds as current (a phase keeps one as it appends): the
        # stream is not read again. Its events were computed from that state (a phase's outputs
        # always are), so a lost race is retried only over host facts, which leave the machine, the
        # cycle and the outputs as they were: a phase run twice never advances twice.
        state = known if known is not None else self.state(golem_id)
        if expected_version is not None and state.version != expected_version:
            raise StreamConflict(golem_id, expected_version)
        rebases = 0
        while True:
            try:
                return self._attempt(state, trigger, build, outputs, cycle_id)
            except StreamConflict:
                rebases += 1
                if rebases >= self.races.attempts or not self._rebase(state):
                    raise

    def _rebase(self, state: GolemState) -> bool:
        """Move ``state`` (in place) over the events appended since it, if they are all host facts."""
        since = self.store.read_stream(state.golem_id, after_version=state.version)
        if not since or not all(is_host_fact(record.event) for record in since):
            return False
        for record in since:
            state.apply(record)
        return True

    def _attempt(
        self, state: GolemState, trigger: str, build: Build, outputs: Sequence[Event], cycle_id: str | None
    ) -> list[Recorded]:
        if self.machine.destination(state.machine_state, trigger) is None:
            raise IllegalCommand(state.golem_id, state.machine_state, trigger)
        events = build(state)
        self._check_outputs(state, trigger, outputs)
        return self._commit(state, events, cycle_id=cycle_id or state.cycle_id)

    @staticmethod
    def _check_outputs(state: GolemState, trigger: str, outputs: Sequence[Event]) -> None:
        for event in outputs:
            if not isinstance(event, DreamOutput):
                raise IllegalCommand(
                    state.golem_id, state.machine_state, trigger, f"{type(event).__name__} is not a dream output"
                )
            if event.cycle_id != state.cycle_id:
                raise IllegalCommand(
                    state.golem_id,
                    state.machine_state,
                    trigger,
                    f"output for cycle {event.cycle_id!r}, current cycle is {state.cycle_id!r}",
                )

    def _commit(self, state: GolemState, events: Sequence[Event], cycle_id: str | None = None) -> list[Recorded]:
        if not events:
            return []
        causation = self.deps.ids()
        trace = self.trace_context() if self.trace_context is not None else {}
        items = [
            (
                EventMeta(
                    time=self.deps.clock(),
                    event_id=self.deps.ids(),
                    golem_id=state.golem_id,
                    cycle_id=cycle_id,
                    causation_id=causation,
                    correlation_id=cycle_id,
                    trace=trace,
                ),
                event,
            )
            for event in events
        ]
        records = self.store.append(state.golem_id, state.version, items)
        after = state.snapshot()
        for record in records:
            after.apply(record)
        self.remember(after, records[-1])
        self.observers.dispatch(state, records, self.machine)
        return records


def _check_bounds(episodes: Iterable[Episode]) -> None:
    """InvalidEvent for the first episode past the bounds the schema cannot hold (stored episodes
    past them still replay), naming the field."""
    for episode in episodes:
        if (bad := episode_out_of_bounds(episode)) is not None:
            raise InvalidEvent("EpisodeRecorded", bad[1][:1].lower() + bad[1][1:], f"episode.{bad[0]}")


def _interruption(source: InterruptSource, reason: str) -> Build:
    def build(state: GolemState) -> list[Event]:
        assert state.cycle_id is not None
        return [
            DreamInterrupted(cycle_id=state.cycle_id, source=source, reason=reason, phase=state.phase),
            ModeChanged(from_mode="Dreaming", to_mode="Waking", reason=f"interrupt:{source}"),
        ]

    return build


def replay(
    store: EventStore, until: int | None = None, *, on_progress: Callable[[int], None] | None = None
) -> dict[str, GolemState]:
    """Every golem's state rebuilt from the whole log (to position ``until``), with no side effects.

    ``on_progress`` is told the position reached every few thousand events, for progress bars.
    """
    states: dict[str, GolemState] = {}
    for record in store.read_all(until=until):
        golem_id = record.meta.golem_id
        state = states.get(golem_id)
        if state is None:
            state = states[golem_id] = GolemState(golem_id=golem_id)
        state.apply(record)
        if on_progress is not None and record.position % 5_000 == 0:
            on_progress(record.position)
    # Side streams (``<golem>:staging``...) are not golems: only streams that created one count.
    return {golem_id: state for golem_id, state in states.items() if state.exists}
