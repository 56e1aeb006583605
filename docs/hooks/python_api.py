"""The Python API reference page, ``reference/python.md``, from the public surface itself.

Every public package (the top-level ``oneiros`` and each subpackage whose ``__all__`` is not
empty) gets a section, and every name of its ``__all__`` an mkdocstrings entry, so the page lists
exactly the names tests/test_public_api.py pins. docs/hooks/reference.py writes it on every
build; tests/test_public_api.py reads it from here without building the site.
"""

from __future__ import annotations

import importlib
import pkgutil

import oneiros

# The order a reader meets them in; a public package missing here comes after, by name.
_ORDER = (
    "oneiros",
    "oneiros.app",
    "oneiros.events",
    "oneiros.settings",
    "oneiros.config",
    "oneiros.generators",
    "oneiros.phases",
    "oneiros.telemetry",
    "oneiros.workers",
    "oneiros.cli",
)

_INTRO = (
    "# Python API",
    "",
    "Generated from the public surface: every name here is in its package's `__all__`, and",
    "`tests/test_public_api.py` pins them. Nothing else is public: the packages not listed export",
    "nothing, and a module whose name starts with `_` is private and may change without notice.",
    "Most of what a user needs is in `oneiros` itself; the event types not listed are read by type",
    "name through `oneiros.events.registered_events()`.",
    "",
)


def public_packages() -> list[str]:
    """The top-level package and every subpackage that exports something, in reading order."""
    found = {"oneiros"} | {
        info.name
        for info in pkgutil.iter_modules(oneiros.__path__, "oneiros.")
        if info.ispkg and not info.name.split(".")[-1].startswith("_") and importlib.import_module(info.name).__all__
    }
    ordered = [p for p in _ORDER if p in found]
    return ordered + sorted(found - set(ordered))


def _summary(package: str) -> str:
    doc = importlib.import_module(package).__doc__ or ""
    return " ".join(doc.strip().split("\n\n")[0].split())


def python_page() -> str:
    """The page: a section per public package, an entry per public name, sorted within it."""
    lines = list(_INTRO)
    for package in public_packages():
        names = sorted(importlib.import_module(package).__all__, key=lambda n: (n.lower(), n))
        lines.extend([f"## `{package}`", "", _summary(package), ""])
        for name in names:
            lines.extend(
                [
                    f"::: {package}.{name}",
                    "    options:",
                    "      show_root_heading: true",
                    "      show_root_full_path: true",
                    "      heading_level: 3",
                    "",
                ]
            )
    return "\n".join(lines)
