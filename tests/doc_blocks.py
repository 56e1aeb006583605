"""The fenced code blocks of the documentation, as the docs-block tests collect them.

The convention (docs/contributing.md, "Code blocks run"): every fence names a language; ``text``
blocks are shown, not run; every other block is executed or parsed by ``tests/test_doc_blocks.py``.
An HTML comment on the line before a fence (``<!-- docs-test: KEY[=VALUE]; ... -->``) says what the
block needs:

- ``skip=REASON``: not run here, with the reason (keep these few);
- ``needs=redis,postgres``: the block gets a redis-server and a PostgreSQL schema of the test's own;
  the URLs ``redis://127.0.0.1:6379/0`` and ``postgresql://postgres@127.0.0.1:5432/test[?schema=NAME]``
  in it are replaced by them;
- ``background=PREFIX,PREFIX``: lines starting with one of these (``oneiros serve``) are long-running:
  they run in the background, must still be running when the rest of the block is done, and are
  stopped then;
- ``fresh``: an ``sh`` block runs in an empty folder instead of one holding the sample store, with
  no ``$CYCLE`` or ``$ENTRY``; README's blocks always do, as a newcomer runs them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

__all__ = ["ROOT", "Block", "collect", "doc_files"]

_FENCE = re.compile(r"^(?P<indent>\s*)(?P<ticks>`{3,})(?P<lang>[\w.+-]*)\s*$")
_MARKER = re.compile(r"^\s*<!--\s*docs-test:(?P<body>.*?)-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its text and its marker's settings."""

    path: Path
    line: int
    lang: str
    text: str
    options: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}:{self.lang or 'none'}"

    def listed(self, key: str) -> tuple[str, ...]:
        return tuple(p.strip() for p in self.options.get(key, "").split(",") if p.strip())


def doc_files() -> list[Path]:
    """Every Markdown file whose blocks run: the site's pages, the README and the examples' notes."""
    pages = [p for p in sorted((ROOT / "docs").rglob("*.md")) if "hooks" not in p.parts]
    return [*pages, ROOT / "README.md", *sorted((ROOT / "examples").rglob("*.md"))]


def _options(body: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in body.split(";"):
        if part.strip():
            key, _, value = part.partition("=")
            out[key.strip()] = value.strip()
    return out


def collect(path: Path) -> list[Block]:
    """The fenced blocks of ``path`` in order, each with the marker on the line before it."""
    lines = path.read_text().splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opened = _FENCE.match(lines[i])
        if opened is None:
            i += 1
            continue
        start, ticks, indent = i, opened["ticks"], len(opened["indent"])
        end = start + 1
        while end < len(lines) and lines[end].strip() != ticks:
            end += 1
        body = "\n".join(line[indent:] for line in lines[start + 1 : end])
        before = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        marker = _MARKER.match(before)
        options = _options(marker["body"]) if marker else {}
        blocks.append(Block(path, start + 1, opened["lang"], body + "\n", options))
        i = end + 1
    return blocks
