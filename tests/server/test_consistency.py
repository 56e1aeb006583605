"""Consistency tokens: a write answers once its events are committed, with its log position (in
the body and the ``Oneiros-Position`` header), and a read that passes that position back, to any
server on the store, answers from projections that include the write."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.server.conftest import Server, start_server
from tests.server.test_mcp import _call, _http
from tests.server.test_rest import _episodes, _ok

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def pair(store_url: str, tmp_path: Path) -> Iterator[tuple[Server, Server]]:
    """Two servers on one store, each with its own follower."""
    first = start_server(store_url, tmp_path / "a")
    try:
        second = start_server(store_url, tmp_path / "b")
        try:
            yield first, second
        finally:
            second.stop()
    finally:
        first.stop()


def _batch(ticks: Iterator[int], size: int) -> list[dict[str, Any]]:
    template = _episodes(1)[0]
    return [dict(template, tick=next(ticks)) for _ in range(size)]


def test_a_read_with_a_writes_token_sees_the_write_on_any_server(pair: tuple[Server, Server]) -> None:
    """Episodes recorded through one server, read back through the other with the position the
    write answered (header or query parameter): the golem's episodes count every one, every time."""
    writer, reader = (server.client("admin") for server in pair)
    _ok(writer.post("/golems", json={"golem_id": "g1"}), 201)
    ticks = itertools.count(1)
    recorded = [0]

    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
    @given(sizes=st.lists(st.integers(1, 6), min_size=1, max_size=4), by_header=st.booleans())
    def check(sizes: list[int], by_header: bool) -> None:
        for size in sizes:
            answer = writer.post("/golems/g1/episodes", json={"episodes": _batch(ticks, size)})
            body = _ok(answer, 201)
            recorded[0] += size
            assert (size, str(body["position"])) == (body["appended"], answer.headers["oneiros-position"])
            token = body["position"]
            read = (
                reader.get("/golems/g1", headers={"Oneiros-Consistency": str(token)})
                if by_header
                else reader.get("/golems/g1", params={"min_position": token})
            )
            golem = _ok(read)
            assert (recorded[0], True) == (golem["episodes"], golem["position"] >= token)

    check()


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_a_position_the_projections_do_not_reach_in_time_is_a_503_with_retry_after(
    store_url: str, tmp_path: Path
) -> None:
    """A read naming a position past the log's head waits ``server.consistency_seconds``, then
    answers 503 ProjectionBehind with Retry-After, naming the projection and where it is; a token
    that is not a number is a 400."""
    server = start_server(store_url, tmp_path / "s", env={"ONEIROS_SERVER__CONSISTENCY_SECONDS": "0.2"})
    try:
        http = server.client("admin")
        created = _ok(http.post("/golems", json={"golem_id": "g1"}), 201)
        head = created["position"]
        _ok(http.get("/golems/g1", params={"min_position": head}))
        behind = http.get("/golems/g1", params={"min_position": head + 5})
        assert (503, "1") == (behind.status_code, behind.headers.get("retry-after"))
        assert {
            "type": "ProjectionBehind",
            "message": f"projection 'golems' is at log position {head}, not yet {head + 5}, after 0.2s; retry shortly",
            "status": 503,
            "attributes": {"projection": "golems", "position": head, "wanted": head + 5, "seconds": 0.2},
        } == behind.json()["error"]
        bad = http.get("/golems/g1", headers={"Oneiros-Consistency": "soon"})
        assert (400, "header Oneiros-Consistency='soon' must be a log position (an integer)") == (
            bad.status_code,
            bad.json()["error"]["message"],
        )
    finally:
        server.stop()


def test_mcp_reads_take_the_position_a_write_answered(pair: tuple[Server, Server]) -> None:
    """Over MCP as over REST: episodes recorded through one server's MCP endpoint answer with their
    log position, and ``dreaming_status`` on the other server with ``min_position`` counts them, every
    time; a position past the head is ProjectionBehind in oneiros's error shape."""
    writer, reader = pair
    _ok(writer.client("admin").post("/golems", json={"golem_id": "g1"}), 201)
    ticks = itertools.count(1)

    async def main() -> None:
        async with _http(writer, "write")() as wrote, _http(reader, "read")() as reads:
            recorded = 0
            for size in (1, 3, 2, 5, 1):
                answer = await _call(wrote, "record_episodes", golem="g1", episodes=_batch(ticks, size))
                recorded += size
                status = await _call(reads, "dreaming_status", golem="g1", min_position=answer["position"])
                golem = status["golem"]
                assert (recorded, True) == (golem["episodes"], golem["position"] >= answer["position"])
            ahead = await reads.call_tool("should_dream", {"golem": "g1", "min_position": answer["position"] + 50})
            error = json.loads(ahead.content[0].text)["error"]
            assert (True, "ProjectionBehind", 503) == (ahead.is_error, error["type"], error["status"])

    anyio.run(main)
