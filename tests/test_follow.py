"""Following the log across processes: on PostgreSQL woken by LISTEN/NOTIFY, not by polling; and
`oneiros follow` stopped by SIGTERM."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from oneiros import Observers, open_store
from oneiros.fsm._observers import follow_log
from tests.conftest import postgres_url


@pytest.mark.postgres
def test_a_follower_is_woken_by_notifications_from_another_process(pg_schema: str) -> None:
    """A follower in this process sees every phase transition of a cycle that `oneiros dream` runs in
    another process on PostgreSQL. Its poll interval is an hour, so only LISTEN/NOTIFY can wake it."""
    url = postgres_url(pg_schema)
    store = open_store(url)
    entered: list[str] = []
    observers = Observers()
    for phase in ("hypnagogic_onset", "nrem", "rem", "integration", "hypnopompic_return", "Waking"):
        observers.on_enter(phase, lambda t: entered.append(t.state))
    stop = threading.Event()
    follower = threading.Thread(
        target=follow_log, args=(store, observers, stop), kwargs={"after": 0, "poll_interval": 3600.0}
    )
    follower.start()
    try:
        subprocess.run(
            [sys.executable, "-m", "oneiros", "dream", "--json", "--sample", "--store", url],
            capture_output=True,
            check=True,
        )
        deadline = time.monotonic() + 30
        while len(entered) < 7 and time.monotonic() < deadline:
            stop.wait(0.02)
    finally:
        stop.set()
        follower.join(10)
        store.close()
    assert not follower.is_alive()
    assert [
        "Waking",
        "Dreaming_HypnagogicOnset",
        "Dreaming_NREM",
        "Dreaming_REM",
        "Dreaming_Integration",
        "Dreaming_HypnopompicReturn",
        "Waking",
    ] == entered


def test_sigterm_stops_oneiros_follow_cleanly(tmp_path: Path) -> None:
    """`oneiros follow` stopped with SIGTERM (docker stop, systemd) ends as Ctrl-C ends it: exit 0
    within seconds, nothing on stderr (SIGTERM killed it, exit -15, whatever it was doing)."""
    import os
    import signal

    from oneiros import Golems

    store_url = f"sqlite:///{tmp_path}/events.db"
    store = open_store(store_url)
    Golems(store).create("g")
    store.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
    follower = subprocess.Popen(
        [sys.executable, "-m", "oneiros", "follow", "--store", store_url],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert follower.stdout is not None
        assert follower.stdout.readline().startswith("following ")
        follower.send_signal(signal.SIGTERM)
        _out, err = follower.communicate(timeout=20)
        assert (0, "") == (follower.returncode, err)
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait(timeout=10)
