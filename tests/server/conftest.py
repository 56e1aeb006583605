"""Fixtures of the server tests: ``oneiros serve`` as a real process on a free port, on SQLite and
on PostgreSQL, with tokens of every scope; the redis-server fixture of the worker tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

from oneiros.server._auth import add_token
from tests.conftest import PG_HOST, PG_PORT, postgres_url
from tests.workers.conftest import _free_port, redis_url  # noqa: F401 - the fixture, shared

ROOT = Path(__file__).resolve().parents[2]


class Server:
    """A running ``oneiros serve`` and the tokens it knows."""

    def __init__(self, url: str, store: str, tokens: dict[str, str], proc: subprocess.Popen[bytes], log: Path) -> None:
        self.url, self.store, self.tokens, self.proc, self.log = url, store, tokens, proc, log

    def client(self, token: str | None = "admin") -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[token]}"} if token else {}
        return httpx.Client(base_url=self.url + "/api/v1", headers=headers, timeout=60)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def make_tokens(path: Path) -> dict[str, str]:
    """One token per scope, and writers bound to g1 and to g2."""
    return {
        "read": add_token(path, "reader", ("read",)),
        "write": add_token(path, "writer", ("write",)),
        "admin": add_token(path, "admin", ("admin",)),
        "g1": add_token(path, "g1-agent", ("write",), ("g1",)),
        "g2": add_token(path, "g2-agent", ("write",), ("g2",)),
    }


def serve_command(store: str, port: int, *extra: str) -> list[str]:
    return [sys.executable, "-m", "oneiros", "serve", "--store", store, "--port", str(port), *extra]


def start_server(
    store: str,
    work: Path,
    *extra: str,
    env: dict[str, str] | None = None,
    tokens: bool = True,
    launcher: tuple[str, ...] = (),
) -> Server:
    """``oneiros serve`` on ``store`` in ``work``, answering; ``launcher`` runs it (as
    ``opentelemetry-instrument`` runs an application)."""
    work.mkdir(parents=True, exist_ok=True)
    made = make_tokens(work / "tokens.toml") if tokens else {}
    port = _free_port()
    log = work / "serve.log"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
    environ |= {
        "ONEIROS_SERVER__TOKENS_FILE": str(work / "tokens.toml"),
        "ONEIROS_SPANS": str(work / "spans.jsonl"),
        # A keep-alive comes only once a stream has caught up: tests read to the first one.
        "ONEIROS_SERVER__SSE_HEARTBEAT_SECONDS": "0.5",
    }
    environ |= env or {}
    with log.open("wb") as out:
        command = [*launcher, *serve_command(store, port, *extra)]
        proc = subprocess.Popen(command, cwd=work, stdout=out, stderr=out, env=environ)
    server = Server(f"http://127.0.0.1:{port}", store, made, proc, log)
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            pytest.fail(f"oneiros serve exited: {log.read_text()}")
        try:
            if httpx.get(server.url + "/healthz", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            pytest.fail(f"oneiros serve did not answer: {log.read_text()}")
        time.sleep(0.1)


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh store URL of each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/events.db"
        return
    schema = request.getfixturevalue("pg_schema")
    yield postgres_url(schema)
    drop_schema(f"{schema}_proj")  # the projections' schema beside the store's


def drop_schema(schema: str) -> None:
    import psycopg

    with psycopg.connect(f"host={PG_HOST} port={PG_PORT} dbname=test user=postgres", autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def server(store_url: str, tmp_path: Path) -> Iterator[Server]:
    """``oneiros serve`` on a free port over a fresh store, stopped afterwards."""
    running = start_server(store_url, tmp_path / "serve")
    yield running
    running.stop()


def read_events(
    server: Server, headers: Mapping[str, str], *, after: int | None = None, raw: bool = False, **params: Any
) -> list[tuple[str, dict[str, Any]]]:
    """The (event, data) messages of /api/v1/events from ``after`` until the stream has caught up."""
    query: dict[str, Any] = dict(params)
    if after is not None:
        query["after"] = after
    if raw:
        query["raw"] = 1
    out: list[tuple[str, dict[str, Any]]] = []
    name = ""
    with httpx.stream("GET", server.url + "/api/v1/events", params=query, headers=headers, timeout=60) as events:
        assert 200 == events.status_code
        for line in events.iter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                out.append((name, json.loads(line[6:])))
            elif line.startswith(": keep-alive"):
                break
    return out
