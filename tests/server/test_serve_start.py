"""``oneiros serve`` on a store that has grown since the projections last saw it: it brings the sweep
and every projection to the head before it listens, with a progress bar on a terminal, so the first
request after a large import is answered from read models at the head."""

from __future__ import annotations

import os
import pty
import select
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

from oneiros.events._types import Episode
from oneiros.fsm._service import Golems
from oneiros.store._store import open_store
from tests.workers.conftest import _free_port


def _read_until(fd: int, marker: bytes, proc: subprocess.Popen[bytes], timeout: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while marker not in seen:
        assert proc.poll() is None, seen.decode(errors="replace")
        assert time.monotonic() < deadline, f"no {marker!r} in: {seen.decode(errors='replace')}"
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:  # the terminal closed: the process ended
                break
    return seen


def test_serve_settles_with_a_progress_bar_before_it_listens(tmp_path: Path) -> None:
    """On a terminal, ``oneiros serve`` shows the catch-up bar before its "serving" line, and the
    first ``GET /golems`` answers with every episode recorded before the server started."""
    url = f"sqlite:///{tmp_path}/events.db"
    store = open_store(url)
    golems = Golems(store)
    golems.create("g1")
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    golems.record_episodes("g1", [Episode(tick=t, summary=f"episode {t}", time=t0) for t in range(1, 3001)])
    store.close()
    port = _free_port()
    main, terminal = pty.openpty()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
    environ |= {"ONEIROS_SPANS": str(tmp_path / "spans.jsonl"), "COLUMNS": "120", "TERM": "xterm"}
    command = [sys.executable, "-m", "oneiros", "serve", "--store", url, "--port", str(port), "--insecure-local"]
    proc = subprocess.Popen(command, cwd=tmp_path, stdin=terminal, stdout=terminal, stderr=terminal, env=environ)
    os.close(terminal)
    try:
        shown = _read_until(main, b"serving", proc, timeout=60).decode(errors="replace")
        before = shown[: shown.index("serving")]
        shows = ("bringing projections up to the log head", "validation sweep", "projection ")
        assert any(text in before for text in shows), before
        deadline = time.monotonic() + 30
        while True:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/api/v1/golems", timeout=5)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert 200 == answer.status_code
        assert [("g1", 3000)] == [(g["golem_id"], g["episodes"]) for g in answer.json()["items"]]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(main)


def test_serve_on_a_port_another_process_holds_says_so_at_once(tmp_path: Path) -> None:
    """A port already in use is reported before the store is opened or anything caught up: one
    line, exit code 2, no traceback, and no store created at the URL."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
    url = f"sqlite:///{tmp_path}/events.db"
    command = [sys.executable, "-m", "oneiros", "serve", "--store", url, "--port", str(port), "--insecure-local"]
    try:
        done = subprocess.run(
            command, check=False, cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=60
        )
    finally:
        holder.close()
    assert (2, "") == (done.returncode, done.stdout)
    assert f"error: cannot listen on 127.0.0.1:{port}: address already in use\n" == done.stderr
    assert not (tmp_path / "events.db").exists()
