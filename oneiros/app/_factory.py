"""The composition root: the one place that builds the golems' commands, the executors that run
cycles, the reconcilers that resume stranded ones and the daemon, from one config and one set of
deps. :class:`~oneiros.app.Oneiros` owns one (``app.factory``); the CLI, the server and the
workers' entry points take theirs from it, and the layers below the app take what it builds as an
argument (a ``Golems``, or a callable that makes one), since they cannot import it.

``tests/test_architecture.py`` holds every other module of oneiros to that: none but this one
calls ``Golems(...)`` or an executor's constructor, bar the lowest layer's own defaults.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from oneiros._deps import Deps
from oneiros.config._load import OneirosConfig
from oneiros.fsm._observers import Observers
from oneiros.fsm._service import Golems
from oneiros.runtime._builds import Plain
from oneiros.store._store import EventStore

if TYPE_CHECKING:  # the runtime loads NumPy, the workers RQ and Redis: on first use only
    from redis import Redis

    from oneiros.daemon._daemon import Daemon
    from oneiros.generators._protocol import Generator
    from oneiros.runtime._executor import Executor, InProcessExecutor, PhaseListener
    from oneiros.runtime._process import WorkerConfig
    from oneiros.runtime._reconcile import PhaseJobs, Reconciler
    from oneiros.settings._cycle import CycleSettings
    from oneiros.workers._dispatch import RqExecutor

__all__ = ["Factory"]


class Factory:
    """Builds what an application's use cases (and the processes around them) run on, each with
    the same config: the snapshot and race settings every golem needs, the recovery settings
    every executor and reconciler needs. Building nothing until asked, it imports nothing heavy."""

    def __init__(self, config: OneirosConfig, deps: Deps) -> None:
        self.config = config
        self.deps = deps
        # The lower layers' builder, given every setting: what they build by default, built alike.
        self._plain = Plain(snapshots=config.snapshots, races=config.races, recovery=config.recovery, deps=deps)

    def golems(
        self,
        store: EventStore,
        *,
        observers: Observers | None = None,
        trace_context: Callable[[], dict[str, str]] | None = None,
        deps: Deps | None = None,
    ) -> Golems:
        """The golems' commands on ``store``, with the config's snapshots and race settings."""
        return self._plain.golems(store, observers=observers, trace_context=trace_context, deps=deps)

    def in_process(
        self,
        golems: Golems,
        generator: Generator | None = None,
        settings: CycleSettings | None = None,
        on_phase: PhaseListener | None = None,
    ) -> InProcessExecutor:
        """Runs cycles in this process (``settings``: the config's cycle settings if None)."""
        cycle = settings if settings is not None else self.config.cycle
        return self._plain.in_process(golems, generator, cycle, on_phase)

    def loaded(self, golems: Golems, settings: CycleSettings | None = None) -> InProcessExecutor:
        """Runs cycles in this process with the generator the cycle settings name, loaded now."""
        from oneiros.runtime._process import load_generator  # noqa: PLC0415 - NumPy, on first use

        cycle = settings if settings is not None else self.config.cycle
        return self.in_process(golems, load_generator(cycle.generator, cycle.seed or 0), cycle)

    def queued(
        self,
        golems: Golems,
        connection: Redis,
        settings: CycleSettings | None = None,
        *,
        poll_interval: float = 0.05,
    ) -> RqExecutor:
        """Hands cycles to the queue's workers, phase by phase."""
        from oneiros.workers._dispatch import RqExecutor  # noqa: PLC0415 - RQ and Redis, with a queue only

        cycle = settings if settings is not None else self.config.cycle
        return RqExecutor(golems, connection, self.config.rq, cycle, poll_interval=poll_interval)

    def executor(self, golems: Golems, *, poll_interval: float = 0.05) -> Executor:
        """The workers of the configured queue, or this process (its generator loaded) without one."""
        if self.config.queue:
            from oneiros.workers._connect import redis_at  # noqa: PLC0415 - RQ and Redis, with a queue only

            return self.queued(golems, redis_at(self.config.queue), poll_interval=poll_interval)
        return self.loaded(golems)

    def reconciler(
        self,
        golems: Golems,
        *,
        jobs: PhaseJobs | None = None,
        run: Callable[[str, str], object] | None = None,
        own: Callable[[], Collection[str]] | None = None,
    ) -> Reconciler:
        """Finds cycles nothing runs any more and resumes them (``run``) or their phase's job (``jobs``)."""
        return self._plain.reconciler(golems, jobs=jobs, run=run, own=own)

    def daemon(self, golems: Golems, golem_id: str, executor: Executor) -> Daemon:
        """The heartbeat of ``golem_id``: decides each tick whether it dreams, and runs the cycle on ``executor``."""
        from oneiros.daemon._daemon import Daemon  # noqa: PLC0415 - the scheduler, on first use

        return Daemon(
            golems,
            golem_id,
            executor,
            schedule=self.config.schedule,
            daemon=self.config.daemon,
            recovery=self.config.recovery,
            builds=self,
        )

    def worker_config(self) -> WorkerConfig:
        """What a worker process builds its runtime from (``oneiros worker`` hands it on): this
        config's store, queue, cycle, tracing, recovery, snapshot and race settings."""
        from oneiros.runtime._process import WorkerConfig  # noqa: PLC0415 - NumPy, on first use

        config = self.config
        return WorkerConfig(
            store_url=config.store_url,
            rq=config.rq,
            cycle=config.cycle,
            tracing=config.tracing,
            recovery=config.recovery,
            snapshots=config.snapshots,
            races=config.races,
        )
