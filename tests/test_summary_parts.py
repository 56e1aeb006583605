"""A transcript's message longer than an episode's summary holds (16 KB) is cut into parts, never
refused: the parts join back into the message, each fits, code blocks are parts of their own, and
every importer (chat-jsonl here; Claude Code and Codex in test_import_sessions) ids them <id>#n."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros.episodes._conversations import chat_batches
from oneiros.episodes._parts import SUMMARY_LIMIT, part_refs, refs_of, summary_parts
from oneiros.events._types import Episode
from oneiros.lab._evidence import evidence_recall
from oneiros.projections._recall import RecallItem

# Text made of the characters a cut looks at (spaces, newlines, fences) as well as any other.
_pieces = st.one_of(
    st.sampled_from([" ", "\n", "\n\n", "```", "```py\n", "\n```\n", "~~~\n", "word", "é", "🙂"]),
    st.text(min_size=1, max_size=40),
)
_texts = st.lists(_pieces, max_size=120).map("".join)


@settings(deadline=None)  # a shared machine's load is no property of the splitter
@given(_texts, st.integers(min_value=2, max_value=200))
def test_parts_join_back_into_the_text_and_each_fits(text: str, limit: int) -> None:
    """Whatever the text and the cap: the parts, joined, are the text character for character, in
    order; none is empty or over the cap; a text that fits is one part; and a part that is only
    whitespace is one neither neighbour had room for."""
    parts = summary_parts(text, limit)

    assert text == "".join(parts)
    assert all(0 < len(p) <= limit for p in parts) or parts == [""]
    if len(text) <= limit:
        assert [text] == parts
    for n, part in enumerate(parts):
        if not part.strip() and text.strip():
            neighbours = parts[max(n - 1, 0) : n] + parts[n + 1 : n + 2]
            assert all(len(p) + len(part) > limit for p in neighbours), (n, parts)


@settings(deadline=None)
@given(st.text(alphabet="abc \n", min_size=1, max_size=60), st.text(alphabet="xyz \n", min_size=1, max_size=60))
def test_a_code_block_that_fits_is_a_part_of_its_own(before: str, code: str) -> None:
    """A fenced block in a long message is one part, whole from its opening fence to its closing one
    (whitespace around it may join it), so a dream reads the code unbroken."""
    block = f"```python\n{code}\n```\n"
    text = "k" * 90 + before + "\n" + block + before + "q" * 90

    parts = summary_parts(text, 100)

    assert any(block in p and "k" not in p and "q" not in p for p in parts), parts


def test_prose_is_cut_at_a_paragraph_before_a_line_or_a_word() -> None:
    """Prose over the cap is cut after the last paragraph break in the part's second half, else
    the last line break, else the last space, and only past all of them mid-word."""
    paragraph = "a" * 60 + "\n\n" + "b" * 60
    line = "a" * 60 + "\n" + "b" * 60
    words = "a" * 60 + " " + "b" * 60

    assert ["a" * 60 + "\n\n", "b" * 60] == summary_parts(paragraph, 100)
    assert ["a" * 60 + "\n", "b" * 60] == summary_parts(line, 100)
    assert ["a" * 60 + " ", "b" * 60] == summary_parts(words, 100)
    assert ["c" * 100, "c" * 20] == summary_parts("c" * 120, 100)


def test_a_part_refs_are_the_id_itself_or_numbered_from_one() -> None:
    """A whole message keeps its id; a message of three parts is <id>#1, #2, #3."""
    assert ["m1"] == part_refs("m1", 1)
    assert ["m1#1", "m1#2", "m1#3"] == part_refs("m1", 3)


def test_a_chat_message_over_16_kb_is_recorded_in_parts_that_keep_its_id(tmp_path: Path) -> None:
    """A chat transcript's message of 40,000 characters, refused before, is three episodes, m2#1
    to m2#3, ticked in order between the messages around it, each under the cap, its text whole."""
    long = "\n\n".join(f"paragraph {n} " + "x" * 990 for n in range(40))
    lines = [
        {"role": "user", "content": "paste the log", "time": "2026-03-02T09:00:00Z", "id": "m1"},
        {"role": "assistant", "content": long, "time": "2026-03-02T09:01:00Z", "id": "m2"},
        {"role": "user", "content": "thanks", "time": "2026-03-02T09:02:00Z", "id": "m3"},
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))

    episodes: list[Episode] = [e for batch in chat_batches(path) for e in batch]

    assert ["m1", "m2#1", "m2#2", "m2#3", "m3"] == [e.ref for e in episodes]
    assert [1, 2, 3, 4, 5] == [e.tick for e in episodes]
    assert long == "".join(e.summary for e in episodes[1:4])
    assert all(len(e.summary) <= SUMMARY_LIMIT for e in episodes)
    assert {"assistant"} == {e.speaker for e in episodes[1:4]}


def test_recall_of_a_part_counts_as_recall_of_its_turn() -> None:
    """Evaluation asks for turns by their ids: recalling part m2#2 of a long message covers the
    evidence m2; a source's own id that ends in #7 still matches itself; m3 stays uncovered."""
    ranked = [RecallItem(kind="episode", ref="0", text="", score=0.0, source_refs=("m2#2", "issue#7"))]

    assert ("m2#2", "m2") == refs_of("m2#2")
    assert ("m2",) == refs_of("m2")
    assert 2 / 3 == evidence_recall(["m2", "issue#7", "m3"], ranked, 5)
