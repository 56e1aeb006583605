"""The package's import graph has no circle: no module reaches itself again through what it imports,
directly or through others, lazily or not (grimp, the graph library import-linter is built on)."""

from __future__ import annotations

import grimp


def test_no_module_imports_itself_through_others() -> None:
    """Every import of a module of ours, at the top or inside a function, leads only to modules that
    never import it back: a circle makes the load order matter, and lazy imports used to hide three."""
    graph = grimp.build_graph("oneiros")
    circles = sorted(
        f"{module} -> {imported}"
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
        if graph.chain_exists(imported, module)
    )
    assert [] == circles
