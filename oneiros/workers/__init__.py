"""RQ phase workers: each phase of a cycle one job, the executor that dispatches them, the worker classes."""

from oneiros.workers._dispatch import RqExecutor
from oneiros.workers._rq import JsonSerializer

__all__ = [
    "JsonSerializer",
    "RqExecutor",
]
