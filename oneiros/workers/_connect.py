"""Reaching the queue: a Redis client for a queue URL, and where a cycle's current phase is on it."""

from __future__ import annotations

from urllib.parse import urlsplit

from redis import Redis
from redis.exceptions import RedisError
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from oneiros._errors import ConfigError, masked_url
from oneiros.settings._vocabulary import DreamPhaseName
from oneiros.workers._rq import JsonSerializer, phase_job_id

__all__ = ["phase_worker", "redis_at"]


def redis_at(url: str) -> Redis:
    """A client of the queue at ``url`` (not yet connected); :class:`ConfigError` for a URL it cannot use."""
    try:
        split = urlsplit(url)
    except ValueError as exc:  # an unclosed "[" of an IPv6 host
        raise ConfigError(f"queue {masked_url(url)!r}: {exc}") from None
    database = split.path.strip("/")
    # redis-py ignores a path that is no number and takes database 0: jobs would go where no
    # worker of the intended database looks.
    if split.scheme in ("redis", "rediss") and database and not database.isdigit():
        raise ConfigError(
            f"queue {masked_url(url)!r}: database {database!r} is not a number; expected redis://host:port/N"
        )
    try:
        return Redis.from_url(url)
    except ValueError as exc:
        raise ConfigError(f"queue {masked_url(url)!r}: {exc}") from None


def phase_worker(queue: str, cycle_id: str, phase: DreamPhaseName | None, attempt: int = 0) -> str:
    """Where a cycle's current phase is on the queue at ``queue``: the worker running it,
    ``queued``, or why it is unknown. ``attempt`` is the reconciler's last resume of the phase (its
    job has an id of its own)."""
    if phase is None:
        return "-"
    try:
        job_id = phase_job_id(cycle_id, phase, attempt)
        job = Job.fetch(job_id, connection=redis_at(queue), serializer=JsonSerializer)
        status = job.get_status(refresh=False)
    except NoSuchJobError:
        return "no job"
    except (RedisError, ConfigError) as exc:
        return f"queue unreachable ({type(exc).__name__})"
    if status == JobStatus.STARTED and job.worker_name:
        return str(job.worker_name)
    return str(status.value if status is not None else "?")
