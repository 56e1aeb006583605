"""Dispatch: the executor that hands cycles to RQ workers and follows them to their end.

``start_cycle`` opens the cycle (recording the settings every phase will run with) and enqueues its
first phase under the cycle's root span; ``wait`` follows the log, phase by phase, and ends the
root span when the cycle ends; ``run_cycle`` is both, the daemon's way.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import msgspec
from redis import Redis
from rq.job import Job

from oneiros._errors import CycleTimeout
from oneiros.events._liveness import PhaseResumed
from oneiros.events._types import (
    BardoTrigger,
    DreamPhase,
    DreamPhaseName,
    DreamStart,
    DreamTrigger,
    GenerationRecorded,
)
from oneiros.fsm._service import Golems
from oneiros.runtime._executor import CycleResult, cycle_result, traced_golems
from oneiros.runtime._start import open_cycle
from oneiros.settings._cycle import CycleSettings
from oneiros.settings._recovery import RecoverySettings
from oneiros.settings._runtime import RqSettings
from oneiros.store._snapshots import read_cycle
from oneiros.store._store import Recorded
from oneiros.telemetry._spans import Span, fail, flush_spans, span_carrier, use_span
from oneiros.workers._rq import JsonSerializer, RqPhaseJobs, _in_cycle, end_failed_cycle, enqueue_phase, phase_job_id

__all__ = ["PhaseReport", "RqExecutor"]


class PhaseReport(msgspec.Struct, frozen=True, kw_only=True):
    """A phase of a followed cycle, as the log and the queue tell it once the phase has ended."""

    phase: DreamPhaseName
    worker: str
    seconds: float
    tokens: int
    cost_usd: float


class RqExecutor:
    """Starts cycles whose phases run as RQ jobs on any number of workers.

    The cycle records ``cycle_settings`` in its DreamStart, and every phase runs with them
    wherever it runs. ``run_cycle`` (the daemon's way) follows the cycle to its end; a cycle
    started with ``start_cycle`` keeps its root span open until :meth:`wait` or :meth:`detach`.
    """

    def __init__(
        self,
        golems: Golems,
        connection: Redis,
        settings: RqSettings | None = None,
        cycle_settings: CycleSettings | None = None,
        poll_interval: float = 0.05,
    ) -> None:
        self.golems = traced_golems(golems)
        self.connection = connection
        self.settings = settings or RqSettings()
        self.cycle_settings = cycle_settings or CycleSettings()
        self.poll_interval = poll_interval
        self._roots: dict[str, Span] = {}

    def start_cycle(
        self,
        golem_id: str,
        trigger: DreamTrigger = "owner",
        *,
        cycle_id: str | None = None,
        bardo_trigger: BardoTrigger | None = None,
    ) -> str:
        """Open a cycle and enqueue its first phase; returns the cycle id without waiting."""
        opened = open_cycle(
            self.golems,
            self.cycle_settings,
            self.golems.state(golem_id),
            trigger,
            cycle_id=cycle_id,
            bardo_trigger=bardo_trigger,
        )
        started, root = opened.cycle_id, opened.root
        carrier = span_carrier(root)
        with use_span(root):
            try:
                enqueue_phase(
                    self.connection, self.settings, self.golems.state(golem_id), carrier, opened.budget_tokens
                )
            except Exception as exc:
                # Without its first job the cycle would hang in onset: end it now, with the reason.
                reason = f"could not enqueue the first phase: {exc}"
                end_failed_cycle(
                    self.golems,
                    carrier,
                    golem_id=golem_id,
                    cycle_id=started,
                    phase=self.golems.phases.first.name,
                    reason=reason,
                )
                _end_root(root, "interrupted", reason)
                flush_spans()
                raise
        self._roots[started] = root
        flush_spans()
        return started

    def phase_jobs(self, recovery: RecoverySettings | None = None) -> RqPhaseJobs:
        """This executor's queue as the reconciler looks at it."""
        return RqPhaseJobs(self.connection, self.settings, recovery or RecoverySettings())

    def detach(self) -> None:
        """Stop following the cycles started here: their root spans end now, the workers go on."""
        for cycle_id in list(self._roots):
            _end_root(self._roots.pop(cycle_id), "enqueued")
        flush_spans()

    def wait(
        self,
        golem_id: str,
        cycle_id: str,
        timeout: float | None = 300.0,
        on_phase: Callable[[PhaseReport], None] | None = None,
    ) -> CycleResult:
        """Block until the cycle has ended (completed or interrupted), then report it.

        Reads only what the log gained since the last look, so following a long cycle stays cheap;
        ``on_phase`` hears of each phase as it ends, with the worker that ran it."""
        deadline = None if timeout is None else time.monotonic() + timeout
        state = self.golems.state(golem_id)
        records = [r for r in read_cycle(self.golems.store, golem_id, cycle_id) if r.version <= state.version]
        reported = 0
        while True:
            for record in self.golems.store.read_stream(golem_id, after_version=state.version):
                state.apply(record)
                if record.meta.cycle_id == cycle_id:
                    records.append(record)
            over = not _in_cycle(state, cycle_id) and any(isinstance(r.event, DreamStart) for r in records)
            if on_phase is not None:
                reported = self._report(cycle_id, records, reported, over, on_phase)
            if over:
                break
            if deadline is not None and time.monotonic() > deadline:
                raise CycleTimeout(golem_id, cycle_id, timeout or 0.0)
            time.sleep(self.poll_interval)
        result = cycle_result(self.golems, golem_id, cycle_id)
        root = self._roots.pop(cycle_id, None)
        if root is not None:
            _end_root(root, result.outcome, result.failure)
            flush_spans()
        return result

    def _report(
        self, cycle_id: str, records: list[Recorded], reported: int, over: bool, on_phase: Callable[[PhaseReport], None]
    ) -> int:
        """Tell ``on_phase`` of every phase that ended since ``reported`` phases were told of: a
        phase ends where the next begins, the last where the cycle does."""
        marks = [(i, r) for i, r in enumerate(records) if isinstance(r.event, DreamPhase)]
        ended = len(marks) if over else max(0, len(marks) - 1)
        for n in range(reported, ended):
            index, record = marks[n]
            assert isinstance(record.event, DreamPhase)
            stop = marks[n + 1][0] if n + 1 < len(marks) else len(records) - 1
            generations = [r.event for r in records[index:stop] if isinstance(r.event, GenerationRecorded)]
            on_phase(
                PhaseReport(
                    phase=record.event.phase,
                    worker=self._worker(cycle_id, record.event.phase, _resumes(records[index:stop])),
                    seconds=(records[stop].meta.time - record.meta.time).total_seconds(),
                    tokens=sum(g.tokens_in + g.tokens_out for g in generations),
                    cost_usd=sum(g.cost_usd for g in generations),
                )
            )
        return max(reported, ended)

    def _worker(self, cycle_id: str, phase: DreamPhaseName, attempt: int = 0) -> str:
        """The worker of the phase's job (of the reconciler's last resume of it, if any)."""
        try:
            job_id = phase_job_id(cycle_id, phase, attempt)
            job = Job.fetch(job_id, connection=self.connection, serializer=JsonSerializer)
        except Exception:  # a job past its result TTL, or Redis gone: the report says "?"
            return "?"
        return str(job.worker_name or "?")

    def run_cycle(
        self,
        golem_id: str,
        trigger: DreamTrigger = "owner",
        *,
        cycle_id: str | None = None,
        bardo_trigger: BardoTrigger | None = None,
    ) -> CycleResult:
        """Start a cycle and follow it to its end, however long the workers take."""
        started = self.start_cycle(golem_id, trigger, cycle_id=cycle_id, bardo_trigger=bardo_trigger)
        return self.wait(golem_id, started, timeout=None)


def _resumes(records: list[Recorded]) -> int:
    return sum(1 for r in records if isinstance(r.event, PhaseResumed))


def _end_root(root: Span, outcome: str, error: str | None = None) -> None:
    root.set_attribute("oneiros.outcome", outcome)
    if error is not None:
        fail(root, error)
    root.end()
