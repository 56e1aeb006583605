"""Idempotency keys: a request retried with the ``Idempotency-Key`` it first came with appends
nothing new and answers as the first did (docs/server.md)."""

from __future__ import annotations

__all__ = ["appends"]


def appends(method: str) -> bool:
    """Whether a route may append to the log, and so takes an idempotency key: every POST (a
    recall too, which a token that may write records)."""
    return method == "POST"
