"""The memory block through a real ``oneiros serve``: the REST route and the MCP tool answer one
shape, within the budget, and record nothing whatever the token's scopes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from oneiros.store._store import open_store
from tests.server.conftest import Server, start_server
from tests.server.test_mcp import _call, _http
from tests.server.test_rest import _cycle, _episodes, _ok
from tests.test_cli_coherence import ok

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server over a SQLite store: g1 with 24 episodes, a dream of three, the first promoted."""
    work = tmp_path_factory.mktemp("served")
    running = start_server(f"sqlite:///{work}/events.db", work / "serve")
    http = running.client()
    _ok(http.post("/golems", json={"golem_id": "g1"}), 201)
    _ok(http.post("/golems/g1/episodes", json={"episodes": _episodes()}), 201)
    cycle = _cycle(http, "g1", {"max_outputs": 3})
    first = _ok(http.get(f"/golems/g1/cycles/{cycle['cycle_id']}/report"))["staged"][0]
    body = {"decision": "promote_candidate", "feedback": "held"}
    _ok(http.post(f"/dreams/{first['entry_id']}/feedback", json=body))
    yield running
    running.stop()


def _head(served: Server) -> int:
    with open_store(served.store) as store:
        return store.head()


def _mcp_block(served: Server, token: str, **arguments: Any) -> Any:
    answer: dict[str, Any] = {}

    async def main() -> None:
        async with _http(served, token)() as client:
            answer.update(await _call(client, "memory_block", golem="g1", **arguments))

    anyio.run(main)
    return answer


def test_a_read_token_gets_the_block_within_budget_and_mcp_gives_the_same(served: Server) -> None:
    """A read token's POST /golems/g1/memory-block answers text within budget_tokens, MEMORY.md's
    line first; the MCP tool with the same arguments answers the same JSON."""
    rest = _ok(served.client("read").post("/golems/g1/memory-block", json={"query": "eth range", "budget_tokens": 200}))
    assert rest["tokens"] <= 200
    assert rest["text"].startswith("## What I know (MEMORY.md)\n- ")
    assert [i["line"] for i in rest["items"]] == [
        line for line in rest["text"].splitlines() if not line.startswith("## ")
    ]
    assert rest == _mcp_block(served, "read", query="eth range", budget_tokens=200)


@pytest.mark.parametrize("token", ["read", "admin"])
def test_no_token_records_a_recall_by_asking_for_the_block(served: Server, token: str) -> None:
    """Unlike recall, the block is a read for every token: an admin's request appends nothing either."""
    head = _head(served)
    _ok(served.client(token).post("/golems/g1/memory-block", json={"query": "eth"}))
    _mcp_block(served, token, query="eth")
    assert head == _head(served)


def test_mistakes_are_one_line_errors(served: Server) -> None:
    """An unknown golem is 404 naming the nearest; a budget of 0 is 400 naming the field; a token
    bound to another golem is 403."""
    missing = served.client("read").post("/golems/g11/memory-block", json={})
    assert (404, "golem 'g11' does not exist; did you mean 'g1'?") == (
        missing.status_code,
        missing.json()["error"]["message"],
    )
    zero = served.client("read").post("/golems/g1/memory-block", json={"budget_tokens": 0})
    assert 400 == zero.status_code
    assert "$.budget_tokens" in zero.json()["error"]["message"]
    assert 403 == served.client("g2").post("/golems/g1/memory-block", json={}).status_code


def test_without_a_query_the_block_is_memory_alone(served: Server) -> None:
    """An empty body answers MEMORY.md's lines alone, at the config's default budget."""
    block = _ok(served.client("read").post("/golems/g1/memory-block", json={}))
    assert (None, 1000, {"memory"}) == (block["query"], block["budget_tokens"], {i["section"] for i in block["items"]})


def test_the_commands_json_is_the_rest_answer(served: Server, tmp_path: Path) -> None:
    """`oneiros recall QUERY --json` on the server's store prints exactly what a read token's
    POST /golems/g1/recall answers, and `--block --json` what POST .../memory-block answers."""

    def command(*args: str) -> Any:
        return json.loads(ok(tmp_path, "recall", "eth range", "--golem", "g1", *args, "--store", served.store).stdout)

    reader = served.client("read")
    rest = _ok(reader.post("/golems/g1/recall", json={"query": "eth range", "limit": 7}))
    assert rest["results"]
    assert rest == command("--limit", "7", "--json")
    for budget in (250, 5000):  # some lines left out; every line in
        block = _ok(reader.post("/golems/g1/memory-block", json={"query": "eth range", "budget_tokens": budget}))
        assert block == command("--block", "--budget-tokens", str(budget), "--json")
