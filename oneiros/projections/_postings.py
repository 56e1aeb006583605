"""Term postings in blocks, and Okapi BM25's top k over them with MaxScore pruning.

A term's postings in one part of a golem's index (episodes, dream observations) lie in blocks of
:data:`BLOCK` postings in document order, each one row of the projection database: its first
document (the key), its lowest and highest document, how many postings it holds, a term frequency
none of them exceeds and a length none of them is under (the highest and shortest of the batches
that wrote it: what bounds any of its postings' share of a score), and the
postings packed as little-endian arrays (document, term frequency, document length). The newest
block of a term is kept open under the key :data:`OPEN` and filled by each commit until it holds a
whole block; a commit writes one row per term it touched, never one per posting, which is what
lets an index catch up tens of thousands of episodes a second.

The ranking (``_topk.top_k``, which with the packing needs NumPy and is imported where postings are
read or written) is MaxScore (Turtle and Flood 1995, as Lucene's ``MaxScoreBulkScorer``):
each query term's most any document can take from it is known from its blocks' bounds; terms are
read whole from the highest bound down until what the unread terms could add together falls below
the k-th best score found so far, then the candidates are finished by looking only at the blocks of
the unread terms that hold them, dropping each candidate that can no longer reach the k-th best. A
document no read term holds is never scored. Scores are the same arithmetic, in the same order,
as the exhaustive SQL BM25 this replaced, so the ranking is the same.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from typing import Any, NamedTuple

__all__ = ["BLOCK", "OPEN", "BlockInfo", "Posted", "Postings"]

BLOCK = 1024
"""Postings a closed block holds. Smaller blocks let a ranking skip more of a term it only looks
candidates up in, larger ones mean fewer rows; a live follower rewrites a term's open block each
commit, so this bounds that write too."""
OPEN = 2**62
"""The key of a term's open block (beyond any log position)."""


class BlockInfo(NamedTuple):
    """A block's row without its postings."""

    term: str
    part: int
    first: int
    lo: int
    hi: int
    n: int
    max_tf: int
    min_len: int


class Posted(NamedTuple):
    """Documents added together: each of ``docs`` (increasing) holds the terms of the text of
    ``terms`` (a ``_topk.TermBatch``, every text of a batch cut at once) that ``texts`` names."""

    docs: list[int]
    texts: list[int]
    terms: Any

    def holds(self, doc: int) -> bool:
        at = bisect_left(self.docs, doc)
        return at < len(self.docs) and self.docs[at] == doc


class Postings:
    """The postings a batch adds and removes. Added ones are kept as the batch's terms (each text's
    term ids, repeats and all), and counted in bulk when written (``_topk.counted``)."""

    def __init__(self, *, fresh: bool = False) -> None:
        self.fresh = fresh
        """Whether the database holds none of the projection's postings (a rebuild's first commit)."""
        self.added: dict[tuple[str, int], list[Posted]] = {}
        """Per ``(golem, part)``: the documents added, in increasing order."""
        self.dropped: set[tuple[str, int]] = set()
        """``(golem, doc)`` added, then removed before being written."""
        self.removed: dict[tuple[str, str, int], set[int]] = {}
        """Per ``(golem, term, part)``: documents written before, to take out."""

    def post(self, golem: str, part: int, posted: Posted) -> None:
        self.added.setdefault((golem, part), []).append(posted)

    def unpost(self, golem: str, doc: int, terms: Iterable[str], part: int) -> None:
        added = self.added.get((golem, part))
        if added and added[-1].docs[-1] >= doc and any(each.holds(doc) for each in added):
            self.dropped.add((golem, doc))  # added since the last commit: the database never saw it
            return
        for term in terms:
            self.removed.setdefault((golem, term, part), set()).add(doc)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed)
