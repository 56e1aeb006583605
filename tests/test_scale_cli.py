"""Snapshots on the user's path: ``oneiros dream`` in fresh processes, configured by
``ONEIROS_SNAPSHOTS__EVERY``, with a damaged snapshot beside the log; and the scale benchmark at a
tiny size, so it cannot rot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from oneiros.fsm._golem import fold
from oneiros.runtime._golem_log import GolemLog
from oneiros.store._snapshots import unseal
from oneiros.store._store import open_store
from tests.cli_runner import run_cli

ROOT = Path(__file__).resolve().parent.parent


def dream(url: str, every: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ONEIROS_STORE"}
    env["ONEIROS_SNAPSHOTS__EVERY"] = every
    return run_cli(["dream", "--json", "--sample", "--seed", "3", "--store", url, *extra], env=env)


def _completed(result: subprocess.CompletedProcess[str]) -> None:
    assert 0 == result.returncode, result.stderr
    out = json.loads(result.stdout)
    assert (None, True) == (out["interrupted"], out["complete"] is not None)


def test_dreams_leave_snapshots_and_a_damaged_one_changes_nothing(tmp_path: Path) -> None:
    """Two ``oneiros dream`` runs with snapshots every 20 events leave state and cycle snapshots
    beside the SQLite file; after the cycle snapshot is damaged, a third run still completes, on
    the state a full fold of the log gives, and leaves a good snapshot again."""
    url = f"sqlite:///{tmp_path}/a.db"
    _completed(dream(url, "20"))
    _completed(dream(url, "20"))
    folder = tmp_path / "a.db.snapshots"
    assert ["golem.cycle-reader.snapshot", "golem.state.snapshot"] == sorted(p.name for p in folder.iterdir())
    damaged = folder / "golem.cycle-reader.snapshot"
    data = bytearray(damaged.read_bytes())
    data[len(data) // 3] ^= 0xFF
    damaged.write_bytes(bytes(data))
    assert unseal(bytes(data)) is None
    _completed(dream(url, "20"))
    store = open_store(url)
    history = store.read_stream("golem")
    full = fold("golem", history)
    assert (24, 3, 0) == (full.episodes, full.cycles_completed, full.cycles_interrupted)
    status = run_cli(["status", "--json", "--store", url], check=True)
    (row,) = json.loads(status.stdout)["golems"]
    assert (full.version, full.episodes, full.cycles_completed) == (
        row["version"],
        row["episodes"],
        row["cycles_completed"],
    )
    snapshot = unseal(damaged.read_bytes())
    assert snapshot is not None
    last = next(r for r in history if r.version == snapshot.version)
    restored = GolemLog.from_snapshot(snapshot, last)
    for record in history[snapshot.version :]:
        restored.apply(record)
    assert full == restored.state
    store.close()


def test_a_bad_snapshot_setting_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """A snapshot interval that is not a number stops the command with the setting named."""
    result = dream(f"sqlite:///{tmp_path}/a.db", "often")
    assert 2 == result.returncode
    assert "error: invalid setting snapshots.every = 'often' (from env ONEIROS_SNAPSHOTS__EVERY): expected int" == (
        " ".join(result.stderr.split())  # the console wraps long lines
    )


def test_the_scale_benchmark_runs_at_a_tiny_size() -> None:
    """``benchmarks/scale.py`` at 100 and 200 episodes ends with one JSON line holding, per size,
    recording, the cold and the steady cycle, the read baseline, and the growth exponents."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "scale.py"), "--sizes", "100,200", "--runs", "1"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert 0 == result.returncode, result.stderr
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    for label in ("100", "200"):
        for key in ("record", "cycle", "cycle_cold", "read"):
            assert figures[f"{key}_{label}_s"] > 0
        assert figures[f"cycle_{label}_rss_mb"] > 0
        assert figures[f"cycle_{label}_events"] > 0
    assert {"cycle_exponent_100_200", "record_exponent_100_200"} <= set(figures)
