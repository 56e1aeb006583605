"""The MCP tools through the official ``mcp`` client, over streamable HTTP (``oneiros serve``) and
stdio (``oneiros mcp``), on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from oneiros.episodes._episodes import sample_episodes_path
from oneiros.server._mcp import HYPOTHESES
from tests.server.conftest import ROOT, Server

pytestmark = pytest.mark.timeout(240)

TOOLS = {
    "dreaming_status",
    "run_dreaming_cycle",
    "list_dreams",
    "get_dream",
    "resolve_dream_feedback",
    "recall_memory",
    "memory_block",
    "record_episodes",
    "record_outcome",
    "create_golem",
    "should_dream",
    "wake_up",
    "profile",
}


def _episodes() -> list[dict[str, Any]]:
    with open(sample_episodes_path()) as f:
        return [json.loads(line) for line in f][:24]


async def _call(client: Client, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    if result.is_error:
        raise AssertionError(f"{tool} failed: {text}")
    return json.loads(text)


async def _ended(client: Client, cycle_id: str) -> Any:
    """dreaming_status once the cycle ended and the dreams it staged are pending."""
    with anyio.fail_after(120):
        while True:
            status = await _call(client, "dreaming_status", golem="g1")
            run = status["latest_run"]
            if run["cycle_id"] == cycle_id and run["status"] != "dreaming" and status["pending_count"] == run["staged"]:
                return status
            await anyio.sleep(0.05)


async def _walk(client: Client) -> None:
    """Every tool, in the order an agent would use them, each reading back what the last wrote."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert TOOLS == set(tools)
    for name in ("list_dreams", "get_dream", "recall_memory", "run_dreaming_cycle"):
        assert HYPOTHESES in (tools[name].description or "")
    recorded = await _call(client, "record_episodes", golem="g1", episodes=_episodes())
    assert 24 == recorded["appended"]
    cycle = await _call(client, "run_dreaming_cycle", golem="g1", max_outputs=3)
    assert "complete" == cycle["status"]  # the tool answers when the cycle has ended
    status = await _ended(client, cycle["cycle_id"])
    assert ("complete", 3) == (status["latest_run"]["status"], status["pending_count"])
    dreams = await _call(client, "list_dreams", golem="g1", status="proposed")
    assert 3 == len(dreams["items"])
    first = dreams["items"][0]
    assert first == await _call(client, "get_dream", entry_id=first["entry_id"])
    moved = await _call(client, "record_outcome", golem="g1", tick=999, verdict="confirms", entry_id=first["entry_id"])
    assert [first["entry_id"]] == [d["entry_id"] for d in moved["entries"]]
    decided = await _call(
        client, "resolve_dream_feedback", entry_id=first["entry_id"], decision="reject", feedback="not useful"
    )
    assert "rejected" == decided["status"]
    second = dreams["items"][1]
    recalled = await _call(client, "recall_memory", golem="g1", query=second["text"], limit=100)
    assert second["entry_id"] in {d["ref"] for d in recalled["related_dreams"]}
    assert second["entry_id"] not in {r["ref"] for r in recalled["results"]}
    weighed = await _call(
        client, "record_outcome", golem="g1", tick=1000, verdict="confirms", summary="nothing alike", explain=True
    )
    assert ([], 0.6) == (weighed["entries"], weighed["explain"]["min_relevance"])
    assert all("< staging.min_relevance 0.60" in n["why"] for n in weighed["explain"]["nearest"])
    third = dreams["items"][2]
    promoted = await _call(
        client, "resolve_dream_feedback", entry_id=third["entry_id"], decision="promote_candidate", feedback="held"
    )
    assert ("promoted", ["revoke"]) == (promoted["status"], promoted["decisions"])
    revoked = await _call(
        client, "resolve_dream_feedback", entry_id=third["entry_id"], decision="revoke", feedback="one-off"
    )
    assert ("revoked", [], "one-off") == (revoked["status"], revoked["decisions"], revoked["reviews"][-1]["why"])
    illegal = await client.call_tool(
        "resolve_dream_feedback", {"entry_id": first["entry_id"], "decision": "promote_candidate", "feedback": "x"}
    )
    assert illegal.is_error
    shown = illegal.content[0].text  # type: ignore[union-attr]
    assert {
        "type": "IllegalReview",
        "message": f"entry {first['entry_id']!r} is rejected; decision 'promote_candidate' is not allowed",
        "status": 409,
        "attributes": {
            "entry_id": first["entry_id"],
            "status": "rejected",
            "decision": "promote_candidate",
            "allowed": [],
        },
    } == json.loads(shown)["error"]


def _http(server: Server, token: str) -> Callable[[], AbstractAsyncContextManager[Any]]:
    @asynccontextmanager
    async def connect() -> AsyncIterator[Any]:
        headers = {"Authorization": f"Bearer {server.tokens[token]}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=120) as http,
            Client(streamable_http_client(server.url + "/mcp", http_client=http)) as client,
        ):
            yield client

    return connect


def test_every_tool_over_streamable_http(server: Server) -> None:
    """The mcp client, with a write token, calls each tool on the server's /mcp endpoint."""
    server.client().post("/golems", json={"golem_id": "g1"})

    async def main() -> None:
        async with _http(server, "write")() as client:
            await _walk(client)

    anyio.run(main)


def test_a_read_token_cannot_run_a_cycle_over_mcp(server: Server) -> None:
    """Tool calls carry the HTTP request's token: a read token lists dreams but cannot dream."""
    server.client().post("/golems", json={"golem_id": "g1"})

    async def main() -> None:
        async with _http(server, "read")() as client:
            refused = await client.call_tool("run_dreaming_cycle", {"golem": "g1"})
            assert refused.is_error
            error = json.loads(refused.content[0].text)["error"]
            assert ("Forbidden", "token 'reader' has no access to the 'write' scope") == (
                error["type"],
                error["message"],
            )
            assert [] == (await _call(client, "list_dreams", golem="g1"))["items"]

    anyio.run(main)


def test_every_tool_over_stdio(store_url: str, tmp_path: Path) -> None:
    """``oneiros mcp`` launched by the mcp client over stdio serves the same tools on the same store."""
    from oneiros.fsm._service import Golems
    from oneiros.store._store import open_store

    with open_store(store_url) as store:
        Golems(store).create("g1")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "oneiros", "mcp", "--store", store_url],
        cwd=str(tmp_path),
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "ONEIROS_SPANS": "off"},
    )

    async def main() -> None:
        async with Client(params) as client:
            await _walk(client)

    anyio.run(main)
