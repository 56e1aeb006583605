"""Episode ticks and outcome figures past what the engines can handle are refused where episodes
come in (the episodes file, ``Golems.record_episodes``), naming the line and field, with nothing
written; any episode within the bounds is recorded and dreamt over. A tick twice in one file is an
error naming both lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oneiros import EpisodeFileError, Golems, InProcessExecutor, InvalidEvent, open_store
from oneiros.episodes._episodes import load_episodes
from oneiros.events._types import MAX_FIGURE, MAX_TICK, Episode, EpisodeRecorded, Outcome
from tests.test_cli import run
from tests.workers.conftest import redis_url  # noqa: F401 - the fixture


def _file(path: Path, *episodes: dict[str, object]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in episodes))
    return path


def test_max_tick_is_the_last_minute_a_datetime_holds() -> None:
    """A tick with no time is minutes after 1970; MAX_TICK is 9999-12-31 23:59, the last one."""
    from oneiros.episodes._fold import episode_time

    assert "9999-12-31T23:59:00+00:00" == episode_time(Episode(tick=MAX_TICK, summary="s")).isoformat()


@pytest.mark.parametrize(
    ("episode", "reason"),
    [
        ({"tick": MAX_TICK + 1, "summary": "x"}, "Expected `int` <= 4223371679 - at `$.tick`"),
        ({"tick": 1_732_500_000_000, "summary": "ms"}, "Expected `int` <= 4223371679 - at `$.tick`"),
        ({"tick": 2**63, "summary": "x"}, "Expected `int` <= 4223371679 - at `$.tick`"),
        ({"tick": -1, "summary": "x"}, "Expected `int` >= 0 - at `$.tick`"),
        ({"tick": 3, "summary": " \t "}, "Expected `str` with a character other than whitespace - at `$.summary`"),
        (
            {"tick": 3, "summary": "x", "outcome": {"pnl": 1e308}},
            "Expected `float` <= 1000000000000.0 - at `$.outcome.pnl`",
        ),
        (
            {"tick": 3, "summary": "x", "outcome": {"regret": -2e12}},
            "Expected `float` >= -1000000000000.0 - at `$.outcome.regret`",
        ),
        (
            {"tick": 3, "summary": "x", "prediction_error": 1e13},
            "Expected `float` <= 1000000000000.0 - at `$.prediction_error`",
        ),
    ],
)
def test_dream_refuses_an_episode_past_the_bounds_and_creates_nothing(
    tmp_path: Path, episode: dict[str, object], reason: str
) -> None:
    """`oneiros dream --episodes` with a tick or figure past its bound: one line naming line 2 and
    the field, exit 2, no store created."""
    path = _file(tmp_path / "eps.jsonl", {"tick": 1, "summary": "fine"}, episode)
    result = run("dream", "--golem", "g1", "--episodes", str(path), store=f"sqlite:///{tmp_path}/e.db")
    assert 2 == result.returncode
    assert f"error: cannot read episodes from {path}:2: {reason}\n" == result.stderr
    assert not (tmp_path / "e.db").exists()


def test_a_tick_twice_in_one_file_names_both_lines(tmp_path: Path) -> None:
    """Of two lines with one tick dreams would only see the second: the file is refused, naming
    the repeat and the line it repeats."""
    path = tmp_path / "eps.jsonl"
    path.write_text('{"tick": 7, "summary": "a"}\n\n{"tick": 8, "summary": "b"}\n{"tick": 7, "summary": "c"}\n')
    result = run("dream", "--golem", "g1", "--episodes", str(path), store=f"sqlite:///{tmp_path}/e.db")
    assert 2 == result.returncode
    assert f"error: cannot read episodes from {path}:4: tick 7 is already on line 1\n" == result.stderr
    assert not (tmp_path / "e.db").exists()


def test_a_second_import_skips_the_ticks_recorded_and_says_so(tmp_path: Path) -> None:
    """Running an import again finishes it: the ticks the golem has are skipped, and counted."""
    store = f"sqlite:///{tmp_path}/e.db"
    first = _file(tmp_path / "a.jsonl", {"tick": 1, "summary": "a"}, {"tick": 2, "summary": "b"})
    assert 0 == run("dream", "--golem", "g1", "--episodes", str(first), store=store).returncode
    again = _file(tmp_path / "b.jsonl", {"tick": 2, "summary": "b again"}, {"tick": 3, "summary": "c"})
    result = run("dream", "--golem", "g1", "--episodes", str(again), store=store)
    assert 0 == result.returncode, result.stderr
    assert "skipped 1 episode whose tick golem 'g1' already has\n" == result.stderr
    recorded = [
        r.event.episode.summary for r in open_store(store).read_stream("g1") if isinstance(r.event, EpisodeRecorded)
    ]
    assert ["a", "b", "c"] == recorded


def test_an_out_of_bounds_episode_from_python_writes_nothing() -> None:
    """``record_episodes`` refuses the batch like the store refuses a NaN, naming the field; a
    summary of only whitespace too."""
    golems = Golems(open_store("memory://"))
    golems.create("g1")
    head = golems.store.head()
    with pytest.raises(InvalidEvent) as caught:
        golems.record_episodes("g1", [Episode(tick=1, summary="ok"), Episode(tick=2**63, summary="far")])
    assert "EpisodeRecorded field episode.tick: expected `int` <= 4223371679" == str(caught.value)
    with pytest.raises(InvalidEvent) as caught:
        golems.record_episodes("g1", [Episode(tick=3, summary="nan", outcome=Outcome(pnl=float("nan")))])
    assert "EpisodeRecorded field episode.outcome.pnl: expected a finite number, got NaN or infinity" == str(
        caught.value
    )
    with pytest.raises(InvalidEvent) as caught:  # a summary of only spaces was recorded
        golems.record_episodes("g1", [Episode(tick=4, summary="   ")])
    assert "EpisodeRecorded field episode.summary: expected `str` with a character other than whitespace" == str(
        caught.value
    )
    assert head == golems.store.head()


_figure = st.floats(min_value=-MAX_FIGURE, max_value=MAX_FIGURE)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tick=st.integers(0, MAX_TICK), pnl=_figure, surprise=_figure)
def test_any_episode_within_the_bounds_is_read_and_dreamt(
    tmp_path: Path, tick: int, pnl: float, surprise: float
) -> None:
    """Any tick and figures within the bounds: the file reads, and a cycle over it completes."""
    path = _file(
        tmp_path / "eps.jsonl",
        {"tick": 0, "summary": "start"},
        *([{"tick": tick, "summary": "far", "outcome": {"pnl": pnl, "surprise": surprise}}] if tick else []),
    )
    golems = Golems(open_store("memory://"))
    golems.create("g1")
    golems.record_episodes("g1", load_episodes(path))
    result = InProcessExecutor(golems).run_cycle("g1")
    assert (None, None) == (result.interrupted, result.empty)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tick=st.one_of(st.integers(MAX_TICK + 1, 2**80), st.integers(-(2**80), -1)))
def test_any_tick_outside_the_bounds_is_refused_with_nothing_written(tmp_path: Path, tick: int) -> None:
    """Any tick past MAX_TICK or below 0: the file is refused at its line, and so is the batch."""
    path = _file(tmp_path / "eps.jsonl", {"tick": 1, "summary": "ok"}, {"tick": tick, "summary": "x"})
    with pytest.raises(EpisodeFileError) as caught:
        load_episodes(path)
    assert 2 == caught.value.line
    golems = Golems(open_store("memory://"))
    golems.create("g1")
    head = golems.store.head()
    with pytest.raises(InvalidEvent):
        golems.record_episodes("g1", [Episode(tick=1, summary="ok"), Episode(tick=tick, summary="x")])
    assert head == golems.store.head()


def test_dream_over_a_stored_tick_past_the_bound_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    """A log written before ticks were bounded may hold one past MAX_TICK: `dream` says so in one
    line (exit 2) before the cycle starts, and appends nothing."""
    url = f"sqlite:///{tmp_path}/e.db"
    golems = Golems(open_store(url))
    golems.create("g1")
    golems.record_episodes("g1", [Episode(tick=1, summary="ok")])
    # As an older oneiros wrote it: straight to the stream, past the command's check.
    golems.record("g1", [EpisodeRecorded(episode=Episode(tick=200_000_000_000, summary="ms"))])
    head = golems.store.head()
    result = run("dream", "--golem", "g1", store=url)
    assert 2 == result.returncode
    assert (
        "error: EpisodeRecorded field episode.tick: tick 200000000000 is past the largest tick 4223371679 "
        "(recorded by an older oneiros); this golem's episodes cannot be dreamt over\n"
    ) == result.stderr.replace("\n", " ").rstrip() + "\n"
    assert head == open_store(url).head()


def test_dream_on_a_queue_over_a_stored_tick_past_the_bound_writes_nothing(
    tmp_path: Path,
    redis_url: str,  # noqa: F811
) -> None:
    """With a queue, `dream` says the same one line (exit 2) before it enqueues anything: before,
    it appended the cycle's DreamStart and left the fold to fail on a worker."""
    url = f"sqlite:///{tmp_path}/e.db"
    golems = Golems(open_store(url))
    golems.create("g1")
    golems.record("g1", [EpisodeRecorded(episode=Episode(tick=200_000_000_000, summary="ms"))])
    head = golems.store.head()
    result = run("dream", "--golem", "g1", "--queue", redis_url, store=url)
    assert (
        2,
        "error: EpisodeRecorded field episode.tick: tick 200000000000 is past the largest tick 4223371679 "
        "(recorded by an older oneiros); this golem's episodes cannot be dreamt over\n",
    ) == (result.returncode, result.stderr.replace("\n", " ").rstrip() + "\n")
    assert head == open_store(url).head()


def test_an_outcome_tick_past_the_bound_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    """`oneiros outcome` at a tick past MAX_TICK (or below 0): one line, exit 2, the log unchanged;
    an outcome is matched against episodes by tick, so it takes the episodes' bound."""
    store = f"sqlite:///{tmp_path}/e.db"
    path = _file(tmp_path / "eps.jsonl", {"tick": 1, "summary": "eth bounce", "tags": ["eth"]})
    assert 0 == run("dream", "--golem", "g1", "--episodes", str(path), store=store).returncode
    with open_store(store) as opened:
        head = opened.head()
    said = []
    for tick in (MAX_TICK + 1, -1):
        result = run("outcome", "--golem", "g1", "--tick", str(tick), "--verdict", "confirms", store=store)
        said.append((result.returncode, result.stderr))
    assert [
        (2, f"error: outcome tick {MAX_TICK + 1} must be 0-{MAX_TICK}\n"),
        (2, f"error: outcome tick -1 must be 0-{MAX_TICK}\n"),
    ] == said
    with open_store(store) as opened:
        assert head == opened.head()
