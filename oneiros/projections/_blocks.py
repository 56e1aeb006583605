"""The term postings' half of the projection database (``_db.py``): blocks written in a commit's
transaction, and read for BM25's top k (``_postings.py``, ``_topk.py``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from oneiros.projections._postings import OPEN, BlockInfo, Postings

__all__ = ["Okapi", "PostingBlocks"]

_BLOCK_COLUMNS = "lo, hi, n, max_tf, min_len"


class Okapi(NamedTuple):
    """BM25's free parameters and the corpus's average document length (in terms)."""

    k1: float
    b: float
    avgdl: float


class _Moved(Exception):
    """A block read is not the block its description said: a commit came between the two reads."""


class PostingBlocks:
    """What :class:`~oneiros.projections._db.ProjectionDB` does with term postings: its engines
    supply the parameter mark, the table's name and transactions."""

    terms_table: str
    mark: ClassVar[str]

    if TYPE_CHECKING:

        def _sql(self, sql: str) -> str: ...

        def _transaction(self, *, commit: bool) -> AbstractContextManager[Any]: ...

    def _write_terms(self, c: Any, projection: str, postings: Postings) -> None:
        """Each term's removed postings taken out of its blocks, then its added ones appended to its
        open block, cut into whole blocks as it fills: one upsert statement for the whole batch."""
        from oneiros.projections import _topk as pp  # noqa: PLC0415 - NumPy, only where postings are written

        puts: list[tuple[Any, ...]] = []
        gone: list[tuple[Any, ...]] = []

        def row(key: tuple[str, str, int], first: int, block: Any, bounds: tuple[int, int] | None = None) -> Any:
            # A batch's blocks of a term share its highest frequency and shortest document: a bound
            # of each (what MaxScore needs is each term's, the highest of its blocks').
            max_tf, min_len = bounds or (int(block["tf"].max()), int(block["len"].min()))
            docs = block["doc"]
            return (projection, *key, first, int(docs[0]), int(docs[-1]), len(block), max_tf, min_len, pp.pack(block))

        for key, removed in postings.removed.items():
            for first, data in self._blocks_holding(c, projection, key, min(removed), max(removed)):
                block = pp.unpack(data)
                kept = pp.without(block, removed)
                if len(kept) == 0:
                    gone.append((projection, *key, first))
                elif len(kept) < len(block):
                    puts.append(row(key, first, kept))
        # Removals first: a term's open block may lose a posting, then gain some.
        self._write_blocks(c, puts, gone)
        added: dict[tuple[str, str, int], Any] = {}
        for (golem, part), docs in postings.added.items():
            dropped = [doc for g, doc in postings.dropped if g == golem]
            added.update(((golem, term, part), found) for term, found in pp.counted(docs, dropped).items())
        tails = {} if postings.fresh or not added else self._open_blocks(c, projection, list(added))
        puts, gone = [], []
        for key, found in added.items():
            tail = tails.get(key)
            bounds = (found.max_tf, found.min_len)
            if tail is not None:
                bounds = (max(bounds[0], tail[1]), min(bounds[1], tail[2]))
            closed, rest = pp.merge_blocks(None if tail is None else pp.unpack(tail[0]), found.postings)
            puts += [row(key, int(block["doc"][0]), block, bounds) for block in closed]
            if rest is not None:
                puts.append(row(key, OPEN, rest, bounds))
            elif tail is not None:
                gone.append((projection, *key, OPEN))
        self._write_blocks(c, puts, gone)

    def _write_blocks(self, c: Any, puts: list[tuple[Any, ...]], gone: list[tuple[Any, ...]]) -> None:
        """Upsert the block rows ``puts`` and delete the blocks keyed ``gone``."""
        if gone:
            c.executemany(
                self._sql(
                    f"DELETE FROM {self.terms_table} "
                    "WHERE projection = ? AND golem = ? AND term = ? AND part = ? AND first = ?"
                ),
                gone,
            )
        if puts:
            # Sorted, as the rows are: the blocks' b-tree is filled in key order.
            puts.sort(key=lambda r: r[:5])
            c.executemany(
                self._sql(
                    f"INSERT INTO {self.terms_table} (projection, golem, term, part, first, {_BLOCK_COLUMNS}, data) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (projection, golem, term, part, first) "
                    "DO UPDATE SET lo = excluded.lo, hi = excluded.hi, n = excluded.n, max_tf = excluded.max_tf, "
                    "min_len = excluded.min_len, data = excluded.data"
                ),
                puts,
            )

    def _blocks_holding(self, c: Any, projection: str, key: tuple[str, str, int], lo: int, hi: int) -> list[Any]:
        """``(first, data)`` of the blocks of ``key`` whose documents range over some of ``lo..hi``."""
        c.execute(
            self._sql(
                f"SELECT first, data FROM {self.terms_table} WHERE projection = ? AND golem = ? AND term = ? "
                "AND part = ? AND lo <= ? AND hi >= ?"
            ),
            (projection, *key, hi, lo),
        )
        return [(int(r["first"]), bytes(r["data"])) for r in c.fetchall()]

    def _open_blocks(
        self, c: Any, projection: str, keys: Sequence[tuple[str, str, int]]
    ) -> dict[Any, tuple[bytes, int, int]]:
        """The open block of each of ``keys`` that has one (its postings, highest frequency and
        shortest document), in one query per 500 terms of a golem."""
        wanted = set(keys)
        by_golem: dict[str, list[str]] = {}
        for golem, term, _part in keys:
            by_golem.setdefault(golem, []).append(term)
        found: dict[Any, tuple[bytes, int, int]] = {}
        for golem, terms in by_golem.items():
            unique = list(dict.fromkeys(terms))
            for start in range(0, len(unique), 500):
                chunk = unique[start : start + 500]
                marks = ", ".join("?" * len(chunk))
                c.execute(
                    self._sql(
                        f"SELECT term, part, max_tf, min_len, data FROM {self.terms_table} "
                        "WHERE projection = ? AND golem = ? "
                        f"AND term IN ({marks}) AND first = ?"
                    ),
                    [projection, golem, *chunk, OPEN],
                )
                for r in c.fetchall():
                    key = (golem, str(r["term"]), int(r["part"]))
                    if key in wanted:
                        found[key] = (bytes(r["data"]), int(r["max_tf"]), int(r["min_len"]))
        return found

    def term_blocks(self, projection: str, golem: str, terms: Sequence[str]) -> list[BlockInfo]:
        """The blocks of ``golem``'s postings of ``terms``, without their postings, in document order."""
        with self._transaction(commit=False) as c:
            return self._term_blocks(c, projection, golem, terms)

    def _term_blocks(self, c: Any, projection: str, golem: str, terms: Sequence[str]) -> list[BlockInfo]:
        if not terms:
            return []
        marks = ", ".join("?" * len(terms))
        c.execute(
            self._sql(
                f"SELECT term, part, first, {_BLOCK_COLUMNS} FROM {self.terms_table} "
                f"WHERE projection = ? AND golem = ? AND term IN ({marks}) ORDER BY lo"
            ),
            [projection, golem, *terms],
        )
        # Both drivers give the integer columns as int already.
        return [
            BlockInfo(r["term"], r["part"], r["first"], r["lo"], r["hi"], r["n"], r["max_tf"], r["min_len"])
            for r in c.fetchall()
        ]

    def term_counts(self, projection: str, golem: str, terms: Sequence[str]) -> dict[str, int]:
        """How many of ``golem``'s documents hold each of ``terms`` (those none holds are left out)."""
        counts: dict[str, int] = {}
        for block in self.term_blocks(projection, golem, terms):
            counts[block.term] = counts.get(block.term, 0) + block.n
        return counts

    def _snapshot(self, c: Any) -> None:
        """Make the reads of the transaction just begun see one state of the database (SQLite's
        read transaction does already)."""

    def term_top(  # noqa: PLR0913 - the Okapi query's inputs, one per term of the formula
        self,
        projection: str,
        golem: str,
        weights: Mapping[str, float],
        okapi: Okapi,
        per_part: int,
        *,
        blocks: Sequence[BlockInfo] | None = None,
    ) -> list[tuple[int, int, float]]:
        """``(doc, part, score)`` of the ``per_part`` best documents of each part, by Okapi BM25:
        the sum over the terms a document holds of ``weight * tf * (k1 + 1) / (tf + k1 * (1 - b + b *
        len / avgdl))``, the weight being the term's idf. Ties go to the later document. What cannot
        enter a part's best is skipped unscored (MaxScore, ``_postings.py``). ``blocks``, the
        terms' blocks as :meth:`term_blocks` read them just before, saves reading them again; a
        block that changed since (a commit between) makes it read them again."""
        if not weights or per_part <= 0:
            return []
        if blocks is not None:
            try:
                return self._term_top(projection, golem, weights, okapi, per_part, blocks=blocks)
            except _Moved:
                pass
        return self._term_top(projection, golem, weights, okapi, per_part, blocks=None)

    def _term_top(  # noqa: PLR0913 - the Okapi query's inputs, one per term of the formula
        self,
        projection: str,
        golem: str,
        weights: Mapping[str, float],
        okapi: Okapi,
        per_part: int,
        *,
        blocks: Sequence[BlockInfo] | None,
    ) -> list[tuple[int, int, float]]:
        from oneiros.projections._topk import top_k  # noqa: PLC0415 - NumPy, only where postings are read

        k1, b, avgdl = okapi
        constants = (k1 + 1, k1, 1 - b, b / avgdl if avgdl > 0 else 0.0)
        found: list[tuple[int, int, float]] = []
        with self._transaction(commit=False) as c:
            self._snapshot(c)
            parts: dict[int, dict[str, list[BlockInfo]]] = {}
            if blocks is None:
                blocks = self._term_blocks(c, projection, golem, sorted(weights))
            for block in blocks:
                if block.term in weights:
                    parts.setdefault(block.part, {}).setdefault(block.term, []).append(block)
            for part, of_part in sorted(parts.items()):

                def load(term: str, chosen: Sequence[BlockInfo], part: int = part) -> Any:
                    return self._load_blocks(c, projection, (golem, term, part), chosen)

                found += [(doc, part, score) for doc, score in top_k(of_part, weights, constants, per_part, load)]
        found.sort(key=lambda hit: (-hit[2], -hit[0]))
        return found

    def _load_blocks(self, c: Any, projection: str, key: tuple[str, str, int], blocks: Sequence[BlockInfo]) -> Any:
        """The postings of ``blocks`` (of one ``(golem, term, part)``) in document order."""
        from oneiros.projections._topk import unpack  # noqa: PLC0415 - NumPy, only where postings are read

        data: dict[int, bytes] = {}
        expected = {b.first: b.n for b in blocks}
        firsts = list(expected)
        for start in range(0, len(firsts), 500):
            chunk = firsts[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            c.execute(
                self._sql(
                    f"SELECT first, n, data FROM {self.terms_table} WHERE projection = ? AND golem = ? AND term = ? "
                    f"AND part = ? AND first IN ({marks})"
                ),
                [projection, *key, *chunk],
            )
            for r in c.fetchall():
                if r["n"] != expected[r["first"]]:
                    raise _Moved
                data[r["first"]] = bytes(r["data"])
        if len(data) != len(expected):
            raise _Moved
        return unpack(b"".join(data[b.first] for b in sorted(blocks, key=lambda b: b.lo)))

    def postings(self, projection: str) -> list[tuple[str, str, int, int, int, int]]:
        """Every posting of ``projection`` as ``(golem, term, doc, tf, len, part)``, ordered by
        golem, term (by code point) and document."""
        from oneiros.projections._topk import unpack  # noqa: PLC0415 - NumPy, only where postings are read

        out: list[tuple[str, str, int, int, int, int]] = []
        with self._transaction(commit=False) as c:
            c.execute(
                self._sql(f"SELECT golem, term, part, data FROM {self.terms_table} WHERE projection = ?"), (projection,)
            )
            for r in c.fetchall():
                golem, term, part = str(r["golem"]), str(r["term"]), int(r["part"])
                out += [
                    (golem, term, int(p["doc"]), int(p["tf"]), int(p["len"]), part) for p in unpack(bytes(r["data"]))
                ]
        out.sort(key=lambda p: p[:3])
        return out
