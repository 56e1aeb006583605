"""The profile through a real ``oneiros serve``: the REST route and the MCP tool list the same
entries to a read token, and the wake-up report carries them (issue 36)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.server.conftest import Server, start_server
from tests.server.test_mcp import _call, _http
from tests.server.test_rest import _cycle, _ok

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

_TURNS = [
    {"tick": 1, "summary": "I'm a backend engineer at a travel startup.", "speaker": "user"},
    {"tick": 2, "summary": "Noted, thanks for telling me.", "speaker": "assistant"},
    {"tick": 3, "summary": "Always answer with Python 3.12 examples.", "speaker": "user"},
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server over a SQLite store: g1 with three chat turns, dreamt once."""
    work: Path = tmp_path_factory.mktemp("served")
    running = start_server(f"sqlite:///{work}/events.db", work / "serve")
    http = running.client()
    _ok(http.post("/golems", json={"golem_id": "g1"}), 201)
    turns = [{**t, "time": "2026-03-02T09:00:00Z"} for t in _TURNS]
    _ok(http.post("/golems/g1/episodes", json={"episodes": turns}), 201)
    _cycle(http, "g1")
    yield running
    running.stop()


def test_a_read_token_lists_the_profile_over_rest_and_mcp_alike(served: Server) -> None:
    """GET /golems/g1/profile answers the identity fact and the instruction, each naming its turn;
    the MCP tool answers the same list, and its wake_up carries it."""
    rest = _ok(served.client("read").get("/golems/g1/profile"))
    assert [(p["key"], p["text"], p["source_ticks"]) for p in rest] == [
        ("identity", "User is a backend engineer at a travel startup.", [1]),
        ("instruction:answer python", "User's instruction: Always answer with Python 3.12 examples.", [3]),
    ]
    answer: dict[str, Any] = {}

    async def main() -> None:
        async with _http(served, "read")() as client:
            answer.update(await _call(client, "profile", golem="g1"))
            answer["woke"] = await _call(client, "wake_up", golem="g1")

    anyio.run(main)
    assert answer["profile"] == rest
    assert answer["woke"]["profile"] == rest
