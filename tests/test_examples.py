"""The agent integration examples run as a user runs them (``python examples/X.py`` in an empty
folder): through Python, HTTP (their own `oneiros serve`) and MCP (stdio, and a server's /mcp)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.conftest import start_server

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

pytestmark = pytest.mark.timeout(180)


def _run(name: str, cwd: Path, *args: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert 0 == result.returncode, result.stderr[-3000:]
    return result.stdout.splitlines()


def _assert_the_loop(lines: list[str], asked: str | re.Pattern[str], *, again: bool = False) -> None:
    """Recorded, asked, dreamt, woke up, recalled dreams apart from memories, reported an outcome;
    ``again`` (a run on a golem an earlier run made): what earlier outcomes moved may have moved."""
    assert "recorded 16 episodes for coder" == lines[0]
    if isinstance(asked, str):
        assert asked == lines[1]
    else:
        assert asked.fullmatch(lines[1]), lines[1]
    assert re.fullmatch(r"dreamt cycle [0-9a-f]{32}: .+", lines[2]), lines[2]
    assert lines[3].startswith("woke up with: While dreaming I replayed "), lines[3]
    recalled = next(line for line in lines if line.startswith("recall 'deploy canary': "))
    assert re.fullmatch(r"recall 'deploy canary': [1-3] memories, [1-3] dreams", recalled), recalled
    dreams = [line for line in lines if line.startswith("  dream ")]
    assert dreams, lines
    moved = "proposed|reinforced|promoted|refuted|stale|displaced" if again else "proposed"
    statuses = rf" \(({moved}), confidence "
    assert all(re.search(statuses, line) for line in dreams), dreams
    assert lines[-1].startswith("outcome recorded at log position "), lines[-1]


def test_the_python_loop_dreams_when_should_dream_says_so(tmp_path: Path) -> None:
    """agent_loop.py on its simulated clock: at 03:00 after a day's work the Bumblebee schedule says
    dream; the cycle it runs is in the store the CLI reads afterwards."""
    lines = _run("agent_loop.py", tmp_path)
    _assert_the_loop(lines, "should_dream: yes (idle)")
    journal = subprocess.run(
        [sys.executable, "-m", "oneiros", "journal", "--golem", "coder", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    (entry,) = json.loads(journal.stdout)
    assert ("coder", "complete") == (entry["golem_id"], entry["status"])
    assert f"dreamt cycle {entry['cycle_id']}: " in lines[2]


# The server's own clock and default schedule decide; at night the circadian gate may pass.
NOT_NOW = re.compile(
    r"should_dream: not now \(episodes, enabled, silence(, circadian)?, urgency\); dreaming on request"
)


def test_the_http_loop_against_its_own_server(tmp_path: Path) -> None:
    """agent_http.py starts `oneiros serve` with a write token, runs the loop over REST, stops it."""
    _assert_the_loop(_run("agent_http.py", tmp_path), NOT_NOW)


def test_the_mcp_loop_over_stdio(tmp_path: Path) -> None:
    """agent_mcp.py launches `oneiros mcp` over stdio and runs the loop with MCP tools."""
    _assert_the_loop(_run("agent_mcp.py", tmp_path), NOT_NOW)


def test_the_mcp_loop_over_streamable_http(tmp_path: Path) -> None:
    """agent_mcp.py URL TOKEN runs the same loop on a running server's /mcp endpoint."""
    server = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve")
    try:
        _assert_the_loop(_run("agent_mcp.py", tmp_path, server.url, server.tokens["write"]), NOT_NOW)
    finally:
        server.stop()


def test_the_http_and_mcp_loops_run_again_on_a_server_that_has_their_golem(tmp_path: Path) -> None:
    """agent_http.py URL TOKEN twice, then agent_mcp.py URL TOKEN, against one running server: the
    second run finds golem `coder` there and carries on (it printed a traceback)."""
    server = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve")
    try:
        token = server.tokens["write"]
        _assert_the_loop(_run("agent_http.py", tmp_path, server.url, token), NOT_NOW)
        again = re.compile(r"should_dream: (yes \(\w+\)|not now \([a-z_, ]+\); dreaming on request)")
        _assert_the_loop(_run("agent_http.py", tmp_path, server.url, token), again, again=True)
        _assert_the_loop(_run("agent_mcp.py", tmp_path, server.url, token), again, again=True)
    finally:
        server.stop()


@pytest.mark.parametrize("name", ["agent_http.py", "agent_mcp.py"])
def test_a_url_without_a_token_is_refused(tmp_path: Path, name: str) -> None:
    """`python examples/X.py URL` (no token) exits 2 with its usage, rather than ignoring the URL and
    starting a server of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), "http://127.0.0.1:8420"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    usage = f"usage: python {EXAMPLES / name} [URL TOKEN]  (a running server and a write token, or neither)\n"
    assert (2, "", usage) == (done.returncode, done.stdout, done.stderr)
    assert [] == list(tmp_path.iterdir())
