"""The web inspector's files: built from ``inspector/`` and shipped as package data."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

__all__ = ["static_dir"]


def static_dir() -> Path:
    """The built inspector, shipped as package data (``inspector/`` holds its sources)."""
    return Path(str(files("oneiros.server") / "static"))
