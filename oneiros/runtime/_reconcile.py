"""The reconciler: finds golems dreaming in a phase that nothing runs, and resumes or ends it.

Nothing here is trusted but the log. A golem in ``Dreaming`` is in one phase of one cycle; that
phase is alive when some process holds the golem's lease on it (``oneiros.store._leases.Lease``), or
when the queue holds a job for it that is waiting or has only just started. Otherwise the phase
is stranded: its worker or in-process executor was killed, Redis lost its job, its failure
callback never ran. The reconciler then records a :class:`~oneiros.events._liveness.PhaseResumed` (at the
version it looked at, so two reconcilers never both act) and resumes the phase: it enqueues the
phase's job when a queue is configured, else runs the rest of the cycle in this process. Phases
are idempotent (``run_phase``), so a resumed phase reuses every generator response already
recorded. After ``attempts`` resumes of one phase, or when the phase's job failed for good, the
cycle ends interrupted (source ``failure``) with the reason.

Every worker runs a pass every ``interval_seconds`` on a thread of its own, the daemon on its
ticks, and ``oneiros recover`` once (or on and on with ``--watch``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Literal, Protocol

import msgspec

from oneiros._errors import GolemNotFound, IllegalCommand, StreamConflict
from oneiros.events._liveness import PhaseResumed
from oneiros.events._types import DreamPhase, DreamPhaseName, ModeChanged
from oneiros.fsm._golem import GolemState
from oneiros.fsm._service import Golems
from oneiros.settings._recovery import RecoverySettings
from oneiros.store._leases import Lease, open_leases
from oneiros.store._snapshots import read_cycle
from oneiros.store._store import Recorded

__all__ = ["JobLook", "PhaseJobs", "Reconciler", "Resolution"]

_log = logging.getLogger("oneiros.reconciler")

_REREAD = 1000
Action = Literal["running", "queued", "starting", "unreachable", "resumed", "interrupted"]


class Resolution(msgspec.Struct, frozen=True, kw_only=True):
    """What a pass found for one dreaming golem, and what it did."""

    golem_id: str
    cycle_id: str
    phase: DreamPhaseName
    action: Action
    """``running`` (a live lease), ``queued`` (a live job), ``starting`` (within the grace),
    ``unreachable`` (the queue did not answer; nothing done), ``resumed`` or ``interrupted``."""
    attempt: int = 0
    """The resume's number (``resumed``), or the resumes the phase had had (``interrupted``)."""
    detail: str = ""

    @property
    def acted(self) -> bool:
        return self.action in ("resumed", "interrupted")


class JobLook(msgspec.Struct, frozen=True, kw_only=True):
    """What the queue knows of a phase's jobs."""

    live: bool
    detail: str = ""
    failed: str | None = None
    """Why the phase's latest job failed for good, when it did and no other is live."""


class PhaseJobs(Protocol):
    """The queue side of reconciling: looking for a phase's jobs, and enqueueing one."""

    def look(self, cycle_id: str, phase: DreamPhaseName, attempts: int) -> JobLook: ...

    def enqueue(self, state: GolemState, attempt: int, budget_tokens: int, carrier: Mapping[str, str]) -> None: ...


class Reconciler:
    """One reconciler over ``golems``' log. ``jobs`` is the queue when one is configured;
    without it a stranded cycle is handed to ``run`` (golem id, cycle id), which runs the rest of
    it in this process. Keeps the set of dreaming golems up to date from the log, incrementally."""

    def __init__(
        self,
        golems: Golems,
        settings: RecoverySettings | None = None,
        *,
        jobs: PhaseJobs | None = None,
        run: Callable[[str, str], object] | None = None,
        own: Callable[[], Collection[str]] | None = None,
    ) -> None:
        self.golems = golems
        self.settings = settings or RecoverySettings()
        self.jobs = jobs
        self.run = run
        # The cycles this process runs on live threads: never stranded, even before their thread
        # takes the golem's lease (on a loaded machine that can take longer than the grace).
        self.own = own
        self.leases = open_leases(golems.store)
        self._dreaming: set[str] = set()
        self._position = 0

    def dreaming(self) -> list[str]:
        """The golems whose last mode change was into Dreaming, from the log since the last look."""
        store = self.golems.store
        head = store.head()
        for record in store.read_all(after=self._position, until=head, types=[ModeChanged]):
            event = record.event
            assert isinstance(event, ModeChanged)
            if event.to_mode == "Dreaming":
                self._dreaming.add(record.golem_id)
            else:
                self._dreaming.discard(record.golem_id)
        # Read again from a little before the head next time: PostgreSQL may commit a transaction
        # below positions already seen, and a mode change missed here would never be looked at.
        self._position = max(self._position, head - _REREAD)
        return sorted(self._dreaming)

    def pass_once(self, golem_ids: Iterable[str] | None = None) -> list[Resolution]:
        """Look at every dreaming golem (or only ``golem_ids``) once; what was found and done."""
        found: list[Resolution] = []
        for golem_id in self.dreaming() if golem_ids is None else golem_ids:
            try:
                resolution = self._reconcile(golem_id)
            except (StreamConflict, IllegalCommand, GolemNotFound):
                continue  # the golem moved while we looked: whoever moved it carries the cycle on
            if resolution is not None:
                found.append(resolution)
                if resolution.acted:
                    _log.warning(
                        "%s %s of cycle %s of %s (attempt %d): %s",
                        resolution.action,
                        resolution.phase,
                        resolution.cycle_id,
                        golem_id,
                        resolution.attempt,
                        resolution.detail,
                    )
        return found

    def _reconcile(self, golem_id: str) -> Resolution | None:
        state = self.golems.state(golem_id)
        if state.mode != "Dreaming" or state.cycle_id is None or state.phase is None:
            return None
        lease = self.leases.get(golem_id)
        running = self._running(state, lease)
        if running is not None:
            return running
        cycle = self._cycle(state)
        attempts = sum(1 for r in cycle if isinstance(r.event, PhaseResumed) and r.event.phase == state.phase)
        look = self._look(state, attempts)
        if isinstance(look, Resolution):
            return look
        if look is not None:
            return self._interrupt(state, f"{state.phase} failed for good: {look}", attempts)
        idle = self.golems.deps.clock().timestamp() - cycle[-1].meta.time.timestamp()
        if idle < self.settings.grace_seconds:
            return _resolved(state, "starting", f"last event {idle:.1f} s ago")
        held = lease is not None and lease.covers(state.cycle_id, state.phase)
        why = "no lease" if not held else "its holder is gone" if lease and lease.gone() else "its lease lapsed"
        return self._resume(state, cycle, attempts, why)

    def _running(self, state: GolemState, lease: Lease | None) -> Resolution | None:
        """The phase as running, when a thread of this process or a lease in force carries it."""
        if self.own is not None and state.cycle_id in self.own():
            return _resolved(state, "running", "on a thread of this process")
        if lease is not None and lease.covers(state.cycle_id, state.phase) and lease.in_force():
            return _resolved(state, "running", f"held by {lease.holder}")
        return None

    def _look(self, state: GolemState, attempts: int) -> Resolution | str | None:
        """What the queue says: a resolution when a job is live or the queue cannot be asked, why
        the phase's job failed for good when it did, else None (no queue, or no live job)."""
        if self.jobs is None:
            return None
        assert state.cycle_id is not None
        assert state.phase is not None
        try:
            look = self.jobs.look(state.cycle_id, state.phase, attempts)
        except Exception as exc:  # the queue is down: nothing can be known or enqueued now
            return _resolved(state, "unreachable", f"queue unreachable: {type(exc).__name__}: {exc}")
        return _resolved(state, "queued", look.detail) if look.live else look.failed

    def _interrupt(self, state: GolemState, reason: str, attempts: int) -> Resolution:
        self.golems.interrupt(state.golem_id, "failure", reason, known=state)
        return _resolved(state, "interrupted", reason, attempts)

    def _resume(self, state: GolemState, cycle: list[Recorded], attempts: int, lease: str) -> Resolution:
        """Resume the stranded phase as attempt ``attempts + 1``, or end the cycle when the
        attempts are spent."""
        if attempts >= self.settings.attempts:
            reason = f"{state.phase} stranded: no live job or process after {attempts} resumes"
            return self._interrupt(state, reason, attempts)
        attempt = attempts + 1
        reason = f"no live job or process ({lease})"
        if self.jobs is None and self.run is None:
            return _resolved(state, "unreachable", "nothing here can resume it (no queue, no runner)")
        records = self.golems.resume_phase(state, attempt, reason)
        if self.jobs is None:
            assert self.run is not None
            assert state.cycle_id is not None
            self.run(state.golem_id, state.cycle_id)
            return _resolved(state, "resumed", f"{reason}; run in this process", attempt)
        after = state.snapshot()
        for record in records:
            after.apply(record)
        budget = next((e.budget_tokens for r in reversed(cycle) if (e := _entered(r.event, state.phase))), 0)
        # The cycle's trace goes on where its start recorded it.
        self.jobs.enqueue(after, attempt, budget, cycle[0].meta.trace)
        return _resolved(state, "resumed", f"{reason}; enqueued", attempt)

    def _cycle(self, state: GolemState) -> list[Recorded]:
        """The current cycle's events (read only for a phase found without a live lease)."""
        store = self.golems.store
        cycle = read_cycle(store, state.golem_id, state.cycle_id) if state.cycle_id is not None else []
        return cycle or store.read_stream(state.golem_id, after_version=state.version - 1)

    def watch(self, stop: Callable[[float], bool], on_pass: Callable[[list[Resolution]], None] | None = None) -> None:
        """Pass after pass, ``interval_seconds`` apart, until ``stop`` (a wait that returns True
        when it is time to stop, as ``threading.Event.wait``) says so. A pass that fails (the
        store unreachable) is logged in a line and tried again at the next interval."""
        while True:
            started = time.monotonic()
            try:
                found = self.pass_once()
            except Exception as exc:
                _log.warning("reconciler pass failed: %s: %s", type(exc).__name__, exc)
                found = []
            if on_pass is not None:
                on_pass(found)
            if stop(max(0.0, self.settings.interval_seconds - (time.monotonic() - started))):
                return


def _resolved(state: GolemState, action: Action, detail: str, attempt: int = 0) -> Resolution:
    assert state.cycle_id is not None
    assert state.phase is not None
    return Resolution(
        golem_id=state.golem_id,
        cycle_id=state.cycle_id,
        phase=state.phase,
        action=action,
        attempt=attempt,
        detail=detail,
    )


def _entered(event: object, phase: DreamPhaseName | None) -> DreamPhase | None:
    return event if isinstance(event, DreamPhase) and event.phase == phase else None
