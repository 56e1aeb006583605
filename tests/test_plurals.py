"""A count and its noun agree wherever the CLI prints one ("1 entry moved", "stopped after 1 tick",
not "1 entries", "1 ticks"): one helper, :func:`oneiros._text.counted`, makes every such phrase."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oneiros._text import counted, plural
from tests.test_cli import run


@pytest.mark.parametrize(
    ("noun", "many"),
    [
        ("entry", "entries"),
        ("tick", "ticks"),
        ("hypothesis", "hypotheses"),
        ("day", "days"),
        ("batch", "batches"),
        ("staged output", "staged outputs"),
        ("held message", "held messages"),
    ],
)
def test_plural(noun: str, many: str) -> None:
    """The plural of each noun oneiros counts, of a phrase its last word's."""
    assert many == plural(noun)


@given(count=st.integers(0, 10**9), noun=st.sampled_from(["entry", "tick", "cycle", "episode", "decision"]))
def test_one_takes_the_singular_and_every_other_count_the_plural(count: int, noun: str) -> None:
    """1 is singular; 0 and every other count plural; thousands are grouped, as the CLI's tables do."""
    assert f"{count:,} {noun if count == 1 else plural(noun)}" == counted(count, noun)


def test_the_cli_says_1_tick_and_1_entry(tmp_path: Path) -> None:
    """`run --ticks 1` said "stopped after 1 ticks" and an outcome moving one entry "1 entries
    moved"; both agree now."""
    ran = run("run", "--golem", "demo", "--sample", "--ticks", "1", "--tick-seconds", "0.01", cwd=tmp_path)
    assert 0 == ran.returncode, ran.stderr
    assert ran.stdout.splitlines()[-1].startswith("stopped after 1 tick, ")
    assert 0 == run("dream", "--golem", "demo", cwd=tmp_path).returncode
    staged = json.loads(run("staging", "--status", "proposed", "--json", cwd=tmp_path).stdout)
    entry = staged[0]["entry_id"]
    moved = run("outcome", "--golem", "demo", "--tick", "5000", "--verdict", "confirms", "--entry", entry, cwd=tmp_path)
    assert 0 == moved.returncode, moved.stderr
    assert moved.stdout.splitlines()[0].endswith("; 1 entry moved")
