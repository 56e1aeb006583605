"""Dreaming: starting a cycle (in this process, on a thread the caller runs, or on the queue's
workers), following it to its end, ending one by hand, and the cycles under way.

Dense-Mem's ``run_dreaming_cycle`` maps onto oneiros's phases through :class:`CycleOptions`
(docs/server.md): ``reevaluate`` runs the re_evaluate command before the cycle; ``reflect`` off
means NREM replays no batch (the cycle still passes through every phase, as the machine
requires, and records it); ``dream`` off means REM imagines nothing and integration stages no
new entry; ``max_outputs`` caps the entries integration stages. With reflect and dream both off
no cycle starts: only re-evaluation runs.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, NamedTuple, Protocol

import msgspec

from oneiros._errors import IllegalCommand, masked_url
from oneiros.app._concerns import command, use_case
from oneiros.app._core import Core
from oneiros.app._factory import Factory
from oneiros.app._shapes import CycleRun, Golem, Overview, RunningCycle
from oneiros.events._liveness import PhaseResumed
from oneiros.events._types import DreamStart
from oneiros.fsm._golem import GolemState
from oneiros.fsm._machine import destination
from oneiros.fsm._observers import Observers
from oneiros.fsm._races import retry_race
from oneiros.settings._cycle import CycleSettings
from oneiros.settings._vocabulary import DreamPhaseName
from oneiros.store._leases import Lease, open_leases
from oneiros.store._snapshots import read_cycle
from oneiros.store._unit import UnitOfWork

if TYPE_CHECKING:  # the runtime loads NumPy, the workers RQ and Redis: on first use only
    from oneiros.daemon._daemon import Daemon
    from oneiros.runtime._executor import CycleResult, PhaseListener
    from oneiros.runtime._reconcile import Reconciler, Resolution
    from oneiros.workers._dispatch import PhaseReport

__all__ = ["Background", "CycleOptions", "Dreams", "Interrupted", "can_fall_asleep", "cycle_settings"]


class CycleOptions(msgspec.Struct, frozen=True, kw_only=True):
    """How to dream one cycle: Dense-Mem's toggles and output cap, and whether to wait for its end."""

    max_outputs: Annotated[int, msgspec.Meta(ge=0)] | None = None
    """Most new entries the cycle stages (None: the config's ``integration.max_staged``)."""
    reflect: bool = True
    """NREM replay and triage of the golem's episodes."""
    dream: bool = True
    """REM imagination and integration's new staged entries."""
    reevaluate: bool = False
    """Re-evaluate the golem's staged entries first (Dense-Mem's re_evaluate)."""
    wait: bool = True
    """Answer once the cycle has ended; else as soon as it started."""
    timeout: float | None = None
    """How long to wait for the end of a cycle another thread or a worker runs (None: for ever)."""


class Interrupted(msgspec.Struct, frozen=True, kw_only=True):
    """A cycle ended by hand."""

    golem_id: str
    cycle_id: str | None
    phase: DreamPhaseName | None
    reason: str


class _Hooks(NamedTuple):
    """What hears of a cycle as it goes (see :meth:`Dreams.dream`)."""

    on_phase: PhaseListener | None = None
    on_queued_phase: Callable[[PhaseReport], None] | None = None
    on_start: Callable[[str], None] | None = None


class Background(Protocol):
    """Runs cycles off the caller's thread (the server's own cycles)."""

    def start(self, golem_id: str, run: Callable[[Observers], object]) -> str:
        """Call ``run`` on a thread of its own; the cycle's id once it has started."""
        ...

    def wait(self, cycle_id: str, timeout: float | None) -> None:
        """Until that cycle has ended, or ``timeout`` seconds."""
        ...


def cycle_settings(base: CycleSettings, options: CycleOptions) -> CycleSettings:
    """``base`` with the options' toggles and output cap applied."""
    engines = base.engines
    if not options.reflect:
        engines = msgspec.structs.replace(engines, max_batches=0)
    rem = engines.rem
    staged = options.max_outputs if options.max_outputs is not None else engines.integration.max_staged
    if not options.dream:
        rem = msgspec.structs.replace(rem, counterfactual_seeds=0, creative_sessions=0, threat_scenarios=0)
        staged = 0
    integration = msgspec.structs.replace(engines.integration, max_staged=staged)
    return msgspec.structs.replace(base, engines=msgspec.structs.replace(engines, rem=rem, integration=integration))


class Dreams:
    """The use cases that dream: a cycle started, followed and ended by hand, and the cycles under way."""

    def __init__(self, core: Core, factory: Factory) -> None:
        self.core = core
        self.factory = factory

    def state(self, golem_id: str) -> GolemState:
        """The golem's whole state, folded from its stream (a snapshot and what came since)."""
        return self.core.golems().state(golem_id)

    def dream(  # noqa: PLR0913 - a use case's optional listeners, keyword-only, each defaulted
        self,
        golem_id: str,
        options: CycleOptions | None = None,
        *,
        background: Background | None = None,
        on_phase: PhaseListener | None = None,
        on_queued_phase: Callable[[PhaseReport], None] | None = None,
        on_start: Callable[[str], None] | None = None,
        idempotency_key: str | None = None,
    ) -> CycleRun:
        """Dream one cycle of ``golem_id`` now, with the config's settings and ``options``.

        With a queue configured the cycle goes to the workers (followed to its end with
        ``options.wait``; ``on_start`` hears its id once it is enqueued, ``on_queued_phase`` each
        phase as it ends, with its worker); else it runs in this process, in this thread
        (``on_phase`` hears each phase) or on ``background``'s. What stops a cycle from starting
        (no such golem, a golem already dreaming, no API key, an episode the engines cannot fold)
        is raised before anything is written, re-evaluation included. With ``idempotency_key``, the
        same key and options again start nothing and answer as the first call did."""
        hooks = _Hooks(on_phase=on_phase, on_queued_phase=on_queued_phase, on_start=on_start)
        run = self._dream(golem_id, options or CycleOptions(), background, hooks, idempotency_key=idempotency_key)
        if not self.core.catch_up:  # reads served from the projections show the cycle it started
            # (a cycle on a thread or a worker of its own: not a write this call's watch hears)
            self.core.written(self.core.store.head())
        return run

    @command(golem="created", idempotent=("options",), name="dream")
    def _dream(  # noqa: PLR0913 - `unit` is the command decorator's (app/_concerns.py), never a caller's
        self,
        unit: UnitOfWork,
        golem_id: str,
        options: CycleOptions,
        background: Background | None,
        hooks: _Hooks,
        *,
        idempotency_key: str | None = None,
    ) -> CycleRun:
        # Through the unit: the first of its writes here (a decision re-evaluation made, else the
        # cycle's start) records the key with it.
        golems = self.core.golems(unit)
        state = golems.state(golem_id)
        dreams = options.reflect or options.dream
        queue = self.core.config.queue
        generator = connection = None
        if dreams:
            if queue:
                from oneiros.workers._connect import redis_at  # noqa: PLC0415 - RQ and Redis, with a queue only

                connection = redis_at(queue)
            else:  # on a queue the workers' environment holds the key
                from oneiros.generators._factory import check_api_key  # noqa: PLC0415
                from oneiros.runtime._process import load_generator  # noqa: PLC0415

                check_api_key(self.core.config.cycle.generator, "dream")
                generator = load_generator(self.core.config.cycle.generator, self.core.deps.seed)
            can_fall_asleep(state)
            # A stored episode the engines cannot fold is an InvalidEvent now, not once re-evaluation
            # wrote: the columns take in what a fold caught up (a fresh fold does it as it reads).
            self.core.logs().read(golem_id).memory.columns()
        reevaluated = len(self.core.feedback(unit).reevaluate(golem_id)) if options.reevaluate else 0
        run = CycleRun(
            golem_id=golem_id,
            cycle_id=None,
            status="reevaluated",
            reevaluated=reevaluated,
            store=masked_url(self.core.store.url),
            queue=masked_url(queue) if queue else None,
            rq_queue=self.core.config.rq.queue if queue else None,
        )
        if not dreams:
            return run
        settings = cycle_settings(self.core.config.cycle, options)
        factory = self.factory
        if connection is not None:
            queued = factory.queued(golems, connection, settings)
            cycle_id = queued.start_cycle(golem_id)
            if not options.wait:
                queued.detach()
                return msgspec.structs.replace(run, cycle_id=cycle_id, status="enqueued")
            if hooks.on_start is not None:
                hooks.on_start(cycle_id)
            ended = queued.wait(golem_id, cycle_id, timeout=options.timeout, on_phase=hooks.on_queued_phase)
            return _ended(run, ended)
        from oneiros.runtime._executor import cycle_result  # noqa: PLC0415 - NumPy, on first use

        if background is None:
            executor = factory.in_process(golems, generator, settings, hooks.on_phase)
            executor.logs = self.core.logs()  # the fold the checks (and an import) read
            return _ended(run, executor.run_cycle(golem_id))

        def in_thread(observers: Observers) -> object:
            own = factory.golems(self.core.store, observers=observers)
            return factory.in_process(own, generator, settings, hooks.on_phase).run_cycle(golem_id)

        cycle_id = background.start(golem_id, in_thread)
        if not options.wait:
            return msgspec.structs.replace(run, cycle_id=cycle_id, status="dreaming")
        background.wait(cycle_id, options.timeout)
        return _ended(run, cycle_result(golems, golem_id, cycle_id))

    @use_case(golem="created")
    def interrupt(self, golem_id: str, reason: str, *, if_dreaming: bool = False) -> Interrupted | None:
        """End the golem's cycle now, interrupted by its owner with ``reason`` (kept in the log):
        what it produced stays, a phase running anywhere finds its next append refused. An
        IllegalCommand if it is not dreaming (with ``if_dreaming``: None)."""
        golems = self.core.golems()

        def attempt() -> GolemState | None:
            # On the state just read, so a phase that appended meanwhile makes it look again.
            state = golems.state(golem_id)
            if state.mode != "Dreaming":
                if if_dreaming:
                    return None
                raise IllegalCommand(golem_id, state.machine_state, "interrupt", "it is not dreaming")
            golems.interrupt(golem_id, "owner", reason, known=state)
            return state

        state = retry_race(attempt, golems.races, golems.deps)
        if state is None:
            return None
        return Interrupted(golem_id=golem_id, cycle_id=state.cycle_id, phase=state.phase, reason=reason)

    @use_case(reads=("golems",), sweep=False)
    def reconciler(
        self,
        *,
        resume_on: Callable[[str, str, Callable[[], CycleResult]], object] | None = None,
        own: Callable[[], Collection[str]] | None = None,
    ) -> Reconciler:
        """What finds the cycles nothing runs any more: with a queue it re-enqueues their phase's
        job; else it resumes each in this process, on ``resume_on`` if given (golem, cycle, and the
        resume to run: the server's cycle threads), else in the caller's thread. ``own`` names the
        cycles the caller runs itself, which are never stranded. ``oneiros recover``, the server's
        reconciler and the daemon's all come from here."""
        factory, config = self.factory, self.core.config
        golems = factory.golems(self.core.store)
        if config.queue:
            from oneiros.workers._connect import redis_at  # noqa: PLC0415 - RQ and Redis, with a queue only
            from oneiros.workers._rq import RqPhaseJobs  # noqa: PLC0415

            jobs = RqPhaseJobs(redis_at(config.queue), config.rq, config.recovery)
            return factory.reconciler(golems, jobs=jobs, own=own)

        def run(golem_id: str, cycle_id: str) -> object:
            def resume() -> CycleResult:
                # Golems of the resume's own: it may run on a thread other than the reconciler's.
                return factory.in_process(factory.golems(self.core.store)).resume_cycle(golem_id, cycle_id)

            return resume_on(golem_id, cycle_id, resume) if resume_on is not None else resume()

        return factory.reconciler(golems, run=run, own=own)

    def recover(self, *, resumed: Callable[[str, CycleResult], None] | None = None) -> list[Resolution]:
        """One pass of :meth:`reconciler` over every dreaming golem: what it found and did;
        ``resumed`` hears how each cycle it resumed here ended."""

        def here(golem_id: str, _cycle_id: str, resume: Callable[[], CycleResult]) -> CycleResult:
            result = resume()
            if resumed is not None:
                resumed(golem_id, result)
            return result

        return self.reconciler(resume_on=here).pass_once()

    def heartbeat(self, golem_id: str) -> Daemon:
        """The daemon of ``golem_id`` (``oneiros run``): each tick decides whether it dreams, and
        runs the cycle on the queue's workers, or in this process without one."""
        factory = self.factory
        golems = factory.golems(self.core.store)
        tick = self.core.config.daemon.tick_seconds
        return factory.daemon(golems, golem_id, factory.executor(golems, poll_interval=min(1.0, tick)))

    @use_case(reads=("golems",), sweep=False)
    def overview(self) -> Overview:
        """Every golem's state at the log head, the log's position, and each cycle under way with
        its phase, where that phase runs and how long the cycle has run."""
        states = sorted(self.core.projections.golems(), key=lambda s: s.golem_id)
        head = self.core.store.head()
        return Overview(
            position=head,
            store=masked_url(self.core.store.url),
            golems=[Golem.of(s) for s in states],
            running=self._running(states),
        )

    def _running(self, states: list[GolemState]) -> list[RunningCycle]:
        rows: list[RunningCycle] = []
        now = datetime.now(UTC)
        leases = open_leases(self.core.store)
        for state in states:
            if state.mode != "Dreaming" or state.cycle_id is None:
                continue
            cycle = read_cycle(self.core.store, state.golem_id, state.cycle_id)
            start = next((r.meta.time for r in cycle if isinstance(r.event, DreamStart)), None)
            resumes = sum(1 for r in cycle if isinstance(r.event, PhaseResumed) and r.event.phase == state.phase)
            if self.core.config.queue:
                from oneiros.workers._connect import phase_worker  # noqa: PLC0415 - RQ, with a queue only

                worker = phase_worker(self.core.config.queue, state.cycle_id, state.phase, resumes)
            else:
                worker = _lease_holder(leases.get(state.golem_id), state.cycle_id)
            rows.append(
                RunningCycle(
                    golem_id=state.golem_id,
                    cycle_id=state.cycle_id,
                    phase=state.phase,
                    worker=worker,
                    age_seconds=round((now - start).total_seconds(), 1) if start is not None else None,
                )
            )
        return rows


def can_fall_asleep(state: GolemState) -> None:
    """IllegalCommand unless the golem can fall asleep now; where it is dreaming, saying what to do:
    the cycle may still run elsewhere, or be stranded by a crash (the CLI, REST and MCP all say it)."""
    if destination(state.machine_state, "fall_asleep") is not None:
        return
    detail = ""
    if state.mode == "Dreaming":
        detail = (
            f"cycle {state.cycle_id} is in {state.phase}; `oneiros status` shows who runs it, `oneiros recover` "
            f"resumes it if nothing does, `oneiros interrupt --golem {state.golem_id} --reason ...` ends it"
        )
    raise IllegalCommand(state.golem_id, state.machine_state, "fall_asleep", detail)


def _lease_holder(lease: Lease | None, cycle_id: str) -> str:
    """Who runs a cycle started without a queue, from its lease: the process holding it, or that
    nothing does (a killed `dream`: `oneiros recover` resumes it)."""
    if lease is None or lease.cycle_id != cycle_id or not lease.live() or lease.gone():
        return "nothing holds it (oneiros recover)"
    return lease.holder


def _ended(run: CycleRun, result: CycleResult) -> CycleRun:
    """``run`` with how its cycle ended, or that it still runs (a wait that ran out)."""
    status = (
        "interrupted"
        if result.interrupted
        else "empty"
        if result.empty
        else "complete"
        if result.complete is not None
        else "dreaming"
    )
    return msgspec.structs.replace(
        run,
        cycle_id=result.cycle_id,
        status=status,
        events_appended=result.events_appended,
        complete=result.complete,
        interrupted=result.interrupted,
        empty=result.empty,
    )
