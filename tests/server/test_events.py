"""The event stream: Bardo's events for a cycle run by an ``oneiros worker`` in another process,
followed live, and a reconnect with Last-Event-ID that misses nothing and repeats nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.conftest import Server, read_events, start_server
from tests.server.test_rest import _episodes, _ok
from tests.workers.support import Workers, worker_command

pytestmark = pytest.mark.timeout(240)

Message = tuple[str, str | None, dict[str, Any]]


def _messages(response: httpx.Response) -> Iterator[Message]:
    """(event, id, data) for each message; None for a keep-alive comment."""
    name, ident = "", None
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("id: "):
            ident = line[4:]
        elif line.startswith("data: "):
            yield name, ident, json.loads(line[6:])
            name, ident = "", None
        elif line.startswith(": keep-alive"):
            yield "", None, {}


@pytest.fixture
def queued_server(store_url: str, tmp_path: Path, redis_url: str) -> Iterator[Server]:
    """A server whose cycles go to the workers of its own redis-server."""
    running = start_server(store_url, tmp_path / "serve", "--queue", redis_url)
    yield running
    running.stop()


def test_a_worker_cycle_streams_live_and_resumes_without_gap_or_duplicate(
    queued_server: Server, redis_url: str, tmp_path: Path
) -> None:
    """A client sees the onset, disconnects, reconnects with Last-Event-ID while an ``oneiros worker``
    runs the rest of the cycle, and sees NREM to return and dream_complete live; what the two
    connections got together equals one uninterrupted read of the same stretch."""
    server = queued_server
    http = server.client("write")
    _ok(http.post("/golems", json={"golem_id": "g1"}), 201)
    _ok(http.post("/golems/g1/episodes", json={"episodes": _episodes()}), 201)
    start = httpx.get(server.url + "/healthz").json()["position"]
    enqueued = _ok(http.post("/golems/g1/cycles", json={}), 202)
    assert "enqueued" == enqueued["status"]

    first: list[Message] = []
    with httpx.stream("GET", server.url + "/api/v1/events", params={"after": start}, headers=http.headers) as r:
        for message in _messages(r):
            first.append(message)
            if message[0] == "dream_progress":
                break
    assert [("mode_change", {"golem_id": "g1", "mode": "dreaming", "tick": start + 2})] == [
        (name, data) for name, _id, data in first[:1]
    ]
    assert {"phase": "onset", "cycleNumber": 1, "budgetSpent": 0} == {
        k: first[-1][2][k] for k in ("phase", "cycleNumber", "budgetSpent")
    }
    resume_at = first[-1][1]
    assert resume_at is not None

    workers = Workers(worker_command(redis_url, server.store, tmp_path / "spans.jsonl"), tmp_path)
    second: list[Message] = []
    headers = {**http.headers, "Last-Event-ID": resume_at}
    try:
        with httpx.stream("GET", server.url + "/api/v1/events", headers=headers, timeout=120) as r:
            workers.start(1)
            for message in _messages(r):
                if message[0]:
                    second.append(message)
                if message[0] == "mode_change" and message[2]["mode"] == "waking":
                    break
    finally:
        workers.stop()
    phases = [data["phase"] for name, _id, data in second if name == "dream_progress"]
    assert ["nrem", "rem", "integration", "return"] == phases
    [complete] = [data for name, _id, data in second if name == "dream_complete"]
    assert (enqueued["cycle_id"], 1) == (complete["cycle_id"], complete["cycleNumber"])
    assert complete["hypothesesGenerated"] > 0
    spent = [data["budgetSpent"] for name, _id, data in second if name == "dream_progress"]
    assert spent == sorted(spent)
    assert spent[-1] > 0

    whole = read_events(server, http.headers, after=start)
    assert whole == [(name, data) for name, _id, data in first + second]
    ids = [int(i) for _n, i, _d in first + second if i is not None]
    assert ids == sorted(set(ids))


def test_raw_events_by_type_and_golem(server: Server) -> None:
    """raw=1 adds every log event as log_event, filtered by type and golem."""
    http = server.client("admin")
    for golem in ("g1", "g2"):
        _ok(http.post("/golems", json={"golem_id": golem}), 201)
        _ok(http.post(f"/golems/{golem}/activity", json={"kind": "turn"}), 201)
    rows = read_events(server, http.headers, after=0, raw=True, types="ActivityRecorded", golem="g2")
    assert [("log_event", "g2", "ActivityRecorded", {"kind": "turn", "detail": ""})] == [
        (name, data["golem_id"], data["type"], data["payload"]) for name, data in rows
    ]
