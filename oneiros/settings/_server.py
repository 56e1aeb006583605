"""The settings of ``oneiros serve`` and ``oneiros mcp``: the ``[server]`` section of the config."""

from __future__ import annotations

from typing import Annotated

import msgspec

__all__ = ["ServerSettings"]

_Port = Annotated[int, msgspec.Meta(ge=0, le=65535)]
_Positive = Annotated[int, msgspec.Meta(ge=1)]


class ServerSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Where the server listens, who may call it, and how much it accepts."""

    host: str = "127.0.0.1"
    """Interface to bind. Anything but loopback needs tokens (see ``tokens_file``)."""
    port: _Port = 8420
    tokens_file: str = ".oneiros/tokens.toml"
    """The bearer tokens, stored as SHA-256 hashes with their scopes and golems; written by
    ``oneiros token add`` (see docs/server.md)."""
    projections: str = ""
    """Projection database URL ("" for beside the store, as every other command)."""
    queue: str = ""
    """Redis URL: cycles started through the API go to ``oneiros worker`` processes. "" runs them
    in the server process, each on a thread of its own; the request returns once the cycle started."""
    max_cycles: _Positive = 2
    """Cycles the server runs itself (no ``queue``) at once; one more is refused with 503. Two, as
    Bumblebee allows a golem at most two dreams a day: more at once is a queue's work."""
    shutdown_grace_seconds: Annotated[float, msgspec.Meta(ge=0.0)] = 30.0
    """On shutdown, how long a cycle the server runs may finish before it is recorded as
    interrupted: the daemon's ``daemon.shutdown_grace_seconds``."""
    cycle_wait_seconds: Annotated[float, msgspec.Meta(gt=0.0)] = 300.0
    """How long a request that asked to wait for its cycle (``"wait": true``, MCP's
    ``run_dreaming_cycle``) waits before it answers with the cycle still running: the RQ
    executor's own wait."""
    generator: str | None = None
    """The generator of cycles the server runs itself (no ``queue``): ``offline``, ``openai`` or
    ``module:factory``, as ``oneiros worker --generator`` takes; unset, the cycle's own
    (``cycle.generator.kind``), as ``oneiros dream`` uses it."""
    cors_origins: tuple[str, ...] = ()
    """Origins allowed to call the API from a browser. Empty: no CORS headers at all."""
    max_body_bytes: _Positive = 1_048_576
    """Largest request body accepted (413 beyond it)."""
    page_size: _Positive = 50
    """Items per page when a list request names no ``limit``."""
    max_page_size: _Positive = 500
    """Largest ``limit`` a list request may ask for."""
    consistency_seconds: Annotated[float, msgspec.Meta(gt=0.0)] = 5.0
    """How long a read that names a log position (``?min_position=``, ``Oneiros-Consistency``) waits
    for the projections it reads to reach it before answering 503 ``ProjectionBehind``."""
    follow: bool = True
    """Keep the projections up with the log from inside the server (off when ``oneiros follow``
    runs elsewhere)."""
    keep_alive_seconds: Annotated[float, msgspec.Meta(gt=0.0)] = 75.0
    """How long an idle HTTP connection stays open. Longer than the clients' and load balancers' own
    idle timeouts (60 s is common), so a client never reuses a connection the server is closing."""
    sse_heartbeat_seconds: Annotated[float, msgspec.Meta(gt=0.0)] = 15.0
    """A comment line on an idle event stream this often, so proxies keep it open."""
