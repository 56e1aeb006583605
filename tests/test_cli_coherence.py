"""One command line: `--golem` means one thing, ONEIROS_* variables reach every command they
concern, tables fold instead of truncating at 80 columns, ids are typed as unique prefixes, one
quality figure, the daemon says why each tick, lists say where they stopped, and `dream` on a
stranded golem prints its error before any progress. Each driven through the `oneiros` command."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oneiros._errors import AmbiguousId, UnknownId
from oneiros.cli._common import resolve_id, short_ids
from tests.cli_runner import run_cli
from tests.workers.conftest import redis_url  # noqa: F401 - the fixture, shared


def oneiros(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
    environ |= {"COLUMNS": "80", "ONEIROS_SPANS": "off"} | (env or {})
    return run_cli(args, cwd=cwd, env=environ)


def oneiros_process(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """As ``oneiros`` but in a fresh interpreter, for what only a new process shows (its imports)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
    environ |= {"COLUMNS": "80", "ONEIROS_SPANS": "off"} | (env or {})
    return subprocess.run(
        [sys.executable, "-m", "oneiros", *args], cwd=cwd, env=environ, capture_output=True, text=True, check=False
    )


def ok(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    result = oneiros(cwd, *args, env=env)
    assert 0 == result.returncode, result.stderr
    return result


@pytest.fixture(scope="module")
def dreamt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose embedded store holds golem `golem` after `oneiros dream --sample`."""
    home = tmp_path_factory.mktemp("dreamt")
    cycle = json.loads(ok(home, "dream", "--sample", "--json").stdout)["cycle_id"]
    (home / "cycle").write_text(cycle)
    return home


@pytest.fixture
def own(dreamt: Path, tmp_path: Path) -> Path:
    """A copy of the dreamt folder for a test that writes."""
    return Path(shutil.copytree(dreamt, tmp_path / "own"))


def _cycle(home: Path) -> str:
    """The cycle `dream --sample` ran in ``home``."""
    if (home / "cycle").exists():
        return (home / "cycle").read_text()
    return str(json.loads(ok(home, "journal", "--json").stdout)[0]["cycle_id"])


# -- --golem ----------------------------------------------------------------------------------


def test_golem_defaults_to_the_config_everywhere(tmp_path: Path) -> None:
    """ONEIROS_GOLEM names the golem for dream, report, budget, outcome and memory alike; --golem
    overrides it; the oneiros.toml `golem` key does the same below the variable."""
    env = {"ONEIROS_GOLEM": "ada"}
    dreamt = json.loads(ok(tmp_path, "dream", "--sample", "--json", env=env).stdout)
    assert "ada" == dreamt["golem_id"]
    assert dreamt["cycle_id"] == json.loads(ok(tmp_path, "report", "--json", env=env).stdout)["report"]["cycle_id"]
    missing = oneiros(tmp_path, "report", "--golem", "bob", env=env)
    assert (2, "error: golem 'bob' does not exist\n") == (missing.returncode, missing.stderr)
    (tmp_path / "oneiros.toml").write_text('golem = "ada"\n')
    assert "ada" == json.loads(ok(tmp_path, "budget", "--json").stdout)["golem_id"]


def test_golem_on_a_list_command_is_a_filter(dreamt: Path) -> None:
    """On journal and staging `--golem` keeps only that golem's rows, without it every golem's; a
    golem that does not exist is an error, as on every other command (not an empty list)."""
    assert {"golem"} == {e["golem_id"] for e in json.loads(ok(dreamt, "journal", "--golem", "golem", "--json").stdout)}
    assert {"golem"} == {e["golem_id"] for e in json.loads(ok(dreamt, "staging", "--json").stdout)}
    missing = oneiros(dreamt, "journal", "--golem", "nobody", "--json")
    assert (2, "", "error: golem 'nobody' does not exist\n") == (missing.returncode, missing.stdout, missing.stderr)


# -- ONEIROS_* -------------------------------------------------------------------------------


def test_dream_honours_oneiros_queue_as_worker_does(tmp_path: Path, redis_url: str) -> None:  # noqa: F811
    """With ONEIROS_QUEUE set, `dream` hands the cycle to the workers instead of running it here."""
    out = json.loads(ok(tmp_path, "dream", "--sample", "--json", env={"ONEIROS_QUEUE": redis_url}).stdout)
    assert ("enqueued", redis_url) == (out["status"], out["queue"])


def test_readers_honour_the_config_files_store(dreamt: Path, tmp_path: Path) -> None:
    """The `store` key of oneiros.toml reaches the commands that only read, as ONEIROS_STORE does."""
    (tmp_path / "oneiros.toml").write_text(f'store = "sqlite:///{dreamt}/.oneiros/events.db"\n')
    assert [_cycle(dreamt)] == [e["cycle_id"] for e in json.loads(ok(tmp_path, "journal", "--json").stdout)]
    assert [] == sorted(p.name for p in tmp_path.iterdir() if p.name != "oneiros.toml")


# -- tables at 80 columns -----------------------------------------------------------------------


def _ink(text: str) -> list[str]:
    """The characters a table prints, wherever its folding put them."""
    return sorted(c for c in text if not c.isspace() and c != "─")


@pytest.mark.parametrize("command", ["journal", "status", "events"])
def test_tables_fold_within_80_columns(dreamt: Path, command: str) -> None:
    """At COLUMNS=80 no line is wider, nothing is cut to `…` or cropped at the edge (the table
    prints every character it prints at 400 columns), and the ids and states are whole."""
    out = ok(dreamt, command).stdout
    assert [] == [line for line in out.splitlines() if len(line) > 80]
    assert "…" not in out
    assert _ink(ok(dreamt, command, env={"COLUMNS": "400"}).stdout) == _ink(out)
    cycle = _cycle(dreamt)
    if command == "journal":
        assert re.search(rf"\b{cycle[:8]}\s+golem\s+complete\s", out), out
    if command == "status":
        assert re.search(r"\bgolem\s+Waking\s+-\s", out), out


def test_staging_under_120_columns_is_a_block_per_entry(dreamt: Path) -> None:
    """Under 120 columns the staging buffer is an entry a block: its short id, kind, status and
    confidence on one line, then its whole sentence and its criterion wrapped at the full width,
    no line wider than the terminal; from 120 columns it is a table."""
    out = ok(dreamt, "staging").stdout
    assert [] == [line for line in out.splitlines() if len(line) > 80]
    entries = json.loads(ok(dreamt, "staging", "--json").stdout)
    flat = " ".join(out.split())
    cycle = _cycle(dreamt)
    for number, entry in enumerate(entries, start=1):
        kind = entry["kind"].replace("_", " ")
        head = rf"^{cycle[:8]}:{number:03d}  {kind}  {entry['status']}  \d\.\d\d \(\d+/\d+\)$"
        assert re.search(head, out, re.M), out
        assert " ".join(entry["text"].split()) in flat
    wide = ok(dreamt, "staging", env={"COLUMNS": "160"}).stdout
    assert re.search(rf"^\s+{cycle[:8]}:001\s+\S+\s+(displaced|proposed)\s", wide, re.M), wide


def test_the_short_entry_id_staging_shows_names_the_entry_in_lineage(dreamt: Path) -> None:
    """`lineage` takes the short entry id (`CYCLEPREFIX:NNN`) the staging buffer shows."""
    shown = re.search(r"^([0-9a-f]{8,}:\d{3})  ", ok(dreamt, "staging").stdout, re.M)
    assert shown is not None
    found = json.loads(ok(dreamt, "lineage", shown.group(1), "--json").stdout)
    assert found["entry_id"].startswith(shown.group(1).split(":")[0])
    assert found["entry_id"].endswith(":" + shown.group(1).split(":")[1])


def test_status_names_who_holds_a_cycle_run_without_a_queue(own: Path) -> None:
    """Without a queue, `status` names the process holding a cycle's lease, and says that nothing
    does (pointing at `recover`) once the lease is gone, as a killed `dream` leaves it."""
    import os
    import socket
    import time

    from oneiros import open_store
    from oneiros.store._leases import Lease, open_leases

    cycle = _strand(own)
    stranded = json.loads(ok(own, "status", "--json").stdout)
    assert ["nothing holds it (oneiros recover)"] == [c["worker"] for c in stranded["running"]]
    with open_store(f"sqlite:///{own}/.oneiros/events.db") as store:
        holder = f"{socket.gethostname()} pid {os.getpid()}"
        lease = Lease(
            golem_id="g", cycle_id=cycle, phase=None, holder=holder, expires_at=time.time() + 60,
            host=socket.gethostname(), pid=os.getpid(),
        )  # fmt: skip
        assert open_leases(store).acquire(lease) is None
    held = json.loads(ok(own, "status", "--json").stdout)
    assert [holder] == [c["worker"] for c in held["running"]]


def test_a_stranded_golems_state_and_cycle_show_whole(own: Path) -> None:
    """A golem stopped mid-cycle shows its machine state and its cycle, unbroken, at 80 columns."""
    cycle = _strand(own)
    out = ok(own, "status").stdout
    assert re.search(rf"\bg\s+Dreaming_HypnagogicOnset\s+{cycle[:8]}\s", out), out


def test_a_shown_short_id_resolves_back(dreamt: Path) -> None:
    """The short cycle id a table shows is a unique prefix: typed back, it names the cycle."""
    shown = re.search(r"^\s+([0-9a-f]{8,})\s+golem", ok(dreamt, "journal").stdout, re.M)
    assert shown is not None
    report = json.loads(ok(dreamt, "report", "--cycle", shown.group(1), "--json").stdout)
    assert _cycle(dreamt) == report["report"]["cycle_id"]


# -- ids as unique prefixes -------------------------------------------------------------------------


def test_a_unique_prefix_names_a_cycle_and_an_entry(own: Path) -> None:
    """`report --cycle 4-char-prefix`, `review PREFIX:N` and `outcome --entry PREFIX:N` take prefixes."""
    cycle = _cycle(own)
    assert cycle == json.loads(ok(own, "report", "--cycle", cycle[:4], "--json").stdout)["report"]["cycle_id"]
    proposed = json.loads(ok(own, "staging", "--status", "proposed", "--json").stdout)[0]["entry_id"]
    number = int(proposed.split(":")[1])
    typed = f"{cycle[:6]}:{number}"
    reviewed = json.loads(ok(own, "review", typed, "--decision", "reinforce", "--reason", "r", "--json").stdout)
    assert (proposed, "reinforced") == (reviewed["entry_id"], reviewed["status"])
    moved = json.loads(ok(own, "outcome", "--tick", "901", "--verdict", "confirms", "--entry", typed, "--json").stdout)
    assert [proposed] == [e["entry_id"] for e in moved["entries"]]


def test_a_missing_id_and_an_ambiguous_prefix_are_clear_errors(dreamt: Path) -> None:
    """No match: `no cycle matches 'zzzz'`. Several: the prefix, how many, and the candidates."""
    missing = oneiros(dreamt, "report", "--cycle", "zzzz")
    assert (2, "error: no cycle matches 'zzzz'\n") == (missing.returncode, missing.stderr)
    cycle = _cycle(dreamt)
    entries = [e["entry_id"] for e in json.loads(ok(dreamt, "staging", "--json").stdout)]
    ambiguous = oneiros(dreamt, "review", cycle[:8], "--decision", "stale", "--reason", "r")
    listed = ", ".join(entries[:10])
    expected = (
        f"error: entry '{cycle[:8]}' is ambiguous: it matches {len(entries)} entries ({listed} and "
        f"{len(entries) - 10} more); type more of it\n"
    )
    assert (2, expected) == (ambiguous.returncode, ambiguous.stderr)


_hex_ids = st.lists(st.text("0123456789abcdef", min_size=4, max_size=12), min_size=1, max_size=8, unique=True)


@given(_hex_ids, st.data())
def test_resolve_id_takes_exactly_the_unique_prefixes(ids: list[str], data: st.DataObject) -> None:
    """A prefix resolves to the one id it starts; it is unknown when it starts none, ambiguous when
    it starts several (unless it is itself an id, which always names itself)."""
    chosen = data.draw(st.sampled_from(ids))
    typed = chosen[: data.draw(st.integers(1, len(chosen)))]
    starting = [i for i in ids if i.startswith(typed)]
    if typed in ids or len(starting) == 1:
        assert (typed if typed in ids else chosen) == resolve_id(typed, ids, "cycle")
    else:
        with pytest.raises(AmbiguousId) as raised:
            resolve_id(typed, ids, "cycle")
        assert tuple(starting) == raised.value.candidates
    with pytest.raises(UnknownId):
        resolve_id("x" + typed, ids, "cycle")


@given(_hex_ids)
def test_short_ids_are_unique_prefixes_that_resolve_back(ids: list[str]) -> None:
    """Every shortened id is a prefix of its own id and resolves to it among all of them."""
    full = [i.ljust(8, "0") for i in ids]
    if len(set(full)) < len(full):
        return
    for original, short in short_ids(full).items():
        assert original == resolve_id(short, full, "cycle")


# -- one quality figure ------------------------------------------------------------------------------


def test_report_and_journal_show_one_quality_figure(dreamt: Path) -> None:
    """`report` and `journal` give the same quality for a cycle, both as a percentage."""
    journal = json.loads(ok(dreamt, "journal", "--json").stdout)[0]["quality_pct"]
    report = json.loads(ok(dreamt, "report", "--json").stdout)
    assert journal == report["quality_pct"]
    assert f"quality {journal}%" in ok(dreamt, "report").stdout
    assert re.search(rf"\s{journal}%\s*$", ok(dreamt, "journal").stdout, re.M)


# -- the daemon's ticks ---------------------------------------------------------------------------------


def test_the_daemon_logs_each_ticks_decision_and_why(own: Path) -> None:
    """`oneiros run` logs one INFO line per tick: no dream, and every check that held it back."""
    result = ok(own, "run", "--ticks", "3", "--tick-seconds", "0.01")
    ticks = re.findall(r"INFO oneiros\.daemon: (tick \d+: .*)", result.stderr)
    assert ["tick 1", "tick 2", "tick 3"] == [t.split(":")[0] for t in ticks], result.stderr
    assert all(
        t.split(": ", 1)[1].startswith(
            "no dream: episodes: 24 < 150 for a stable golem; enabled: schedule.enabled = false; silence: "
        )
        for t in ticks
    ), ticks


# -- lists that stop at a limit ------------------------------------------------------------------------------


def test_lists_say_when_they_stopped_at_their_limit(dreamt: Path) -> None:
    """events, staging and journal print `showing N of TOTAL ... — use --limit` on stderr when cut,
    and nothing when the whole list fits."""
    position = json.loads(ok(dreamt, "status", "--json").stdout)["position"]
    events = ok(dreamt, "events", "--limit", "5", "--json")
    assert 5 == len(json.loads(events.stdout))
    assert f"showing 5 of {position:,} events — use --limit to see more\n" == events.stderr
    staged = len(json.loads(ok(dreamt, "staging", "--json").stdout))
    assert f"showing 2 of {staged} entries — use --limit to see more\n" == ok(dreamt, "staging", "--limit", "2").stderr
    assert "" == ok(dreamt, "journal").stderr


# -- a stranded golem -----------------------------------------------------------------------------------


def _strand(home: Path) -> str:
    """Golem `g` left mid-cycle, as a killed process leaves it; its cycle id."""
    from oneiros import Golems, open_store
    from oneiros.episodes._episodes import load_episodes, sample_episodes_path

    with open_store(f"sqlite:///{home}/.oneiros/events.db") as store:
        golems = Golems(store)
        golems.create("g")
        golems.record_episodes("g", load_episodes(sample_episodes_path())[:3])
        return golems.fall_asleep("g", "owner", budget_tokens=100)


@pytest.mark.skipif(shutil.which("script") is None, reason="util-linux `script` (a terminal for the command)")
def test_dream_on_a_stranded_golem_prints_the_error_and_no_progress(own: Path) -> None:
    """On a terminal, `dream` for a golem stuck mid-cycle prints only the one-line error: no
    spinner or progress bar is drawn first."""
    cycle = _strand(own)
    command = f"{sys.executable} -m oneiros dream --golem g"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")} | {"NO_COLOR": "1"}
    shown = subprocess.run(
        ["script", "-qec", command, "/dev/null"], cwd=own, env=env, capture_output=True, text=True, check=False
    )
    assert 2 == shown.returncode
    expected = (
        "error: golem 'g' cannot 'fall_asleep' in state 'Dreaming_HypnagogicOnset': "
        f"cycle {cycle} is in hypnagogic_onset; `oneiros status` shows who runs it, "
        "`oneiros recover` resumes it if nothing does, `oneiros interrupt --golem g --reason ...` ends it\n"
    )
    assert expected == shown.stdout


def test_serve_honours_oneiros_queue_as_dream_does(tmp_path: Path, redis_url: str) -> None:  # noqa: F811
    """`oneiros serve` with only ONEIROS_QUEUE set hands the cycles it is asked for to the workers."""
    from tests.server.conftest import start_server

    server = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve", env={"ONEIROS_QUEUE": redis_url})
    try:
        http = server.client("write")
        http.post("/golems", json={"golem_id": "g1"})
        episodes = [{"tick": t, "summary": f"episode {t}"} for t in range(1, 4)]
        assert 201 == http.post("/golems/g1/episodes", json={"episodes": episodes}).status_code
        started = http.post("/golems/g1/cycles", json={})
        assert ("enqueued", 202) == (started.json()["status"], started.status_code)
    finally:
        server.stop()


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_the_server_commands_without_the_server_extra_say_what_to_install(tmp_path: Path, command: str) -> None:
    """Where starlette, uvicorn and the MCP SDK are missing, `serve` and `mcp` say in one line which
    extra to install (exit 2), with no ImportError traceback."""
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    # A finder ahead of site-packages that hides the server extra, as a plain `pip install oneiros` has it.
    (blocker / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('starlette', 'uvicorn', 'mcp'):\n"
        "            raise ModuleNotFoundError(name)\n"
        "        return None\n"
        "sys.meta_path.insert(0, _Hide())\n"
    )
    env = {"PYTHONPATH": str(blocker)}
    said = oneiros_process(tmp_path, command, env=env)
    expected = (
        f"error: `oneiros {command}` needs the server extra (starlette, uvicorn, mcp missing): "
        "pip install 'oneiros[server]'\n"
    )
    assert (2, expected) == (said.returncode, said.stderr)
