"""``oneiros --help`` and ``--version`` answer before the Typer app is built, and say what it would say."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from oneiros.cli import app
from oneiros.cli._app import app_for, command_modules, command_owners, full_app, help_index
from oneiros.cli._help import HelpIndex, fast_path, render, sources_digest
from oneiros.cli._help_index import INDEX, OWNERS

_STALE = (
    "oneiros/cli/_help_index.py no longer matches the commands the app registers, so `oneiros --help` "
    "takes the slow path: run `python -m oneiros.cli._app` and commit oneiros/cli/_help_index.py"
)
_REAL = "import sys; from oneiros.cli import app; sys.argv[0] = 'oneiros'; app(prog_name='oneiros')"
_LOADED = (
    "import json, sys; from oneiros.cli import main; sys.argv = ['oneiros', {arg!r}]; main(); "
    "print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {{'typer', 'rich', 'click'}})))"
)


def _run(argv: list[str], columns: int) -> str:
    env = {"COLUMNS": str(columns), "PATH": "/usr/bin:/bin"}
    return subprocess.run(argv, capture_output=True, text=True, check=True, env=env).stdout


def test_the_help_index_is_the_help_of_the_app_as_registered() -> None:
    """The committed index holds every registered command with its one-line help, and the digest of
    the CLI's sources as they are: else the fast path is skipped, and this says how to remake it."""
    assert help_index() == INDEX, _STALE


def test_the_index_names_each_commands_module() -> None:
    """The committed index names, for every top-level command, the module that registers it."""
    assert command_owners() == OWNERS, _STALE
    assert sorted(name for name, _ in INDEX.commands) == sorted(OWNERS)


@pytest.mark.parametrize("command", ["status", "token", "config", "golem"])
def test_a_command_is_built_alone_and_helps_as_in_the_whole_app(command: str) -> None:
    """`oneiros COMMAND` builds a root holding only COMMAND's module, whose help for COMMAND is
    byte for byte the whole app's."""
    import typer

    alone = app_for([command, "--help"])
    group = typer.main.get_command(alone)
    with typer.Context(group) as ctx:
        registered = set(group.list_commands(ctx))
    assert {name for name, module in OWNERS.items() if module == OWNERS[command]} == registered
    runner = CliRunner()
    shown = runner.invoke(alone, [command, "--help"], prog_name="oneiros", env={"COLUMNS": "100"})
    whole = runner.invoke(full_app(), [command, "--help"], prog_name="oneiros", env={"COLUMNS": "100"})
    assert (0, whole.output) == (shown.exit_code, shown.output)


def test_an_unknown_command_gets_the_whole_app() -> None:
    """A name the index does not know is left to the whole app, which says what it says of it."""
    assert full_app() is app_for(["sttaus"])


@pytest.mark.parametrize("columns", [40, 80, 132])
def test_fast_help_prints_what_the_app_prints(columns: int) -> None:
    """``oneiros --help`` through the entry point prints, byte for byte, what the built app prints."""
    fast = _run([sys.executable, "-m", "oneiros", "--help"], columns)
    real = _run([sys.executable, "-c", _REAL, "--help"], columns)
    assert real == fast
    assert all(f"│ {name} " in fast for name, _ in INDEX.commands)


def test_fast_version_prints_what_the_app_prints() -> None:
    """``oneiros --version`` prints the installed version, as the built app's ``--version`` does."""
    fast = _run([sys.executable, "-m", "oneiros", "--version"], 80)
    real = _run([sys.executable, "-c", _REAL, "--version"], 80)
    assert f"oneiros {version('oneiros')}\n" == fast
    assert real == fast


def test_the_package_version_is_the_distributions() -> None:
    """``oneiros.__version__``, which ``--version`` prints, is the version pyproject.toml installed."""
    import oneiros

    assert version("oneiros") == oneiros.__version__


@pytest.mark.parametrize("arg", ["--help", "--version"])
def test_help_and_version_load_no_typer_or_rich(arg: str) -> None:
    """The fast paths import neither Typer nor Rich (nor click): that is where their time went."""
    out = _run([sys.executable, "-c", _LOADED.format(arg=arg)], 80)
    assert "[]" == out.strip().splitlines()[-1]


@pytest.mark.parametrize("arg", ["--help", "--version"])
def test_a_reader_that_went_away_ends_the_fast_path_quietly(arg: str) -> None:
    """``oneiros --help | head -0``: with nobody reading stdout, the fast path exits 1 with no
    traceback, as the app does."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # before the command writes: its first write fails, every time
    try:
        done = subprocess.run(
            [sys.executable, "-m", "oneiros", arg], stdout=write_end, stderr=subprocess.PIPE, text=True, check=False
        )
    finally:
        os.close(write_end)
    assert (1, "") == (done.returncode, done.stderr)


def test_a_stale_index_hands_help_to_the_app(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """When a CLI module changed since the index was made, the fast path prints nothing and declines,
    so the real app answers and a new command is still listed."""
    import oneiros.cli._help_index as made

    monkeypatch.setattr(made, "INDEX", INDEX._replace(digest="0" * 32))
    assert fast_path(["--help"]) is False
    assert "" == capsys.readouterr().out


def test_other_arguments_are_left_to_the_app(capsys: pytest.CaptureFixture[str]) -> None:
    """Only ``--help`` or ``--version`` alone take the fast path; a command's own ``--help`` does not."""
    for argv in ([], ["events", "--help"], ["--help", "events"], ["--version", "--help"]):
        assert fast_path(argv) is False
    assert "" == capsys.readouterr().out


def test_a_new_command_module_is_found_without_registration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A module of the CLI package that defines ``register`` is found by walking the package; helpers are not."""
    package = tmp_path / "fakecli"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_recover.py").write_text("def register(app):\n    app.append('recover')\n")
    (package / "_helpers.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = command_modules("fakecli")
    assert ["fakecli._recover"] == [m.__name__ for m in found]


def test_the_digest_changes_with_any_cli_module(tmp_path: Path) -> None:
    """Editing, adding or renaming a module changes the digest; the index file itself does not count."""
    (tmp_path / "_a.py").write_text("x = 1\n")
    first = sources_digest(tmp_path)
    (tmp_path / "_help_index.py").write_text("INDEX = None\n")
    assert first == sources_digest(tmp_path)
    (tmp_path / "_a.py").write_text("x = 2\n")
    edited = sources_digest(tmp_path)
    (tmp_path / "_b.py").write_text("")
    added = sources_digest(tmp_path)
    assert 3 == len({first, edited, added})


def test_no_arguments_print_the_same_help() -> None:
    """``oneiros`` alone prints the top-level help (the app's own path) and exits 2, as Typer does."""
    result = CliRunner().invoke(app, [], prog_name="oneiros", env={"COLUMNS": "80"})
    assert 2 == result.exit_code
    assert render(INDEX, 80) + "\n" == result.output


@given(
    width=st.integers(min_value=0, max_value=300),
    rows=st.lists(
        st.tuples(st.from_regex(r"[a-z][a-z-]{0,15}", fullmatch=True), st.text(st.characters(codec="ascii"))),
        max_size=8,
    ),
)
def test_rendered_help_fits_its_width_and_keeps_every_character(width: int, rows: list[tuple[str, str]]) -> None:
    """At any width from 40 columns, no line is wider than the terminal, every command starts a row,
    and every character of its help is shown in order (a word longer than the column folds
    across lines, as Rich folds it)."""
    index = HelpIndex("", "oneiros [OPTIONS]", "Some text.", (("--help", "Show this."),), tuple(rows))
    shown = render(index, width)
    lines = shown.splitlines()
    assert [] == [line for line in lines if len(line) > max(width, 40)]
    for name, text in rows:
        assert any(line.startswith(f"│ {name} ") for line in lines)
        assert "".join(text.split()) in "".join(shown.replace("│", " ").split())
