"""``oneiros serve``: one Starlette application with the REST routes, the event stream, the MCP
endpoint and the OpenAPI document, over the same store and config as every other process."""

from __future__ import annotations

import asyncio
import ipaddress
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from typing import Any

from mcp.server.mcpserver import Context
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from oneiros._deps import Deps
from oneiros._errors import ConfigError, InputError, OneirosError, ProjectionBehind, Unauthenticated
from oneiros.config._load import OneirosConfig
from oneiros.server._auth import LOCAL, Principal, Tokens, environment_tokens
from oneiros.server._consistency import CONSISTENCY_HEADER, POSITION_HEADER, RETRY_AFTER_SECONDS
from oneiros.server._errors import error_body
from oneiros.server._events import LogTail, StreamFilter, stream
from oneiros.server._inspect import static_dir
from oneiros.server._logs import log_answer, queued_log, server_log
from oneiros.server._mcp import build_mcp
from oneiros.server._openapi import openapi
from oneiros.server._rest import PREFIX, json_response, principal_of, query_number, routes
from oneiros.server._service import Service
from oneiros.server._traced import TracedRequests
from oneiros.server._warm import warm_decoders
from oneiros.store._store import EventStore

__all__ = ["check_exposure", "create_app", "is_loopback"]

_GUARDED = (PREFIX, "/mcp")
_CSP = b"default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _version() -> str:
    try:
        return package_version("oneiros")
    except PackageNotFoundError:  # pragma: no cover - running from a plain checkout
        return "0"


class _TooLarge(Exception):
    pass


_SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    # The inspector loads only its own files and talks only to this server.
    (b"content-security-policy", _CSP),
]
_INTERNAL = {"error": {"type": "InternalError", "message": "internal server error", "status": 500, "attributes": {}}}


def _host_name(host: str) -> str:
    """The name in a Host header or an Origin's authority, without port or IPv6 brackets."""
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rpartition(":")[0] if host.count(":") == 1 else host


def _local_request_problem(method: str, headers: dict[str, str]) -> tuple[int, str] | None:
    """Why a request to a server without tokens (``--insecure-local``) is refused, if it is.

    Without tokens, loopback is the only guard, and a web page can reach loopback through the
    browser: by a form post (a "simple" request, sent without asking) or by a name of its own
    rebound to 127.0.0.1. So, as the MCP endpoint does: the Host must be a loopback name, an Origin
    must be a loopback page, and a body must be JSON, which a form cannot send."""
    host = headers.get("host", "")
    if not is_loopback(_host_name(host)):
        return 421, f"Host {host!r} is not a loopback name; a server without tokens answers loopback only"
    origin = headers.get("origin")
    if origin is not None and not is_loopback(_host_name(origin.partition("://")[2].rstrip("/"))):
        return 403, f"Origin {origin!r} is not a loopback page; a server without tokens answers loopback only"
    if method in ("POST", "PUT", "PATCH"):
        media = headers.get("content-type", "").partition(";")[0].strip().lower()
        if media != "application/json":
            return 415, f"a request body must be application/json, not {media or 'unnamed'!r}"
    return None


class _Guard:
    """Authenticates guarded paths, caps request bodies and sets the headers every answer carries,
    errors and all."""

    def __init__(self, app: ASGIApp, tokens: Tokens, max_body: int) -> None:
        self.app, self.tokens, self.max_body = app, tokens, max_body
        # Decided once: a server started with tokens never serves without them, even once every
        # one of them is revoked.
        self.open = not len(tokens)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def secured(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message["headers"] = [*message.get("headers", []), *_SECURITY_HEADERS]
            await send(message)

        try:
            await self._guarded(scope, receive, secured)
        except Exception:
            if started:
                raise
            # Starlette's own 500 is sent outside this middleware, without the headers above. The
            # traceback is formatted and written by the log's own thread (_logs), not this loop.
            server_log.exception("%s %r failed", scope.get("method"), scope.get("path"))
            await json_response(_INTERNAL, 500)(scope, receive, secured)

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope["path"]
        # Latin-1, as HTTP itself reads header bytes: any byte decodes, so none can fail the request.
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            length = int(headers.get("content-length") or 0)
        except ValueError:
            await self._fail(scope, receive, send, InputError("Content-Length is not a number"))
            return
        if length > self.max_body:
            await self._fail(scope, receive, send, self._too_large(), 413)
            return
        if path.startswith(_GUARDED):
            if path == "/mcp" and scope["method"] == "GET":
                # Stateless MCP sends nothing unasked, so a GET stream would stay open forever; the
                # streamable HTTP transport lets a server answer 405 instead.
                await self._fail(scope, receive, send, InputError("GET /mcp: this server sends no stream; POST"), 405)
                return
            if self.open:
                problem = _local_request_problem(scope["method"], headers)
                if problem is not None:
                    await self._fail(scope, receive, send, InputError(problem[1]), problem[0])
                    return
            try:
                who = LOCAL if self.open else self.tokens.authenticate(headers.get("authorization"))
            except Unauthenticated as exc:
                await self._fail(scope, receive, send, exc)
                return
            scope["oneiros.principal"] = who
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_body:
                raise _TooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await self._fail(scope, receive, send, self._too_large(), 413)

    def _too_large(self) -> InputError:
        """The 413's error, naming the setting that sets the limit: a client told only the number
        did not know what to raise."""
        return InputError(
            f"request body over {self.max_body} bytes, the limit server.max_body_bytes sets "
            "(ONEIROS_SERVER__MAX_BODY_BYTES)"
        )

    @staticmethod
    async def _fail(scope: Scope, receive: Receive, send: Send, exc: OneirosError, status: int | None = None) -> None:
        # Only GET /mcp is refused here with a 405: the endpoint takes POST.
        headers = {"allow": "POST"} if status == 405 else None
        await _answer(exc, scope["method"], scope["path"], status, headers)(scope, receive, send)


def check_exposure(config: OneirosConfig, tokens: Tokens, insecure_local: bool) -> None:
    """Refuse to serve without tokens, unless bound to loopback and told so explicitly."""
    if len(tokens):
        return
    host = config.server.host
    if not insecure_local:
        raise ConfigError(
            f"no tokens in {config.server.tokens_file!r}: add one with `oneiros token add`, "
            "or pass --insecure-local to serve without authentication on loopback"
        )
    if not is_loopback(host):
        raise ConfigError(f"--insecure-local serves without authentication on loopback only, not on {host!r}")


def _answer(
    exc: OneirosError, method: str, path: str, status: int | None = None, headers: Mapping[str, str] | None = None
) -> Response:
    """The error's answer in the one error shape, logged in one line."""
    code, body = error_body(exc, status)
    log_answer(method, path, code, body)
    response = json_response(body, code)
    response.headers.update(headers or {})
    if code == 401:
        response.headers["www-authenticate"] = "Bearer"
    if isinstance(exc, ProjectionBehind):
        response.headers["retry-after"] = str(RETRY_AFTER_SECONDS)
    return response


def _error_response(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, OneirosError)
    return _answer(exc, request.method, request.url.path)


def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return _answer(InputError(f"{exc.detail}"), request.method, request.url.path, exc.status_code, exc.headers)


def _mcp_principal(ctx: Context) -> Principal:
    request = ctx.request_context.request
    who = getattr(request, "scope", {}).get("oneiros.principal", None)
    if not isinstance(who, Principal):
        raise Unauthenticated("no principal on this MCP request")
    return who


def create_app(
    store: EventStore, config: OneirosConfig, *, insecure_local: bool = False, deps: Deps | None = None
) -> Starlette:
    """The ASGI application; the store stays the caller's to close."""
    settings = config.server
    tokens = Tokens(environment_tokens(os.environ), path=settings.tokens_file)
    check_exposure(config, tokens, insecure_local)
    warm_decoders()
    service = Service(store, config, deps=deps)
    tail = LogTail(store)
    mcp = build_mcp(service, _mcp_principal)
    mcp_app = mcp.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        max_request_body_size=settings.max_body_bytes,
        host=settings.host,
    )

    async def events(request: Request) -> Response:
        who = principal_of(request)
        who.require("read")
        golems = tuple(g for value in request.query_params.getlist("golem") for g in value.split(",") if g)
        for golem in golems:
            who.require("read", golem)
        chosen = StreamFilter(
            golems=golems,
            raw=request.query_params.get("raw", "").lower() in ("1", "true", "yes"),
            types=tuple(t for t in request.query_params.get("types", "").split(",") if t),
        )
        resumed = request.headers.get("last-event-id")
        name, last = ("Last-Event-ID", resumed) if resumed else ("after", request.query_params.get("after"))
        after = query_number(name, last, None)
        if after is None:
            after = await asyncio.to_thread(store.head)
        body = stream(store, tail, who, chosen, after=after, heartbeat=settings.sse_heartbeat_seconds)
        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(body, media_type="text/event-stream", headers=headers)

    document = openapi(_version())

    async def schema(_request: Request) -> Response:
        return json_response(document)

    async def health(_request: Request) -> Response:
        return json_response({"ok": True, "position": await asyncio.to_thread(store.head)})

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        with queued_log():
            await asyncio.to_thread(service.start)
            tail.start()
            try:
                async with mcp.session_manager.run():
                    yield
            finally:
                tail.close()
                await asyncio.to_thread(service.close)

    all_routes: list[BaseRoute] = [
        *routes(service),
        Route(PREFIX + "/events", events, methods=["GET"]),
        Route("/openapi.json", schema, methods=["GET"]),
        Route("/healthz", health, methods=["GET"]),
        *mcp_app.routes,
        # The web inspector (docs/inspector.md): static files, public; its API calls carry a token.
        Mount("/", app=StaticFiles(directory=static_dir(), html=True, check_dir=False), name="inspector"),
    ]
    middleware = [
        Middleware(_Guard, tokens=tokens, max_body=settings.max_body_bytes),
        Middleware(TracedRequests, prefixes=_GUARDED),
    ]
    if settings.cors_origins:
        # Outermost, so a preflight is answered before authentication asks for a token.
        middleware.insert(
            0,
            Middleware(
                CORSMiddleware,
                allow_origins=list(settings.cors_origins),
                allow_methods=["GET", "POST"],
                allow_headers=[
                    "Authorization",
                    "Content-Type",
                    "Idempotency-Key",
                    "Last-Event-ID",
                    "Mcp-Session-Id",
                    CONSISTENCY_HEADER,
                ],
                expose_headers=[POSITION_HEADER],
            ),
        )
    handlers: dict[Any, Any] = {OneirosError: _error_response, HTTPException: _http_error}
    app = Starlette(routes=all_routes, middleware=middleware, exception_handlers=handlers, lifespan=lifespan)
    app.state.service = service
    return app
