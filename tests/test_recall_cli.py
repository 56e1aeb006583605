"""``oneiros recall`` driven as a user would: the one ranking as a table within 80 columns, --json,
--budget-tokens keeping the ranking's top, --block printing the memory block, and nothing written."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from oneiros.events._recall import MemoryRecalled
from oneiros.store._store import open_store
from tests.test_cli_coherence import _ink, ok, oneiros

QUERY = "eth range floor"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose embedded store holds golem `golem` after `dream --sample`, one entry promoted."""
    made = tmp_path_factory.mktemp("recall")
    ok(made, "dream", "--sample", "--json")
    staged = json.loads(ok(made, "staging", "--json").stdout)
    entry = next(e["entry_id"] for e in staged if e["status"] == "proposed")
    ok(made, "review", entry, "--decision", "promote_candidate", "--reason", "held up")
    return made


def _head(home: Path) -> tuple[int, int]:
    """The log's head and how many recalls it records."""
    with open_store(f"sqlite:///{home}/.oneiros/events.db") as store:
        return store.head(), len(list(store.read_all(types=[MemoryRecalled])))


def _recall(home: Path, *args: str) -> Any:
    return json.loads(ok(home, "recall", *args, "--json").stdout)


def _ranking(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted([*answer["results"], *answer["related_dreams"]], key=lambda i: i["rank"])


def test_the_table_shows_the_ranking_within_80_columns(home: Path) -> None:
    """Each item of the ranking is a row with its rank, standing (result or dream), relevance,
    turns and day; at 80 columns no line is wider and nothing is cut (every character printed at
    400 columns is printed)."""
    out = ok(home, "recall", QUERY).stdout
    assert [] == [line for line in out.splitlines() if len(line) > 80]
    assert "…" not in out
    assert _ink(ok(home, "recall", QUERY, env={"COLUMNS": "400"}).stdout) == _ink(out)
    wide = ok(home, "recall", QUERY, env={"COLUMNS": "400"}).stdout
    for item in _ranking(_recall(home, QUERY)):
        standing = "result" if item["standing"] == "fact" else "dream"
        row = next(line for line in wide.splitlines() if line.split()[:1] == [str(item["rank"])])
        assert row.split()[1:3] == [standing, f"{item['relevance']:.2f}"]
        if item["time"]:
            assert item["time"][:10] in row


def test_budget_tokens_keeps_the_rankings_top_that_fits(home: Path) -> None:
    """--budget-tokens T keeps the longest prefix of the ranking whose texts, a line each, are at
    most T tokens (characters / 4, rounded up): the next item would not have fit."""
    whole = _ranking(_recall(home, QUERY, "--limit", "20"))
    for budget in (1, 15, 40, 90):
        kept = _ranking(_recall(home, QUERY, "--limit", "20", "--budget-tokens", str(budget)))
        assert kept == whole[: len(kept)]
        assert math.ceil(len("\n".join(i["text"] for i in kept)) / 4) <= budget
        if len(kept) < len(whole):
            assert math.ceil(len("\n".join(i["text"] for i in whole[: len(kept) + 1])) / 4) > budget


def test_block_prints_the_memory_block(home: Path) -> None:
    """--block prints the memory block's text as it is (MEMORY.md's line first, then the ranking),
    within --budget-tokens; with --json, the MemoryBlock."""
    block = _recall(home, QUERY, "--block", "--budget-tokens", "300")
    assert block["tokens"] <= 300
    printed = ok(home, "recall", QUERY, "--block", "--budget-tokens", "300").stdout
    assert block["text"] + "\n" == printed
    assert printed.startswith("## What I know (MEMORY.md)\n- ")


def test_recall_writes_nothing(home: Path) -> None:
    """However it is asked (table, --json, --block), recall appends no event: no recall is counted."""
    before = _head(home)
    ok(home, "recall", QUERY)
    _recall(home, QUERY, "--budget-tokens", "20")
    _recall(home, QUERY, "--block")
    assert before == _head(home)


def test_an_unknown_golem_is_one_line_and_creates_nothing(home: Path) -> None:
    """A typo in --golem is the usual one-line error naming the nearest golem, exit 2, nothing written."""
    before = _head(home)
    for extra in ((), ("--block",)):
        missing = oneiros(home, "recall", QUERY, "--golem", "golemm", *extra)
        assert (2, "", "error: golem 'golemm' does not exist; did you mean 'golem'?\n") == (
            missing.returncode,
            missing.stdout,
            missing.stderr,
        )
    assert before == _head(home)
