"""The NumPy half of the postings (``_postings.py``): blocks packed and cut, and BM25's top k over
them with MaxScore pruning."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from oneiros.projections._postings import BLOCK, BlockInfo, Posted
from oneiros.projections._terms import SEPARATOR, stemmed, terms_of, words_of

__all__ = [
    "Counted",
    "TermBatch",
    "bound",
    "counted",
    "merge_blocks",
    "pack",
    "term_batch",
    "top_k",
    "unpack",
    "without",
]

_POSTING = np.dtype([("doc", "<i8"), ("tf", "<u4"), ("len", "<u4")])

Docs = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


def pack(postings: npt.NDArray[np.void]) -> bytes:
    return postings.astype(_POSTING, copy=False).tobytes()


def unpack(data: bytes) -> npt.NDArray[np.void]:
    return np.frombuffer(data, dtype=_POSTING)


def without(postings: npt.NDArray[np.void], docs: set[int]) -> npt.NDArray[np.void]:
    kept: npt.NDArray[np.void] = postings[~np.isin(postings["doc"], list(docs))]
    return kept


class TermBatch(NamedTuple):
    """The terms of a batch of texts: each distinct term once (``names``); every term of every text,
    text after text and in order, as its index in ``names`` (``ids``) beside the text it is of
    (``text``); and each text's number of terms (``lengths``)."""

    names: list[str]
    ids: Docs
    text: Docs
    lengths: list[int]


def term_batch(texts: Sequence[str]) -> TermBatch:
    """What :func:`~oneiros.projections._terms.terms` gives for each of ``texts``, as one batch: the
    words cut in one pass over all of them, each distinct word stemmed once, and no list per text."""
    words = words_of(texts)
    if words is None:  # a text holds the separator: cut one at a time
        found = terms_of(texts)
        index: dict[str, int] = {}
        ids = [index.setdefault(t, len(index)) for each in found for t in each]
        text = np.repeat(np.arange(len(texts), dtype=np.int64), [len(each) for each in found])
        return TermBatch(list(index), np.array(ids, dtype=np.int64), text, [len(each) for each in found])
    distinct = set(words)
    stems = stemmed(distinct)
    index = {term: n for n, term in enumerate(dict.fromkeys(stems.values()))}
    id_of = dict.fromkeys(distinct, _NONE)
    id_of.update((word, index[term]) for word, term in stems.items())
    id_of[SEPARATOR] = _BETWEEN
    every = np.fromiter(map(id_of.__getitem__, words), dtype=np.int64, count=len(words))
    of_text = np.cumsum(every == _BETWEEN)
    kept = every >= 0
    text = of_text[kept]
    return TermBatch(list(index), every[kept], text, np.bincount(text, minlength=len(texts)).tolist())


_NONE, _BETWEEN = -1, -2
"""A word that is no term (a stop word, a letter), and the separator between two texts."""


class Counted(NamedTuple):
    """A term's postings of a batch (document order), with their highest frequency and shortest
    document."""

    postings: npt.NDArray[np.void]
    max_tf: int
    min_len: int


def counted(added: Sequence[Posted], dropped: Iterable[int]) -> dict[str, Counted]:
    """Each term's postings from the documents ``added`` (in increasing order), leaving out
    ``dropped`` documents: counted in bulk, by sorting."""
    vocabulary: dict[str, int] = {}
    terms: list[Docs] = []
    holders: list[Docs] = []
    all_docs: list[Docs] = []
    all_sizes: list[Docs] = []
    for posted in added:
        batch: TermBatch = posted.terms
        at = vocabulary.setdefault
        names = np.fromiter((at(name, len(vocabulary)) for name in batch.names), dtype=np.int64, count=len(batch.names))
        docs = np.array(posted.docs, dtype=np.int64)
        doc_of = np.full(len(batch.lengths), -1, dtype=np.int64)
        doc_of[posted.texts] = docs
        holder = doc_of[batch.text]
        chosen = holder >= 0
        terms.append(names[batch.ids[chosen]])
        holders.append(holder[chosen])
        all_docs.append(docs)
        all_sizes.append(np.array(batch.lengths, dtype=np.int64)[posted.texts])
    if not all_docs:
        return {}
    ids, holding = np.concatenate(terms), np.concatenate(holders)
    docs, sizes = np.concatenate(all_docs), np.concatenate(all_sizes)
    gone = list(set(dropped))
    if gone:
        kept_tokens = ~np.isin(holding, gone)
        ids, holding = ids[kept_tokens], holding[kept_tokens]
        kept_docs = ~np.isin(docs, gone)
        docs, sizes = docs[kept_docs], sizes[kept_docs]
    if not len(ids):
        return {}
    low, span = int(docs[0]), int(docs[-1] - docs[0]) + 1
    keys, tfs = np.unique(ids * span + (holding - low), return_counts=True)
    term_ids, doc_at = np.divmod(keys, span)
    if span <= 4 * len(docs) + 4096:  # documents close together (a catch-up): look lengths up directly
        by_doc = np.zeros(span, dtype=np.int64)
        by_doc[docs - low] = sizes
        lengths = by_doc[doc_at]
    else:
        lengths = sizes[np.searchsorted(docs, doc_at + low)]
    out = np.empty(len(keys), dtype=_POSTING)
    out["doc"] = doc_at + low
    out["tf"] = tfs
    out["len"] = lengths
    starts = np.flatnonzero(np.diff(term_ids, prepend=-1))
    ends = [*starts[1:].tolist(), len(keys)]
    highest = np.maximum.reduceat(tfs, starts).tolist()
    shortest = np.minimum.reduceat(lengths, starts).tolist()
    spelled = list(vocabulary)
    return {
        spelled[int(term_ids[a])]: Counted(out[a:b], highest[n], shortest[n])
        for n, (a, b) in enumerate(zip(starts.tolist(), ends, strict=True))
    }


def merge_blocks(
    open_block: npt.NDArray[np.void] | None, added: npt.NDArray[np.void]
) -> tuple[list[npt.NDArray[np.void]], npt.NDArray[np.void] | None]:
    """A term's open block with ``added`` after it, cut into whole blocks and what is left open."""
    joined = added if open_block is None or len(open_block) == 0 else np.concatenate((open_block, added))
    whole = len(joined) // BLOCK * BLOCK
    closed = [joined[start : start + BLOCK] for start in range(0, whole, BLOCK)]
    rest = joined[whole:]
    return closed, rest if len(rest) else None


def bound(weight: float, tf: float, length: float, okapi: tuple[float, float, float, float]) -> float:
    """A posting's share of a score: ``weight * tf * (k1 + 1) / (tf + k1 * (1 - b + b / avgdl * len))``,
    as ``okapi`` = (k1 + 1, k1, 1 - b, b / avgdl). Rising in ``tf`` and falling in ``length``, so a
    block's highest frequency and shortest document bound every posting in it."""
    c1, c2, c3, c4 = okapi
    return weight * tf * c1 / (tf + c2 * (c3 + c4 * length))


def _shares(weight: float, postings: npt.NDArray[np.void], okapi: tuple[float, float, float, float]) -> Floats:
    c1, c2, c3, c4 = okapi
    tf = postings["tf"].astype(np.float64)
    length = postings["len"].astype(np.float64)
    # The operations of :func:`bound`, in its order, so a share never exceeds its block's bound.
    shares: Floats = weight * tf * c1 / (tf + c2 * (c3 + c4 * length))
    return shares


# Bounds and scores are sums in different orders; a bound is taken as this much larger before it
# decides anything, so a rounding difference in the last place never drops a document that ties.
_SLACK = 1e-9

Loader = Callable[[str, Sequence[BlockInfo]], npt.NDArray[np.void]]
"""Reads the postings of a term's given blocks, concatenated in document order."""


def top_k(
    blocks: Mapping[str, Sequence[BlockInfo]],
    weights: Mapping[str, float],
    okapi: tuple[float, float, float, float],
    k: int,
    load: Loader,
) -> list[tuple[int, float]]:
    """``(doc, score)`` of the ``k`` best documents of one part (score descending, then the later
    document first), where ``blocks`` holds each query term's blocks in that part in document order.

    A score adds its terms' shares in the terms' order (by code point), as the SQL this replaced
    summed them, so two documents that tie there tie here, and go in the same order."""
    terms = sorted(t for t in weights if blocks.get(t))
    if not terms or k <= 0:
        return []
    column = {t: n for n, t in enumerate(terms)}
    ub = {t: max(bound(weights[t], b.max_tf, b.min_len, okapi) for b in blocks[t]) for t in terms}
    order = sorted(terms, key=lambda t: (-ub[t], t))
    docs: Docs = np.empty(0, dtype=np.int64)
    shares: Floats = np.zeros((0, len(terms)))
    read = 0
    while read < len(order):
        term = order[read]
        postings = load(term, blocks[term])
        docs, shares = _join(docs, shares, postings["doc"], _shares(weights[term], postings, okapi), column[term])
        read += 1
        rest = sum(ub[t] for t in order[read:])
        if len(docs) >= k and rest * (1 + _SLACK) < _kth(shares.sum(axis=1), k):
            break
    for n, term in enumerate(order[read:], start=read):
        partial = shares.sum(axis=1)
        rest = sum(ub[t] for t in order[n:])
        keep = partial + rest * (1 + _SLACK) >= _kth(partial, k)
        docs, shares = docs[keep], shares[keep]
        wanted = _holding(blocks[term], docs)
        if not wanted:
            continue
        postings = load(term, wanted)
        at = np.searchsorted(postings["doc"], docs)
        at[at == len(postings)] = 0
        held = postings["doc"][at] == docs
        shares[held, column[term]] = _shares(weights[term], postings[at[held]], okapi)
    total: Floats = np.zeros(len(docs))
    for n in range(len(terms)):
        total = total + shares[:, n]  # one term at a time, in the terms' order (adding 0.0 changes nothing)
    best = np.lexsort((docs, total))[::-1][:k]
    return [(int(docs[i]), float(total[i])) for i in best]


def _kth(scores: Floats, k: int) -> float:
    """The ``k``-th highest of ``scores``, 0 when there are fewer."""
    if len(scores) < k:
        return 0.0
    return float(np.partition(scores, len(scores) - k)[len(scores) - k])


def _join(docs: Docs, shares: Floats, more_docs: Docs, more: Floats, column: int) -> tuple[Docs, Floats]:
    """``docs`` and their shares per term, with ``more_docs`` joining, their shares in ``column``."""
    if not len(docs):
        joined: Floats = np.zeros((len(more_docs), shares.shape[1]))
        joined[:, column] = more
        return more_docs.astype(np.int64), joined
    union = np.union1d(docs, more_docs)
    joined = np.zeros((len(union), shares.shape[1]))
    joined[np.searchsorted(union, docs)] = shares
    joined[np.searchsorted(union, more_docs), column] = more
    return union.astype(np.int64), joined


def _holding(blocks: Sequence[BlockInfo], docs: Docs) -> list[BlockInfo]:
    """The blocks whose document range holds one of ``docs`` (sorted)."""
    if not len(docs):
        return []
    out = []
    for b in blocks:
        at = int(np.searchsorted(docs, b.lo))
        if at < len(docs) and docs[at] <= b.hi:
            out.append(b)
    return out
