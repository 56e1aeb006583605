"""One JSON shape per thing: the same staged entry from ``oneiros staging --json``, ``GET
/api/v1/dreams/{id}`` and the MCP tool ``get_dream`` is one object."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.cli_runner import run_cli
from tests.server.conftest import Server, start_server
from tests.server.test_mcp import _call, _http
from tests.server.test_rest import _ok

pytestmark = pytest.mark.timeout(240)


def _oneiros(cwd: Path, *args: str) -> Any:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")} | {"ONEIROS_SPANS": "off"}
    done = run_cli([*args], cwd=cwd, env=environ, check=True)
    return json.loads(done.stdout)


def _from_mcp(server: Server, entry_id: str) -> Any:
    async def main() -> Any:
        async with _http(server, "read")() as client:
            return await _call(client, "get_dream", entry_id=entry_id)

    return anyio.run(main)


def test_a_staged_entry_is_one_shape_from_the_cli_rest_and_mcp(tmp_path: Path) -> None:
    """After a sample dream and a review, the reviewed entry, two proposed ones and a displaced one
    as `oneiros staging --json` lists them are equal, key for key, to what REST and MCP answer for
    their ids: one id name (``entry_id``), one text field, one lineage, the review with them."""
    store = f"sqlite:///{tmp_path}/events.db"
    _oneiros(tmp_path, "dream", "--sample", "--store", store, "--json")
    listed = _oneiros(tmp_path, "staging", "--store", store, "--json")
    reviewed = next(e["entry_id"] for e in listed if e["status"] == "proposed")
    _oneiros(tmp_path, "review", reviewed, "--decision", "reinforce", "--reason", "held", "--store", store, "--json")
    listed = _oneiros(tmp_path, "staging", "--store", store, "--json")
    server = start_server(store, tmp_path / "serve")
    try:
        http = server.client("read")
        by_status = {status: [e for e in listed if e["status"] == status] for status in ("proposed", "displaced")}
        chosen = (
            [e for e in listed if e["entry_id"] == reviewed] + by_status["proposed"][:2] + by_status["displaced"][:1]
        )
        assert 4 == len(chosen)
        for entry in chosen:
            assert entry == _ok(http.get(f"/dreams/{entry['entry_id']}"))
            assert entry == _from_mcp(server, entry["entry_id"])
        assert [["reinforce", "owner", "held"]] == [[r["decision"], r["who"], r["why"]] for r in chosen[0]["reviews"]]
        assert {"entry_id", "text", "lineage"} <= set(chosen[0])
    finally:
        server.stop()
