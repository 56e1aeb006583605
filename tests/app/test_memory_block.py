"""The memory block: recall as a prompt section that never passes its budget and never cuts a line."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros import GolemNotFound, InvalidSetting
from oneiros.app import CycleOptions, MemoryBlock, Oneiros
from oneiros.app._memory_block import MEMORY_HEADING, MemoryBlockItem, render_block, tokenizer
from oneiros.config._load import OneirosConfig
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.settings import MemoryBlockSettings


def words(text: str) -> int:
    """A tokenizer a config can name (``tests.app.test_memory_block:words``): one token a word."""
    return len(text.split())


def _config(tokenizer_spec: str = "chars/4") -> OneirosConfig:
    return msgspec.structs.replace(OneirosConfig(), memory_block=MemoryBlockSettings(tokenizer=tokenizer_spec))


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Oneiros]:
    """Golem g1 with its sample episodes, a dream of three entries, the first promoted into MEMORY.md."""
    path = tmp_path_factory.mktemp("block")
    with Oneiros(f"sqlite:///{path}/events.db", _config()) as made:
        made.create_golem("g1")
        made.record_episodes("g1", load_episodes(sample_episodes_path())[:24])
        made.dream("g1", CycleOptions(max_outputs=3))
        first = made.entries("g1", ["proposed"]).items[0]
        made.review(first.entry_id, "promote_candidate", who="me", why="seen it hold")
        yield made


def _lines(block: MemoryBlock) -> list[str]:
    return block.text.splitlines()


def test_memory_comes_first_then_recall_each_line_dated_and_sourced(app: Oneiros) -> None:
    """With room for everything, MEMORY.md's promoted line heads the block, recall's ranking follows
    in rank order, and every line names its date and the ticks it stands for."""
    block = app.memory_block("g1", "eth range", budget_tokens=5000)
    sections = [i.section for i in block.items]
    assert sections[0] == "memory"
    assert sections == sorted(sections, key=lambda s: s != "memory")
    ranks = [i.rank for i in block.items if i.section == "recall"]
    assert ranks
    assert ranks == sorted(ranks)
    assert MEMORY_HEADING == _lines(block)[0]
    for item in block.items:
        assert item.date is not None
        assert 1 == item.line.count(item.date)
        assert item.source_ticks
        assert f"{item.source_ticks[0]}" in item.line
        assert item.line in _lines(block)
    assert 0 == block.left_out


def test_the_block_records_nothing(app: Oneiros) -> None:
    """Asking for the block (with or without a query) appends no event: no recall is counted."""
    head = app.store.head()
    app.memory_block("g1", "eth")
    app.memory_block("g1")
    assert head == app.store.head()


def test_without_a_query_the_block_is_memory_alone(app: Oneiros) -> None:
    """No query, no recall: only MEMORY.md's lines."""
    block = app.memory_block("g1", None, budget_tokens=5000)
    assert ["memory"] == [i.section for i in block.items]
    assert block.query is None


@settings(max_examples=40, deadline=None)
@given(budget=st.integers(min_value=1, max_value=700))
def test_never_over_budget_and_lines_whole(app: Oneiros, budget: int) -> None:
    """At any budget the block's tokens (characters / 4, rounded up) are within it, and every line
    of the text is a whole heading or item line; an item left out is counted, not cut."""
    block = app.memory_block("g1", "eth price bounce", budget_tokens=budget)
    assert block.tokens <= budget
    assert block.tokens == math.ceil(len(block.text) / 4)
    full = app.memory_block("g1", "eth price bounce", budget_tokens=100_000)
    whole = {i.line for i in full.items} | {MEMORY_HEADING, "## Recalled for: eth price bounce"}
    assert set(_lines(block)) <= whole
    assert len(full.items) == len(block.items) + block.left_out


def test_a_configured_tokenizer_counts_the_budget(tmp_path: Path) -> None:
    """``memory_block.tokenizer = module:function`` counts with that function; a name that loads
    nothing is one InvalidSetting naming the key."""
    with Oneiros(f"sqlite:///{tmp_path}/e.db", _config("tests.app.test_memory_block:words")) as made:
        made.create_golem("g1")
        made.record_episodes("g1", load_episodes(sample_episodes_path())[:24])
        block = made.memory_block("g1", "eth", budget_tokens=40)
        assert block.tokens == words(block.text) <= 40
        assert block.items
    with pytest.raises(InvalidSetting, match=r"memory_block\.tokenizer"):
        tokenizer("no_such_module_here:count")
    with pytest.raises(InvalidSetting, match=r"memory_block\.tokenizer"):
        tokenizer("chars/0")


def test_an_unknown_golem_is_one_error(app: Oneiros) -> None:
    """A golem never created is GolemNotFound naming the nearest, with or without a query."""
    for query in ("eth", None):
        with pytest.raises(GolemNotFound, match="did you mean 'g1'"):
            app.memory_block("g11", query)


_item = st.builds(
    MemoryBlockItem,
    section=st.sampled_from(("memory", "recall")),
    kind=st.just("episode"),
    ref=st.text(max_size=5),
    line=st.text(alphabet=st.characters(blacklist_categories=("Cs", "Zl", "Zp", "Cc")), min_size=1, max_size=80),
)


@given(items=st.lists(_item, max_size=25), budget=st.integers(min_value=1, max_value=400), per=st.integers(1, 6))
def test_render_keeps_whole_lines_in_order_within_budget(items: list[MemoryBlockItem], budget: int, per: int) -> None:
    """render_block, for any lines and budget: the text is within the budget, is exactly the kept
    lines with each section's heading once before its first line, keeps the candidates' order, and
    counts every candidate kept or left out."""
    ordered = sorted(items, key=lambda i: i.section != "memory")
    count = tokenizer(f"chars/{per}")
    block = render_block("g", "q", ordered, budget_tokens=budget, count=count)
    assert block.tokens <= budget
    expected: list[str] = []
    for item in block.items:
        heading = MEMORY_HEADING if item.section == "memory" else "## Recalled for: q"
        if heading not in expected:
            expected.append(heading)
        expected.append(item.line)
    assert "\n".join(expected) == block.text
    kept = iter(ordered)
    assert all(any(k is c for c in kept) for k in block.items)  # a subsequence of the candidates
    assert len(ordered) == len(block.items) + block.left_out


@given(text=st.text(max_size=200), speaker=st.none() | st.text(max_size=20), query=st.text(max_size=60))
def test_any_text_renders_as_one_line(text: str, speaker: str | None, query: str) -> None:
    """Whatever a turn or a query holds (newlines, carriage returns, Unicode line separators), its
    line in the block is one line: a quoted turn can never start a line, or a heading, of its own."""
    from oneiros.app._memory_block import _recall_heading, _recalled
    from oneiros.projections._recall import RecallItem

    item = RecallItem(kind="episode", ref="1", text=text, score=0.0, speaker=speaker, source_ticks=(1,))
    line = _recalled(item, {}, {}).line
    assert [line] == line.splitlines()
    assert [_recall_heading(query)] == _recall_heading(query).splitlines()


def test_unvalidated_dreams_join_the_block_only_when_asked(app: Oneiros) -> None:
    """A staged dream recall ranks for the query stays out of the block by default (a hypothesis,
    never a fact, and a prompt pays for every token); with ``hypotheses`` it joins, marked so."""
    from oneiros.app._memory_block import memory_block

    staged = app.entries("g1", ["proposed"]).items[0]
    query = " ".join(staged.text.split()[:8])
    assert any(i.kind == "dream" for i in app.recall("g1", query, record=False).ranking())
    plain = app.memory_block("g1", query, budget_tokens=5000)
    assert not any("[hypothesis]" in line for line in _lines(plain))
    asked = memory_block(app.core, "g1", query, budget_tokens=5000, settings=MemoryBlockSettings(hypotheses=True))
    assert any("[hypothesis]" in line for line in _lines(asked))
