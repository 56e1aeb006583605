"""Which of two statements is current: the later value on what a question asks about comes first.

A user says "the sprint deadline is April 1" and weeks later "the new sprint deadline is April 5".
Asked "what is the sprint deadline?", both turns match, and the older often matches better (it
said more about the sprint). The dreams link such pairs when they can key them (``_recall.py``'s
``outdated`` rows); this is the rule at read time for the pairs they did not key: among the items a
recall returns, two that both state a value (a number or a date) on the same thing, as the
question names it, the later saying it is an update ("now", "new", "increased", "rescheduled"
...), and match it comparably well (the later at least ``_COMPARABLE`` of the earlier's
relevance), are ordered by when they were said, the later first, and the later one names the
earlier as what it replaced.

"The same thing as the question names it": the question's terms both items hold weigh (by idf)
at least ``_SAME_SUBJECT`` of the question's terms either holds. Only the order within what is
returned changes, never what is returned.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

from oneiros.projections._terms import unique_terms

__all__ = ["Stated", "current_order"]

_VALUE: Final = re.compile(
    r"\d|\b(?:january|february|march|april|may|june|july|august|september|october|november|december|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
    re.IGNORECASE,
)
_UPDATE: Final = re.compile(
    r"\b(?:now|new|newly|updated?|changed|moved|moving|switched|rescheduled|adjusted|extended|increased|"
    r"decreased|grown|grew|rose|dropped|improved|reached|revised|added|instead|no longer|latest|recently)\b",
    re.IGNORECASE,
)
_SAME_SUBJECT = 0.4
_COMPARABLE = 0.4

Stated = tuple[str, str | None, float, bool]
"""An item's text, when it was said (ISO 8601, None when unknown), its relevance, and whether the
user said it (an assistant restates values; the user's own statement is what changes them)."""


def _same_subject(a: set[str], b: set[str], asked: Mapping[str, float]) -> bool:
    either = sum(w for t, w in asked.items() if t in a or t in b)
    both = sum(w for t, w in asked.items() if t in a and t in b)
    return either > 0 and both >= _SAME_SUBJECT * either


def current_order(
    items: Sequence[Stated], query_terms: Sequence[str], idf: Mapping[str, float]
) -> list[tuple[int, int | None]]:
    """The indices of ``items`` in their new order, each with the index of the earlier statement on
    the same thing it replaces (moved above it, or above it already), None for the rest."""
    asked = {t: idf.get(t, 0.0) for t in query_terms}
    terms = [set(unique_terms(text)) if when and _VALUE.search(text) else None for text, when, _, _ in items]
    updates = [users and bool(_UPDATE.search(text)) for text, _when, _relevance, users in items]
    order: list[tuple[int, int | None]] = [(n, None) for n in range(len(items))]
    for j in range(1, len(items)):
        later, when, relevance = terms[j], items[j][1], items[j][2]
        if later is None or when is None or not updates[j]:
            continue
        place = order.index((j, None))
        for p in range(place):
            i = order[p][0]
            earlier, then = terms[i], items[i][1]
            if (
                earlier is not None
                and then is not None
                and then < when
                and relevance >= _COMPARABLE * items[i][2]
                and _same_subject(earlier, later, asked)
            ):
                order.pop(place)
                order.insert(p, (j, i))
                break
    # A later value already above the earlier one names it too.
    for place, (n, replaced) in enumerate(order):
        later, when = terms[n], items[n][1]
        if replaced is not None or later is None or when is None or not updates[n]:
            continue
        for m, _ in order[place + 1 :]:
            earlier, then = terms[m], items[m][1]
            if earlier is not None and then is not None and then < when and _same_subject(earlier, later, asked):
                order[place] = (n, m)
                break
    return order
