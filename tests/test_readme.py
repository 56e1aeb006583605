"""The README's dream journal entry is what `oneiros journal --markdown` prints after
`oneiros dream --sample`, up to the ids, times and the dream's own words; and the files it names exist."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.doc_blocks import ROOT, collect

README = ROOT / "README.md"
_KINDS = (
    ("heading", re.compile(r"## \d{4}-\d\d-\d\d \d\d:\d\d:\d\d #dream #consolidation")),
    ("marker", re.compile(r"\*\[dream\]\*")),
    ("fragment", re.compile(r"  \S.*")),
    ("thread", re.compile(r"\*thread: .+\*")),
    (
        "figures",
        re.compile(
            r"<!-- cycle [0-9a-f]{32} of \S+ · complete · \d+ staged · [\d,]+ tokens? · \$0\.0000 · \d+ ticks? · "
            r"quality \d+% -->"
        ),
    ),
    ("blank", re.compile(r"")),
)


def _shape(text: str) -> list[str]:
    """Each line's kind, with a run of fragments as one (blank lines around the entry dropped)."""
    kinds: list[str] = []
    for line in text.strip("\n").splitlines():
        kind = next((name for name, pattern in _KINDS if pattern.fullmatch(line)), f"unexpected: {line!r}")
        if not (kind == "fragment" and kinds and kinds[-1] == "fragment"):
            kinds.append(kind)
    return kinds


def test_the_readme_journal_entry_has_the_commands_shape(tmp_path: Path) -> None:
    """The pasted entry and a fresh one have the same lines in the same order: heading, [dream]
    marker, fragments, thread, the figures line of a complete offline cycle."""
    (pasted,) = [b for b in collect(README) if b.text.startswith("## ") and "#dream" in b.text]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")} | {"ONEIROS_SPANS": "off"}
    for args in (("dream", "--sample", "--json"), ("journal", "--markdown")):
        result = subprocess.run(
            [sys.executable, "-m", "oneiros", *args], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
        )
    expected = ["heading", "blank", "marker", "blank", "fragment", "blank", "thread", "blank", "figures"]
    assert expected == _shape(pasted.text)
    assert expected == _shape(result.stdout)


def test_the_files_the_readme_names_exist() -> None:
    """Every repository path the README puts in backticks (examples/, docs/, scripts/...) exists."""
    path = r"`((?:examples|docs|scripts|tests|benchmarks|deploy|oneiros)/[\w./-]+)`"
    named = set(re.findall(path, README.read_text()))
    assert {"examples/episodes.jsonl", "oneiros/data/sample_episodes.jsonl"} <= named
    assert [] == sorted(p for p in named if not (ROOT / p).exists())
