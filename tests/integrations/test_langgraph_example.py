"""examples/langgraph_agent.py runs as a user runs it: offline, twice in a row from an empty folder,
and on a store of the user's own, where the second run starts from what the first kept."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("langgraph", reason="the langgraph extra is not installed")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "langgraph_agent.py"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def _run(cwd: Path, *args: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert 0 == result.returncode, result.stderr[-3000:]
    return result.stdout.splitlines()


def _assert_remembered(lines: list[str], known: int) -> None:
    """The second session answers from the first session's memories, after one dream, and the
    ranking shows memories (and dreams, where the night made one that matches), and the memory block facts."""
    assert f"sam has {known} memories in the store" == lines[0]
    assert any(re.fullmatch(r"dreamt cycle [0-9a-f]{32}: episodes replayed [1-9][0-9]*", line) for line in lines)
    second = lines[lines.index("-- second session (a new store object, as another process would open it)") :]
    assert "agent: From what you told me: I moved to Lisbon in March for a job at a harbour startup." in second
    assert "agent: From what you told me: I am allergic to peanuts, so no satay for me." in second
    assert "agent: From what you told me: My sister Ana visits every summer with her two dogs." in second
    ranked = lines[lines.index("-- recalled for 'summer dogs', memories and dreams in one ranking:") + 1 :]
    assert ranked[0].startswith("  sam/memories ")
    assert ranked[0].endswith("My sister Ana visits every summer with her two dogs")
    # Which dream outputs match the query depends on the night (a new cycle id each run), so the
    # example's ranking is only held to its two namespaces here; tests/integrations/test_langgraph.py
    # checks dreams ranking beside items on a fixed night.
    shown = ranked[: next((i for i, line in enumerate(ranked) if line.startswith("--")), len(ranked))]
    assert {line.split()[0] for line in shown} <= {"sam/memories", "sam/dreams"}
    block = lines[next(i for i, line in enumerate(lines) if line.startswith("-- memory block for a prompt")) + 1 :]
    assert "## Recalled for: Lisbon cello" == block[0]
    assert any(line.startswith("- [fact] ") and ("Lisbon" in line or "cello" in line) for line in block)


def test_the_example_runs_twice_in_a_row_from_an_empty_folder(tmp_path: Path) -> None:
    """With no store named, each run keeps its memories in a temporary SQLite file of its own."""
    for _ in range(2):
        _assert_remembered(_run(tmp_path), known=0)


def test_a_second_run_on_the_same_store_starts_from_the_first_ones_memories(tmp_path: Path) -> None:
    """On a store URL of the user's, the second run finds the four memories the first kept, and
    keeping them again adds none."""
    url = f"sqlite:///{tmp_path}/agent.db"
    _assert_remembered(_run(tmp_path, url), known=0)
    _assert_remembered(_run(tmp_path, url), known=4)
