"""Commands that only read leave no trace, bad input writes nothing, and unreachable servers fail in
one line: each driven as a user would, through the ``oneiros`` command in a fresh process."""

from __future__ import annotations

import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import postgres_url
from tests.test_cli import run

# Every command that reads the log and writes nothing, with the arguments it needs.
READERS: list[tuple[str, ...]] = [
    ("status",),
    ("events",),
    ("replay",),
    ("replay", "--verify"),
    ("journal",),
    ("staging",),
    ("report", "--golem", "g"),
    ("budget", "--golem", "g"),
    ("pairs", "--golem", "g"),
    ("should-dream", "--golem", "g"),
    ("memory", "--golem", "g"),
    ("health",),
    ("lineage", "some-entry"),
    ("reevaluate", "--golem", "g"),
    ("recall", "eth", "--golem", "g"),
    ("recall", "eth", "--golem", "g", "--block"),
    ("mcp", "--read-only"),
]


def _tree(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


@pytest.mark.parametrize("args", READERS, ids=" ".join)
def test_a_reader_on_a_missing_store_says_so_and_creates_nothing(tmp_path: Path, args: tuple[str, ...]) -> None:
    """In an empty folder, a command that only reads exits 2 naming the missing store, and leaves the
    folder empty: no .oneiros directory, no database file."""
    result = run(*args, cwd=tmp_path)
    assert 2 == result.returncode, result.stderr
    assert "error: no store at sqlite:///.oneiros/events.db: no file '.oneiros/events.db'\n" == result.stderr
    assert [] == _tree(tmp_path)


def test_a_typo_in_a_path_creates_no_directory(tmp_path: Path) -> None:
    """A reader pointed at a path under a directory that does not exist creates neither."""
    result = run("status", store=f"sqlite:///{tmp_path}/typo/dir/events.db")
    assert 2 == result.returncode
    assert f"error: no store at sqlite:///{tmp_path}/typo/dir/events.db: no file" in result.stderr
    assert [] == _tree(tmp_path)


def test_a_reader_on_an_empty_postgres_schema_creates_no_schema_or_table(pg_schema: str) -> None:
    """Pointed at a schema that holds no log, a reader says so and creates neither schema nor table."""
    import psycopg

    for args in (("status",), ("reevaluate", "--golem", "g")):
        result = run(*args, store=postgres_url(pg_schema))
        assert 2 == result.returncode
        assert f"no oneiros log in schema '{pg_schema}' of PostgreSQL at 127.0.0.1:5432/test" in result.stderr
    with psycopg.connect("host=127.0.0.1 dbname=test user=postgres") as conn:
        found = conn.execute("SELECT count(*) FROM information_schema.schemata WHERE schema_name = %s", (pg_schema,))
        assert (0,) == found.fetchone()


def _events(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        (count,) = conn.execute("SELECT count(*) FROM oneiros_events").fetchone()
    return int(count)


def test_a_bad_episode_file_for_a_new_golem_writes_nothing(tmp_path: Path) -> None:
    """`dream --episodes bad.jsonl` checks the whole file first: no store is created for a new one,
    and an existing store gains no event (not even GolemCreated)."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"tick": 1, "summary": "fine"}\n{"tick": 2, "summary": "bad", "significance": 7}\n')
    url = f"sqlite:///{tmp_path}/store/events.db"
    result = run("dream", "--golem", "new", "--episodes", str(bad), store=url)
    assert 2 == result.returncode
    assert f"error: cannot read episodes from {bad}:2: Expected `float` <= 1.0 - at `$.significance`\n" == (
        result.stderr
    )
    assert not (tmp_path / "store").exists()

    assert 0 == run("dream", "--json", "--sample", "--golem", "old", store=url).returncode
    before = _events(tmp_path / "store" / "events.db")
    assert 2 == run("dream", "--golem", "new", "--episodes", str(bad), store=url).returncode
    assert before == _events(tmp_path / "store" / "events.db")


def test_a_new_golem_without_episodes_is_refused(tmp_path: Path) -> None:
    """Sample episodes go into a golem only when asked for: a new golem with none gets a one-line refusal."""
    result = run("dream", cwd=tmp_path)
    assert 2 == result.returncode
    assert result.stderr.startswith("error: golem 'golem' does not exist yet and has no episodes to dream about")


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A local port that accepts connections and never says a word, as a hung server would."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    listener.close()


def test_an_unanswering_postgres_fails_in_one_line_within_its_timeout(silent_server: int) -> None:
    """A PostgreSQL server that never answers gives one line naming host, port and database (never the
    password) within the URL's connect_timeout, exit code 2."""
    url = f"postgresql://postgres:s3cret@127.0.0.1:{silent_server}/prod?connect_timeout=2"
    started = time.monotonic()
    result = run("status", store=url)
    elapsed = time.monotonic() - started
    assert 2 == result.returncode
    assert result.stderr.startswith(f"error: cannot reach PostgreSQL at 127.0.0.1:{silent_server}/prod: ")
    assert "s3cret" not in result.stderr + result.stdout
    assert "Traceback" not in result.stderr
    assert elapsed < 15


def test_a_refused_postgres_connection_is_one_line(tmp_path: Path) -> None:
    """Nothing listening: the error says so at once, for writers too."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = run("dream", "--sample", store=f"postgresql://postgres@127.0.0.1:{port}/test")
    assert 2 == result.returncode
    assert f"error: cannot reach PostgreSQL at 127.0.0.1:{port}/test: Connection refused\n" == result.stderr


@pytest.mark.parametrize("command", [("journal",), ("follow",)])
def test_a_refused_postgres_projection_database_is_one_line(tmp_path: Path, command: tuple[str, ...]) -> None:
    """A --projections URL whose PostgreSQL refuses connections is one line naming host, port and
    database, exit 2, at once; it was eventsourcing's OperationalError traceback after the pool's
    5 s wait."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert 0 == run("dream", "--sample", "--json", cwd=tmp_path).returncode
    projections = f"postgresql://postgres:s3cret@127.0.0.1:{port}/test?schema=p"
    result = run(*command, "--projections", projections, cwd=tmp_path)
    assert (2, f"error: cannot reach PostgreSQL at 127.0.0.1:{port}/test: Connection refused\n") == (
        result.returncode,
        result.stderr,
    )
