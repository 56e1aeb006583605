"""Bytes and values no JSON text can hold (not UTF-8, a lone surrogate, nesting past a bound) are
the sender's mistake: MalformedInput from the Python API, one line and exit 2 from the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oneiros import MalformedInput
from oneiros._input import MAX_DEPTH, check_plain
from oneiros.episodes._fold import episodes_from_dicts
from tests.test_cli import run


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_a_lone_surrogate_in_an_episode_is_malformed_input_naming_where() -> None:
    """A lone surrogate in a summary (which no UTF-8 store can write) is MalformedInput with the
    episode and the field, raised before anything is converted."""
    with pytest.raises(MalformedInput) as caught:
        episodes_from_dicts([{"tick": 1, "summary": "ok"}, {"tick": 2, "summary": "caf\udce9"}])
    assert ("episode 1", "a lone UTF-16 surrogate (\\udce9) at `$.summary` is not text") == (
        caught.value.where,
        caught.value.reason,
    )
    assert "episode 1: a lone UTF-16 surrogate (\\udce9) at `$.summary` is not text" == str(caught.value)


def test_nesting_past_the_bound_is_malformed_input_even_in_a_field_episodes_ignore() -> None:
    """A value nested past MAX_DEPTH is refused wherever it is, an unknown field included, and a
    value nested a hundred thousand deep is refused without overflowing the stack that walks it."""
    for depth in (MAX_DEPTH + 1, 100_000):
        with pytest.raises(MalformedInput) as caught:
            episodes_from_dicts([{"tick": 1, "summary": "x", "extra": _nested(depth)}])
        path = "$.extra" + "[0]" * (MAX_DEPTH - 1)
        assert f"episode 0: nested deeper than {MAX_DEPTH} levels at `{path}`" == str(caught.value)


def test_nesting_up_to_the_bound_is_read() -> None:
    """A value exactly MAX_DEPTH deep (the episode itself is the first level) passes the check."""
    check_plain({"a": _nested(MAX_DEPTH - 1)}, "value")


@given(st.text(max_size=20), st.text(max_size=20), st.integers(0xD800, 0xDFFF))
def test_any_string_with_a_lone_surrogate_is_refused(before: str, after: str, surrogate: int) -> None:
    """Wherever a lone surrogate sits in a tag, the episode is MalformedInput, never an episode."""
    text = before + chr(surrogate) + after
    with pytest.raises(MalformedInput) as caught:
        episodes_from_dicts([{"tick": 1, "summary": "x", "tags": ["fine", text]}])
    assert f"a lone UTF-16 surrogate (\\u{surrogate:x}) at `$.tags[1]` is not text" == caught.value.reason


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"tick": 1, "summary": "caf\xe9"}', "not UTF-8: byte 0xe9 at offset 27"),
        (b'{"tick": 1, "summary": "\\ud800"}', "a lone UTF-16 surrogate (\\ud800) at offset 24 is not text"),
        (b'{"tick": 1, "summary": "x", "z": ' + b"[" * 5000 + b"]" * 5000 + b"}", "nested too deep to read"),
    ],
    ids=["latin-1", "surrogate", "deep"],
)
@pytest.mark.parametrize("command", ["dream", "import"])
def test_a_malformed_episode_file_is_one_line_and_exit_2(
    tmp_path: Path, command: str, line: bytes, reason: str
) -> None:
    """`oneiros dream --episodes FILE` and `oneiros import FILE` say what is wrong with the line in
    one line (no traceback: before, invalid UTF-8 was a UnicodeDecodeError) and write nothing."""
    episodes = tmp_path / "episodes.jsonl"
    episodes.write_bytes(b'{"tick": 0, "summary": "fine"}\n' + line + b"\n")
    args = ("dream", "--episodes", str(episodes)) if command == "dream" else ("import", str(episodes))
    result = run(*args, cwd=tmp_path)
    expected = f"error: cannot read episodes from {episodes}:2: {reason}"
    assert (2, expected) == (result.returncode, result.stderr.strip())
    assert not (tmp_path / ".oneiros").exists()
