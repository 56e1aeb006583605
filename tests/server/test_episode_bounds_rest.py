"""``POST /golems/{id}/episodes`` refuses a tick or figure past the episode bounds, or a tick twice
in one body, with a 400 naming ``$.episodes[i].field``, before anything is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.server.conftest import start_server

pytestmark = pytest.mark.timeout(240)


def test_episodes_past_the_bounds_get_a_400_and_write_nothing(tmp_path: Path) -> None:
    """Each bad body (a summary of only spaces too) is a 400 with msgspec's words and the path;
    the golem still has no episode,
    and a body within the bounds (MAX_TICK itself) is then recorded."""
    served = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve")
    try:
        http = served.client("write")
        assert 201 == http.post("/golems", json={"golem_id": "g1"}).status_code
        ok: dict[str, Any] = {"tick": 1, "summary": "fine"}
        cases = [
            ({"tick": 1_732_500_000_000, "summary": "ms"}, "Expected `int` <= 4223371679 - at `$.episodes[1].tick`"),
            ({"tick": -3, "summary": "x"}, "Expected `int` >= 0 - at `$.episodes[1].tick`"),
            (
                {"tick": 2, "summary": "x", "outcome": {"pnl": 1e308}},
                "Expected `float` <= 1000000000000.0 - at `$.episodes[1].outcome.pnl`",
            ),
            ({"tick": 1, "summary": "again"}, "tick 1 is twice in one request - at `$.episodes[1].tick`"),
            (  # was a 201
                {"tick": 2, "summary": "   "},
                "Expected `str` with a character other than whitespace - at `$.episodes[1].summary`",
            ),
        ]
        for bad, message in cases:
            answer = http.post("/golems/g1/episodes", json={"episodes": [ok, bad]})
            assert (400, f"request body: {message}") == (answer.status_code, answer.json()["error"]["message"])
        assert 0 == http.get("/golems/g1").json()["episodes"]
        far = {"tick": 4_223_371_679, "summary": "the last minute"}
        assert 2 == http.post("/golems/g1/episodes", json={"episodes": [ok, far]}).json()["appended"]
    finally:
        served.stop()


def test_mcp_record_episodes_refuses_the_same_way(tmp_path: Path) -> None:
    """The MCP tool ``record_episodes`` names the same path as REST, in the typed JSON error body
    every other tool's argument errors use (InputError, ``arguments: ...``), and writes nothing."""
    import json

    import anyio

    from tests.server.test_mcp import _http

    served = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve")
    try:
        served.client().post("/golems", json={"golem_id": "g1"})

        async def main() -> str:
            async with _http(served, "write")() as client:
                episodes = [{"tick": 1, "summary": "ok"}, {"tick": 2**63, "summary": "far"}]
                refused = await client.call_tool("record_episodes", {"golem": "g1", "episodes": episodes})
                assert refused.is_error
                text: str = refused.content[0].text
                return text

        shown = anyio.run(main)
        assert {
            "type": "InputError",
            "message": "arguments: Expected `int` <= 4223371679 - at `$.episodes[1].tick`",
            "status": 400,
            "attributes": {},
        } == json.loads(shown)["error"]
        assert 0 == served.client().get("/golems/g1").json()["episodes"]
    finally:
        served.stop()


def _dreamt_golem(tmp_path: Path) -> tuple[Any, str]:
    """A server over SQLite with golem g1 dreamt once (so re-evaluation has proposed dreams to
    reinforce), and its store URL."""
    from tests.server.test_rest import _cycle, _episodes

    url = f"sqlite:///{tmp_path}/events.db"
    served = start_server(url, tmp_path / "serve")
    http = served.client("write")
    assert 201 == http.post("/golems", json={"golem_id": "g1"}).status_code
    assert 201 == http.post("/golems/g1/episodes", json={"episodes": _episodes()}).status_code
    # Enough outputs that some carry source episodes, which re-evaluation reinforces.
    assert "complete" == _cycle(http, "g1", {"max_outputs": 20})["status"]
    return served, url


def test_a_cycle_over_a_stored_tick_past_the_bound_is_a_400_that_writes_nothing(tmp_path: Path) -> None:
    """A log written before ticks were bounded may hold one past MAX_TICK: ``POST .../cycles`` is a
    400 InvalidEvent naming it, and the log is exactly as it was (before, re-evaluation had already
    written its review decisions when the fold stopped)."""
    from oneiros import Golems, open_store
    from oneiros.events._types import Episode, EpisodeRecorded

    served, url = _dreamt_golem(tmp_path)
    try:
        with open_store(url) as store:
            # As an older oneiros wrote it: straight to the stream, past the command's check.
            Golems(store).record("g1", [EpisodeRecorded(episode=Episode(tick=200_000_000_000, summary="ms"))])
            head = store.head()
        answer = served.client("write").post("/golems/g1/cycles", json={"wait": True})
        assert (400, "InvalidEvent") == (answer.status_code, answer.json()["error"]["type"])
        assert (
            "EpisodeRecorded field episode.tick: tick 200000000000 is past the largest tick 4223371679 "
            "(recorded by an older oneiros); this golem's episodes cannot be dreamt over"
        ) == answer.json()["error"]["message"]
        with open_store(url) as store:
            assert head == store.head()
    finally:
        served.stop()


def test_a_cycle_of_a_golem_still_dreaming_is_a_409_that_writes_nothing(tmp_path: Path) -> None:
    """A golem stranded mid-cycle cannot fall asleep: ``POST .../cycles`` is the machine's 409
    IllegalCommand, saying (as the CLI does) how to resume or end the cycle, and the log is exactly
    as it was (before, re-evaluation wrote first)."""
    from oneiros import Golems, open_store

    served, url = _dreamt_golem(tmp_path)
    try:
        with open_store(url) as store:
            Golems(store).fall_asleep("g1", "owner", budget_tokens=100)
            head = store.head()
        answer = served.client("write").post("/golems/g1/cycles", json={"wait": True})
        message = answer.json()["error"]["message"]
        assert (409, "golem 'g1' cannot 'fall_asleep' in state 'Dreaming_HypnagogicOnset'") == (
            answer.status_code,
            message.partition(": cycle ")[0],
        )
        # What the command line says too: where the cycle is and how to resume or end it.
        assert "`oneiros recover` resumes it if nothing does" in message
        with open_store(url) as store:
            assert head == store.head()
    finally:
        served.stop()
