"""``oneiros --help`` and ``--version`` answer before Typer is imported and say what the app would say;
any other command imports only the module that registers it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
import typer
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from oneiros.cli import app
from oneiros.cli._app import command_modules
from oneiros.cli._help import HelpIndex, fast_path, listed_index, one_line, render
from oneiros.cli._listing import COMMANDS
from tests.cli_runner import run_cli

_REAL = "import sys; from oneiros.cli import app; sys.argv[0] = 'oneiros'; app(prog_name='oneiros')"
_LOADED = (
    "import json, sys; from oneiros.cli import main; sys.argv = ['oneiros', {arg!r}]; main(); "
    "print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {{'typer', 'rich', 'click'}})))"
)
_MODULES = (
    "import json, sys\n"
    "from oneiros.cli import main\n"
    "sys.argv = ['oneiros', *{argv!r}]\n"
    "try:\n"
    "    main()\n"
    "except SystemExit:\n"
    "    pass\n"
    "print(json.dumps(sorted(m for m in sys.modules if m.startswith('oneiros.cli.'))))\n"
)


def _run(argv: list[str], columns: int) -> str:
    env = {"COLUMNS": str(columns), "PATH": "/usr/bin:/bin"}
    return subprocess.run(argv, capture_output=True, text=True, check=True, env=env).stdout


def _every_module() -> typer.Typer:
    """A root with every command module registered up front, as the app was built before it loaded lazily."""
    made = typer.Typer(name="oneiros", add_completion=False)
    made.callback()(lambda: None)
    for module in command_modules():
        module.register(made)
    return made


def test_the_listing_is_what_the_modules_register() -> None:
    """The declared table names every command a module registers, with that module and the first
    paragraph of its help, and nothing else: a new command needs its row, a changed summary its edit."""
    registered: dict[str, tuple[str, str]] = {}
    for module in command_modules():
        probe = typer.Typer()
        module.register(probe)
        for name, command in typer.main.get_group(probe).commands.items():
            registered[name] = (module.__name__.rsplit(".", 1)[1], one_line(command.short_help or command.help))
    assert registered == {row.name: (row.module, row.summary) for row in COMMANDS}
    assert len(COMMANDS) == len({row.name for row in COMMANDS})


@pytest.mark.parametrize(
    ("argv", "module"), [(["token", "list", "--help"], "_server"), (["status", "--help"], "_commands")]
)
def test_a_command_imports_only_its_own_module(argv: list[str], module: str) -> None:
    """`oneiros COMMAND` imports the command module that registers COMMAND (and what that module
    itself imports), no other."""

    def commands_loaded(code: str) -> set[str]:
        out = _run([sys.executable, "-c", code], 80)
        loaded = {name.rsplit(".", 1)[1] for name in json.loads(out.strip().splitlines()[-1])}
        return loaded & {row.module for row in COMMANDS}

    alone = commands_loaded(f"import json, sys, oneiros.cli.{module}\n" + _MODULES.splitlines()[-1])
    assert module in alone
    assert alone == commands_loaded(_MODULES.format(argv=argv))
    assert len(alone) < len({row.module for row in COMMANDS}) / 2


@pytest.mark.parametrize("command", ["status", "token", "config", "golem", "eval", "import"])
def test_a_lazily_loaded_command_helps_as_when_every_module_is_registered(command: str) -> None:
    """`oneiros COMMAND --help` through the lazy root is, byte for byte, what a root holding every
    command module up front prints."""
    runner = CliRunner()
    shown = runner.invoke(app, [command, "--help"], prog_name="oneiros", env={"COLUMNS": "100"})
    whole = runner.invoke(_every_module(), [command, "--help"], prog_name="oneiros", env={"COLUMNS": "100"})
    assert (0, whole.output) == (shown.exit_code, shown.output)


def test_an_unknown_command_gets_the_nearest_names() -> None:
    """A mistyped command exits 2 naming the commands it is near, though no module was loaded for it."""
    done = run_cli(["sttaus"])
    assert 2 == done.returncode
    assert "No such command 'sttaus'. Did you mean 'status'?" in " ".join(done.stderr.replace("│", " ").split())


@pytest.mark.parametrize("columns", [40, 80, 132])
def test_fast_help_prints_what_the_app_prints(columns: int) -> None:
    """``oneiros --help`` through the entry point prints, byte for byte, what the built app prints."""
    fast = _run([sys.executable, "-m", "oneiros", "--help"], columns)
    real = _run([sys.executable, "-c", _REAL, "--help"], columns)
    assert real == fast
    assert all(f"│ {row.name} " in fast for row in COMMANDS)


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


def test_no_arguments_print_the_same_help() -> None:
    """``oneiros`` alone prints the top-level help (the app's own path) and exits 2, as Typer does."""
    result = CliRunner().invoke(app, [], prog_name="oneiros", env={"COLUMNS": "80"})
    assert 2 == result.exit_code
    assert render(listed_index(), 80) + "\n" == result.output


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
    index = HelpIndex("oneiros [OPTIONS]", "Some text.", (("--help", "Show this."),), tuple(rows))
    shown = render(index, width)
    lines = shown.splitlines()
    assert [] == [line for line in lines if len(line) > max(width, 40)]
    for name, text in rows:
        assert any(line.startswith(f"│ {name} ") for line in lines)
        assert "".join(text.split()) in "".join(shown.replace("│", " ").split())
