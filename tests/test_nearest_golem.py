"""The nearest known golem a mistyped name is offered (``GolemNotFound.nearest``): another case, a
letter off, two letters swapped or a prefix name the golem meant; a name like none names none."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oneiros._errors import GolemNotFound, _edits, nearest_name
from tests.test_cli import run


@pytest.mark.parametrize(
    ("typed", "known", "nearest"),
    [
        ("G1", ["g1", "g2x"], "g1"),  # another case first, before any name a letter off
        ("golme", ["golem", "coder"], "golem"),
        ("g2", ["g1", "coder"], "g1"),  # difflib's ratio (0.5) was under its cutoff: no hint
        ("gl", ["g1"], "g1"),
        ("g11", ["g1"], "g1"),
        ("cod", ["coder", "g1"], "coder"),  # a prefix, however short
        ("Coder", ["coder", "code"], "coder"),
        ("nope", ["g1", "coder"], None),  # like none of them: no hint, not a wild guess
        ("qa", ["dev"], None),
        ("g1", [], None),
    ],
)
def test_the_nearest_name(typed: str, known: list[str], nearest: str | None) -> None:
    """Each typo names the golem it most likely meant, or none."""
    assert nearest == nearest_name(typed, known)
    assert nearest == GolemNotFound.among(typed, known).nearest


_name = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=2, max_size=24)


@given(name=_name, others=st.lists(_name, max_size=5), data=st.data())
def test_one_edit_of_a_known_name_is_always_offered_a_name_one_edit_away(
    name: str, others: list[str], data: st.DataObject
) -> None:
    """A name with one letter changed, dropped, added or swapped with its neighbour, or in
    upper case, gets a hint whatever else is known, and the hint is one edit from what was typed."""
    at = data.draw(st.integers(0, len(name) - 1))
    letter = data.draw(st.sampled_from("abcxyz019"))
    edit = data.draw(st.sampled_from(["change", "drop", "add", "swap", "upper"]))
    typed = {
        "change": name[:at] + letter + name[at + 1 :],
        "drop": name[:at] + name[at + 1 :],
        "add": name[:at] + letter + name[at:],
        "swap": name[:at] + name[at + 1 : at + 2] + name[at : at + 1] + name[at + 2 :],
        "upper": name.upper(),
    }[edit]
    known = [name, *others]
    if not typed or typed in known:
        return
    found = nearest_name(typed, known)
    assert found is not None
    assert _edits(typed.casefold(), found.casefold()) <= 1
    if edit == "upper":
        assert found.casefold() == typed.casefold()


def test_the_cli_offers_the_golem_for_any_near_miss(tmp_path: Path) -> None:
    """`oneiros should-dream --golem G1` (or g2, gl) with golem g1: one line offering g1."""
    assert 0 == run("golem", "create", "g1", cwd=tmp_path).returncode
    for typed in ("G1", "g2", "gl"):
        result = run("should-dream", "--golem", typed, cwd=tmp_path)
        assert (2, f"error: golem {typed!r} does not exist; did you mean 'g1'?\n") == (result.returncode, result.stderr)
