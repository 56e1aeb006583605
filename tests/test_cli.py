"""The command line, driven as a user would: a fresh store, JSON output, errors as exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from oneiros.store._store import open_store
from tests.cli_runner import run_cli


def run(
    *args: str, store: str | None = None, env_store: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    import os

    env = {k: v for k, v in os.environ.items() if k != "ONEIROS_STORE"}
    if env_store:
        env["ONEIROS_STORE"] = env_store
    extra = ["--store", store] if store else []
    return run_cli([*args, *extra], env=env, cwd=cwd)


def test_dream_on_the_embedded_default(tmp_path: Path) -> None:
    """`oneiros dream --json` in an empty folder creates .oneiros/events.db and prints only JSON."""
    result = run("dream", "--json", "--sample", cwd=tmp_path)
    assert 0 == result.returncode, result.stderr
    out = json.loads(result.stdout)
    assert (tmp_path / ".oneiros" / "events.db").exists()
    assert "golem" == out["golem_id"]
    assert 24 == out["episodes_recorded"]
    assert out["complete"]["episodes_replayed"] > 0
    assert out["cycle_id"] == out["complete"]["cycle_id"]
    status = json.loads(run("status", "--json", cwd=tmp_path).stdout)
    assert out["events_appended"] + 1 + 24 == status["position"]


def test_replay_until_and_events(tmp_path: Path) -> None:
    """replay --until rebuilds an earlier state; events --golem lists the stream in order."""
    url = f"sqlite:///{tmp_path}/e.db"
    run("dream", "--json", "--sample", "--golem", "g7", store=url)
    early = json.loads(run("replay", "--until", "28", "--json", store=url).stdout)
    assert 28 == early["position"]
    (golem,) = early["golems"]
    assert ("g7", "Dreaming", "hypnagogic_onset", 28) == (
        golem["golem_id"],
        golem["mode"],
        golem["phase"],
        golem["version"],
    )
    listed = json.loads(run("events", "--golem", "g7", "--limit", "3", "--json", env_store=url).stdout)
    assert ["GolemCreated", "EpisodeRecorded", "EpisodeRecorded"] == [e["type"] for e in listed]
    assert [1, 2, 3] == [e["version"] for e in listed]
    later = run("events", "--golem", "g7", "--after", "100", "--limit", "4", "--json", env_store=url)
    store = open_store(url, create=False)
    rest = [r.position for r in store.read_stream("g7") if r.position > 100]
    store.close()
    assert (rest[:4], f"showing 4 of {len(rest)} events") == (
        [e["position"] for e in json.loads(later.stdout)],
        later.stderr.split(" —")[0].strip(),
    )


def test_a_second_dream_does_not_record_the_same_episodes_again(tmp_path: Path) -> None:
    """Episodes whose ticks are already recorded are skipped."""
    url = f"sqlite:///{tmp_path}/e.db"
    run("dream", "--json", "--sample", store=url)
    from oneiros.episodes._episodes import sample_episodes_path

    second = json.loads(run("dream", "--json", "--episodes", str(sample_episodes_path()), store=url).stdout)
    assert 0 == second["episodes_recorded"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("status", "--store", "nosuch://x"), "error: invalid store URL 'nosuch://x': unknown scheme 'nosuch'"),
        (
            ("dream", "--episodes", "/nonexistent.jsonl", "--store", "memory://"),
            "error: cannot read episodes from /nonexistent.jsonl",
        ),
    ],
)
def test_errors_are_one_line_and_exit_2(args: tuple[str, ...], message: str) -> None:
    """Bad input prints a one-line error naming the problem, with no traceback, and exits 2."""
    result = run(*args)
    assert 2 == result.returncode
    assert result.stderr.startswith(message)
    assert "Traceback" not in result.stderr


def _episode_lines(first: int, count: int) -> str:
    return "".join(json.dumps({"tick": t, "summary": f"trade {t} on eth"}) + "\n" for t in range(first, first + count))


def test_a_long_episode_file_with_a_bad_last_line_writes_nothing(tmp_path: Path) -> None:
    """A file longer than one recording batch is checked whole before the first batch is written: a
    bad line at its end names the line and leaves no store behind (exit 2)."""
    episodes = tmp_path / "episodes.jsonl"
    episodes.write_text(_episode_lines(1, 10_500) + '{"tick": "late", "summary": "x"}\n')
    result = run("dream", "--episodes", str(episodes), cwd=tmp_path)
    expected = f"error: cannot read episodes from {episodes}:10501: Expected `int`, got `str` - at `$.tick`"
    assert (2, expected) == (result.returncode, result.stderr.strip())
    assert not (tmp_path / ".oneiros").exists()


def test_an_import_cut_short_is_finished_by_running_it_again(tmp_path: Path) -> None:
    """Episodes are recorded a batch a transaction, so an import that stopped part-way (here: the
    first 10,000 ticks already in the log) is finished by running the same command again, which
    records only the ticks the golem does not have."""
    url = f"sqlite:///{tmp_path}/e.db"
    part, whole = tmp_path / "part.jsonl", tmp_path / "whole.jsonl"
    part.write_text(_episode_lines(1, 10_000))
    whole.write_text(_episode_lines(1, 12_345))
    first = json.loads(run("dream", "--json", "--episodes", str(part), store=url).stdout)
    again = json.loads(run("dream", "--json", "--episodes", str(whole), store=url).stdout)
    from oneiros.events._types import EpisodeRecorded
    from oneiros.store._store import open_store

    with open_store(url) as store:
        ticks = [r.event.episode.tick for r in store.read_stream("golem") if isinstance(r.event, EpisodeRecorded)]
    assert (10_000, 2_345, list(range(1, 12_346))) == (first["episodes_recorded"], again["episodes_recorded"], ticks)


def test_ctrl_c_during_an_in_process_dream_ends_the_cycle_interrupted(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) during `oneiros dream` without a queue records the cycle interrupted by its
    owner, says so in one line and exits 130; the golem was left Dreaming, for a reconciler to
    resume the cycle its owner had just stopped."""
    import os
    import signal
    import time

    from oneiros import Golems
    from oneiros.events._types import DreamInterrupted

    url = f"sqlite:///{tmp_path}/events.db"
    env = {k: v for k, v in os.environ.items() if k != "ONEIROS_STORE"}
    command = [sys.executable, "-m", "oneiros", "dream", "--sample", "--json", "--store", url, "--generator", "sleep:1"]
    dreaming = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        state = None
        while time.monotonic() < deadline and dreaming.poll() is None:
            if (tmp_path / "events.db").exists():
                store = open_store(url)
                try:
                    state = Golems(store).state("golem") if store.stream_version("golem") else None
                finally:
                    store.close()
                if state is not None and state.mode == "Dreaming":
                    break
            time.sleep(0.2)
        assert state is not None
        assert "Dreaming" == state.mode
        dreaming.send_signal(signal.SIGINT)
        _out, err = dreaming.communicate(timeout=60)
    finally:
        if dreaming.poll() is None:
            dreaming.kill()
            dreaming.wait(timeout=10)
    store = open_store(url)
    try:
        after = Golems(store).state("golem")
        ended = [r.event for r in store.read_stream("golem", types=(DreamInterrupted,))]
    finally:
        store.close()
    reason = "oneiros dream stopped by Ctrl-C"
    assert 130 == dreaming.returncode
    assert f"error: interrupted cycle {state.cycle_id} of golem in {ended[0].phase}: {reason}\n" == err
    assert ("Waking", 1) == (after.mode, after.cycles_interrupted)
    assert [(state.cycle_id, "owner", reason)] == [(e.cycle_id, e.source, e.reason) for e in ended]


def test_events_prints_payload_values_as_json(tmp_path: Path) -> None:
    """`oneiros events` printed Python's repr (tuples, None, single quotes); each value is JSON now,
    as `--json` gives it: the episode's tags a list, its empty fields null."""
    import os

    url = f"sqlite:///{tmp_path}/e.db"
    run(
        "dream",
        "--json",
        "--golem",
        "g1",
        "--episodes",
        str(Path(__file__).parents[1] / "examples" / "episodes.jsonl"),
        store=url,
    )
    env = {k: v for k, v in os.environ.items() if k != "ONEIROS_STORE"} | {"COLUMNS": "2000"}
    shown = run_cli(["events", "--golem", "g1", "--after", "1", "--limit", "1", "--store", url], env=env).stdout
    payload = shown.split("EpisodeRecorded", 1)[1].strip()
    assert payload.startswith('episode={"tick": 1, "summary": ')
    episode = json.loads(payload.removeprefix("episode="))
    assert (list, None) == (type(episode["tags"]), episode["embedding"])
