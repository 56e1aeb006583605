"""Fixtures of the worker tests: a redis-server of each test's own."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from oneiros.settings import TracingSettings
from oneiros.workers import configure_tracing

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A redis-server of this test's own on a free port, keeping nothing on disk, stopped afterwards."""
    if not os.path.exists(REDIS_SERVER):
        message = "redis-server is not installed"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}; CI must have it")
        pytest.skip(message)
    port = _free_port()
    proc = subprocess.Popen(
        [
            REDIS_SERVER,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                pytest.fail("redis-server did not start")
            time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}/0"
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(autouse=True)
def _spans_in_tmp(tmp_path: Path) -> None:
    """Spans this test process makes go to the test's own folder, not to ./.oneiros."""
    configure_tracing(TracingSettings(spans_path=str(tmp_path / "own-spans.jsonl")))
