"""Live following across processes: events appended here reach the projections of an
``oneiros follow`` process, on SQLite (polling) and PostgreSQL (LISTEN/NOTIFY)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from oneiros.projections._db import open_projection_db
from oneiros.projections._runner import wait_for
from oneiros.store._store import open_store
from tests.conftest import postgres_url
from tests.projections_support import World


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_event_from_this_process_reaches_follower_in_another(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A dream cycle appended here appears, staged, in the projection rows kept by another process."""
    if backend == "sqlite":
        store_url, db_url = f"sqlite:///{tmp_path}/events.db", f"sqlite:///{tmp_path}/projections.db"
    else:
        schema = request.getfixturevalue("pg_schema")
        store_url, db_url = postgres_url(schema), postgres_url(f"{schema}_proj")
    store = open_store(store_url)
    world = World(store)
    world.episodes(1)
    env = {**os.environ, "ONEIROS_STORE": store_url, "ONEIROS_PROJECTIONS": db_url}
    follower = subprocess.Popen([sys.executable, "-m", "oneiros", "follow"], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert follower.stdout is not None
        assert follower.stdout.readline().startswith("following")
        cycle = world.dream(hypotheses=2)
        db = open_projection_db(db_url)
        assert wait_for(lambda: len(db.scan("staging", "entry")) == 2 and len(db.scan("journal", "cycle")) == 1, 20)
        assert [cycle] == [key for _k, key, _d in db.scan("journal", "cycle")]
        db.close()
    finally:
        follower.send_signal(signal.SIGINT)
        follower.wait(timeout=20)
        store.close()
        if backend == "postgres":
            import psycopg

            with psycopg.connect("host=127.0.0.1 dbname=test user=postgres", autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{request.getfixturevalue("pg_schema")}_proj" CASCADE')
