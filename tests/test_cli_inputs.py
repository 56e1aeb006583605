"""Issue 12's list of ordinary mistakes, driven through the ``oneiros`` command: each ends in one
line and the right exit code, and writes nothing it should not."""

from __future__ import annotations

import json
from pathlib import Path

from oneiros.events._types import EpisodeRecorded
from oneiros.store._store import open_store
from tests.test_cli import run
from tests.workers.conftest import _free_port


def _tree(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def test_run_refuses_a_tick_of_zero_or_less_and_creates_nothing(tmp_path: Path) -> None:
    """`run --tick-seconds 0` and `-1`: exit 2, Typer's one message, no traceback, no store."""
    for value in ("0", "-1"):
        result = run("run", "--tick-seconds", value, "--ticks", "1", cwd=tmp_path)
        assert 2 == result.returncode
        assert "Invalid value for '--tick-seconds'" in result.stderr
        assert "Traceback" not in result.stderr
        assert [] == _tree(tmp_path)


def test_run_on_a_new_golem_creates_it_only_with_sample(tmp_path: Path) -> None:
    """`run --golem typo` without --sample creates no golem (exit 2, one line); with --sample the
    golem it creates has the sample's episodes."""
    url = f"sqlite:///{tmp_path}/events.db"
    assert 0 == run("golem", "create", "known", store=url).returncode
    typo = run("run", "--golem", "typo", "--ticks", "1", "--tick-seconds", "0.01", store=url, cwd=tmp_path)
    assert (2, "error: golem 'typo' does not exist\n") == (typo.returncode, typo.stderr)
    made = run("run", "--golem", "demo", "--sample", "--ticks", "1", "--tick-seconds", "0.01", store=url, cwd=tmp_path)
    assert 0 == made.returncode, made.stderr
    store = open_store(url)
    assert 0 == store.stream_version("typo")
    assert 24 == len([r for r in store.read_stream("demo") if isinstance(r.event, EpisodeRecorded)])
    store.close()


def test_should_dream_at_a_time_before_the_last_dream_answers(tmp_path: Path) -> None:
    """`should-dream --at` a time before the golem's last dream (a clock set back) answers with an
    urgency in [0, 1], exit 0."""
    url = f"sqlite:///{tmp_path}/events.db"
    assert 0 == run("dream", "--json", "--sample", "--golem", "g", store=url).returncode
    result = run("should-dream", "--golem", "g", "--json", "--at", "2000-01-01T00:00:00+00:00", store=url)
    assert 0 == result.returncode, result.stderr
    answer = json.loads(result.stdout)
    assert 0.0 <= answer["urgency"] <= 1.0
    assert answer["dream"] is False


def test_dream_on_an_unreachable_queue_writes_nothing(tmp_path: Path) -> None:
    """`dream --queue` with Redis down: one line naming host, port and database (never the
    password), exit 2, and the log as it was: no DreamStart, no DreamInterrupted, and for a new
    golem not even GolemCreated or its episodes."""
    url = f"sqlite:///{tmp_path}/events.db"
    assert 0 == run("dream", "--json", "--sample", "--golem", "g", store=url).returncode
    store = open_store(url)
    before = list(store.read_all())
    port = _free_port()
    queue = f"redis://:sekret@127.0.0.1:{port}/3"
    for golem in ("g", "fresh"):
        result = run("dream", "--golem", golem, "--sample", "--queue", queue, store=url)
        assert 2 == result.returncode
        expected = (
            f"error: cannot reach the queue at redis 127.0.0.1:{port}/3: "
            f"Error 111 connecting to 127.0.0.1:{port}. Connection refused.\n"
        )
        assert expected == result.stderr
        assert "sekret" not in result.stderr + result.stdout
    assert before == list(store.read_all())
    store.close()
