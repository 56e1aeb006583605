"""``oneiros serve`` (REST, events, MCP over HTTP), ``oneiros mcp`` (MCP over stdio) and
``oneiros token`` (bearer tokens for the server)."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import msgspec
import typer
from rich.markup import escape

from oneiros._errors import AddressUnavailable, ConfigError, InputError, OneirosError, masked_url
from oneiros.cli._common import (
    JsonOpt,
    StoreOpt,
    application,
    catch_up_progress,
    console,
    emit_json,
    err_console,
    opened,
    print_error,
)
from oneiros.cli._config import ConfigOpt, PresetOpt
from oneiros.cli._config import load as _load
from oneiros.config._load import OneirosConfig

__all__ = ["register"]

token_app = typer.Typer(
    help="Bearer tokens of `oneiros serve`, kept hashed in server.tokens_file.", no_args_is_help=True
)

TokensOpt = Annotated[
    Path | None, typer.Option("--tokens", help="Tokens file (default: the config's server.tokens_file).")
]


def _require_server_extra(command: str) -> None:
    """One line and exit 2, not an ImportError's traceback, where the server extra is missing."""
    from importlib.util import find_spec

    # Found, not imported: importing MCP's SDK and its web stack takes most of a second, which
    # `serve` spends only once it holds its port.
    def absent(name: str) -> bool:
        try:
            return find_spec(name) is None
        except ImportError:  # a finder that refuses it outright
            return True

    missing = [name for name in ("starlette", "uvicorn", "mcp") if absent(name)]
    if missing:
        err_console.print(
            f"[red]error:[/red] `oneiros {command}` needs the server extra ({', '.join(missing)} missing): "
            "pip install 'oneiros\\[server]'",  # escaped: Rich would take [server] for markup
            soft_wrap=True,
        )
        raise typer.Exit(2)


def bind_address(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` (not yet listening), as uvicorn would bind it."""
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise AddressUnavailable(host, port, exc.strerror or str(exc)) from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise AddressUnavailable(host, port, (exc.strerror or str(exc)).lower()) from None
    sock.set_inheritable(True)
    return sock


_UVICORN_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


def _uvicorn_level(value: str) -> str:
    # uvicorn looks the name up in a dict only when it starts: a KeyError traceback, after the catch-up.
    if value.lower() not in _UVICORN_LEVELS:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(_UVICORN_LEVELS)}")
    return value.lower()


def _with(effective: OneirosConfig, **changes: object) -> OneirosConfig:
    chosen = {k: v for k, v in changes.items() if v is not None}
    return msgspec.structs.replace(effective, server=msgspec.structs.replace(effective.server, **chosen))


def serve(
    *,
    store: StoreOpt = None,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    host: Annotated[str | None, typer.Option("--host", help="Interface (default server.host, 127.0.0.1).")] = None,
    port: Annotated[
        int | None,
        typer.Option("--port", min=0, max=65535, help="Port (default server.port, 8420; 0: any free port)."),
    ] = None,
    tokens: TokensOpt = None,
    queue: Annotated[
        str | None,
        typer.Option(
            "--queue", help="Redis URL: cycles started through the API go to the workers (default server.queue, queue)."
        ),
    ] = None,
    insecure_local: Annotated[
        bool, typer.Option("--insecure-local", help="Serve without tokens; only on a loopback address.")
    ] = False,
    log_level: Annotated[
        str,
        typer.Option("--log-level", callback=_uvicorn_level, help="uvicorn's log level: " + ", ".join(_UVICORN_LEVELS)),
    ] = "warning",
) -> None:
    """Serve the REST API (/api/v1), live events (/api/v1/events), MCP (/mcp) and /openapi.json."""
    _require_server_extra("serve")
    loaded = _load(config, preset)
    # The one queue setting (--queue, ONEIROS_QUEUE, `queue`) reaches the server too, unless
    # server.queue names another.
    queue = queue or loaded.server.queue or loaded.queue or None
    effective = _with(loaded, host=host, port=port, tokens_file=str(tokens) if tokens else None, queue=queue)
    s = effective.server
    try:  # the server reads it at start-up, after the catch-up, and would fail there with a traceback
        _check_tokens_file(Path(s.tokens_file))
        if s.queue:  # a URL Redis cannot use would otherwise fail each cycle request with a 400
            from oneiros.cli._workers import redis_at

            redis_at(s.queue)
    except ConfigError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    # Bound first, so a port another process holds is said at once, before a store is opened or a
    # minute of catching up; it listens only once uvicorn serves (connections are refused meanwhile
    # rather than left waiting).
    try:
        sock = bind_address(s.host, s.port)
    except AddressUnavailable as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    with sock, opened(store or effective.store or None, create=True) as event_store:
        import logging

        import uvicorn  # the web stack, once the port is held

        from oneiros.server._app import create_app
        from oneiros.server._traced import configure_server_tracing

        # The server's own lines (a refused request, a failure) follow the level uvicorn's do, and so
        # do the MCP SDK's (its session manager says "started" at INFO on every start).
        for logger in ("oneiros.server", "mcp"):
            logging.getLogger(logger).setLevel(5 if log_level == "trace" else log_level.upper())

        try:
            configure_server_tracing(effective)
            app = create_app(event_store, effective, insecure_local=insecure_local)
        except OneirosError as exc:
            print_error(exc)
            raise typer.Exit(2) from None
        # The first start after a large import settles the sweep and every projection, which at a
        # million episodes takes most of a minute: done here, with a bar, rather than in the
        # server's start-up, where it left the port closed with nothing said.
        with catch_up_progress(event_store) as on_progress:
            app.state.service.settle(on_progress)
        host = f"[{s.host}]" if ":" in s.host else s.host  # an IPv6 address, as a URL writes it
        bound = sock.getsockname()[1]  # port 0 asked for any free one: say which
        err_console.print(
            escape(f"serving {masked_url(event_store.url)} on http://{host}:{bound} (REST /api/v1, MCP /mcp)")
        )
        served = uvicorn.Config(
            app, host=s.host, port=s.port, log_level=log_level.lower(), timeout_keep_alive=int(s.keep_alive_seconds)
        )
        uvicorn.Server(served).run(sockets=[sock])


def mcp(
    store: StoreOpt = None,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    golem: Annotated[
        list[str] | None, typer.Option("--golem", help="Only these golems (repeatable; default: every golem).")
    ] = None,
    read_only: Annotated[bool, typer.Option("--read-only", help="Refuse the tools that write.")] = False,
) -> None:
    """Serve the MCP tools over stdio, for a local agent that launches this command itself."""
    _require_server_extra("mcp")
    from oneiros.server._auth import Principal
    from oneiros.server._mcp import build_mcp
    from oneiros.server._service import Service
    from oneiros.server._traced import configure_server_tracing
    from oneiros.server._warm import warm_decoders

    effective = _load(config, preset)
    _require_golems(store or effective.store or None, effective, golem or ())
    who = Principal(name="stdio", scopes=("read",) if read_only else ("admin",), golems=tuple(golem or ()))
    warm_decoders()  # before the projection follower's thread starts
    # A read-only agent on a URL with no store gets NoStore rather than an empty store made for it.
    with opened(store or effective.store or None, create=not read_only) as event_store:
        configure_server_tracing(effective)
        service = Service(event_store, effective, reconcile=not read_only)
        service.start()
        try:
            build_mcp(service, lambda _ctx: who).run("stdio")
        finally:
            service.close()


def _require_golems(url: str | None, effective: OneirosConfig, golems: Sequence[str]) -> None:
    """One line and exit 2 (naming the nearest known golem) unless each of ``golems`` exists: a
    typo would bind a token or an agent to a golem that never answers."""
    if golems:
        with application(url, config=effective) as app:
            for golem in golems:
                app.require_golem(golem)


def _check_tokens_file(path: Path) -> None:
    """A ConfigError unless ``path`` is missing (no tokens yet) or a UTF-8 TOML file: the token
    store reads it as one and would fail on a directory or binary file with a traceback."""
    from oneiros.settings._files import read_toml

    if path.exists() or path.is_symlink():
        read_toml(path, lambda expected: ConfigError(f"tokens file {str(path)!r}: expected {expected}"))


@token_app.command("add")
def token_add(
    *,
    name: Annotated[str, typer.Argument(help="A name for the token (shown in logs and review records).")],
    scope: Annotated[list[str], typer.Option("--scope", help="read, write or admin (repeatable).")],
    golem: Annotated[
        list[str] | None, typer.Option("--golem", help="Bind to this golem, which must exist (repeatable).")
    ] = None,
    tokens: TokensOpt = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    as_json: JsonOpt = False,
    expires: Annotated[
        str | None,
        typer.Option("--expires", help="Stop working after a span (90m, 12h, 30d, 2w) or at an ISO date (UTC)."),
    ] = None,
) -> None:
    """Make a token, store its hash, and print the token once."""
    from datetime import UTC, datetime

    from oneiros.fsm._service import Golems
    from oneiros.server._auth import SCOPES, add_token, expiry

    effective = _load(config, preset)
    path = tokens or Path(effective.server.tokens_file)
    try:
        bad = [s for s in scope if s not in SCOPES]
        if bad:
            raise InputError(f"scope {bad[0]!r} must be one of {', '.join(SCOPES)}")
        for bound in golem or ():
            Golems.check_id(bound)
        _check_tokens_file(path)
    except OneirosError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    _require_golems(store or effective.store or None, effective, golem or ())
    try:
        until = expiry(expires, datetime.now(UTC)) if expires is not None else None
        token = add_token(path, name, tuple(scope), tuple(golem or ()), until)  # type: ignore[arg-type]
    except OneirosError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    if as_json:
        emit_json({"name": name, "token": token, "file": str(path)})
        return
    console.print(f"token {name!r} stored (hashed) in {path}; it is shown only now:", markup=False)
    console.print(token, markup=False)


@token_app.command("list")
def token_list(tokens: TokensOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """The stored tokens' names, scopes, golems and expiry (never the tokens: only their hashes are kept)."""
    from datetime import UTC

    from oneiros.server._auth import load_tokens

    path = tokens or Path(_load(config, None).server.tokens_file)
    try:
        _check_tokens_file(path)
        records = load_tokens(path)
    except OneirosError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    rows = [
        {
            "name": r.name,
            "scopes": list(r.scopes),
            "golems": list(r.golems),
            "expires": None if r.expires is None else f"{r.expires.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}",
        }
        for r in records
    ]
    if as_json:
        emit_json(rows)
        return
    for r, row in zip(records, rows, strict=True):
        until = f" · expires {row['expires']}" if row["expires"] else ""
        console.print(f"{r.name}: {', '.join(r.scopes)} · golems: {', '.join(r.golems) or 'all'}{until}", markup=False)


@token_app.command("revoke")
def token_revoke(
    name: Annotated[str, typer.Argument(help="The token's name.")], tokens: TokensOpt = None, config: ConfigOpt = None
) -> None:
    """Remove a token: a running server refuses it within a second, without a restart."""
    from oneiros.server._auth import revoke_token

    path = tokens or Path(_load(config, None).server.tokens_file)
    try:
        _check_tokens_file(path)
        revoke_token(path, name)
    except OneirosError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    console.print(f"token {name!r} removed from {path}", markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("mcp")(mcp)
    app.add_typer(token_app, name="token")
