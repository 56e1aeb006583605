"""One idiom for "per event type", and no registry filled at import beyond event types and
upcasters: checked on the package's source, so a new module cannot bring back the other ways."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

from oneiros.events._types import registered_events

PACKAGE = Path(__file__).parent.parent / "oneiros"
# The names a dispatch on event types tests against: every event class and their bases.
EVENT_CLASSES = {cls.__name__ for cls in registered_events().values()} | {"Event", "CycleEvent", "DreamOutput"}


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield str(path.relative_to(PACKAGE.parent)), ast.parse(path.read_text())


def _event_test(statement: ast.stmt) -> str | None:
    """The subject of ``if isinstance(subject, SomeEvent...)`` (first operand of an ``and``), else None."""
    if not isinstance(statement, ast.If):
        return None
    test = statement.test.values[0] if isinstance(statement.test, ast.BoolOp) else statement.test
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"):
        return None
    classes = {n.id for n in ast.walk(test.args[1]) if isinstance(n, ast.Name)}
    return ast.unparse(test.args[0]) if classes & EVENT_CLASSES else None


def _chains(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Where two tests in a row ask which event type one subject is: an ``if``/``elif`` chain, or
    consecutive ``if`` statements."""
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and len(node.orelse) == 1:
            subject = _event_test(node)
            if subject is not None and subject == _event_test(node.orelse[0]):
                yield node.lineno, subject
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if isinstance(statements, list):
                for first, second in pairwise(statements):
                    if _event_test(first) is not None and _event_test(first) == _event_test(second):
                        yield first.lineno, _event_test(first) or ""


def test_per_event_type_is_a_match_not_an_isinstance_chain() -> None:
    """No module asks one event, test after test, which type it is: dispatch on event types is a
    ``match`` with class patterns (docs/contributing.md); a single isinstance check (a selection
    or a guard) is fine."""
    found = [f"{name}:{line} ({subject})" for name, tree in _modules() for line, subject in _chains(tree)]
    assert [] == found


def test_nothing_is_registered_at_import() -> None:
    """No module calls a function or fills a mapping at its top level (which is how a registry is
    filled at import): event types and upcasters register through their decorators, and everything
    else that varies by type is a match or is passed in."""
    found: list[str] = []
    for name, tree in _modules():
        for statement in tree.body:
            if (
                isinstance(statement, ast.Expr)
                and isinstance(statement.value, ast.Call)
                and name != "oneiros/__main__.py"
            ):
                found.append(f"{name}:{statement.lineno} {ast.unparse(statement)[:60]}")
            targets = statement.targets if isinstance(statement, ast.Assign) else []
            if any(isinstance(t, ast.Subscript) for t in targets):
                found.append(f"{name}:{statement.lineno} {ast.unparse(statement)[:60]}")
    assert [] == found
