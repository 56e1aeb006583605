"""The agent loop of ``agent_loop.py`` over MCP, as a model-driven agent would call the tools:
``oneiros mcp`` launched over stdio (or ``oneiros serve``'s ``/mcp`` endpoint), with the tools
create_golem, record_episodes, should_dream, run_dreaming_cycle, wake_up, recall_memory and
record_outcome.

    python examples/agent_mcp.py                       # launches `oneiros mcp` over stdio on a temp store
    python examples/agent_mcp.py URL TOKEN             # or a running server's http://HOST:PORT/mcp

As over HTTP, the server's schedule answers "not now" a minute after the agent's last task, and the
agent then asks for a cycle explicitly.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import coder
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


@asynccontextmanager
async def connect(argv: list[str]) -> AsyncIterator[Client]:
    """An MCP client of ``oneiros mcp`` over stdio on a temp store, or of the server ``argv`` names."""
    if len(argv) == 2:
        url, token = argv
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http,
            Client(streamable_http_client(url.rstrip("/") + "/mcp", http_client=http)) as client,
        ):
            yield client
        return
    with tempfile.TemporaryDirectory() as folder:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "oneiros", "mcp", "--store", f"sqlite:///{folder}/events.db"],
            cwd=folder,
            env=env,
        )
        async with Client(params) as client:
            yield client


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    if result.is_error:
        raise RuntimeError(f"{tool}: {text}")
    return json.loads(text)


async def ensure_golem(client: Client) -> None:
    """Create the agent's golem, unless an earlier run on this server did (the error says which)."""
    result = await client.call_tool("create_golem", {"golem": coder.GOLEM, "name": "a coding agent"})
    text = result.content[0].text  # type: ignore[union-attr]
    if result.is_error and '"type":"GolemExists"' not in text.replace(" ", ""):
        raise RuntimeError(f"create_golem: {text}")


async def run(client: Client) -> None:
    await ensure_golem(client)
    day = coder.work_day()
    recorded = await call(client, "record_episodes", golem=coder.GOLEM, episodes=day)
    print(f"recorded {recorded['appended']} episodes for {coder.GOLEM}")

    decision = await call(client, "should_dream", golem=coder.GOLEM)
    if decision["dream"]:
        print(f"should_dream: yes ({decision['trigger']})")
    else:
        print("should_dream: not now (" + ", ".join(decision["blocked_by"]) + "); dreaming on request")

    cycle = await call(client, "run_dreaming_cycle", golem=coder.GOLEM, max_outputs=5)
    print(f"dreamt cycle {cycle['cycle_id']}: {cycle['status']}")

    woke = await call(client, "wake_up", golem=coder.GOLEM)
    print("woke up with:", woke["wake_up"]["text"])

    found = await call(client, "recall_memory", golem=coder.GOLEM, query=coder.RECALL_QUERY, limit=3)
    print(f"recall {coder.RECALL_QUERY!r}: {len(found['results'])} memories, {len(found['related_dreams'])} dreams")
    for dream in found["related_dreams"]:
        print(f"  dream {dream['ref']} ({dream['status']}, confidence {dream['confidence']:.2f}): {dream['text']}")

    outcome = coder.next_morning_outcome(tick=len(day) + 1)
    moved = await call(client, "record_outcome", golem=coder.GOLEM, **outcome)
    print(f"outcome recorded at log position {moved['position']}; {len(moved['entries'])} dreams moved")


def main(argv: list[str]) -> int:
    if len(argv) not in (0, 2):  # a URL alone would be ignored for a server of its own: refuse it
        print(
            f"usage: python {sys.argv[0]} [URL TOKEN]  (a running server and a write token, or neither)",
            file=sys.stderr,
        )
        return 2

    async def go() -> None:
        async with connect(argv) as client:
            await run(client)

    anyio.run(go)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
