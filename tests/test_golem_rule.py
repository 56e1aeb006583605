"""One rule for which golem a command covers (README, "Using it"; ``oneiros --help``): ``--golem G``
confines any command to G; without it a command that lists shows every golem, each row naming its
own, and every other command works on the config's golem. Before, README said the config's golem
for every command while journal, staging and replay covered every golem and the journal's entries
did not say whose."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import typer

from oneiros.cli._app import app
from oneiros.cli._common import GOLEM_RULE
from tests.doc_blocks import ROOT
from tests.test_cli import run

_LISTS = ("status", "events", "journal", "staging", "replay", "health")
_CONFIGS = "The golem to work on (default: the config's golem, $ONEIROS_GOLEM, else 'golem')."
_FILTERS = "Only this golem (default: every golem, each row naming its own)."
# Options named --golem that are not "the golem a command covers": the entry a lineage looks for,
# the golems a server or a token may serve.
_OTHER = frozenset({"lineage", "mcp", "token add"})


def _golem_options() -> dict[str, str]:
    """Each command's --golem help, by command path."""
    found: dict[str, str] = {}

    def walk(command: Any, path: list[str]) -> None:
        if hasattr(command, "list_commands"):
            with typer.Context(command) as ctx:
                for name in command.list_commands(ctx):
                    walk(command.get_command(ctx, name), [*path, name])
            return
        for param in command.params:
            if "--golem" in param.opts:
                found[" ".join(path)] = param.help or ""

    walk(typer.main.get_command(app), [])
    return found


def test_every_command_says_which_golem_it_covers_by_the_one_rule() -> None:
    """The lists the rule names take --golem as a filter (every golem without it); every other
    command's --golem defaults to the config's golem; README and the top-level help state the rule."""
    options = {name: text for name, text in _golem_options().items() if name not in _OTHER}
    assert {name: _FILTERS for name in _LISTS} == {n: t for n, t in options.items() if t == _FILTERS}
    assert {name: _CONFIGS for name in options if name not in _LISTS} == {
        n: t for n, t in options.items() if n not in _LISTS
    }
    assert all(name in GOLEM_RULE for name in _LISTS)
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "`--golem G` confines any command to golem `G`" in readme
    assert ", ".join(f"`{name}`" for name in _LISTS) in readme
    assert "--golem G confines any command to golem G" in " ".join(run("--help").stdout.split())


def test_lists_name_each_rows_golem_and_take_golem_as_a_filter(tmp_path: Path) -> None:
    """With two golems, the markdown journal says whose each cycle is (it did not), and status,
    replay, journal, staging and events confine themselves to --golem."""
    for golem in ("g1", "g2"):
        assert 0 == run("dream", "--sample", "--golem", golem, "--json", cwd=tmp_path).returncode
    markdown = run("journal", "--markdown", cwd=tmp_path).stdout
    assert ["g1", "g2"] == re.findall(r"<!-- cycle [0-9a-f]{32} of (\S+) ·", markdown)
    for command in ("status", "replay"):
        both = json.loads(run(command, "--json", cwd=tmp_path).stdout)["golems"]
        one = json.loads(run(command, "--golem", "g2", "--json", cwd=tmp_path).stdout)["golems"]
        assert (["g1", "g2"], ["g2"]) == (sorted(g["golem_id"] for g in both), [g["golem_id"] for g in one])
    for command in ("journal", "staging", "events"):
        rows = json.loads(run(command, "--golem", "g2", "--json", cwd=tmp_path).stdout)
        assert {"g2"} == {row["golem_id"] for row in rows}
