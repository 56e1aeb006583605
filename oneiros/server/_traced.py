"""Tracing in the server process, configured as every other process configures it (the one
``[tracing]`` config, ``ONEIROS_SPANS``, the ``OTEL_*`` variables), and a span per API request.

With tracing on, a cycle the server runs is one trace under its root ``cycle`` span, exactly as
``oneiros dream`` makes it, and a cycle it hands to the queue gets its root span here, where it
starts. A request is a span of its own (``HTTP POST``, its path and status code), carrying the cycle id
where the request names or starts one (``oneiros.request.cycle_id``: not ``oneiros.cycle_id``,
which would join the request's trace to the cycle's in ``oneiros trace`` and the trace route).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from oneiros.config._load import OneirosConfig
from oneiros.telemetry._spans import configure_tracing, current_span, fail, tracing_on

__all__ = ["TracedRequests", "configure_server_tracing"]


def configure_server_tracing(config: OneirosConfig) -> None:
    """Send the server's spans where ``config.tracing`` (and the ``OTEL_*`` variables) say: what
    ``oneiros dream``, ``run`` and ``worker`` do at start."""
    configure_tracing(config.tracing)


class TracedRequests:
    """A span around each request under ``prefixes`` when this process traces."""

    def __init__(self, app: ASGIApp, prefixes: tuple[str, ...]) -> None:
        self.app, self.prefixes = app, prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if scope["type"] != "http" or not tracing_on() or not path.startswith(self.prefixes):
            await self.app(scope, receive, send)
            return
        method: str = scope["method"]
        attributes = {"http.request.method": method, "url.path": path}
        parts = path.split("/")
        if "cycles" in parts and parts.index("cycles") + 1 < len(parts):
            attributes["oneiros.request.cycle_id"] = parts[parts.index("cycles") + 1]
        with current_span(f"HTTP {method}", attributes) as span:

            async def sent(message: Message) -> None:
                if message["type"] == "http.response.start":
                    status = int(message["status"])
                    span.set_attribute("http.response.status_code", status)
                    if status >= 500:
                        fail(span, f"answered {status}")
                await send(message)

            await self.app(scope, receive, sent)
