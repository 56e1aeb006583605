"""Bad input gets a typed error that names the problem, and the log is left as it was."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from oneiros import (
    CorruptEvent,
    EpisodeFileError,
    Golems,
    InputError,
    InvalidEvent,
    InvalidStoreURL,
    UnknownEventType,
    load_episodes,
    open_store,
    replay,
)
from oneiros.events._types import Episode


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "events.db",
            "invalid store URL 'events.db': expected scheme://..., one of memory://, sqlite:///PATH, postgresql://...",
        ),
        (
            "mysql://localhost/x",
            "invalid store URL 'mysql://localhost/x': unknown scheme 'mysql'; expected memory, sqlite or postgresql",
        ),
        (
            "sqlite://",
            "invalid store URL 'sqlite://': expected sqlite:///relative/path.db or sqlite:////absolute/path.db",
        ),
        (
            "postgresql://localhost",
            "invalid store URL 'postgresql://localhost': no database name after the host, as in postgresql://host/dbname",
        ),
        ("postgresql://h:port/db", "invalid store URL 'postgresql://h:port/db': the port is not a number"),
        (
            "postgresql://h/db?schema=a;b",
            "invalid store URL 'postgresql://h/db?schema=a;b': schema 'a;b' must be letters, digits and underscores",
        ),
    ],
)
def test_invalid_store_urls(url: str, message: str) -> None:
    """Each malformed URL names itself and what was expected."""
    with pytest.raises(InvalidStoreURL) as caught:
        open_store(url)
    assert message == str(caught.value)
    assert url == caught.value.url


def test_an_unopenable_sqlite_path() -> None:
    """A SQLite path under a file (not a folder) is refused with the path named."""
    with pytest.raises(InvalidStoreURL, match=r"cannot open SQLite file '/dev/null/x\.db'"):
        open_store("sqlite:////dev/null/x.db")


def _tamper(db: Path, sql: str) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute(sql)


def test_a_corrupt_event_in_the_log_names_its_position(tmp_path: Path) -> None:
    """Garbage bytes written under a valid topic make replay raise CorruptEvent at that position."""
    store = open_store(f"sqlite:///{tmp_path}/e.db")
    Golems(store).create("g1")
    Golems(store).record_episodes("g1", [Episode(tick=1, summary="s")])
    _tamper(tmp_path / "e.db", "INSERT INTO oneiros_events VALUES ('g1', 3, 'DreamStart.v1', x'7b7b7b')")
    with pytest.raises(CorruptEvent) as caught:
        replay(store)
    assert (3, "DreamStart.v1") == (caught.value.position, caught.value.topic)


def test_an_unknown_event_type_in_the_log(tmp_path: Path) -> None:
    """An event written by a newer or foreign writer is refused by name, not skipped silently."""
    store = open_store(f"sqlite:///{tmp_path}/e.db")
    Golems(store).create("g1")
    _tamper(tmp_path / "e.db", "INSERT INTO oneiros_events VALUES ('g1', 2, 'FromTheFuture.v1', x'7b7d')")
    with pytest.raises(UnknownEventType) as caught:
        replay(store)
    assert "unknown event type 'FromTheFuture.v1' at position 2" == str(caught.value)


def test_a_missing_episode_file(tmp_path: Path) -> None:
    """A path that does not exist is named with the OS's reason."""
    with pytest.raises(EpisodeFileError) as caught:
        load_episodes(tmp_path / "nope.jsonl")
    assert f"cannot read episodes from {tmp_path / 'nope.jsonl'}: No such file or directory" == str(caught.value)


@pytest.mark.parametrize(
    ("content", "line", "reason"),
    [
        ('{"tick": 1, "summary": "ok"}\n{"tick": 2,', 2, "Input data was truncated"),
        ('{"tick": 1, "summary": "ok"}\n\n{"tick": -4, "summary": "x"}', 3, "Expected `int` >= 0 - at `$.tick`"),
        ('{"tick": 1, "summary": "ok", "arousal": 1.5}', 1, "Expected `float` <= 1.0 - at `$.arousal`"),
        ('{"tick": 1}', 1, "Object missing required field `summary`"),
    ],
)
def test_bad_episode_lines_name_the_line_and_field(tmp_path: Path, content: str, line: int, reason: str) -> None:
    """A bad line gives its number and msgspec's description of the field."""
    path = tmp_path / "eps.jsonl"
    path.write_text(content)
    with pytest.raises(EpisodeFileError) as caught:
        load_episodes(path)
    assert f"cannot read episodes from {path}:{line}: {reason}" == str(caught.value)
    assert line == caught.value.line


def test_an_invalid_episode_from_python_writes_nothing() -> None:
    """Episodes built in Python are validated before any is recorded: one bad one stops the batch."""
    golems = Golems(open_store("memory://"))
    golems.create("g1")
    head = golems.store.head()
    with pytest.raises(InvalidEvent) as caught:
        golems.record_episodes(
            "g1", [Episode(tick=1, summary="fine"), Episode(tick=2, summary="bad", significance=3.0)]
        )
    assert "EpisodeRecorded field episode.significance: expected `float` <= 1.0" == str(caught.value)
    assert head == golems.store.head()


@pytest.mark.parametrize("golem_id", ["", "a b", "x" * 129, "../etc"])
def test_invalid_golem_ids(golem_id: str) -> None:
    """Golem ids are short and made of safe characters."""
    with pytest.raises(InputError, match="must be 1-128 letters, digits"):
        Golems(open_store("memory://")).create(golem_id)
