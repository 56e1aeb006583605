"""The agent loop of ``agent_loop.py`` through oneiros's HTTP API (``oneiros serve``): record the
day's episodes and activity, ask whether to dream, dream, read the wake-up summary, recall what
the dreams proposed, record the next morning's outcome.

    python examples/agent_http.py                      # starts its own `oneiros serve` in a temp folder
    python examples/agent_http.py URL TOKEN            # or talks to a running server (a write token)

The server decides with its own clock and schedule: a minute after the agent's last task its
answer is "not now" (the silence gate), and the agent then asks for a cycle explicitly, as
Dense-Mem's run_dreaming_cycle lets an agent do.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import coder
import httpx


@contextmanager
def local_server() -> Iterator[tuple[str, str]]:
    """``oneiros serve`` on a free loopback port over a store in a temp folder, with a write token."""
    with tempfile.TemporaryDirectory() as folder:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
        env |= {"ONEIROS_STORE": f"sqlite:///{folder}/events.db", "ONEIROS_SERVER__TOKENS_FILE": f"{folder}/tokens"}
        oneiros = [sys.executable, "-m", "oneiros"]
        made = subprocess.run(
            [*oneiros, "token", "add", "agent", "--scope", "write", "--json"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        token = json.loads(made.stdout)["token"]
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        url = f"http://127.0.0.1:{port}"
        with Path(folder, "serve.log").open("wb") as log:
            server = subprocess.Popen([*oneiros, "serve", "--port", str(port)], env=env, stdout=log, stderr=log)
            try:
                deadline = time.monotonic() + 60
                while not _healthy(url):
                    if server.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"oneiros serve did not start: {Path(folder, 'serve.log').read_text()}")
                    time.sleep(0.1)
                yield url, token
            finally:
                server.terminate()
                server.wait(timeout=30)


def _healthy(url: str) -> bool:
    try:
        return httpx.get(url + "/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def _ok(response: httpx.Response) -> Any:
    if response.status_code >= 400:
        raise RuntimeError(f"{response.request.method} {response.request.url.path}: {response.text}")
    return response.json()


def run(url: str, token: str) -> None:
    api = httpx.Client(base_url=url + "/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=120)
    golem = f"/golems/{coder.GOLEM}"
    created = api.post("/golems", json={"golem_id": coder.GOLEM, "name": "a coding agent"})
    if created.status_code != 409:  # 409: an earlier run on this server created it
        _ok(created)

    day = coder.work_day()
    for episode in day:
        _ok(api.post(f"{golem}/activity", json={"kind": "action", "detail": episode["summary"]}))
    _ok(api.post(f"{golem}/episodes", json={"episodes": day}))
    print(f"recorded {len(day)} episodes for {coder.GOLEM}")

    decision = _ok(api.get(f"{golem}/should-dream"))
    if decision["dream"]:
        print(f"should_dream: yes ({decision['trigger']})")
    else:
        print("should_dream: not now (" + ", ".join(decision["blocked_by"]) + "); dreaming on request")

    # "wait": the answer comes when the cycle has ended (without it: 202 as soon as it started).
    cycle = _ok(api.post(f"{golem}/cycles", json={"max_outputs": 5, "wait": True}))
    print(f"dreamt cycle {cycle['cycle_id']}: {cycle['status']}")

    report = _ok(api.get(f"{golem}/cycles/{cycle['cycle_id']}/report"))
    print("woke up with:", report["wake_up"]["text"])

    found = _ok(api.post(f"{golem}/recall", json={"query": coder.RECALL_QUERY, "limit": 3}))
    print(f"recall {coder.RECALL_QUERY!r}: {len(found['results'])} memories, {len(found['related_dreams'])} dreams")
    for dream in found["related_dreams"]:
        print(f"  dream {dream['ref']} ({dream['status']}, confidence {dream['confidence']:.2f}): {dream['text']}")

    moved = _ok(api.post(f"{golem}/outcomes", json=coder.next_morning_outcome(tick=len(day) + 1)))
    print(f"outcome recorded at log position {moved['position']}; {len(moved['entries'])} dreams moved")


def main(argv: list[str]) -> int:
    if len(argv) not in (0, 2):  # a URL alone would be ignored for a server of its own: refuse it
        print(
            f"usage: python {sys.argv[0]} [URL TOKEN]  (a running server and a write token, or neither)",
            file=sys.stderr,
        )
        return 2
    if len(argv) == 2:
        run(*argv)
        return 0
    with local_server() as (url, token):
        run(url, token)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
