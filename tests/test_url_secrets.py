"""A password in a store URL never reaches a message: errors quoting the URL mask it, whatever
command prints them (docs/deployment.md: "Passwords in store and queue URLs are masked wherever
oneiros prints them")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from oneiros._errors import ConfigError, InvalidStoreURL, NoStore
from oneiros.store._store import open_store
from tests.cli_runner import run_cli
from tests.conftest import PG_HOST, PG_PORT, require_server
from tests.workers.conftest import (
    _free_port,
    redis_url,  # noqa: F401 - the fixture: a redis-server of the test's own
)


def _oneiros(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
    return run_cli(args, env={**environ, "COLUMNS": "400"}, cwd=cwd)


def _oneiros_process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
    # In a process of its own and bounded: a server that starts when it should not is killed when the time is up.
    return subprocess.run(
        [sys.executable, "-m", "oneiros", *args],
        capture_output=True,
        text=True,
        env={**environ, "COLUMNS": "400"},
        cwd=cwd,
        check=False,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:S3cret@h:5432/d?schema=s", "postgresql://u:***@h:5432/d?schema=s"),
        ("postgresql://u:S3cret@h?schema=s", "postgresql://u:***@h?schema=s"),
        ("postgresql://u:p%40ss@h/d", "postgresql://u:***@h/d"),
        ("postgresql://u@h/d", "postgresql://u@h/d"),
        ("sqlite:///a:b@c.db", "sqlite:///a:b@c.db"),
    ],
)
def test_no_store_message_masks_the_password(url: str, shown: str) -> None:
    """NoStore names the URL with its password replaced by *** (and a URL without one as given)."""
    assert f"no store at {shown}: why" == str(NoStore(url, "why"))


def test_invalid_store_url_message_masks_the_password() -> None:
    """InvalidStoreURL quotes the malformed URL with its password masked."""
    with pytest.raises(InvalidStoreURL) as caught:
        open_store("postgresql://u:S3cret@127.0.0.1:notaport/test")
    assert "invalid store URL 'postgresql://u:***@127.0.0.1:notaport/test': the port is not a number" == str(
        caught.value
    )


@pytest.mark.postgres
@pytest.mark.redis
def test_reading_a_missing_postgres_store_does_not_print_its_password(tmp_path: Path, redis_url: str) -> None:  # noqa: F811
    """`oneiros status` and `oneiros worker --burst` on a schema with no log say so in one line, the
    password masked."""
    require_server("PostgreSQL", PG_HOST, PG_PORT)
    url = f"postgresql://postgres:S3cret@{PG_HOST}:{PG_PORT}/test?schema=qaops_never_created"
    shown = f"postgresql://postgres:***@{PG_HOST}:{PG_PORT}/test?schema=qaops_never_created"
    expected = (
        f"error: no store at {shown}: no oneiros log in schema 'qaops_never_created' of PostgreSQL at "
        f"{PG_HOST}:{PG_PORT}/test\n"
    )
    status = _oneiros("status", "--store", url, cwd=tmp_path)
    assert (2, expected) == (status.returncode, status.stderr)
    worker = _oneiros("worker", "--burst", "--store", url, "--queue", redis_url, cwd=tmp_path)
    assert (2, expected) == (worker.returncode, worker.stderr)


def test_an_unclosed_ipv6_bracket_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    """A store or queue URL with an unclosed IPv6 bracket is a one-line error (exit 2), its
    password masked; it was a ValueError traceback from urllib."""
    status = _oneiros("status", "--store", "postgresql://u:S3cret@[::1/test?schema=s", cwd=tmp_path)
    assert (2, "error: invalid store URL 'postgresql://u:***@[::1/test?schema=s': Invalid IPv6 URL\n") == (
        status.returncode,
        status.stderr,
    )
    dream = _oneiros("dream", "--store", "memory://", "--queue", "redis://:S3cret@[::1:6379/0", cwd=tmp_path)
    assert (2, "error: queue 'redis://:***@[::1:6379/0': Invalid IPv6 URL\n") == (dream.returncode, dream.stderr)
    assert [] == list(tmp_path.iterdir())


@pytest.mark.postgres
@pytest.mark.redis
def test_dream_json_and_cycle_id_errors_mask_passwords(tmp_path: Path, pg_schema: str, redis_url: str) -> None:  # noqa: F811
    """`dream --json` (enqueued on a queue, or run in process) names the store and queue with their
    passwords masked, as its text output does; so does `rerun` for a cycle id the log lacks."""
    import json

    url = f"postgresql://postgres:S3cret@{PG_HOST}:{PG_PORT}/test?schema={pg_schema}"
    shown = f"postgresql://postgres:***@{PG_HOST}:{PG_PORT}/test?schema={pg_schema}"
    # A password Redis does not ask for is accepted.
    queue = redis_url.replace("redis://", "redis://:S3cret@")
    enqueued = _oneiros("dream", "--sample", "--json", "--store", url, "--queue", queue, cwd=tmp_path)
    assert 0 == enqueued.returncode, enqueued.stderr
    said = json.loads(enqueued.stdout)
    assert (shown, redis_url.replace("redis://", "redis://:***@")) == (said["store"], said["queue"])
    interrupted = _oneiros("interrupt", "golem", "--reason", "test", "--store", url, cwd=tmp_path)
    assert 0 == interrupted.returncode, interrupted.stderr
    dreamt = _oneiros("dream", "--json", "--store", url, cwd=tmp_path)
    assert shown == json.loads(dreamt.stdout)["store"]
    rerun = _oneiros("rerun", "nope", "--store", url, cwd=tmp_path)
    assert (2, f"error: no cycle matches 'nope' in the log at {shown}\n") == (rerun.returncode, rerun.stderr)


def test_a_malformed_server_queue_is_refused_at_start_and_masked(tmp_path: Path) -> None:
    """`oneiros serve` with a queue URL Redis cannot use stops at start in one line, its password
    masked (it started, and answered every cycle request with a 400 quoting the password); the
    server's own message masks it too."""
    from msgspec.structs import replace

    from oneiros import Deps, Golems, open_store
    from oneiros.config._load import load_config
    from oneiros.server._auth import LOCAL
    from oneiros.server._models import CycleIn
    from oneiros.server._service import Service

    queue = "redis://:S3cret@127.0.0.1:notaport/0"
    port = str(_free_port())
    served = _oneiros_process(
        "serve", "--insecure-local", "--port", port, "--store", "memory://", "--queue", queue, cwd=tmp_path
    )
    expected = (
        "error: queue 'redis://:***@127.0.0.1:notaport/0': Port could not be cast to integer value as 'notaport'\n"
    )
    assert (2, expected) == (served.returncode, served.stderr)
    store = open_store("memory://")
    Golems(store).create("g")
    base = load_config("/dev/null")
    config = replace(base, server=replace(base.server, queue=queue))
    service = Service(store, config, deps=Deps())
    with pytest.raises(ConfigError) as caught:
        service.dream(LOCAL, "g", CycleIn())
    service.close()
    assert "queue 'redis://:***@127.0.0.1:notaport/0': Port could not be cast to integer value as 'notaport'" == (
        str(caught.value)
    )
