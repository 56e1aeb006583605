"""Episode values the schema decodes but the engines cannot use (a tick past the year 9999, a pnl
near the largest float) are refused when written, on every way in, naming the field; any value
within the bounds dreams like any other."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oneiros import EpisodeFileError, Golems, InProcessExecutor, InvalidEvent, load_episodes, open_store
from oneiros.events import MAX_FIGURE, MAX_TICK, Episode, EpisodeRecorded, Outcome
from oneiros.server import EpisodesIn
from tests.server.conftest import start_server

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def test_the_largest_tick_is_the_last_minute_a_datetime_holds() -> None:
    """MAX_TICK read as minutes after the epoch is the last whole minute of the year 9999."""
    last_minute = datetime.max.replace(second=0, microsecond=0, tzinfo=UTC)
    assert last_minute == EPOCH + timedelta(minutes=MAX_TICK)


def _write(path: Path, *episodes: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in episodes))
    return path


@pytest.mark.parametrize(
    ("episode", "message"),
    [
        (
            {"tick": MAX_TICK + 1, "summary": "a millisecond clock"},
            "Expected a tick of at most 4223371679, got 4223371680 - at `$.tick`",
        ),
        (
            {"tick": 1, "summary": "a fortune", "outcome": {"pnl": 1e308}},
            "Expected a number between -1e+15 and 1e+15, got 1e+308 - at `$.outcome.pnl`",
        ),
        (
            {"tick": 1, "summary": "shock", "prediction_error": -2e15},
            "Expected a number between -1e+15 and 1e+15, got -2000000000000000.0 - at `$.prediction_error`",
        ),
        (
            {"tick": 1, "summary": "far", "embedding": [0.5, 3e15]},
            "Expected a number between -1e+15 and 1e+15, got 3000000000000000.0 - at `$.embedding[1]`",
        ),
    ],
)
def test_an_episode_file_out_of_bounds_is_refused_whole(tmp_path: Path, episode: dict[str, Any], message: str) -> None:
    """The file's second line is out of bounds: the error names the file, the line and the field,
    and neither line is written."""
    path = _write(tmp_path / "e.jsonl", {"tick": 0, "summary": "fine"}, episode)
    with pytest.raises(EpisodeFileError) as caught:
        load_episodes(path)
    assert f"cannot read episodes from {path}:2: {message}" == str(caught.value)


def test_the_store_refuses_an_episode_built_in_python_and_writes_none_of_its_batch() -> None:
    """Structs built in Python skip decoding: the store's write check refuses the batch all or none."""
    golems = Golems(open_store("memory://"))
    golems.create("g1")
    before = golems.store.head()
    with pytest.raises(InvalidEvent) as caught:
        golems.record_episodes(
            "g1", [Episode(tick=1, summary="ok"), Episode(tick=2, summary="x", outcome=Outcome(regret=float(10**16)))]
        )
    assert "EpisodeRecorded field episode.outcome.regret: expected a number between -1e+15 and 1e+15, got 1e+16" == (
        str(caught.value)
    )
    assert before == golems.store.head()


def test_the_http_body_names_the_episode_out_of_bounds() -> None:
    """The REST and MCP body (EpisodesIn) refuses as msgspec refuses any other field, with its path."""
    body = {"episodes": [{"tick": 1, "summary": "a"}, {"tick": 2**63, "summary": "b"}]}
    with pytest.raises(msgspec.ValidationError) as caught:
        msgspec.convert(body, EpisodesIn)
    assert f"Expected a tick of at most 4223371679, got {2**63} - at `$.episodes[1].tick`" == str(caught.value)


_figures = st.floats(min_value=-MAX_FIGURE, max_value=MAX_FIGURE, allow_nan=False)
_episodes = st.builds(
    Episode,
    tick=st.integers(0, MAX_TICK),
    summary=st.sampled_from(["eth range floor bounce", "btc breakout failed", "sol funding spike"]),
    tags=st.sampled_from([("eth",), ("btc", "breakout"), ("sol",)]),
    time=st.none() | st.datetimes(timezones=st.just(UTC)),
    prediction_error=_figures,
    outcome=st.builds(Outcome, surprise=_figures, pnl=_figures, regret=_figures),
    embedding=st.none() | st.tuples(_figures, _figures, _figures),
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_episodes, min_size=2, max_size=6))
def test_any_episode_within_the_bounds_dreams(episodes: list[Episode]) -> None:
    """Episodes anywhere within the bounds (extreme ticks, times from year 1 to 9999, figures of
    1e15) are recorded and dreamt on to the end, twice: no cycle is interrupted."""
    golems = Golems(open_store("memory://"))
    golems.create("g1")
    golems.record_episodes("g1", episodes)
    executor = InProcessExecutor(golems)
    statuses = [executor.run_cycle("g1").complete is not None for _ in range(2)]
    assert [True, True] == statuses


def test_the_cli_refuses_a_millisecond_tick_and_creates_no_store(tmp_path: Path) -> None:
    """`oneiros dream --episodes` with a millisecond timestamp for a tick: one line naming the line and
    the field, exit 2, no traceback, and no store."""
    path = _write(tmp_path / "ms.jsonl", {"tick": 1_764_000_000_000, "summary": "a millisecond clock"})
    done = subprocess.run(
        [sys.executable, "-m", "oneiros", "dream", "--episodes", str(path), "--golem", "g1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    expected = (
        f"error: cannot read episodes from {path}:1: Expected a tick of at most 4223371679, "
        "got 1764000000000 - at `$.tick`\n"
    )
    assert (2, expected) == (done.returncode, done.stderr)
    assert not (tmp_path / ".oneiros").exists()


def test_the_server_answers_400_naming_the_episode_and_writes_nothing(tmp_path: Path) -> None:
    """`POST /golems/g1/episodes` with one episode out of bounds among good ones: 400 naming
    `$.episodes[1].outcome.pnl`, and the golem's episode count is unchanged."""
    running = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve")
    try:
        http = running.client("write")
        assert 201 == http.post("/golems", json={"golem_id": "g1"}).status_code
        good = {"tick": 1, "summary": "eth bounce"}
        refused = http.post("/golems/g1/episodes", json={"episodes": [good, {**good, "outcome": {"pnl": 1e308}}]})
        expected = (
            "request body: Expected a number between -1e+15 and 1e+15, got 1e+308 - at `$.episodes[1].outcome.pnl`"
        )
        assert (400, expected) == (refused.status_code, refused.json()["error"]["message"])
        assert 0 == http.get("/golems/g1").json()["episodes"]
    finally:
        running.stop()


def test_a_tick_is_recorded_once_per_golem_within_a_file_and_across_imports(tmp_path: Path) -> None:
    """Two episodes with one tick in a file keep the first, and importing the file again records
    nothing: both times the command says how many it skipped."""
    path = _write(
        tmp_path / "dup.jsonl",
        {"tick": 1, "summary": "first eth bounce", "tags": ["eth"]},
        {"tick": 1, "summary": "second eth bounce", "tags": ["eth"]},
        {"tick": 2, "summary": "eth breakout", "tags": ["eth"]},
    )

    def dream() -> tuple[int, list[str]]:
        done = subprocess.run(
            [sys.executable, "-m", "oneiros", "dream", "--episodes", str(path), "--golem", "g1"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        return done.returncode, [line for line in done.stderr.splitlines() if line.startswith("skipped")]

    assert (0, ["skipped 1 episode with a tick g1 already had"]) == dream()
    assert (0, ["skipped 3 episodes with a tick g1 already had"]) == dream()
    store = open_store(f"sqlite:///{tmp_path}/.oneiros/events.db")
    try:
        episodes = [r.event.episode for r in store.read_stream("g1") if isinstance(r.event, EpisodeRecorded)]
    finally:
        store.close()
    assert [(1, "first eth bounce"), (2, "eth breakout")] == [(e.tick, e.summary) for e in episodes]
