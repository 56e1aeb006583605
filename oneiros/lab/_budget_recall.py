"""What a reader pays for: evidence recall at an equal context budget in tokens, and whether the
current fact of a knowledge update ranks above the one it replaced (docs/evaluation.md).

Recall@k gives every item one slot, so an item standing for several turns (a dream's thread, an
answer with its question) covers more evidence for the same k while costing a reader more context.
At a budget, the items are taken in their ranking's order while the text they render to (one line
an item, as the answer step shows them, never cut) fits; the first that does not fit ends the
prefix. Tokens are characters / 4 (rounded up) unless a tokenizer is configured
(``tiktoken:<encoding>``, with the ``tiktoken`` package).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import msgspec

from oneiros._errors import InputError
from oneiros.episodes._parts import refs_of
from oneiros.lab._answer import memory_line
from oneiros.lab._evidence import Question, evidence_recall
from oneiros.projections._recall import RecallItem

__all__ = ["BudgetFigures", "BudgetScores", "TokenCount", "budget_prefix", "current_first", "token_counter"]

TokenCount = Callable[[str], int]
_CHARS_A_TOKEN = 4


def _by_characters(text: str) -> int:
    return -(-len(text) // _CHARS_A_TOKEN)


@functools.cache
def token_counter(tokenizer: str | None) -> TokenCount:
    """How many tokens a text is: characters / 4 for None (or ``chars/4``), else the named
    tokenizer's count (``tiktoken:cl100k_base``); an unknown name is an InputError."""
    if tokenizer is None or tokenizer == "chars/4":
        return _by_characters
    kind, _, name = tokenizer.partition(":")
    if kind != "tiktoken" or not name:
        raise InputError(f"unknown tokenizer {tokenizer!r}: use chars/4 or tiktoken:<encoding> (cl100k_base)")
    try:
        import tiktoken  # type: ignore[import-not-found]  # noqa: PLC0415 - optional, only when configured
    except ImportError:
        raise InputError(f"tokenizer {tokenizer!r} needs the tiktoken package: pip install tiktoken") from None
    try:
        encoding = tiktoken.get_encoding(name)
    except ValueError:
        raise InputError(f"tiktoken has no encoding {name!r} (cl100k_base, o200k_base)") from None

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    return count


def budget_prefix(ranked: Sequence[RecallItem], budget: int, count: TokenCount) -> list[RecallItem]:
    """The longest prefix of ``ranked`` whose lines, each counted whole, fit in ``budget`` tokens."""
    kept: list[RecallItem] = []
    spent = 0
    for item in ranked:
        spent += count(memory_line(item, cut=False))
        if spent > budget:
            break
        kept.append(item)
    return kept


def _first_place(refs: Sequence[str], covered: Sequence[frozenset[str]]) -> int:
    wanted = set(refs)
    return next((n for n, turns in enumerate(covered) if turns & wanted), len(covered))


def current_first(
    current: Sequence[str], outdated: Sequence[str], ranked: Sequence[RecallItem], refs: Callable[[str], Sequence[str]]
) -> bool:
    """Whether the first item standing for a ``current`` turn ranks above the first standing for an
    ``outdated`` one (an item standing for both does not: the reader cannot tell which holds); a
    current turn ranked where the outdated is not at all counts, neither ranked does not."""
    covered = [frozenset(r for ref in item.source_refs for r in refs(ref)) for item in ranked]
    new, old = _first_place(current, covered), _first_place(outdated, covered)
    return new < old


class BudgetFigures(msgspec.Struct, frozen=True, kw_only=True):
    recall: dict[int, dict[str, float]]
    """Evidence recall per category and overall of the prefix that fits each budget."""
    items: dict[int, float]
    """The mean number of items that fit each budget."""
    updates: int
    """Knowledge-update questions whose current and outdated turns are told apart."""
    current_first: float | None
    """The share of those whose current turn ranks above the outdated one; None with none."""


class BudgetScores:
    """Evidence recall at each of ``budgets`` and the knowledge updates' order, summed over the
    questions as they are asked, each from its ranking."""

    def __init__(self, budgets: Sequence[int], tokenizer: str | None) -> None:
        self.budgets = tuple(budgets)
        self.count = token_counter(tokenizer) if self.budgets else None
        self.sums: dict[int, dict[str, float]] = {b: {} for b in self.budgets}
        self.items: dict[int, int] = dict.fromkeys(self.budgets, 0)
        self.asked = 0
        self.updates = 0
        self.first = 0

    def wanted(self, question: Question) -> bool:
        """Whether ``question`` needs a ranking scored here at all."""
        return bool(self.budgets) or bool(question.current)

    def score(self, question: Question, ranked: Sequence[RecallItem], keys: Sequence[str]) -> None:
        """Add ``question``'s figures from ``ranked`` under each of ``keys`` (its category, overall)."""
        if self.count is not None:
            self.asked += 1
            for budget in self.budgets:
                prefix = budget_prefix(ranked, budget, self.count)
                self.items[budget] += len(prefix)
                got = evidence_recall(question.evidence, prefix, len(prefix))
                for key in keys:
                    self.sums[budget][key] = self.sums[budget].get(key, 0.0) + got
        if question.current:
            self.updates += 1
            self.first += current_first(question.current, question.outdated, ranked, refs_of)

    def figures(self, counts: dict[str, int]) -> BudgetFigures:
        """The means, ``counts`` giving each key's questions."""
        return BudgetFigures(
            recall={b: {key: round(v / counts[key], 4) for key, v in by.items()} for b, by in self.sums.items()},
            items={b: round(n / self.asked, 2) if self.asked else 0.0 for b, n in self.items.items()},
            updates=self.updates,
            current_first=round(self.first / self.updates, 4) if self.updates else None,
        )
