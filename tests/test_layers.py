"""The package is layered: each subpackage, imported alone, loads only itself and what lies below it."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest


def _layers() -> list[set[str]]:
    """The layers bottom first, as pyproject's import-linter contract writes them (the one list of
    them: lint-imports checks the imports, this file what importing each package loads)."""
    with (Path(__file__).resolve().parent.parent / "pyproject.toml").open("rb") as file:
        contracts = tomllib.load(file)["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c["type"] == "layers")
    return [{part.strip() for part in layer.split("|")} for layer in reversed(layers) if layer != "__main__"]


LAYERS = _layers()
HEAVY = ("rq", "redis", "opentelemetry", "numpy")
_PROBE = """
import json, sys
import {module}
loaded = sorted({{m.split(".")[1] for m in sys.modules if m.startswith("oneiros.")}})
heavy = sorted({{m.split(".")[0] for m in sys.modules}} & set({heavy!r}))
print(json.dumps({{"loaded": loaded, "heavy": heavy}}))
"""


def _import_alone(module: str) -> dict[str, list[str]]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(module=module, heavy=HEAVY)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, list[str]] = json.loads(out.stdout)
    return result


def _level(package: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if package in layer)


@pytest.mark.parametrize("package", sorted(set().union(*LAYERS)))
def test_a_subpackage_loads_nothing_above_its_layer(package: str) -> None:
    """Importing one subpackage in a fresh interpreter pulls in no subpackage of a higher layer."""
    loaded = _import_alone(f"oneiros.{package}")["loaded"]
    above = sorted(p for p in loaded if p in set().union(*LAYERS) and _level(p) > _level(package))
    assert [] == above


@pytest.mark.parametrize("module", ["oneiros", "oneiros.settings", "oneiros.events", "oneiros.cli"])
def test_the_log_loads_no_queue_tracing_or_numeric_library(module: str) -> None:
    """``import oneiros``, the event log and the command line (until a command runs) stay light:
    no RQ, Redis, OpenTelemetry or NumPy."""
    assert [] == _import_alone(module)["heavy"]


def test_the_top_level_names_load_on_first_use() -> None:
    """``oneiros.Golems`` resolves lazily to the class its subpackage defines."""
    import oneiros
    from oneiros.fsm._service import Golems

    assert Golems is oneiros.Golems


def test_the_architecture_page_draws_the_layers_pyproject_declares() -> None:
    """docs/architecture.md's layer picture names the packages of pyproject's layers, top first, one
    layer a line: a layer added, moved or renamed in the contract fails here until the page follows."""
    page = (Path(__file__).resolve().parent.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    picture = page.split("## Layers and packages", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    drawn = []
    for line in picture.strip("\n").splitlines():
        # "<group>  <packages joined by ' · '>  <what they own>": the packages are the second column.
        columns = [c for c in line[len(" interfaces    ") :].split("  ") if c.strip()]
        drawn.append({name.strip() for name in columns[0].split("·")})
    assert list(reversed(LAYERS)) == drawn
