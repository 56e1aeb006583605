"""What the user stands by, in recall: the current profile entries that bear on a question.

A standing instruction is a rule with a condition ("Always include version numbers when I ask about
software dependencies"). It applies when the question matches its condition, and then it must reach
the reader whether or not the rest of its words match: an applicable instruction is ranked first.
At most ``RecallSettings.instructions`` of them are, those whose condition the question matches
most (the sum of the matched terms' idf). An instruction without a condition ("Always use type
hints") applies when the question shares two or more of its terms.

A turn in which the user stated a preference or an instruction still in force says more than a
passing turn that matches as well: its relevance, and its profile entry's, is multiplied by
``RecallSettings.profile_weight``. A superseded entry's turn gets nothing (its fact is outdated).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

import msgspec

from oneiros.projections._db import ProjectionDB
from oneiros.projections._profile import ProfileEntry, profile_of
from oneiros.projections._terms import unique_terms

__all__ = ["InForce", "applicable", "in_force"]

_CONDITION: Final = re.compile(
    r"\b(?:when(?:ever)?|if)\s+I\s+(?:ask|talk|am asking)\s+(?:you\s+)?(?:about|for|on)\s+(?P<condition>[^.;]+)",
    re.I,
)
_UNCONDITIONAL_TERMS = 2
"""Shared terms an instruction without a condition needs with the question to apply."""


class InForce(msgspec.Struct, frozen=True, kw_only=True):
    """A golem's profile entries in force, as recall reads them."""

    instructions: tuple[ProfileEntry, ...] = ()
    ticks: frozenset[int] = frozenset()
    """The turns of the entries in force (instructions and preferences alike)."""
    refs: frozenset[str] = frozenset()
    """The entries' own ids (their dream outputs' event ids)."""


def in_force(db: ProjectionDB, golem_id: str) -> InForce:
    """The golem's profile entries in force: its instructions, and the turns and ids of all of them."""
    current = [e for e in profile_of(db, golem_id) if e.current]
    return InForce(
        instructions=tuple(e for e in current if e.key.startswith("instruction")),
        ticks=frozenset(t for e in current for t in e.source_ticks),
        refs=frozenset(e.ref for e in current),
    )


def _condition(entry: ProfileEntry) -> tuple[str, int]:
    """What must match for ``entry`` to apply, and how many of its terms must."""
    found = _CONDITION.search(entry.text)
    return (found.group("condition"), 1) if found else (entry.text, _UNCONDITIONAL_TERMS)


def applicable(held: InForce, query_terms: Sequence[str], idf: Mapping[str, float], limit: int) -> list[ProfileEntry]:
    """The instructions in force whose condition ``query_terms`` match, best matched first, at most ``limit``."""
    asked = set(query_terms)
    scored: list[tuple[float, str, ProfileEntry]] = []
    for entry in held.instructions:
        condition, needed = _condition(entry)
        matched = asked.intersection(unique_terms(condition))
        if len(matched) >= needed:
            scored.append((sum(idf.get(t, 0.0) for t in matched), entry.ref, entry))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [entry for _score, _ref, entry in scored[:limit]]
