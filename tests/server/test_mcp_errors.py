"""MCP tool errors through the official ``mcp`` client: every refusal, an argument the SDK's schema
rejects included, is oneiros's error shape (docs/server.md) with nothing before it, and the server
names its version."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import oneiros
from tests.server.conftest import Server, start_server
from tests.server.test_mcp import _http

pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Server]:
    running = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve")
    assert 201 == running.client("write").post("/golems", json={"golem_id": "g1"}).status_code
    yield running
    running.stop()


def _refusals(server: Server, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[Any], str | None]:
    """Each call's error text read as JSON (a ValueError if it is not), and the server's version."""
    texts: list[str] = []
    version: list[str | None] = []

    async def main() -> None:
        async with _http(server, "write")() as client:
            version.append(client.server_info.version if client.server_info else None)
            for tool, arguments in calls:
                result = await client.call_tool(tool, arguments)
                assert result.is_error, (tool, arguments)
                texts.append(result.content[0].text)

    anyio.run(main)
    return [json.loads(text)["error"] for text in texts], version[0]


def _input(message: str) -> dict[str, Any]:
    return {"type": "InputError", "message": message, "status": 400, "attributes": {}}


def test_arguments_the_schema_refuses_are_the_error_shape_naming_where(served: Server) -> None:
    """Arguments that fail a tool's schema (a number past its bound, a word outside a vocabulary, a
    missing argument, a wrong type; before, the SDK's pydantic text) are InputError in the error
    shape, each naming the argument as msgspec does for REST; an unknown tool too."""
    errors, _ = _refusals(
        served,
        [
            ("run_dreaming_cycle", {"golem": "g1", "max_outputs": 99}),
            ("record_outcome", {"golem": "g1", "tick": 1, "verdict": "maybe"}),
            ("get_dream", {}),
            ("recall_memory", {"golem": "g1", "query": "eth", "limit": "many"}),
            ("no_such_tool", {}),
        ],
    )
    assert [
        _input("arguments: Input should be less than or equal to 50 - at `$.max_outputs`"),
        _input("arguments: Input should be 'confirms' or 'contradicts' - at `$.verdict`"),
        _input("arguments: Field required - at `$.entry_id`"),
        _input("arguments: Input should be a valid integer, unable to parse string as an integer - at `$.limit`"),
        _input("Unknown tool: no_such_tool"),
    ] == errors


def test_oneiros_errors_come_without_the_sdk_prefix_and_the_version_is_the_package_s(served: Server) -> None:
    """A tool's own refusal (a golem that does not exist) is the JSON error body alone (before,
    behind 'Error executing tool NAME: '); the server info carries the package's version (before,
    an empty string)."""
    errors, version = _refusals(served, [("should_dream", {"golem": "nope"})])
    missing = {"type": "GolemNotFound", "message": "golem 'nope' does not exist", "status": 404}
    assert [missing | {"attributes": {"golem_id": "nope", "nearest": None}}] == errors
    assert oneiros.__version__ == version


@pytest.mark.slow  # starts a server
def test_every_tool_refuses_an_argument_it_does_not_take_naming_the_nearest(served: Server) -> None:
    """`recall_memory` with `golem_id` (the REST and Python name) answered is_error false with the
    default golem's empty results, the key dropped: an argument a tool does not declare is an
    InputError naming it and the nearest declared one, for any tool."""
    errors, _ = _refusals(
        served,
        [
            ("recall_memory", {"golem_id": "g1", "query": "eth"}),
            ("should_dream", {"golem": "g1", "min_postion": 3}),
            ("wake_up", {"colour": "blue"}),
        ],
    )
    assert [
        _input("arguments: unknown argument 'golem_id'; did you mean 'golem'? - at `$.golem_id`"),
        _input("arguments: unknown argument 'min_postion'; did you mean 'min_position'? - at `$.min_postion`"),
        _input("arguments: unknown argument 'colour'; it takes golem, cycle_id, min_position - at `$.colour`"),
    ] == errors


@pytest.mark.slow  # starts a server
def test_an_unknown_golem_in_another_case_or_a_letter_off_names_the_golem(served: Server) -> None:
    """`G1`, `g2` and `gl` for `g1` got no hint before (difflib's ratio was under its cutoff)."""
    errors, _ = _refusals(served, [("should_dream", {"golem": typed}) for typed in ("G1", "g2", "gl")])
    assert ["g1", "g1", "g1"] == [error["attributes"]["nearest"] for error in errors]
