"""Idempotency keys: a request retried with the ``Idempotency-Key`` it first came with appends
nothing new and answers as the first did (docs/server.md)."""

from __future__ import annotations

from oneiros.server._auth import Scope

__all__ = ["appends"]


def appends(method: str, scope: Scope) -> bool:
    """Whether a route appends to the log, and so takes an idempotency key: every POST but those
    of the read scope (recall)."""
    return method == "POST" and scope != "read"
