"""A golem's name mistyped writes nothing: every command that takes ``--golem``, given one that does
not exist, says so in one line naming the nearest known golem and exits 2, and the store and the
folder are as they were. Creating a golem is explicit (``oneiros golem create``)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import typer

from oneiros.cli._app import app
from tests.test_cli import run

# What each command needs besides --golem to get as far as naming the golem; a new command with a
# required argument fails the enumeration below until it is given here.
_REQUIRED: dict[str, tuple[str, ...]] = {
    "lineage": ("some-entry",),
    "outcome": ("--tick", "1", "--verdict", "confirms", "--summary", "deployed again"),
    "token add": ("agent", "--scope", "read", "--tokens", "tokens.toml"),
    "interrupt": ("--reason", "stuck"),
    "run": ("--ticks", "1"),
    "recall": ("deploys",),
}

# Commands that record episodes create the golem they record into, explicitly: `dream --episodes`
# and `import FILE` (the file is the intent). Without episodes, `dream` takes only a golem that exists.
_RECORDERS = frozenset({"import"})


def _commands_with_golem() -> list[tuple[str, tuple[str, ...]]]:
    """(command path, its required arguments) for every command of the app with a --golem option."""
    found: list[tuple[str, tuple[str, ...]]] = []

    def walk(command: Any, path: list[str]) -> None:
        if hasattr(command, "list_commands"):
            with typer.Context(command) as ctx:
                for name in command.list_commands(ctx):
                    walk(command.get_command(ctx, name), [*path, name])
            return
        if any("--golem" in param.opts for param in command.params):
            found.append((" ".join(path), tuple(p.name for p in command.params if p.required)))

    walk(typer.main.get_command(app), [])
    return found


_COMMANDS = [name for name, _required in _commands_with_golem() if name not in _RECORDERS]


def test_every_command_with_a_golem_is_covered() -> None:
    """Each command taking --golem is run below with what it requires (a new one is not forgotten)."""
    missing = [
        name
        for name, required in _commands_with_golem()
        if name not in _RECORDERS and required and name not in _REQUIRED
    ]
    assert [] == missing
    assert 15 <= len(_COMMANDS)


def _snapshot(folder: Path) -> dict[str, Any]:
    """Every file's bytes under ``folder`` but the projections (a read model a read may bring up to
    date), and the log's rows."""
    files = {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "projections" not in p.name and not p.name.endswith(("-wal", "-shm", "-journal"))
    }
    with sqlite3.connect(folder / ".oneiros" / "events.db") as db:
        rows = db.execute("SELECT originator_id, originator_version, topic FROM oneiros_events").fetchall()
    return {"files": sorted(files), "rows": rows}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose default store holds one golem, `coder`."""
    folder = tmp_path_factory.mktemp("typos")
    made = run("golem", "create", "coder", cwd=folder)
    assert (0, "created golem coder (Waking)\n") == (made.returncode, made.stdout)
    return folder


@pytest.mark.parametrize("command", _COMMANDS)
def test_an_unknown_golem_writes_nothing_and_names_the_nearest(world: Path, command: str) -> None:
    """`oneiros COMMAND --golem codr` exits 2 with one line offering `coder`, and writes nothing."""
    before = _snapshot(world)
    required = _REQUIRED.get(command, ())
    result = run(*command.split(), *required, "--golem", "codr", cwd=world)
    assert (2, "", "error: golem 'codr' does not exist; did you mean 'coder'?\n") == (
        result.returncode,
        result.stdout,
        result.stderr,
    )
    assert before == _snapshot(world)


def test_run_without_a_golem_creates_none(tmp_path: Path) -> None:
    """`oneiros run --preset bumblebee` with no --golem and no golem `golem` says so and creates
    neither the golem nor a store."""
    result = run("run", "--preset", "bumblebee", "--ticks", "1", cwd=tmp_path)
    assert 2 == result.returncode
    assert "error: no store at sqlite:///.oneiros/events.db: no file '.oneiros/events.db'\n" == result.stderr
    assert [] == sorted(tmp_path.rglob("*"))


def test_golem_create_is_explicit_and_once(tmp_path: Path) -> None:
    """`oneiros golem create` makes the golem the other commands then take; twice is an error;
    `run --create` makes the daemon's golem on a deployment's first start."""
    made = run("golem", "create", "dev", "--name", "the dev agent", "--json", cwd=tmp_path)
    assert 0 == made.returncode, made.stderr
    assert ("dev", "Waking") == (json.loads(made.stdout)["golem_id"], json.loads(made.stdout)["mode"])
    again = run("golem", "create", "dev", cwd=tmp_path)
    assert (2, "error: golem 'dev' already exists\n") == (again.returncode, again.stderr)
    unknown = run("run", "--ticks", "1", "--golem", "qa", cwd=tmp_path)
    assert (2, "error: golem 'qa' does not exist\n") == (
        unknown.returncode,
        unknown.stderr,
    )
    ran = run("run", "--ticks", "1", "--golem", "dev", "--json", cwd=tmp_path)
    assert 0 == ran.returncode, ran.stderr
    assert ("dev", 1) == (json.loads(ran.stdout)["golem_id"], json.loads(ran.stdout)["ticks"])
    created = run("run", "--ticks", "1", "--golem", "qa", "--create", "--json", cwd=tmp_path)  # a deployment's start
    assert 0 == created.returncode, created.stderr
    status = {g["golem_id"] for g in json.loads(run("status", "--json", cwd=tmp_path).stdout)["golems"]}
    assert {"dev", "qa"} == status
