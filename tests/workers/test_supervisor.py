"""``oneiros worker --count N``: the supervisor's children end with it, however it ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oneiros import open_store

pytestmark = pytest.mark.redis


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_workers_of_a_sigkilled_supervisor_stop(redis_url: str, tmp_path: Path) -> None:
    """SIGKILL of `oneiros worker --count 2` (which cannot forward a signal) still stops both
    workers within seconds; they went on as orphans taking jobs before."""
    store = f"sqlite:///{tmp_path}/events.db"
    open_store(store).close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
    command = [sys.executable, "-m", "oneiros", "worker", "--count", "2", "--queue", redis_url, "--store", store]
    supervisor = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children: list[int] = []
    try:
        deadline = time.monotonic() + 30
        while len(children) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            children = _children(supervisor.pid)
        assert 2 == len(children)
        time.sleep(2)  # both past their start, in RQ's loop
        supervisor.kill()
        supervisor.wait(timeout=10)
        deadline = time.monotonic() + 20
        while any(_alive(c) for c in children) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert [] == [c for c in children if _alive(c)]
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait(timeout=10)
        for child in children:
            if _alive(child):
                os.kill(child, signal.SIGKILL)
