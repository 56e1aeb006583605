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


# What `scripts/test --quick` leaves out (marked slow here rather than in each file): the modules
# and tests that took longest in a serial run on a 2-core machine, mostly real servers, workers and
# chaos kills in processes of their own, and doc blocks run in a shell. `scripts/test --rest` runs
# them (CI runs --quick, then --rest). tests/test_suite_layout.py checks that each still names a test.
SLOW = (
    "tests/workers/test_processes.py",
    "tests/workers/test_liveness.py",
    "tests/workers/test_deployment.py",
    "tests/test_doc_blocks.py",
    "tests/test_docs.py",
    "tests/test_examples.py",
    "tests/test_chaos_writers.py",
    "tests/test_projections_crash.py",
    "tests/test_follow_stop.py",
    "tests/test_trust_cli.py",
    "tests/server/test_hostile_requests.py",
    "tests/server/test_mcp.py",
    "tests/server/test_inspect_routes.py",
    "tests/server/test_trust_routes.py",
    "tests/server/test_auth.py",
    "tests/server/test_openapi_client.py",
    "tests/server/test_events.py",
    "tests/server/test_one_shape.py",
    "tests/server/test_background_cycles.py",
    "tests/server/test_serve_start.py",
    "tests/server/test_episode_bounds_rest.py",
    "tests/server/test_insight_routes.py",
    "tests/server/test_cycle_budget.py",
    "tests/inspector/test_golem_live.py",
    "tests/test_ab.py::test_the_shipped_timeline_gives_the_same_numbers_twice",
    "tests/test_ab.py::test_two_arms_with_the_same_settings_give_the_same_numbers",
    "tests/test_ab.py::test_two_configurations_compare_their_sweeps",
    "tests/test_cli.py::test_an_import_cut_short_is_finished_by_running_it_again",
    "tests/test_budget_tiers.py::test_a_cap_set_in_a_file_the_environment_or_a_flag_wins_at_every_tier_and_preset",
)


def pytest_configure(config: pytest.Config) -> None:
    """The command line's rich consoles are built when ``oneiros.cli._common`` is first imported, and
    one built while ``COLUMNS`` is set keeps that width for good, whatever ``COLUMNS`` a test's
    CliRunner call sets later. A pytest-xdist worker starts with ``COLUMNS=80`` (a serial run has none),
    so it is dropped, and the consoles are built now, before any test sets it: each reads ``COLUMNS``
    at every print."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        os.environ.pop("COLUMNS", None)
    import oneiros.cli._common  # noqa: F401 - imported for its consoles


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.split("[", 1)[0].startswith(SLOW):
            item.add_marker(pytest.mark.slow)


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
