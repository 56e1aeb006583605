"""What a worker process runs phase jobs with: its settings, store, generator and tracer.

A job's payload carries ids only; everything else a phase needs is the worker's own configuration.
The live objects (store connections, tracer) are built lazily once per process id, because RQ forks
a work-horse per job and a database connection must never cross a fork.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import random
import time
from typing import Any, Literal

import msgspec

from oneiros._deps import Deps
from oneiros._errors import ConfigError
from oneiros.events import EventStore, open_store
from oneiros.fsm import Golems
from oneiros.generators import (
    Generation,
    GenerationRequest,
    Generator,
    OfflineGenerator,
    OpenAIConfig,
    OpenAIGenerator,
)
from oneiros.workers._phases import CycleSettings
from oneiros.workers._tracing import (
    TracedGenerator,
    TracedStore,
    TracingSettings,
    current_trace_context,
    ensure_tracing,
)

__all__ = [
    "DelayedGenerator",
    "RqSettings",
    "Runtime",
    "WorkerConfig",
    "load_generator",
    "runtime",
    "set_worker_config",
]


class RqSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How phase jobs are queued, retried, timed out and recovered.

    None of these numbers comes from the source documents; they are oneiros's operating defaults.
    The recovery figures are RQ's own defaults, so a deployment behaves like plain RQ until tuned;
    tests shorten them to find a killed job in seconds instead of about a minute and a half.
    """

    queue: str = "oneiros"
    """RQ queue name the phase jobs go to."""
    retries: int = 3
    """Further attempts after a phase job fails or is abandoned by a killed worker."""
    min_job_timeout: int = 60
    """Floor of a phase job's timeout, seconds."""
    seconds_per_token: float = 0.05
    """A phase job's timeout is its phase budget times this (a 200-token/s floor), seconds."""
    heartbeat_grace: int = 60
    """Seconds a started job outlives its worker's last heartbeat before it counts as abandoned
    (RQ hard-codes 60)."""
    job_monitoring_interval: int = 30
    """Seconds between a fork worker's heartbeats while its work-horse runs (RQ's default)."""
    maintenance_interval: int = 600
    """Seconds between registry sweeps that retry abandoned jobs and end failed cycles (RQ's default)."""
    worker_ttl: int = 420
    """Seconds a worker's registration lives without a heartbeat; an idle worker wakes every
    ``worker_ttl - 15`` seconds to sweep (RQ's default)."""
    cleaning_lock_ttl: int = 899
    """Seconds the registry-cleaning lock lives; a worker killed while holding it blocks every
    sweep until then (RQ's 899)."""
    next_phase_at_front: bool = True
    """Enqueue a cycle's next phase ahead of waiting jobs, so cycles already under way finish
    before new ones start (lower latency per cycle, fewer cycles half done at any moment)."""
    result_ttl: int = 3600
    """Seconds a finished phase job's result is kept."""
    failure_ttl: int = 7 * 24 * 3600
    """Seconds a failed phase job is kept for inspection."""
    worker_class: Literal["fork", "simple"] = "simple"
    """``simple`` runs jobs in the worker process, which keeps its store connections and tracer
    from job to job; ``fork`` runs each job in a fresh work-horse process (RQ's default), which
    isolates a job that crashes or leaks but opens the store again for every job (see
    ``benchmarks/workers.py``). Both send heartbeats while a job runs and recover a killed job."""

    def job_timeout(self, budget_tokens: int) -> int:
        return max(self.min_job_timeout, int(budget_tokens * self.seconds_per_token))


class WorkerConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Everything a worker process needs besides the job payload."""

    store_url: str
    generator: str = "offline"
    """``offline``, ``openai`` (an OpenAI-compatible server, configured by its environment),
    ``sleep:SECONDS`` (offline text after a simulated model latency) or ``module:factory`` (a
    callable returning a generator)."""
    seed: int = 0
    cycle: CycleSettings = CycleSettings()
    rq: RqSettings = RqSettings()
    tracing: TracingSettings = TracingSettings()


class DelayedGenerator:
    """Another generator's answers, each after ``delay`` seconds: a model call's latency, simulated."""

    def __init__(self, inner: Generator, delay: float) -> None:
        self.inner = inner
        self.delay = delay

    def __getattr__(self, name: str) -> Any:
        # The wrapped generator's model, model_for and max_tokens_in, which budgets and prices read.
        return getattr(self.inner, name)

    def generate(self, request: GenerationRequest) -> Generation:
        time.sleep(self.delay)
        return self.inner.generate(request)


def load_generator(spec: str, seed: int = 0) -> Generator:
    """The generator a spec names (see :attr:`WorkerConfig.generator`)."""
    if spec == "offline":
        return OfflineGenerator(seed=seed)
    if spec == "openai":
        return OpenAIGenerator(OpenAIConfig())
    if spec.startswith("sleep:"):
        try:
            delay = float(spec.removeprefix("sleep:"))
        except ValueError:
            raise ConfigError(
                f"generator {spec!r}: the delay after 'sleep:' must be seconds, as in sleep:0.2"
            ) from None
        return DelayedGenerator(OfflineGenerator(seed=seed), delay)
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"generator {spec!r}: expected offline, openai, sleep:SECONDS or module:factory")
    try:
        factory: Any = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"generator {spec!r}: cannot import it: {exc}") from None
    generator = factory()
    if not callable(getattr(generator, "generate", None)):
        raise ConfigError(f"generator {spec!r}: {attr}() returned an object without generate()")
    out: Generator = generator
    return out


class Runtime:
    """This process's store, traced generator and tracer, built from a :class:`WorkerConfig`."""

    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self.pid = os.getpid()
        ensure_tracing(config.tracing)
        self.store: EventStore = TracedStore(_open_with_retries(config.store_url))
        self.generator: Generator = TracedGenerator(load_generator(config.generator, config.seed))

    def golems(self) -> Golems:
        """A golem service whose events carry the current trace context."""
        return Golems(self.store, deps=Deps(seed=self.config.seed), trace_context=current_trace_context)


def _open_with_retries(url: str, attempts: int = 5) -> EventStore:
    """Open the store, retrying a few times: workers starting together each create the tables and
    functions if missing, and PostgreSQL answers concurrent ``CREATE OR REPLACE`` of one function
    with "tuple concurrently updated"."""
    for attempt in range(1, attempts + 1):
        try:
            return open_store(url)
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


def runtime() -> Runtime:
    """This process's runtime, rebuilt after a fork; configured from the environment if never set."""
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
    _slot.runtime = Runtime(config)
    return _slot.runtime
