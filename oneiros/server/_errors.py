"""One JSON error shape for every failure: the ``OneirosError`` class name, its message, the HTTP
status and the error's typed attributes (docs/errors.md)."""

from __future__ import annotations

from typing import Any

from oneiros._errors import (
    AccessError,
    ConfigError,
    CycleNotFound,
    EntryNotFound,
    EventError,
    Forbidden,
    GenerationError,
    GolemExists,
    GolemNotFound,
    IdempotencyKeyReused,
    IllegalCommand,
    IllegalReview,
    InputError,
    MemoryVersionNotFound,
    OneirosError,
    ProjectionBehind,
    ProjectionConflict,
    StoreError,
    StreamConflict,
    Unauthenticated,
    UnknownProjection,
    WorkerError,
)

__all__ = ["error_body", "status_of"]

# Most specific first: the first class an error is an instance of gives its status.
_STATUS: tuple[tuple[type[OneirosError], int], ...] = (
    (Unauthenticated, 401),
    (Forbidden, 403),
    (AccessError, 403),
    (GolemNotFound, 404),
    (CycleNotFound, 404),
    (MemoryVersionNotFound, 404),
    (EntryNotFound, 404),
    (UnknownProjection, 404),
    (GolemExists, 409),
    (IllegalCommand, 409),
    (IllegalReview, 409),
    (StreamConflict, 409),
    (ProjectionConflict, 409),
    (ProjectionBehind, 503),
    (IdempotencyKeyReused, 422),
    (GenerationError, 502),
    (WorkerError, 503),
    (StoreError, 503),
    (InputError, 400),
    (ConfigError, 400),
    (EventError, 400),
)


def status_of(exc: OneirosError) -> int:
    return next((status for cls, status in _STATUS if isinstance(exc, cls)), 400)


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value)


def error_body(exc: OneirosError, status: int | None = None) -> tuple[int, dict[str, Any]]:
    """``(status, {"error": {"type", "message", "status", "attributes"}})`` for ``exc``."""
    code = status if status is not None else status_of(exc)
    attributes = {k: _plain(v) for k, v in vars(exc).items() if not k.startswith("_")}
    return code, {"error": {"type": type(exc).__name__, "message": str(exc), "status": code, "attributes": attributes}}
