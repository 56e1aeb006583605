"""What a worker process runs phase jobs with: its store, queue settings, tracer and generators.

A job's payload carries ids only. What a phase runs with (tier, generator, base URL, models,
temperatures, budgets, seed) is the cycle's own, recorded in its DreamStart; the worker brings only
the store, the queue and the secrets (an API key from its environment). The live objects (store
connections, tracer, generators) are built lazily once per process id, because RQ forks a
work-horse per job and a database connection must never cross a fork.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import random
import time

import msgspec

from oneiros._deps import Deps
from oneiros._errors import ConfigError
from oneiros.fsm._service import Golems
from oneiros.generators._protocol import Generator
from oneiros.runtime._builds import Plain
from oneiros.runtime._generators import DelayedGenerator, load_generator
from oneiros.runtime._golem_log import GolemLogs
from oneiros.runtime._reconcile import PhaseJobs, Reconciler
from oneiros.settings._cycle import CycleSettings
from oneiros.settings._races import RaceSettings
from oneiros.settings._recovery import RecoverySettings
from oneiros.settings._runtime import RqSettings, SnapshotSettings, TracingSettings
from oneiros.store._leases import LeaseStore, open_leases
from oneiros.store._store import EventStore, open_store
from oneiros.telemetry._spans import TracedGenerator, TracedStore, current_trace_context, ensure_tracing

__all__ = [
    "DelayedGenerator",
    "RqSettings",
    "Runtime",
    "WorkerConfig",
    "load_generator",
    "open_with_retries",
    "runtime",
    "set_worker_config",
]


class WorkerConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Everything a worker process needs besides the job payload."""

    store_url: str
    rq: RqSettings = RqSettings()
    cycle: CycleSettings = CycleSettings()
    """Only for cycles recorded before they carried their settings (DreamStart v1)."""
    tracing: TracingSettings = TracingSettings()
    recovery: RecoverySettings = RecoverySettings()
    """Phase leases and the worker's reconciler."""
    snapshots: SnapshotSettings = SnapshotSettings()
    """When the worker's golems write a snapshot, as every other process's do."""
    races: RaceSettings = RaceSettings()
    """How the worker's golems retry a write another process raced."""


class Runtime:
    """This process's store, tracer and generators, built from a :class:`WorkerConfig`."""

    def __init__(self, config: WorkerConfig, *, create: bool = True) -> None:
        self.config = config
        self.pid = os.getpid()
        ensure_tracing(config.tracing)
        self.store: EventStore = TracedStore(open_with_retries(config.store_url, create=create))
        self._generators: dict[bytes, Generator] = {}
        self._logs: GolemLogs | None = None
        # What the application's factory made this config from (Factory.worker_config) builds with.
        self.builds = Plain(snapshots=config.snapshots, races=config.races, recovery=config.recovery)

    def golems(self) -> Golems:
        """A golem service whose events carry the current trace context."""
        return self.builds.golems(self.store, deps=Deps(), trace_context=current_trace_context)

    def reconciler(self, jobs: PhaseJobs | None) -> Reconciler:
        """The worker's reconciler: stranded phases of this store, re-enqueued on ``jobs``."""
        return self.builds.reconciler(self.golems(), jobs=jobs)

    def leases(self) -> LeaseStore:
        """Where this process's phase jobs hold their leases: beside the store."""
        return open_leases(self.store)

    def generator_for(self, settings: CycleSettings) -> Generator:
        """The (traced) generator a cycle's settings name, built once per distinct settings."""
        seed = settings.seed or 0
        key = msgspec.json.encode((settings.generator, seed))
        generator = self._generators.get(key)
        if generator is None:
            generator = self._generators[key] = TracedGenerator(load_generator(settings.generator, seed))
        return generator

    def logs(self, golems: Golems) -> GolemLogs:
        """This process's folded golem logs, kept from job to job, so a worker that ran the last
        phase reads only what came since (and any worker starts from the latest snapshot)."""
        if self._logs is None:
            self._logs = GolemLogs.of(golems)
        self._logs.golems = golems
        return self._logs


def open_with_retries(url: str, attempts: int = 5, *, create: bool = True) -> EventStore:
    """Open the store, retrying a few times: workers starting together each create the tables and
    functions if missing, and PostgreSQL answers concurrent ``CREATE OR REPLACE`` of one function
    with "tuple concurrently updated". ``create=False``: a missing store is an error (:class:`NoStore`)."""
    for attempt in range(1, attempts + 1):
        try:
            return open_store(url, create=create)
        except ConfigError:
            raise
        except Exception:
            if attempt == attempts:
                raise
            time.sleep(random.uniform(0.02, 0.1) * attempt)
    raise AssertionError("unreachable")  # pragma: no cover


class _Slot:
    config: WorkerConfig | None = None
    runtime: Runtime | None = None


_slot = _Slot()


def set_worker_config(config: WorkerConfig) -> None:
    """Configure this process (and the work-horses it forks) to run phase jobs.

    The store's driver is imported here, once: a forked work-horse inherits imported modules, and
    importing the PostgreSQL driver in every horse would cost each job about a tenth of a second.
    """
    _slot.config = config
    _slot.runtime = None
    if config.store_url.startswith(("postgresql:", "postgres:")):
        for module in ("psycopg", "psycopg_pool", "eventsourcing.postgres"):
            with contextlib.suppress(ImportError):  # open_store names the missing extra itself
                importlib.import_module(module)
    ensure_tracing(config.tracing)


def runtime(*, create: bool = True) -> Runtime:
    """This process's runtime, rebuilt after a fork; configured from the environment if never set.
    ``create=False``: building it fails with :class:`NoStore` where there is no store yet."""
    current = _slot.runtime
    if current is not None and current.pid == os.getpid():
        return current
    config = _slot.config
    if config is None:
        env = os.environ.get("ONEIROS_WORKER_CONFIG")
        if not env:
            raise ConfigError(
                "this process runs phase jobs but no worker configuration was set (run it with `oneiros worker`)"
            )
        try:
            config = msgspec.json.decode(env, type=WorkerConfig)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise ConfigError(f"ONEIROS_WORKER_CONFIG: {exc}") from None
        _slot.config = config
    # The parent's runtime (if any) is left alone: its pooled connections belong to the parent.
    _slot.runtime = Runtime(config, create=create)
    return _slot.runtime
