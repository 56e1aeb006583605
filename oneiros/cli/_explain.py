"""``oneiros outcome --explain``: the entries an outcome moved and the nearest it did not, with why."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from oneiros.cli._common import console

if TYPE_CHECKING:
    from oneiros.validation._explain import ExplainedEntry, OutcomeExplanation

__all__ = ["print_explanation"]


def _entry(row: ExplainedEntry) -> None:
    console.print(f"  {escape(row.entry_id)} ({row.kind}, now {row.status}): {escape(row.why)}", soft_wrap=True)
    console.print(f"    {escape(row.text)}", soft_wrap=True, style="dim")


def print_explanation(why: OutcomeExplanation, *, whole: bool) -> None:
    """Each moved entry, then the nearest not moved, each with its reason and its text; not
    ``whole``, only the nearest when nothing moved (rather than a bare 0)."""
    if not whole:
        if not why.moved and why.nearest and why.nearest[0].relevance > 0:
            near = why.nearest[0]
            console.print(escape(f"  nearest: {near.entry_id}, {near.why} (--explain says more)"), soft_wrap=True)
        elif not why.moved:
            console.print(f"  it shares no word with the criterion or text of any of the {why.active} active entries")
        return
    console.print(f"weighed against {why.active} active entries at staging.min_relevance {why.min_relevance:.2f}")
    if why.moved:
        console.print("moved:")
        for row in why.moved:
            _entry(row)
    if why.nearest:
        console.print("nearest not moved:")
        for row in why.nearest:
            _entry(row)
