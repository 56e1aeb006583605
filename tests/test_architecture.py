"""The application layer's shape, checked on the package's source: one flat facade over parts it
composes (no part a base class), one composition root that builds the golems and the executors,
and use cases whose cross-cutting concerns are declared, not written into their bodies."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest

from oneiros._errors import ProjectionConflict
from oneiros.app import Oneiros
from oneiros.app._concerns import declared
from oneiros.app._core import _SETTLE_ATTEMPTS, _settled
from oneiros.app._dreams import Dreams
from oneiros.app._items import Items
from oneiros.app._knowledge import Knowledge
from oneiros.app._lab import Lab
from oneiros.app._reads import Reads
from oneiros.app._records import Records
from oneiros.app._sessions import Sessions

PACKAGE = Path(__file__).parent.parent / "oneiros"
PARTS = (Reads, Records, Dreams, Lab, Knowledge, Items, Sessions)

# What only the composition root builds, and where else a constructor call may stand: the lowest
# layer's default builder (what the layers below the app are given when no application is: a
# worker process, a lab run on a scratch store), and the executor itself, which re-wraps the golems
# it is given with tracing and resumes a cycle as the executor it is.
BUILT_BY_THE_ROOT = {"Golems", "InProcessExecutor", "RqExecutor", "Reconciler", "Daemon"}
ROOT = "oneiros/app/_factory.py"
LOWEST_DEFAULTS = {"oneiros/runtime/_builds.py", "oneiros/runtime/_executor.py"}


def _modules(under: str = "") -> Iterator[tuple[str, ast.Module]]:
    for path in sorted((PACKAGE / under).rglob("*.py")):
        yield str(path.relative_to(PACKAGE.parent)), ast.parse(path.read_text())


def test_no_class_of_the_app_layer_is_a_base_of_another() -> None:
    """The facade and its parts compose: no class of oneiros/app (bar the result Structs, which are
    data) derives from another class defined there."""
    trees = list(_modules("app"))
    defined = {node.name for _name, tree in trees for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    found = []
    for name, tree in trees:
        if name.endswith("_shapes.py"):
            continue  # result Structs: a row that extends another row is data, not behaviour
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(base).split("[")[0] for base in node.bases}
                found += [f"{name}: {node.name}({base})" for base in bases & defined]
    assert [] == found


def test_the_facade_derives_from_nothing() -> None:
    """``Oneiros`` is one flat class: every use case is reached on it, none inherited."""
    assert (object,) == Oneiros.__bases__
    assert all(part.__bases__ == (object,) for part in PARTS)


def _called(call: ast.Call) -> str:
    """The name a call calls: ``f(...)`` or ``x.f(...)`` both give ``f``."""
    return call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", "")


def test_only_the_composition_root_builds_golems_and_executors() -> None:
    """``Golems(...)``, the executors, the reconciler and the daemon are called into being only by
    the facade's factory module (and the lowest layer's own defaults), so every process builds
    them with the same settings."""
    found = []
    for name, tree in _modules():
        if name == ROOT or name in LOWEST_DEFAULTS:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and (called := _called(node)) in BUILT_BY_THE_ROOT:
                found.append(f"{name}:{node.lineno} {called}(...)")
    assert [] == found


def test_every_write_that_takes_a_key_declares_it() -> None:
    """A use case with an ``idempotency_key`` says which of its arguments make up the request: a
    retry is then answered as the first call was, by the declaration, not by its body."""
    forwarded = {"Dreams.dream"}  # its options defaulted, the key goes to Dreams._dream, which declares it
    keyed = []
    for part in PARTS:
        for name, method in inspect.getmembers(part, inspect.isfunction):
            if f"{part.__name__}.{name}" in forwarded:
                assert declared(getattr(part, f"_{name}")) is not None
            elif "idempotency_key" in inspect.signature(method).parameters:
                declaration = declared(method)
                keyed.append((f"{part.__name__}.{name}", declaration is not None and declaration.idempotent))
    assert keyed
    assert [] == [name for name, idempotent in keyed if not idempotent]


def test_no_use_case_body_catches_up_or_checks_a_golem_by_hand() -> None:
    """The concerns are declared: a part's methods call no ``fresh``, ``written``, ``require_golem``
    or ``once`` of their own, bar the few whose reads depend on an argument (named here)."""
    by_hand = {"fresh", "written", "require_golem", "once", "exists"}
    allowed = {
        "Reads._sink",  # reads the sink its caller names
        "Dreams.dream",  # a cycle another thread or worker runs writes where no watch hears it
    }
    found = []
    for part in PARTS:
        tree = ast.parse(inspect.getsource(inspect.getmodule(part)))  # type: ignore[arg-type]
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == part.__name__):
            for method in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
                where = f"{part.__name__}.{method.name}"
                calls = (_by_hand(node) for node in ast.walk(method) if isinstance(node, ast.Call))
                found += [f"{where}: {called}" for called in calls if called in by_hand and where not in allowed]
    assert [] == found


def _by_hand(call: ast.Call) -> str:
    """What ``self.core.f(...)`` or ``once(...)`` calls; "" for any other call."""
    if isinstance(call.func, ast.Name):
        return call.func.id
    on = call.func.value if isinstance(call.func, ast.Attribute) else None
    return call.func.attr if on is not None and ast.unparse(on) == "self.core" else ""


def test_settle_catches_up_after_conflicts_and_raises_when_it_cannot() -> None:
    """One retry policy: a catch-up that another process overtook starts again from there, up to
    its attempts; one overtaken every time raises the typed ProjectionConflict, never an answer
    from read models left behind."""
    tries: list[int] = []

    def overtaken(times: int) -> str:
        tries.append(1)
        if len(tries) <= times:
            raise ProjectionConflict("journal", 3, 7)
        return "caught up"

    assert "caught up" == _settled(lambda: overtaken(_SETTLE_ATTEMPTS - 1))
    tries.clear()
    with pytest.raises(ProjectionConflict, match="journal"):
        _settled(lambda: overtaken(_SETTLE_ATTEMPTS))
    assert _SETTLE_ATTEMPTS == len(tries)


def test_every_process_builds_golems_with_the_configs_settings(tmp_path: Path) -> None:
    """The facade's golems, a worker's (built from the config the factory hands ``oneiros worker``)
    and the reconcilers of both carry the config's snapshot, race and recovery settings: before, a
    worker's golems and ``oneiros recover``'s took the defaults."""
    import msgspec

    from oneiros.config._load import OneirosConfig
    from oneiros.runtime._process import Runtime
    from oneiros.settings._races import RaceSettings
    from oneiros.settings._recovery import RecoverySettings
    from oneiros.settings._runtime import SnapshotSettings

    url = f"sqlite:///{tmp_path}/events.db"
    config = msgspec.structs.replace(
        OneirosConfig(store=url),
        snapshots=SnapshotSettings(every=7),
        races=RaceSettings(attempts=9),
        recovery=msgspec.structs.replace(RecoverySettings(), attempts=2),
    )
    with Oneiros(url, config) as app:
        worker = Runtime(app.factory.worker_config())
        try:
            built = [app.factory.golems(app.store), worker.golems()]
            reconcilers = [app.reconciler(), worker.reconciler(jobs=None)]
            assert [(7, 9)] * 2 == [(g.snapshot_settings.every, g.races.attempts) for g in built]
            assert [2, 2] == [r.settings.attempts for r in reconcilers]
            assert [(7, 9)] * 2 == [(r.golems.snapshot_settings.every, r.golems.races.attempts) for r in reconcilers]
        finally:
            worker.store.close()


def test_nothing_rides_on_the_context() -> None:
    """No module keeps a context variable: what a call writes with (its idempotency key, the watch
    on its positions) is handed to it in its unit of work, so an append made beside it carries
    none of it (the key used to ride a ContextVar onto whichever append came first)."""
    found = [
        f"{name}:{node.lineno}"
        for name, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Name | ast.Attribute)
        and (getattr(node, "id", None) or getattr(node, "attr", "")) == "ContextVar"
    ]
    assert [] == found


def test_a_commands_unit_is_its_own_and_not_its_callers() -> None:
    """Every use case declared a command takes its unit of work after ``self``, and the signature its
    callers see (``help()``, the API reference, the facade) has no unit in it."""
    commands = []
    for part in PARTS:
        for name, method in inspect.getmembers(part, inspect.isfunction):
            declaration = declared(method)
            if declaration is not None and declaration.command:
                commands.append(f"{part.__name__}.{name}")
                assert "unit" not in inspect.signature(method).parameters, name
                assert "unit" not in inspect.signature(getattr(Oneiros, name.lstrip("_"), method)).parameters, name
    assert {"Records.record_episodes", "Records.create_golem", "Dreams._dream", "Items.keep_item"} <= set(commands)
