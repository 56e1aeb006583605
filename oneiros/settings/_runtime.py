"""How processes run cycles: the RQ queue and its recovery timings, and where spans go."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Literal

import msgspec

from oneiros._errors import InvalidSetting

__all__ = ["DEFAULT_SPANS_PATH", "OTLP_VARIABLES", "LogSettings", "RqSettings", "SnapshotSettings", "TracingSettings"]

DEFAULT_SPANS_PATH = ".oneiros/spans.jsonl"
SNAPSHOTS_EVERY_ENV = "ONEIROS_SNAPSHOTS__EVERY"


class RqSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How phase jobs are queued, retried, timed out and recovered.

    None of these numbers comes from the source documents; they are oneiros's operating defaults.
    The recovery figures are RQ's own defaults, so RQ's registries behave like plain RQ's; a
    killed or lost phase is resumed by the reconciler (:class:`RecoverySettings`), whatever these say.
    """

    queue: str = "oneiros"
    """RQ queue name the phase jobs go to."""
    retries: Annotated[int, msgspec.Meta(ge=1)] = 3
    """Further attempts after a phase job fails or is abandoned by a killed worker (RQ's ``Retry``
    takes no fewer than one)."""
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
    """Seconds between RQ's own registry sweeps (RQ's default). Stranded phases do not wait for
    them: the reconciler (``recovery.*``) finds those within seconds."""
    worker_ttl: int = 420
    """Seconds a worker's registration lives without a heartbeat; an idle worker wakes every
    ``worker_ttl - 15`` seconds to sweep (RQ's default)."""
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


OTLP_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
"""The standard variables that name an OTLP collector: either one turns the OTLP exporter on."""


class TracingSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Where this process's spans go, besides what the standard ``OTEL_*`` variables configure.

    The OpenTelemetry SDK reads its own variables: ``OTEL_SERVICE_NAME``, ``OTEL_TRACES_SAMPLER``
    (and ``_ARG``), ``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``,
    ``OTEL_PROPAGATORS``. These settings add the local span file and name a default service.
    """

    spans_path: str | None = DEFAULT_SPANS_PATH
    """JSON-lines span file that ``oneiros trace`` reads; None (``off``) turns the file off."""
    otlp_endpoint: str | None = None
    """OTLP/HTTP collector base URL (``http://jaeger:4318``). None leaves it to
    ``OTEL_EXPORTER_OTLP_ENDPOINT``; when neither is set no OTLP exporter runs."""
    service_name: str = "oneiros"
    """``service.name`` of this process's spans unless ``OTEL_SERVICE_NAME`` says otherwise."""

    def __post_init__(self) -> None:
        if self.spans_path == "off":
            msgspec.structs.force_setattr(self, "spans_path", None)


class LogSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How ``oneiros worker`` and ``oneiros run`` log."""

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    """oneiros's own lines: at INFO one line per phase start and end, and each daemon decision."""
    format: Literal["text", "json"] = "text"
    """``json`` writes one JSON object per line, for log collectors."""
    rq_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "WARNING"
    """RQ's own logger (it says every job twice at INFO)."""


class SnapshotSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How often folds of a golem's stream are snapshotted beside the log.

    Not from the source documents: an operating default. A snapshot is taken once a reader has
    folded ``every`` events past the last one, so a reader never folds more than about ``every``
    events plus what came since; smaller means more writes, larger means longer catch-up reads.
    """

    every: int = 10_000
    """Events folded past the last snapshot before a new one is written; 0 turns snapshots off."""

    def __post_init__(self) -> None:
        if self.every < 0:
            raise InvalidSetting("snapshots.every", self.every, "0 (off) or a positive number of events")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> SnapshotSettings:
        """From ``ONEIROS_SNAPSHOTS__EVERY`` (the variable ``oneiros.toml``'s ``snapshots.every``
        answers to), for processes that read no config file: ``dream``, ``worker``."""
        raw = (os.environ if env is None else env).get(SNAPSHOTS_EVERY_ENV)
        if raw is None or not raw.strip():
            return cls()
        try:
            every = int(raw)
        except ValueError:
            raise InvalidSetting("snapshots.every", raw, "int", f"env {SNAPSHOTS_EVERY_ENV}") from None
        return cls(every=every)
