"""Whether a store exists at a URL and its server answers, checked without creating anything.

Commands that only read must never create the file, directory, schema or table they were pointed
at (a typo in a path would otherwise leave an empty store behind and report "no golems"), and a
server that does not answer must fail fast with one line naming it, never with a driver's traceback
after minutes of retries.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from oneiros._errors import NoStore, StoreUnavailable
from oneiros.store._rows import EVENTS_TABLE
from oneiros.store._urls import PostgresURL, StoreURL

__all__ = ["DEFAULT_CONNECT_TIMEOUT", "check_reachable", "require_store"]

DEFAULT_CONNECT_TIMEOUT = 5.0
"""Seconds to wait for a store server before giving up (not from the source documents)."""


def _where(parts: PostgresURL) -> str:
    # Host, port and database only: the password never reaches a message.
    return f"PostgreSQL at {parts.host}:{parts.port}/{parts.dbname}"


def _pg_connect(url: str, parts: PostgresURL, timeout: float) -> Any:
    import psycopg  # noqa: PLC0415 - the optional extra, loaded only for PostgreSQL URLs

    try:
        return psycopg.connect(parts.conninfo, connect_timeout=max(1, round(timeout)), autocommit=True)
    except psycopg.Error as exc:
        # psycopg: 'connection failed: connection to server at "h", port 1 failed: Connection refused\n\tIs...'
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        reason = first.rpartition("failed: ")[2].strip() or first
        raise StoreUnavailable(url, _where(parts), reason) from None


def check_reachable(url: str, parts: PostgresURL, timeout: float = DEFAULT_CONNECT_TIMEOUT) -> None:
    """Raise :class:`StoreUnavailable` unless the PostgreSQL server of ``url`` accepts a connection."""
    _pg_connect(url, parts, timeout).close()


def require_store(where: StoreURL) -> None:
    """Raise :class:`NoStore` unless a store with its events table already exists where ``where`` says
    (a SQLite file or a PostgreSQL schema; memory is never there before it is opened)."""
    url = where.url
    if where.kind == "sqlite":
        path = Path(where.path)
        if not path.is_file():
            raise NoStore(url, f"no file {str(path)!r}")
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as connection:
                found = connection.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (EVENTS_TABLE,)
                ).fetchone()
        except sqlite3.Error as exc:
            raise NoStore(url, f"{str(path)!r} is not a readable SQLite store: {exc}") from None
        if found is None:
            raise NoStore(url, f"{str(path)!r} holds no oneiros log")
        return
    if (target := where.postgres) is not None:
        with _pg_connect(url, target, where.connect_timeout) as connection:
            found = connection.execute("SELECT to_regclass(%s)", (f'"{target.schema}"."{EVENTS_TABLE}"',)).fetchone()
        if found is None or found[0] is None:
            raise NoStore(url, f"no oneiros log in schema {target.schema!r} of {_where(target)}")
