"""The QA list of command-line mistakes, each driven through the ``oneiros`` command in a fresh
process: one line naming what was wrong (and what would be right), the exit code of its kind, no
traceback, and no file or directory created, removed or left half-written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from oneiros.store._store import open_store
from tests.cli_runner import run_cli
from tests.workers.conftest import _free_port

_MAX = str(2**63)  # one past the largest position SQLite and PostgreSQL hold


def _oneiros(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_") and k != "OPENAI_API_KEY"}
    environ.update({"COLUMNS": "400", **(env or {})})  # a Typer usage error on one line of its box
    return run_cli(args, env=environ, cwd=cwd)


def _said(stderr: str) -> str:
    """The error as one line: ours as printed, Typer's usage errors out of their box."""
    if stderr.startswith("error: "):
        return stderr
    inner = [line.strip("│ ") for line in stderr.splitlines() if line.startswith("│")]
    return " ".join(line for line in inner if line) + "\n"


def _tree(path: Path) -> dict[str, int]:
    """Every file's size and every folder. SQLite's shared-memory index and an empty write-ahead log
    come and go with whichever process closed the store last, and hold no data."""
    files = {str(p.relative_to(path)): p.stat().st_size for p in path.rglob("*") if p.is_file()}
    held = {
        name: size for name, size in files.items() if not name.endswith("-shm") and (size or not name.endswith("-wal"))
    }
    return held | {str(p.relative_to(path)) + "/": 0 for p in path.rglob("*") if p.is_dir()}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a store (golems a and b dreamt once each; two of a's entries promoted, so
    MEMORY.md of a has versions 1-2), an empty store, and the bad files the cases name."""
    root = tmp_path_factory.mktemp("mistakes")
    for golem in ("a", "b"):
        assert (
            0
            == _oneiros(
                "dream", "--sample", "--json", "--golem", golem, "--store", "sqlite:///s.db", cwd=root
            ).returncode
        )
    staged = json.loads(_oneiros("staging", "--json", "--golem", "a", "--store", "sqlite:///s.db", cwd=root).stdout)
    for entry in [e["entry_id"] for e in staged if e["status"] == "proposed"][:2]:
        review = ("review", entry, "--decision", "promote_candidate", "--reason", "ok", "--store", "sqlite:///s.db")
        assert 0 == _oneiros(*review, cwd=root).returncode
    assert 0 == _oneiros("memory", "--golem", "a", "--store", "sqlite:///s.db", cwd=root).returncode
    open_store(f"sqlite:///{root}/empty.db").close()
    (root / "adir").mkdir()
    (root / "bin.dat").write_bytes(b"\xff\xfe\x00bin")
    (root / "bad.toml").write_text("x = [\n")
    (root / "misspelt.toml").write_text("[promts]\nnrem = 'x'\n")
    (root / "rq.toml").write_text("[rq]\nretries = 0\n")
    (root / "reg").write_text("")
    (root / "tl.jsonl").write_text('{"tick": 1, "dream": true}\n')
    return root


def _cycle_of(root: Path, golem: str) -> str:
    journal = json.loads(_oneiros("journal", "--json", "--golem", golem, "--store", "sqlite:///s.db", cwd=root).stdout)
    return str(journal[0]["cycle_id"])


_DIR_STORE = "error: invalid store URL 'sqlite:///adir': cannot open SQLite file 'adir': it is a directory\n"
_NO_DIR_STORE = "error: no store at sqlite:///adir: no file 'adir'\n"
_S = ("--store", "sqlite:///s.db")

# command line -> exit code, the one line said on stderr. {dead} is a port nothing listens on,
# {cycle} golem a's cycle; env=... sets variables for the one case.
CASES: list[tuple[tuple[str, ...], int, str, dict[str, str]]] = [
    # 1. tracebacks
    (
        ("worker", "--queue", "redis://127.0.0.1:{dead}/0", *_S),
        2,
        "error: cannot reach the queue at redis 127.0.0.1:{dead}/0: Error 111 connecting to 127.0.0.1:{dead}. "
        "Connection refused.\n",
        {},
    ),
    (
        ("run", "--queue", "redis://127.0.0.1:{dead}/0", "--ticks", "1", "--store", "sqlite:///new.db"),
        2,
        "error: cannot reach the queue at redis 127.0.0.1:{dead}/0: Error 111 connecting to 127.0.0.1:{dead}. "
        "Connection refused.\n",
        {},
    ),
    (
        ("status", "--config", "rq.toml", *_S),
        2,
        "error: invalid setting rq.retries = 0 (from rq.toml): expected int >= 1\n",
        {},
    ),
    (
        ("dream", "--golem", "a", "--prompts", "missing.toml", *_S),
        2,
        "error: invalid prompt template for task 'prompts': missing.toml: expected an existing TOML file\n",
        {},
    ),
    (
        ("dream", "--golem", "a", "--prompts", "bad.toml", *_S),
        2,
        "error: invalid prompt template for task 'prompts': bad.toml: expected valid TOML "
        "(Invalid value (at end of document))\n",
        {},
    ),
    (
        ("dream", "--golem", "a", "--prompts", "adir", *_S),
        2,
        "error: invalid prompt template for task 'prompts': adir: expected a TOML file, not a directory\n",
        {},
    ),
    (
        ("dream", "--golem", "a", "--prompts", "bin.dat", *_S),
        2,
        "error: invalid prompt template for task 'prompts': bin.dat: expected UTF-8 text (byte 0 is not)\n",
        {},
    ),
    (
        ("dream", "--golem", "a", "--prompts", "misspelt.toml", *_S),
        2,
        "error: invalid prompt template for task 'prompts': misspelt.toml: unknown key or table 'promts'; "
        "expected 'system' and a [prompts] table\n",
        {},
    ),
    (
        ("status", "--config", "adir", *_S),
        2,
        "error: invalid setting <file> = 'adir' (from adir): expected a TOML file, not a directory\n",
        {},
    ),
    (
        ("status", "--config", "bin.dat", *_S),
        2,
        "error: invalid setting <file> = 'bin.dat' (from bin.dat): expected UTF-8 text (byte 0 is not)\n",
        {},
    ),
    (
        ("status", *_S),
        2,
        "error: invalid setting <file> = 'adir' (from adir): expected a TOML file, not a directory\n",
        {"ONEIROS_CONFIG": "adir"},
    ),
    (
        ("status", *_S),
        2,
        "error: invalid setting <file> = 'bin.dat' (from bin.dat): expected UTF-8 text (byte 0 is not)\n",
        {"ONEIROS_CONFIG": "bin.dat"},
    ),
    (("trace", "abc", "--spans", "adir"), 2, "error: span file 'adir' is not a regular file\n", {}),
    (
        ("token", "list", "--tokens", "bin.dat"),
        2,
        "error: tokens file 'bin.dat': expected UTF-8 text (byte 0 is not)\n",
        {},
    ),
    (
        ("token", "list", "--tokens", "adir"),
        2,
        "error: tokens file 'adir': expected a TOML file, not a directory\n",
        {},
    ),
    (
        ("token", "add", "n", "--scope", "read", "--tokens", "bin.dat"),
        2,
        "error: tokens file 'bin.dat': expected UTF-8 text (byte 0 is not)\n",
        {},
    ),
    (
        ("serve", "--tokens", "bin.dat", *_S),
        2,
        "error: tokens file 'bin.dat': expected UTF-8 text (byte 0 is not)\n",
        {},
    ),
    (("serve", "--tokens", "adir", *_S), 2, "error: tokens file 'adir': expected a TOML file, not a directory\n", {}),
    (("ab", "bin.dat"), 2, "error: timeline 'bin.dat' is not UTF-8 text (byte 0)\n", {}),
    (
        ("ab", "tl.jsonl", "--recordings", "reg"),
        2,
        "error: --recordings 'reg' is not a directory; give a directory (made if missing)\n",
        {},
    ),
    (
        ("memory", "--golem", "a", "--write", "/proc/nope/M.md", *_S),
        2,
        "error: cannot write MEMORY.md into '/proc/nope/M.md': No such file or directory\n",
        {},
    ),
    (("dream", "--golem", "a", "--store", "sqlite:///adir"), 2, _DIR_STORE, {}),
    (("run", "--ticks", "1", "--store", "sqlite:///adir"), 2, _NO_DIR_STORE, {}),
    (("outcome", "--tick", "1", "--verdict", "confirms", "--store", "sqlite:///adir"), 2, _NO_DIR_STORE, {}),
    (("reevaluate", "--golem", "a", "--store", "sqlite:///adir"), 2, _NO_DIR_STORE, {}),
    (("fork", "{cycle}", "--into", "sqlite:///br.db", "--store", "sqlite:///adir"), 2, _NO_DIR_STORE, {}),
    (("fork", "{cycle}", "--into", "sqlite:///adir", *_S), 2, _DIR_STORE, {}),
    (
        ("events", "--after", _MAX, *_S),
        2,
        "Invalid value for '--after': Input should be less than or equal to 9223372036854775807\n",
        {},
    ),
    (
        ("replay", "--until", _MAX, *_S),
        2,
        "Invalid value for '--until': Input should be less than or equal to 9223372036854775807\n",
        {},
    ),
    (
        ("replay", "--until", "5", "--verify", *_S),
        2,
        "error: --verify compares each projection at its own position; it takes no --until\n",
        {},
    ),
    (
        ("replay", "--until", "-1", *_S),
        2,
        "Invalid value for '--until': Input should be greater than or equal to 0\n",
        {},
    ),
    # 3. serve's port and log level
    (
        ("serve", "--port", "99999", *_S),
        2,
        "Invalid value for '--port': Input should be less than or equal to 65535\n",
        {},
    ),
    (("serve", "--port", "-1", *_S), 2, "Invalid value for '--port': Input should be greater than or equal to 0\n", {}),
    (
        ("serve", "--log-level", "loud", *_S),
        2,
        "Invalid value for '--log-level': 'loud' is not one of critical, error, warning, info, debug, trace\n",
        {},
    ),
    (
        ("worker", "--queue", "redis://127.0.0.1:{dead}/0", "--log-level", "loud", *_S),
        2,
        "error: invalid setting log.level = 'LOUD' (from flag --log-level): "
        "expected one of 'DEBUG', 'INFO', 'WARNING', 'ERROR'\n",
        {},
    ),
    # 4. values that were taken silently
    (("budget", "--golem", "a", "--tier", "ultra", *_S), 2, "error: unknown tier 'ultra'; use core or hardened\n", {}),
    (
        ("staging", "--status", "bogus", *_S),
        2,
        "error: unknown status 'bogus'; use one of proposed, reinforced, stale, rejected, promoted, refuted, "
        "displaced, expired, revoked\n",
        {},
    ),
    (
        ("memory", "--golem", "a", "--diff", "1", "5", *_S),
        2,
        "error: MEMORY.md of golem 'a' has versions 1-2; there is no version 5\n",
        {},
    ),
    (
        ("token", "add", "n", "--scope", "read", "--golem", "bad golem", "--tokens", "t.toml"),
        2,
        "error: golem id 'bad golem' must be 1-128 letters, digits, '-', '_' or '.', starting with a letter or digit\n",
        {},
    ),
    (
        ("token", "add", "n", "--scope", "read", "--golem", "", "--tokens", "t.toml"),
        2,
        "error: golem id '' must be 1-128 letters, digits, '-', '_' or '.', starting with a letter or digit\n",
        {},
    ),
    (("run", "--ticks", "-1", *_S), 2, "Invalid value for '--ticks': Input should be greater than or equal to 0\n", {}),
    (
        ("dream", "--golem", "a", "--queue", "redis://:pw@127.0.0.1:{dead}/abc", *_S),
        2,
        "error: queue 'redis://:***@127.0.0.1:{dead}/abc': database 'abc' is not a number; "
        "expected redis://host:port/N\n",
        {},
    ),
    # 5. messages that misled
    (
        ("fork", "{cycle}", "--into", "sqlite:///s.db", *_S),
        2,
        "error: --into sqlite:///s.db is the live store; name a new, empty store for the branch\n",
        {},
    ),
    (
        ("fork", "{cycle}", "--into", "sqlite:///empty2.db", *_S),
        2,
        "error: the branch store sqlite:///empty2.db already holds events (an earlier fork?); "
        "name a new, empty store\n",
        {},
    ),
    (
        ("rerun", "--all", "--store", "sqlite:///empty.db"),
        2,
        "error: there is no cycle to re-run in the log at sqlite:///empty.db\n",
        {},
    ),
    (
        ("memory", "--golem", "b", "--rollback", "0", *_S),
        2,
        "error: MEMORY.md of golem 'b' has no versions yet (nothing has been promoted); there is no version 0\n",
        {},
    ),
    (("health", "--golem", "nope", "--check", *_S), 2, "error: golem 'nope' does not exist\n", {}),
    (
        ("lineage", ":1", "--golem", "nope", *_S),
        2,
        "error: golem 'nope' does not exist\n",
        {},
    ),
    (
        ("trace", "abc"),
        2,
        "error: tracing.spans_path is off, so no span file is written: name one with --spans FILE\n",
        {"ONEIROS_SPANS": "off"},
    ),
    (
        ("trace", "abc", "--spans", "missing.jsonl"),
        2,
        "error: no span file 'missing.jsonl': no traced cycle has written there yet\n",
        {},
    ),
    (
        ("fork", "{cycle}", "--into", "sqlite:///br.db", "--generator", "openai", *_S),
        2,
        "error: cannot fork with the openai generator: no API key, $OPENAI_API_KEY is not set\n",
        {},
    ),
    # 6. a cycle with the openai generator and no key: refused as fork is, before any event (before,
    # an empty cycle was recorded and dream exited 1)
    (
        ("dream", "--golem", "a", "--generator", "openai", *_S),
        2,
        "error: cannot dream with the openai generator: no API key, $OPENAI_API_KEY is not set\n",
        {},
    ),
    (
        ("dream", "--sample", "--generator", "openai", "--store", "sqlite:///new.db"),
        2,
        "error: cannot dream with the openai generator: no API key, $OPENAI_API_KEY is not set\n",
        {},
    ),
    (
        ("dream", "--golem", "a", *_S),
        2,
        "error: cannot dream with the openai generator: no API key, $OPENAI_API_KEY is not set\n",
        {"ONEIROS_CYCLE__GENERATOR__KIND": "openai", "OPENAI_API_KEY": ""},
    ),
    (
        ("dream", "--golem", "a", "--generator", "openai", *_S),
        2,
        "error: cannot dream with the openai generator: no API key, $MY_KEY is not set\n",
        {"ONEIROS_CYCLE__GENERATOR__OPENAI__API_KEY_ENV": "MY_KEY"},
    ),
    (
        ("run", "--golem", "a", "--ticks", "1", *_S),
        2,
        "error: cannot run with the openai generator: no API key, $OPENAI_API_KEY is not set\n",
        {"ONEIROS_CYCLE__GENERATOR__KIND": "openai"},
    ),
    (
        ("run", "--golem", "new", "--sample", "--ticks", "1", "--store", "sqlite:///new.db"),
        2,
        "error: cannot run with the openai generator: no API key, $OPENAI_API_KEY is not set\n",
        {"ONEIROS_CYCLE__GENERATOR__KIND": "openai"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: " ".join(case[0]))
def test_a_mistake_is_one_line_and_changes_nothing(
    base: Path, tmp_path: Path, case: tuple[tuple[str, ...], int, str, dict[str, str]]
) -> None:
    """Each mistake exits with its code and says the one line, with no traceback, and the folder
    (stores, projections, bad files) is byte for byte the size it was: nothing made, nothing half-written."""
    args, code, said, env = case
    root = tmp_path / "w"
    shutil.copytree(base, root)
    if any("empty2.db" in a for a in args):  # a branch store that already holds a log
        shutil.copy(root / "s.db", root / "empty2.db")
    dead = str(_free_port())
    cycle = _cycle_of(root, "a") if any("{cycle}" in a for a in args) else ""
    before = _tree(root)
    line = [a.replace("{dead}", dead).replace("{cycle}", cycle) for a in args]
    result = _oneiros(*line, cwd=root, env=env)
    assert "Traceback" not in result.stderr
    assert (code, said.replace("{dead}", dead)) == (result.returncode, _said(result.stderr))
    assert before == _tree(root)


def test_report_cycle_names_its_golem(base: Path) -> None:
    """``report --cycle`` with golem b's cycle and no ``--golem`` (the default golem has no cycle)
    shows b's report, as rerun, fork and diff take any golem's cycle (it said "no cycle matches");
    with ``--golem a`` it is one line naming where it was looked for."""
    cycle = _cycle_of(base, "b")
    shown = _oneiros("report", "--cycle", cycle[:8], "--json", *_S, cwd=base)
    assert (0, cycle) == (shown.returncode, json.loads(shown.stdout or "{}").get("report", {}).get("cycle_id"))
    other = _oneiros("report", "--cycle", cycle[:8], "--golem", "a", *_S, cwd=base)
    assert (2, f"error: no cycle matches '{cycle[:8]}' in the cycles of golem 'a'\n") == (
        other.returncode,
        other.stderr,
    )


def test_lineage_with_golem_resolves_a_prefix_other_golems_share(base: Path) -> None:
    """``:1`` names entry 001 of golem a's and golem b's cycles: ambiguous across the store, the
    one of a's with ``--golem a``."""
    every = _oneiros("lineage", ":1", *_S, cwd=base)
    assert 2 == every.returncode
    assert every.stderr.startswith("error: entry ':1' is ambiguous: it matches 2 entries (")
    only = _oneiros("lineage", ":1", "--golem", "a", "--json", *_S, cwd=base)
    assert 0 == only.returncode, only.stderr
    assert (f"{_cycle_of(base, 'a')}:001", "a") == (
        json.loads(only.stdout)["entry_id"],
        json.loads(only.stdout)["golem_id"],
    )


def test_a_default_config_file_that_is_a_directory_is_one_line(tmp_path: Path) -> None:
    """``./oneiros.toml`` read by default, when it is a directory: one line, exit 2, nothing made."""
    (tmp_path / "oneiros.toml").mkdir()
    result = _oneiros("status", cwd=tmp_path)
    expected = (
        "error: invalid setting <file> = 'oneiros.toml' (from oneiros.toml): expected a TOML file, not a directory\n"
    )
    assert (2, expected) == (result.returncode, result.stderr)
    assert {"oneiros.toml/": 0} == _tree(tmp_path)
