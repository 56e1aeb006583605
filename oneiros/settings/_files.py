"""Reading a TOML file a person named (``--config``, ``--prompts``): every way it can fail becomes
one phrase saying what was expected, which the caller wraps in the error of its kind."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from oneiros._errors import OneirosError

__all__ = ["read_toml"]


def read_toml(path: Path, fail: Callable[[str], OneirosError]) -> dict[str, Any]:
    """The table in the TOML file at ``path``; ``fail(expected)`` is raised when it is missing, a
    directory, unreadable, not UTF-8 or not TOML, ``expected`` saying what it should have been."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise fail("an existing TOML file") from None
    except IsADirectoryError:
        raise fail("a TOML file, not a directory") from None
    except UnicodeDecodeError as exc:
        raise fail(f"UTF-8 text (byte {exc.start} is not)") from None
    except OSError as exc:
        raise fail(f"a readable file ({exc.strerror or type(exc).__name__})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise fail(f"valid TOML ({exc})") from None
