"""The heartbeat daemon behind ``oneiros run``.

Each tick it catches up with the golem's log, asks :func:`oneiros.scheduling._scheduler.should_dream`, records the
decision when it changed, and starts a cycle through the executor. The cycle runs on a thread of
its own so the heartbeat keeps answering while the golem dreams: messages that arrive are held
(Bardo, Ethos) and handed over on waking, and a wake interrupt (owner, Clade alert,
market threshold) or death cuts the dream between two appends. Whatever ends a cycle, the log
ends it: completed, or interrupted with its outputs so far, never half-recorded.

What the host reports during a cycle (held messages, activity, requests, decisions) is appended
at once: a phase whose append loses its race to such host facts only is rebased over them (see
``oneiros.fsm._races``), so nothing waits in memory for the dream and a daemon crash loses
nothing. Held messages are still *delivered* only on waking; their MessageHeld is in the log as
soon as they arrive, with the time they arrived.

While the golem dreams, each tick (at most every ``recovery.interval_seconds``) also runs the
reconciler on it: a cycle nothing runs any more (this daemon restarted mid-cycle, a worker
killed, a job Redis lost) is resumed, on the queue or on the daemon's cycle thread, or ended.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Literal

import msgspec

from oneiros.daemon._micro import MicroState, embedder_for, micro_pass
from oneiros.events._schedule import (
    ActivityKind,
    ActivityRecorded,
    BehavioralPhaseChanged,
    DreamDecided,
    DreamDirected,
    FatigueWarned,
    MessageHeld,
    MessagesReleased,
    SleepRequested,
)
from oneiros.events._types import BehavioralPhase, Event, InterruptSource
from oneiros.fsm._service import Golems
from oneiros.runtime._builds import Builder, Plain
from oneiros.runtime._executor import CycleResult, Executor
from oneiros.runtime._reconcile import Reconciler
from oneiros.scheduling._schedule_state import ScheduleState
from oneiros.scheduling._scheduler import Decision, should_dream
from oneiros.scheduling._urgency import Signals
from oneiros.settings._cycle import CycleSettings
from oneiros.settings._recovery import RecoverySettings
from oneiros.settings._scheduling import DaemonSettings, ScheduleSettings
from oneiros.store._snapshots import read_stream_paged
from oneiros.store._store import Recorded

__all__ = ["SESSION_PREFIX", "Daemon", "Delivery", "Lifecycle", "Message", "interactive_history", "session_key"]

_log = logging.getLogger("oneiros.daemon")
SESSION_PREFIX = "dream:"
Delivery = Literal["delivered", "held"]
WakeSource = Literal["owner", "clade_alert", "market_threshold"]


class Message(msgspec.Struct, frozen=True):
    message_id: str
    text: str


def session_key(golem_id: str, now: datetime) -> str:
    """``dream:<golem>:<UTC time>``: Ethos's dream session key, used as the cycle id."""
    return f"{SESSION_PREFIX}{golem_id}:{now.astimezone(UTC):%Y%m%dT%H%M%SZ}"


def interactive_history(records: Sequence[Recorded]) -> list[Recorded]:
    """The records a conversation view shows: everything outside dream sessions (Ethos)."""
    return [r for r in records if not (r.meta.cycle_id or "").startswith(SESSION_PREFIX)]


class Lifecycle(StrEnum):
    """Where the daemon's own part of a dream stands; the golem's mode is the log's (``state.mode``).

    A cycle this daemon starts runs on its cycle thread (STARTING) until ``run_cycle`` returns
    (RETURNED: a queue's workers may still be running its phases, so the log says when it ends). A
    wake interrupt while the thread still returns makes it WOKEN: awake whatever the thread does
    next. A deep cycle's end holds the golem asleep for the deep-sleep pause (PAUSED). STOPPED is
    final: after death or shutdown nothing starts again."""

    AWAKE = "awake"
    STARTING = "starting"
    RETURNED = "returned"
    WOKEN = "woken"
    PAUSED = "paused"
    STOPPED = "stopped"


_MOVES: dict[Lifecycle, frozenset[Lifecycle]] = {
    Lifecycle.AWAKE: frozenset({Lifecycle.STARTING, Lifecycle.STOPPED}),
    Lifecycle.STARTING: frozenset({Lifecycle.RETURNED, Lifecycle.WOKEN, Lifecycle.STOPPED}),
    Lifecycle.RETURNED: frozenset({Lifecycle.AWAKE, Lifecycle.PAUSED, Lifecycle.STARTING, Lifecycle.STOPPED}),
    Lifecycle.WOKEN: frozenset({Lifecycle.AWAKE, Lifecycle.STARTING, Lifecycle.STOPPED}),
    # A cycle another process started while the pause held may need resuming here.
    Lifecycle.PAUSED: frozenset({Lifecycle.AWAKE, Lifecycle.STARTING, Lifecycle.STOPPED}),
    Lifecycle.STOPPED: frozenset(),
}
"""Each state's next states, as rq's ``WorkerStatus`` moves: a move not listed is a bug, refused."""


class Daemon:
    """One golem's heartbeat: activity in, decisions and cycles out.

    ``signals`` reports the host's view each tick (credit, permits, clocks); ``on_message``
    receives messages when the golem is awake, including the held ones on waking.
    ``background=False`` runs each cycle inside :meth:`tick` (no wake interrupts then).
    """

    def __init__(  # noqa: PLR0913 - optional collaborators and hooks, keyword-only, each defaulted
        self,
        golems: Golems,
        golem_id: str,
        executor: Executor,
        *,
        schedule: ScheduleSettings,
        daemon: DaemonSettings | None = None,
        signals: Callable[[], Signals] | None = None,
        on_message: Callable[[Message], None] | None = None,
        background: bool = True,
        recovery: RecoverySettings | None = None,
        builds: Builder | None = None,
    ) -> None:
        self.golems = golems
        self.golem_id = golem_id
        self.executor = executor
        self.schedule = schedule
        self.settings = daemon or DaemonSettings()
        self.signals = signals or Signals
        self.on_message = on_message
        self.background = background
        # One paged read of the stream, folded as it comes: a golem of a million episodes is never
        # held decoded at once (2.3 GB at start before).
        self.state = ScheduleState(golem_id=golem_id)
        self.micro = MicroState()
        for record in read_stream_paged(golems.store, golem_id):
            self.state.apply(record)
            self.micro.apply(record)
        self._last_micro: datetime | None = None
        self.ticks = 0
        self.results: list[CycleResult] = []
        self._lock = threading.RLock()
        self._thread: threading.Thread | None = None
        self.lifecycle = Lifecycle.AWAKE
        self._deep = False  # whether the cycle of STARTING or RETURNED was a deep one
        self._paused_until = datetime.min.replace(tzinfo=UTC)  # the end of PAUSED
        # The application's factory where there is one (Factory.daemon), else this layer's default.
        recovery = recovery or RecoverySettings()
        self.reconciler = self._make_reconciler(builds or Plain(recovery=recovery), recovery)
        self._reconciled_at: float | None = None

    # -- what the host tells the daemon ------------------------------------------------------

    @property
    def dreaming(self) -> bool:
        """Asleep: a cycle is running or starting, or the deep-sleep pause holds."""
        self._catch_up()
        return self.lifecycle in (Lifecycle.STARTING, Lifecycle.PAUSED) or self.state.mode == "Dreaming"

    def activity(self, kind: ActivityKind = "turn", detail: str = "") -> str | None:
        """Record that the golem was busy; returns OpenSeed's fatigue warning when it is due."""
        self._record([ActivityRecorded(kind=kind, detail=detail)])
        fatigue = self.schedule.fatigue
        if fatigue.enabled and not self.state.fatigue_warned and self.state.actions >= fatigue.warning_actions:
            self._record([FatigueWarned(actions=self.state.actions, message=fatigue.warning_message)])
            return fatigue.warning_message
        return None

    def receive(self, text: str, message_id: str | None = None) -> Delivery:
        """A message for the golem: delivered now, or held while it dreams and handed over on waking."""
        message = Message(message_id or self.golems.deps.ids(), text)
        with self._lock:
            self._finish_if_done()  # a cycle that just ended hands its held messages over first
            if self.dreaming:
                now = self.golems.deps.clock()
                self._record([MessageHeld(message_id=message.message_id, text=text, received_at=now)])
                return "held"
            self._record([ActivityRecorded(kind="message", detail=message.message_id)])
        if self.on_message is not None:
            self.on_message(message)
        return "delivered"

    def direct(self, reason: str = "dream now") -> None:
        """The owner's "dream now" (Bardo, trigger 3)."""
        self._record([DreamDirected(reason=reason)])

    def request_sleep(self, seconds: float) -> None:
        """The golem's ``set_sleep`` (OpenSeed): the next tick decides nap or consolidation."""
        self._record([SleepRequested(seconds=seconds)])

    def set_phase(self, phase: BehavioralPhase) -> CycleResult | None:
        """Move the golem to another behavioral phase (Bardo). Entering Terminal runs the
        compressed emergency dream before the death protocol, when the golem can still dream."""
        if phase == self.state.behavioral_phase:
            return None
        self._record([BehavioralPhaseChanged(from_phase=self.state.behavioral_phase, to_phase=phase)])
        return self._emergency() if phase == "terminal" else None

    # -- interrupts and death ----------------------------------------------------------------

    def interrupt(self, source: WakeSource, reason: str = "") -> bool:
        """Wake mid-dream if ``source`` may (Bardo, ``[dream.wakeInterrupts]``); True if it woke."""
        wake = self.settings.wake_interrupts
        if not (wake.enabled and getattr(wake, source)):
            _log.info("wake interrupt from %s ignored: not enabled", source)
            return False
        with self._lock:
            woke = self._interrupt(source, reason) or self.lifecycle is Lifecycle.PAUSED
            if woke:
                self._deep = False
                self._move(Lifecycle.WOKEN if self.lifecycle is Lifecycle.STARTING else Lifecycle.AWAKE)
                # Awake as far as the log goes: what was held goes out now, even if the cycle's
                # thread is still returning from a generator call (its next append is refused).
                self._release()
        return woke

    def market_move(self, asset: str, change_percent: float, window_seconds: float) -> bool:
        """A price move: wakes the golem when it crosses the configured threshold within the window."""
        wake = self.settings.wake_interrupts
        if abs(change_percent) < wake.market_change_percent or window_seconds > wake.market_window_seconds:
            return False
        return self.interrupt("market_threshold", f"{asset} moved {change_percent:+g}% in {window_seconds:g}s")

    def die(self, reason: str = "death") -> CycleResult | None:
        """The death trigger: a dream in progress ends interrupted; a waking golem first dreams one
        emergency cycle if it can (Bardo), whose outputs feed the death testament."""
        emergency = self._emergency()
        self._appended(lambda: self.golems.die(self.golem_id, reason) if self._mode() != "Dying" else [])
        self.wait()
        self._move(Lifecycle.STOPPED)
        return emergency

    def _emergency(self) -> CycleResult | None:
        # One emergency dream per death: none if the last cycle already was one, or the golem is
        # dreaming, or it has nothing to dream about.
        self._catch_up()
        state = self.state
        last = state.recent_starts[-1][1] if state.recent_starts else None
        if not self.schedule.emergency_dream or state.mode != "Waking" or not state.episodes or last == "emergency":
            return None
        if self._thread is not None:
            return None
        result = self.executor.run_cycle(self.golem_id, "emergency", cycle_id=self._session_key())
        self.results.append(result)
        return result

    # -- the heartbeat -----------------------------------------------------------------------

    @property
    def stopped(self) -> bool:
        """True once the golem died or :meth:`shutdown` ran."""
        return self.lifecycle is Lifecycle.STOPPED

    def tick(self) -> Decision | None:
        """One heartbeat: returns the scheduler's decision, or None while asleep or dead."""
        with self._lock:
            if self.lifecycle is Lifecycle.STOPPED:
                return None  # final: a daemon that shut down or saw its golem die starts nothing again
            self._finish_if_done()
            self._catch_up()
            now = self.golems.deps.clock()
            if self.state.mode == "Dying":
                self._move(Lifecycle.STOPPED)
            if self.state.mode == "Dreaming" and self._thread is None:
                # Not while this daemon's own cycle thread lives: before it takes the golem's lease
                # the cycle looks stranded, and a resume would run it twice (held messages then
                # stayed held: the heartbeat waited on the second thread only).
                self._reconcile()
            if self._thread is not None or self.state.mode != "Waking":
                return None
            if self.lifecycle is Lifecycle.PAUSED:
                if now < self._paused_until:
                    return None
                self._move(Lifecycle.AWAKE)
                self._release()
            self.ticks += 1
            self._micro_consolidate(now)
            decision = should_dream(
                self.schedule,
                self.state,
                now,
                tick=self.ticks,
                tick_seconds=self.settings.tick_seconds,
                signals=self.signals(),
            )
            self._record_decision(decision)
            if decision.dream:
                assert decision.trigger is not None
                self._start(decision, now)
            return decision

    def _make_reconciler(self, builds: Builder, recovery: RecoverySettings) -> Reconciler:
        # The queue's jobs when the executor hands cycles to workers (RqExecutor.phase_jobs); the
        # daemon's own cycle thread when it runs them in-process (InProcessExecutor.resume_cycle).
        phase_jobs = getattr(self.executor, "phase_jobs", None)
        jobs = phase_jobs(recovery) if callable(phase_jobs) else None
        runs = jobs is None and callable(getattr(self.executor, "resume_cycle", None))
        return builds.reconciler(self.golems, jobs=jobs, run=self._resume if runs else None)

    def _reconcile(self) -> None:
        now = time.monotonic()
        if self._reconciled_at is not None and now - self._reconciled_at < self.reconciler.settings.interval_seconds:
            return
        self._reconciled_at = now
        try:
            self.reconciler.pass_once([self.golem_id])
        except Exception as exc:  # the heartbeat goes on; the next pass looks again
            _log.warning("reconciling %s failed: %s: %s", self.golem_id, type(exc).__name__, exc)

    def _resume(self, golem_id: str, cycle_id: str) -> None:
        """Run the rest of a stranded cycle on the daemon's cycle thread (the reconciler's way)."""
        resume: Callable[[str, str], CycleResult] = getattr(self.executor, "resume_cycle")  # noqa: B009

        def run() -> None:
            try:
                self.results.append(resume(golem_id, cycle_id))
            except Exception:  # the thread must not die silently; the log keeps what the cycle wrote
                _log.exception("resumed cycle %s failed to run", cycle_id)

        self._deep = False
        self._move(Lifecycle.STARTING)
        self._on_cycle_thread(self._returning(run))

    def _on_cycle_thread(self, run: Callable[[], None]) -> None:
        """Run a cycle on the daemon's cycle thread (``background``), else here and now."""
        if self.background:
            self._thread = threading.Thread(target=run, name=f"oneiros-cycle-{self.golem_id}", daemon=True)
            self._thread.start()
        else:
            run()

    def _micro_consolidate(self, now: datetime) -> None:
        """Bardo's micro-consolidation fiber, every ``every_seconds`` of waking."""
        micro = self.settings.micro
        if not micro.enabled:
            return
        if self._last_micro is not None and (now - self._last_micro).total_seconds() < micro.every_seconds:
            return
        self._last_micro = now
        cycle = getattr(self.executor, "settings", None)
        embedder = embedder_for(cycle.engines.embedder if isinstance(cycle, CycleSettings) else "hashing")
        events = micro_pass(self.micro, micro, embedder)
        if events:
            _log.info("micro-consolidation: %s", ", ".join(type(e).__name__ for e in events))
            self._record(events)

    def run(self, stop: threading.Event | None = None, wait: Callable[[float], bool] | None = None) -> None:
        """Tick every ``tick_seconds`` until ``stop`` is set or the golem dies, then shut down."""
        stop = stop or threading.Event()
        pause = wait or stop.wait
        while not stop.is_set() and not self.stopped:
            self.tick()
            pause(self.settings.tick_seconds)
        self.shutdown()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a running cycle to end and hand over what waking hands over; False on timeout."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                return False
        with self._lock:
            self._finish_if_done()
        return True

    def shutdown(self) -> None:
        """Stop cleanly: a running cycle gets the grace period to finish, then is recorded as interrupted."""
        if not self.wait(self.settings.shutdown_grace_seconds):
            _log.warning("cycle still running after %ss; interrupting it", self.settings.shutdown_grace_seconds)
            self._interrupt("owner", "daemon stopped")
            # The log is closed now; a generator call that never returns must not hold the exit.
            self.wait(self.settings.shutdown_grace_seconds)
        self._move(Lifecycle.STOPPED)

    # -- machinery ---------------------------------------------------------------------------

    def _mode(self) -> str | None:
        self._catch_up()
        return self.state.mode

    def _catch_up(self) -> None:
        with self._lock:  # the cycle thread flushes (and so catches up) too: apply each record once
            for record in self.golems.store.read_stream(self.golem_id, after_version=self.state.version):
                self.state.apply(record)
                self.micro.apply(record)

    def _appended(self, append: Callable[[], list[Recorded]]) -> list[Recorded]:
        """What ``append`` wrote, with the daemon's state caught up past it. (Golems retries a lost
        version race itself, re-reading, while the command is legal.)"""
        records = append()
        self._catch_up()
        return records

    def _record(self, events: Sequence[Event]) -> list[Recorded]:
        # Straight to the log, dreaming or not: a phase's append is rebased over host facts.
        return self._appended(lambda: self.golems.record(self.golem_id, events))

    def _interrupt(self, source: InterruptSource, reason: str) -> bool:
        self._catch_up()
        cycle_id = self.state.cycle_id if self.state.mode == "Dreaming" else None
        if cycle_id is None:
            return False
        # Lands whatever the cycle's thread appends meanwhile, unless the cycle ends first.
        woke = bool(self.golems.end_cycle(self.golem_id, cycle_id, source, reason))
        self._catch_up()
        return woke

    def _record_decision(self, decision: Decision) -> None:
        state = self.state
        # Every tick says what it decided and why; the log records only the decisions that changed.
        _log.info("%s", tick_line(self.ticks, decision))
        key = (decision.dream, decision.trigger, decision.blocked_by)
        changed = key != state.last_decision or decision.carried_urgency != state.carried_urgency
        if not (decision.dream or changed or state.sleep_request is not None):
            return
        self._record(
            [
                DreamDecided(
                    dream=decision.dream,
                    trigger=decision.trigger,
                    reasons=decision.reasons(),
                    blocked_by=decision.blocked_by,
                    urgency=decision.urgency,
                    carried_urgency=decision.carried_urgency,
                    deep=decision.deep,
                    intensity=decision.intensity.label() if decision.intensity else "",
                )
            ]
        )

    def _session_key(self) -> str:
        now = self.golems.deps.clock()
        key = session_key(self.golem_id, now)
        last = self.state.last_dream_start
        if last is not None and session_key(self.golem_id, last) == key:
            return f"{key}-{self.state.cycles_started + 1}"  # two cycles within one second
        return key

    def _start(self, decision: Decision, now: datetime) -> None:
        assert decision.trigger is not None
        trigger, bardo = decision.trigger, decision.bardo_trigger
        cycle_id = self._session_key()
        self._apply_intensity(decision)
        self._deep = decision.deep
        self._move(Lifecycle.STARTING)

        def run() -> None:
            try:
                self.results.append(
                    self.executor.run_cycle(self.golem_id, trigger, cycle_id=cycle_id, bardo_trigger=bardo)
                )
            except Exception:  # the thread must not die silently; the log keeps what the cycle wrote
                _log.exception("cycle %s failed to run", cycle_id)

        self._on_cycle_thread(self._returning(run))
        if not self.background:
            self._finish_if_done()
        _log.info("cycle %s started at %s by %s", cycle_id, now.isoformat(), trigger)

    def _apply_intensity(self, decision: Decision) -> None:
        # Bardo's dream_intensity sets the replay batch and the sampling temperature of the cycle
        # about to run, for executors that expose their CycleSettings (InProcessExecutor as
        # ``settings``, RqExecutor as ``cycle_settings``); the cycle records them when it starts.
        intensity = decision.intensity
        name = "cycle_settings" if hasattr(self.executor, "cycle_settings") else "settings"
        settings = getattr(self.executor, name, None)
        if not self.settings.apply_intensity or intensity is None or not isinstance(settings, CycleSettings):
            return
        engines = msgspec.structs.replace(
            settings.engines,
            batch_size=intensity.replay_batch_size,
            exploration_temperature=intensity.exploration_temperature,
        )
        setattr(self.executor, name, msgspec.structs.replace(settings, engines=engines))

    def _finish_if_done(self) -> None:
        thread = self._thread
        if thread is not None and thread.is_alive():
            return
        self._thread = None
        self._catch_up()
        if self.lifecycle in (Lifecycle.STARTING, Lifecycle.PAUSED) or self.state.mode == "Dreaming":
            return  # asleep still: the pause holds, or the log has a cycle running (ours or another's)
        if self.lifecycle is Lifecycle.RETURNED and self._deep and self.state.mode == "Waking":
            self._deep = False
            self._paused_until = self.golems.deps.clock() + timedelta(seconds=self.settings.deep_sleep_pause_seconds)
            self._move(Lifecycle.PAUSED)
            return
        self._deep = False
        self._move(Lifecycle.AWAKE)  # a STOPPED daemon stays stopped, and still hands over what it held
        self._release()

    def _returning(self, run: Callable[[], None]) -> Callable[[], None]:
        """``run``, then STARTING becomes RETURNED (a WOKEN or STOPPED daemon stays as it is)."""

        def returning() -> None:
            try:
                run()
            finally:
                with self._lock:
                    if self.lifecycle is Lifecycle.STARTING:
                        self._move(Lifecycle.RETURNED)

        return returning

    def _move(self, to: Lifecycle) -> None:
        """Enter ``to``: staying put is nothing, STOPPED stays STOPPED, any other move must be listed."""
        with self._lock:
            if to is self.lifecycle or self.lifecycle is Lifecycle.STOPPED:
                return
            if to not in _MOVES[self.lifecycle]:
                raise RuntimeError(f"daemon lifecycle cannot move from {self.lifecycle} to {to}")
            self.lifecycle = to

    def _release(self) -> None:
        held = self.state.held
        if not held or self.state.mode == "Dying":
            return
        self._record([MessagesReleased(message_ids=tuple(m for m, _ in held))])
        if self.on_message is not None:
            for message_id, text in held:
                self.on_message(Message(message_id, text))


def tick_line(tick: int, decision: Decision) -> str:
    """One heartbeat's decision as one log line: the trigger that fired and its values, or every
    gate and trigger that held the dream back."""
    if decision.dream:
        fired = decision.check(decision.trigger or "")
        why = fired.detail if fired is not None else "; ".join(c.reason() for c in decision.checks if c.passed)
        return f"tick {tick}: dream ({decision.trigger}): {why}"
    return f"tick {tick}: no dream: " + "; ".join(f"{c.name}: {c.detail}" for c in decision.checks if not c.passed)
