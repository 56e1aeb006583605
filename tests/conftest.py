"""Store fixtures for every backend. Server-backed ones skip where no server is reachable, except
under CI (``CI=true``), where a missing server fails the run."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from oneiros.store._store import EventStore, open_store

if TYPE_CHECKING:
    from tests.chat_server import ChatServer

PG_HOST, PG_PORT = "127.0.0.1", 5432
REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def require_server(name: str, host: str, port: int) -> None:
    if _reachable(host, port):
        return
    message = f"{name} is not reachable at {host}:{port}"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message}; CI must have it")
    pytest.skip(message)


def postgres_url(schema: str) -> str:
    return f"postgresql://postgres@{PG_HOST}:{PG_PORT}/test?schema={schema}"


@pytest.fixture
def pg_schema() -> Iterator[str]:
    """A fresh PostgreSQL schema of this test's own, dropped afterwards."""
    require_server("PostgreSQL", PG_HOST, PG_PORT)
    import psycopg

    schema = f"t_{uuid.uuid4().hex[:12]}"
    yield schema
    with psycopg.connect(f"host={PG_HOST} port={PG_PORT} dbname=test user=postgres", autocommit=True) as conn:
        # With the projections' schema beside it, which reading commands create by default.
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}_proj" CASCADE')


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[EventStore]:
    """One store of each backend: the contract suites run against all three."""
    if request.param == "memory":
        url = "memory://"
    elif request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('store')}/events.db"
    else:
        url = postgres_url(request.getfixturevalue("pg_schema"))
    s = open_store(url)
    yield s
    s.close()


@pytest.fixture(autouse=True)
def _spans_in_tmp(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """Spans of this test (its own process and the commands it runs) go to its own folder, not ./.oneiros."""
    from oneiros.settings._runtime import TracingSettings
    from oneiros.telemetry._spans import configure_tracing

    path = f"{tmp_path}/own-spans.jsonl"
    monkeypatch.setenv("ONEIROS_SPANS", path)
    configure_tracing(TracingSettings(spans_path=path))


@pytest.fixture
def sqlite_url(tmp_path: object) -> str:
    return f"sqlite:///{tmp_path}/events.db"


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    """A local chat-completions server of this test's own (tests/chat_server.py)."""
    from tests.chat_server import ChatServer

    server = ChatServer()
    yield server
    server.close()
