"""The public surface is deliberate: these names are what users may import, and nothing else is.

Ten packages have a public surface (the top-level ``oneiros`` and the nine below); every other
package exports nothing, and its modules are private. Adding a name here is a promise: say it in
CHANGELOG.md. docs/reference/python.md is generated from these lists (docs/hooks/reference.py).
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import oneiros
from oneiros import _errors

# The error tree (oneiros/_errors.py, docs/errors.md) is public by rule: every class of it, from the
# top-level package (test_the_top_level_exports_the_whole_error_tree holds the tree to it).
ERRORS = sorted(_errors.__all__)

PUBLIC = {
    "oneiros": [
        *ERRORS,
        "CycleResult", "CycleSettings", "Deps", "Episode", "EventStore", "FixedClock", "Golems", "GolemState",
        "InProcessExecutor", "load_episodes", "Observers", "OfflineGenerator", "Oneiros", "open_store", "Outcome",
        "Recorded", "replay", "sample_episodes_path", "SequentialIds", "Transition",
    ],
    "oneiros.app": [
        "CycleOptions", "CycleRun", "DreamingStatus", "Entry", "Golem", "MemoryBlock", "MemoryBlockItem", "Oneiros",
        "OutcomeInput", "OutcomeMoved", "Page", "Report", "StoredItem",
    ],
    "oneiros.cli": [
        "app", "main",
    ],
    "oneiros.config": [
        "load_config", "OneirosConfig",
    ],
    "oneiros.events": [
        "ActivityRecorded", "BudgetExhausted", "ConfidenceChanged", "CycleEvent", "DreamComplete",
        "DreamCounterfactual", "DreamEmpty", "DreamHypothesis", "DreamInsight", "DreamInterrupted",
        "DreamObservation", "DreamOutput", "DreamPhase", "DreamReport", "DreamStaged", "DreamStart",
        "DreamSuppressed", "EntryExpired", "EntryPromoted", "EntryRefuted", "EntryReviewed", "EntryStaged",
        "EpisodeRecorded", "Event", "EventMeta", "GenerationRecorded", "GolemCreated", "HealthAlarmCleared",
        "HealthAlarmRaised", "ModeChanged", "OutcomeRecorded", "registered_events", "WakeUpSummary",
    ],
    "oneiros.generators": [
        "Generation", "GenerationRequest", "Generator", "make_generator", "OfflineGenerator", "OpenAIGenerator",
        "Task",
    ],
    "oneiros.phases": [
        "ENGINES", "PhaseContext", "PhaseEngine",
    ],
    "oneiros.settings": [
        "CycleBudget", "CycleSettings", "DaemonSettings", "EngineSettings", "GeneratorSettings", "HealthSettings",
        "LogSettings", "MemoryBlockSettings", "ModelPrice", "OpenAISettings", "PHASES", "PhaseSpec", "PhaseTable",
        "PhaseValues", "PromptSet", "RaceSettings", "RecoverySettings", "RqSettings", "ScheduleSettings",
        "ServerSettings", "SnapshotSettings", "StagingSettings", "Tier", "TracingSettings",
    ],
    "oneiros.telemetry": [
        "configure_tracing",
    ],
    "oneiros.workers": [
        "JsonSerializer", "RqExecutor",
    ],
}  # fmt: skip

# Packages with no public name: what a user needs of them is re-exported by a public package.
PRIVATE = [
    "oneiros.daemon",
    "oneiros.episodes",
    "oneiros.fsm",
    "oneiros.health",
    "oneiros.integrations",
    "oneiros.lab",
    "oneiros.projections",
    "oneiros.runtime",
    "oneiros.scheduling",
    "oneiros.server",
    "oneiros.store",
    "oneiros.validation",
]

AT_MOST = 150
"""The surface's size: distinct names across every public package (httpx exports about 70)."""


def _subpackages() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.iter_modules(oneiros.__path__, "oneiros.")
        if info.ispkg and not info.name.split(".")[-1].startswith("_")
    )


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_public_names_are_pinned(module: str) -> None:
    """A name added to or dropped from a public ``__all__`` must be a deliberate change here too."""
    assert sorted(PUBLIC[module]) == sorted(importlib.import_module(module).__all__)


@pytest.mark.parametrize("module", PRIVATE)
def test_every_other_package_exports_nothing(module: str) -> None:
    """A package that is not public has an empty ``__all__`` and no name of its own beyond it."""
    mod = importlib.import_module(module)
    assert [] == mod.__all__
    # A submodule imported elsewhere shows as an attribute of its package; it is not a name of it.
    assert [] == [n for n, v in vars(mod).items() if not n.startswith("_") and not isinstance(v, ModuleType)]


def test_every_package_is_public_or_private() -> None:
    """A new subpackage must be decided: a surface pinned here, or none."""
    assert sorted([m for m in PUBLIC if m != "oneiros"] + PRIVATE) == _subpackages()


def test_the_surface_stays_small() -> None:
    """At most 150 distinct public names across the whole package."""
    names = {name for names in PUBLIC.values() for name in names}
    assert len(names) <= AT_MOST, len(names)


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_every_exported_name_exists(module: str) -> None:
    """Everything in ``__all__`` imports, and is documented: a docstring of its own for a class or
    a function (the reference page shows it)."""
    mod = importlib.import_module(module)
    for name in mod.__all__:
        value = getattr(mod, name)
        if isinstance(value, type) or (callable(value) and not hasattr(value, "__origin__")):
            assert (value.__doc__ or "").strip(), f"{module}.{name} has no docstring"


def test_the_top_level_exports_the_whole_error_tree() -> None:
    """Every OneirosError subclass there is can be caught as ``oneiros.<Name>``, and every exception
    ``oneiros`` exports is one."""

    def subclasses(cls: type) -> set[type]:
        found: set[type] = set(cls.__subclasses__())
        for sub in list(found):
            found |= subclasses(sub)
        return found

    tree = {cls.__name__ for cls in subclasses(oneiros.OneirosError)} | {"OneirosError"}
    exported = {n for n in oneiros.__all__ if isinstance(getattr(oneiros, n), type)}
    exceptions = {n for n in exported if issubclass(getattr(oneiros, n), BaseException)}
    assert sorted(tree) == sorted(exceptions) == sorted(ERRORS)


def test_import_oneiros_loads_none_of_its_names() -> None:
    """``import oneiros`` loads no subpackage: each name loads its module on first use (PEP 562)."""
    probe = "import sys, oneiros; print(sorted(m for m in sys.modules if m.startswith('oneiros.')))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert "[]" == out.stdout.strip()


def test_the_top_level_lists_each_name_once() -> None:
    """``oneiros`` lists each public name once, with the module it comes from (``_HOMES``), and the
    error tree by rule; the imports type checkers and the API reference read name exactly those
    names from those modules (the error tree by a star import of its module), each once, and
    ``__all__`` and ``dir()`` are made from them."""
    tree = ast.parse(Path(oneiros.__file__).read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    imported: list[tuple[str, str]] = []
    stars: list[str] = []
    for node in block.body:
        assert isinstance(node, ast.ImportFrom)
        assert node.module is not None
        for alias in node.names:
            if alias.name == "*":
                stars.append(node.module)
            else:
                assert alias.asname == alias.name  # an explicit re-export, as strict mypy wants
                imported.append((alias.name, node.module))
    homes: dict[str, str] = vars(oneiros)["_HOMES"]
    assert sorted(homes.items()) == sorted(imported)
    assert ["oneiros._errors"] == stars
    assert set() == set(homes) & set(ERRORS)
    assert sorted([*homes, *ERRORS]) == oneiros.__all__
    assert set(oneiros.__all__) <= set(dir(oneiros))


def test_the_documented_error_tree_names_every_error() -> None:
    """docs/errors.md and the tree in oneiros/_errors.py list every OneirosError subclass there is."""

    def subclasses(cls: type) -> set[type]:
        found: set[type] = set(cls.__subclasses__())
        for sub in list(found):
            found |= subclasses(sub)
        return found

    names = {cls.__name__ for cls in subclasses(oneiros.OneirosError)}
    docs = (Path(__file__).parent.parent / "docs" / "errors.md").read_text()
    tree = _errors.__doc__ or ""
    assert set() == {n for n in names if not re.search(rf"── {n}\b", docs)}
    assert set() == {n for n in names if not re.search(rf"── {n}\b", tree)}


def test_the_python_reference_lists_exactly_the_public_names() -> None:
    """docs/reference/python.md (generated on every docs build) has one entry per pinned name and no other."""
    import importlib.util

    hook = Path(__file__).parent.parent / "docs" / "hooks" / "python_api.py"
    spec = importlib.util.spec_from_file_location("python_api", hook)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    entries = re.findall(r"^::: (\S+)$", module.python_page(), flags=re.MULTILINE)
    assert sorted(f"{m}.{n}" for m, names in PUBLIC.items() for n in names) == sorted(entries)
