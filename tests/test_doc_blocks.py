"""Every code block of the documentation runs: ``sh`` and ``console`` blocks as shell scripts over a
store that has dreamt the bundled sample, ``python`` blocks in a fresh interpreter, ``json`` and
``toml`` blocks parsed (an episode validated as one, an ``oneiros.toml`` loaded by the config
loader). The convention is in docs/contributing.md and tests/doc_blocks.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import postgres_url
from tests.doc_blocks import ROOT, Block, collect, doc_files
from tests.workers.conftest import _free_port, redis_url  # noqa: F401 - the fixture, shared

BLOCKS = [block for path in doc_files() for block in collect(path)]
README = ROOT / "README.md"
RUNNERS = ("sh", "bash", "console", "python", "json", "toml", "text")
MAX_SKIPS = 6
BLOCK_TIMEOUT = 120


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The user's environment without our test settings, the venv's `oneiros` first on PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = "100"
    return env | (extra or {})


def _oneiros(cwd: Path, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "oneiros", *args], cwd=cwd, env=_env(), capture_output=True, text=True, check=False
    )
    assert 0 == result.returncode, result.stderr
    return result.stdout


@pytest.fixture(scope="session")
def sample_home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A folder where `oneiros dream --sample` ran for the golems `golem` and `g1`, and the ids a
    block may name: $CYCLE (golem's cycle) and $ENTRY (a staged entry of it)."""
    home = tmp_path_factory.mktemp("sample-home")
    _oneiros(home, "dream", "--sample", "--json")
    _oneiros(home, "dream", "--sample", "--golem", "g1", "--json")
    cycle = json.loads(_oneiros(home, "journal", "--golem", "golem", "--json"))[0]["cycle_id"]
    proposed = json.loads(_oneiros(home, "staging", "--golem", "golem", "--status", "proposed", "--json"))
    # The likeliest to stay proposed when a block dreams again and the buffer displaces the weakest.
    entry = max(proposed, key=lambda e: e["confidence"])["entry_id"]
    return home, {"CYCLE": cycle, "ENTRY": entry}


def _folder(tmp_path: Path, source: Path | None) -> Path:
    work = tmp_path / "work"
    if source is None:
        work.mkdir()
    else:
        shutil.copytree(source, work)
    shutil.copytree(ROOT / "examples", work / "examples", dirs_exist_ok=True)
    return work


_REDIS = re.compile(r"redis://127\.0\.0\.1:6379/0")
_POSTGRES = re.compile(r"postgresql://postgres@127\.0\.0\.1:5432/test(\?schema=\w+)?")


def _servers(block: Block, request: pytest.FixtureRequest) -> Iterator[tuple[re.Pattern[str], str]]:
    needs = block.listed("needs")
    unknown = set(needs) - {"redis", "postgres"}
    assert not unknown, f"{block.id}: needs={','.join(sorted(unknown))} is not a server the tests provide"
    if "redis" in needs:
        yield _REDIS, request.getfixturevalue("redis_url")
    if "postgres" in needs:
        yield _POSTGRES, postgres_url(request.getfixturevalue("pg_schema"))


def _script(block: Block) -> str:
    """The block as a bash script: `console` blocks keep their `$ ` lines; background lines get
    `&`; at the end every background job must still run, and is stopped."""
    lines = block.text.splitlines()
    if block.lang == "console":
        lines = [line[2:] for line in lines if line.startswith("$ ")]
    background = block.listed("background")
    out = ["set -eo pipefail", "pids=()", "trap 'kill ${pids[@]} 2>/dev/null || true' EXIT"]
    for line in lines:
        if background and line.strip().startswith(background):
            command = line.split(" #")[0].rstrip()
            out += [f"{command} &", "pids+=($!)"]
        else:
            out.append(line)
    out += [
        '[ "${#pids[@]}" -eq 0 ] || sleep 1',
        'for pid in "${pids[@]}"; do kill -0 "$pid" || { echo "background job $pid ended early" >&2; exit 97; }; done',
        'for pid in "${pids[@]}"; do kill -TERM "$pid"; wait "$pid" || true; done',
    ]
    return "\n".join(out) + "\n"


def _run_shell(block: Block, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    # README's blocks run as a newcomer runs them, in a fresh clone: no store, no $CYCLE or $ENTRY
    # given (a block read them from a store that had dreamt, and README's failed as written).
    newcomer = block.path == README or "fresh" in block.options
    home, ids = request.getfixturevalue("sample_home") if not newcomer else (None, {})
    work = _folder(tmp_path, home)
    script = _script(block)
    for pattern, url in _servers(block, request):
        script = pattern.sub(url, script)
    env = _env({**ids, "ONEIROS_SERVER__PORT": str(_free_port())})
    # A session of its own: on a timeout every process the block started is stopped with it.
    with subprocess.Popen(
        ["bash", "-c", script],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=BLOCK_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
    assert 0 == proc.returncode, f"{block.id}\n{script}\nstdout:\n{stdout[-3000:]}\nstderr:\n{stderr[-3000:]}"


def _run_python(block: Block, tmp_path: Path) -> None:
    work = _folder(tmp_path, None)
    (work / "block.py").write_text(block.text)
    result = subprocess.run(
        [sys.executable, "block.py"],
        cwd=work,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT,
        check=False,
    )
    assert 0 == result.returncode, f"{block.id}\n{result.stderr[-3000:]}"


def _check_json(block: Block) -> None:
    import msgspec

    from oneiros.events._types import Episode

    try:
        values = [json.loads(block.text)]
    except json.JSONDecodeError:  # JSON lines, as an episode file holds
        values = [json.loads(line) for line in block.text.splitlines() if line.strip()]
    for value in values:
        if isinstance(value, dict) and {"tick", "summary"} <= value.keys():
            msgspec.convert(value, Episode)  # an episode line is a valid episode


def _check_toml(block: Block, tmp_path: Path) -> None:
    from oneiros.config._load import OneirosConfig, load_config

    data = tomllib.loads(block.text)
    if set(data) <= set(OneirosConfig.__struct_fields__):  # an oneiros.toml (or a part of one)
        path = tmp_path / "oneiros.toml"
        path.write_text(block.text)
        load_config(path, environ={})


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.lang != "text"], ids=lambda b: b.id)
def test_the_block_runs(block: Block, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The block does what it shows: its commands exit 0, its code runs, its data parses."""
    if "skip" in block.options:
        pytest.skip(f"{block.id}: {block.options['skip']}")
    if block.lang in ("sh", "bash", "console"):
        _run_shell(block, tmp_path, request)
    elif block.lang == "python":
        _run_python(block, tmp_path)
    elif block.lang == "json":
        _check_json(block)
    elif block.lang == "toml":
        _check_toml(block, tmp_path)
    else:
        pytest.fail(f"{block.id}: no runner for {block.lang or 'a fence without a language'}; see docs/contributing.md")


def test_every_fence_names_a_language_the_tests_run() -> None:
    """A fence without a language (or with one no runner knows) is neither shown as code nor run:
    each names sh (or bash), console, python, json, toml, or text for output and diagrams."""
    assert [] == [b.id for b in BLOCKS if b.lang not in RUNNERS]


def test_every_readme_shell_block_runs_here() -> None:
    """README's shell blocks are all collected, and each runs (as a newcomer runs it) unless it says
    why not: its commands are the first a newcomer types."""
    shell = [b for b in collect(README) if b.lang in ("sh", "bash", "console")]
    assert 5 <= len(shell)
    assert all(b in BLOCKS for b in shell)
    skipped = [b.text.split()[0] for b in shell if "skip" in b.options]
    assert ["python3", "bash", "docker"] == skipped  # the install, the whole suite, Docker


def test_skips_are_few_and_say_why() -> None:
    """Each skipped block gives a reason, and there are at most a handful of them."""
    skipped = [b for b in BLOCKS if "skip" in b.options]
    assert [] == [b.id for b in skipped if not b.options["skip"]]
    assert len(skipped) <= MAX_SKIPS, [b.id for b in skipped]


def test_the_collector_reads_markers_and_indented_fences(tmp_path: Path) -> None:
    """A marker on the line before a fence (blank lines between allowed) belongs to that block only;
    an indented fence (inside a list item) is collected with its indent removed."""
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- docs-test: needs=redis; background=oneiros worker -->\n\n```sh\noneiros status\n```\n\n"
        "- a list item:\n\n  ```python\n  print(1)\n  ```\n"
    )
    first, second = collect(page)
    assert ("sh", "oneiros status\n", ("redis",), ("oneiros worker",)) == (
        first.lang,
        first.text,
        first.listed("needs"),
        first.listed("background"),
    )
    assert ("python", "print(1)\n", {}) == (second.lang, second.text, second.options)
