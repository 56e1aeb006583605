"""The projection runner: catch up from the last tracked position, then follow the log live.

A projection declares the event types it reads and applies them to a :class:`Rows` buffer; the
runner commits the buffer and the new position in one transaction of the projection database (an
eventsourcing tracking recorder, see ``_db.py``). Events of other types are never decoded but still
advance the position: catching up reads up to a head it measured first, and following records the
end of each batch the subscription delivered, so the position moves past events that did not
concern the projection (a projection waiting on a position must never wait on events it ignores).

Catching up reads through the store's paged, type-filtered read; following takes the store's
subscription, eventsourcing's ``recorder.subscribe()`` (see ``_follow.py``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, TypeVar, cast, runtime_checkable

import msgspec

from oneiros._errors import ProjectionConflict
from oneiros.events._types import Event
from oneiros.projections._db import Commit, ProjectionDB, RowWrite
from oneiros.projections._follow import follow_log
from oneiros.projections._postings import Posted, Postings
from oneiros.store._store import EventStore, Recorded, Tally

__all__ = [
    "BatchingProjection",
    "Projection",
    "ProjectionRunner",
    "Rows",
    "RunnerSettings",
    "TallyingProjection",
    "wait_for",
]

_T = TypeVar("_T", bound=msgspec.Struct)
# Sets in a row (a golem's replayed ticks) are written sorted: a row's bytes must not depend on
# the order its set was built in, or a projection fed as the log grew would differ from a rebuild.
_encoder = msgspec.json.Encoder(order="deterministic")
_MISSING: Any = object()


class _Layout(msgspec.Struct, frozen=True):
    layout: int


class RunnerSettings(msgspec.Struct, frozen=True, kw_only=True):
    """How a runner batches and waits."""

    batch_events: int = 50_000
    """Events applied per transaction while catching up, and most taken from a subscription at once.
    A row changed in several transactions is written in each, so fewer, larger ones write less: at
    5,000 the staging buffer's rebuild wrote a sixth more rows than it ends with and catch-up ran
    5-15% slower (``benchmarks/projections.py``). A crash redoes at most one batch."""
    kept_rows: int = 100_000
    """Rows a catch-up keeps decoded past a commit, so the next batch reads them without a query;
    a commit with more forgets them all. Without a bound, rebuilding the recall index of a million
    episodes held every row it wrote (830 MB peak against 330 MB, in the same 29-31 s)."""
    snapshot_every: int = 10_000
    """Log events a deciding process (the validation sweep) passes before it snapshots its memory
    beside the log, and no sooner than a tenth of the log; 0 takes none. Not from the source
    documents: the operating default of a golem's snapshots (``snapshots.every``)."""
    poll_interval_s: float = 0.01
    """How often a SQLite subscription looks at the head (eventsourcing's SQLite recorder has no
    NOTIFY); PostgreSQL and memory subscriptions are woken by the recorder instead."""


class Rows:
    """A projection's rows as one batch sees them: read through to the database, written back at
    commit. Values are mutable Structs; call :meth:`put` after changing one."""

    def __init__(
        self, db: ProjectionDB, projection: str, *, empty: bool = False, kept: int = RunnerSettings().kept_rows
    ) -> None:
        self._db = db
        self._projection = projection
        self._empty = empty
        self._kept = kept
        self._cache: dict[tuple[str, str], Any] = {}
        self._dirty: dict[tuple[str, str], None] = {}
        self._terms = Postings(fresh=empty)

    def get(self, kind: str, key: str, cls: type[_T]) -> _T | None:
        k = (kind, key)
        value: _T | None = self._cache.get(k, _MISSING)
        return self._load(k, cls) if value is _MISSING else value

    def prefetch(self, kind: str, keys: Iterable[str], cls: type[_T], *, numbered: bool = False) -> None:
        """Read the rows of ``keys`` not seen yet in one query per 500, so that :meth:`get` of each
        costs none: a stretch of the log looks up each of its episodes' ticks. ``numbered`` keys are
        ``<prefix>/<zero-padded number>``: one past the highest stored under its prefix is known
        absent without a look-up."""
        cache = self._cache
        wanted = [key for key in dict.fromkeys(keys) if (kind, key) not in cache]
        if not wanted:
            return
        if self._empty:
            found: dict[str, bytes] = {}
        else:
            found = self._db.get_many(self._projection, kind, self._stored(kind, wanted) if numbered else wanted)
        decode = msgspec.json.Decoder(cls).decode
        for key in wanted:
            data = found.get(key)
            cache[(kind, key)] = None if data is None else decode(data)

    def _stored(self, kind: str, keys: list[str]) -> list[str]:
        """Those of the numbered ``keys`` that may be stored: not past their prefix's highest key.
        A catch-up's new episodes all are, and looking each up in an index that grows with the log
        was what made its cost per episode grow (one query per 500 ticks, every batch after the
        first)."""
        last: dict[str, str | None] = {}
        out: list[str] = []
        for key in keys:
            prefix = key[: key.rfind("/") + 1]
            if prefix not in last:
                last[prefix] = self._db.last_key(self._projection, kind, prefix)
            top = last[prefix]
            # Equal lengths after one prefix: the digits order the same by code point and by any
            # collation PostgreSQL may use; a key of another length is looked up anyway.
            if top is not None and not (len(key) == len(top) and key > top):
                out.append(key)
        return out

    def edit(self, kind: str, key: str, cls: type[_T]) -> _T | None:
        """The row to change in place (written back at commit), or None when there is none: what
        :meth:`get` then :meth:`put` of the same value do, in one look-up."""
        k = (kind, key)
        value: _T | None = self._cache.get(k, _MISSING)
        if value is _MISSING:
            value = self._load(k, cls)
        if value is not None:
            self._dirty[k] = None
        return value

    def _load(self, k: tuple[str, str], cls: type[_T]) -> _T | None:
        # A projection built from position 0 has no rows in the database (drop removes rows and
        # position together), so a rebuild never pays a query for a row it has not written.
        data = None if self._empty else self._db.get(self._projection, *k)
        found = None if data is None else msgspec.json.decode(data, type=cls)
        self._cache[k] = found
        return found

    def put(self, kind: str, key: str, value: msgspec.Struct) -> None:
        k = (kind, key)
        self._cache[k] = value
        self._dirty[k] = None

    def delete(self, kind: str, key: str) -> None:
        k = (kind, key)
        self._cache[k] = None
        self._dirty[k] = None

    def post(self, golem: str, part: int, docs: list[int], texts: list[int], terms: Any) -> None:
        """Add documents ``docs`` of ``golem`` (increasing: they are log positions) to the term
        postings in ``part`` (a ranking keeps parts apart), each with the terms of the text of
        ``terms`` (a ``_topk.TermBatch``) that ``texts`` names; a document's length is its number
        of terms."""
        if docs:
            self._terms.post(golem, part, Posted(docs, texts, terms))

    def unpost(self, golem: str, doc: int, terms: Iterable[str], part: int) -> None:
        """Take document ``doc`` (posted with ``terms`` in ``part``) out of the postings again."""
        self._terms.unpost(golem, doc, terms, part)

    def term_writes(self) -> Postings:
        """The postings added and removed since the last commit."""
        return self._terms

    def writes(self) -> list[RowWrite]:
        """What changed since the last commit, in the order first changed (the order rows are
        written in does not matter: they are one transaction)."""
        cache = self._cache
        encode = _encoder.encode
        return [(kind, key, None if (v := cache[(kind, key)]) is None else encode(v)) for kind, key in self._dirty]

    def committed(self) -> None:
        self._dirty.clear()
        self._terms = Postings()
        if len(self._cache) > self._kept:
            # A long catch-up would otherwise hold every row it wrote; what is forgotten is in the
            # database now, and read back from there if it is needed again.
            self._cache.clear()
            self._empty = False


class Projection(Protocol):
    """A read model: a name, the event types it reads, and how one event changes its rows.

    A projection whose rows change shape says so with a class attribute ``layout`` (an int, raised
    at each change): a runner that finds rows of another layout drops them and builds them again
    from the log, so an upgrade never reads rows it does not understand."""

    name: str
    types: tuple[type[Event], ...]

    def apply(self, record: Recorded, rows: Rows) -> None: ...


@runtime_checkable
class TallyingProjection(Projection, Protocol):
    """A read model some of whose event types it only counts per stream, or that only move its
    stream's version: caught up on its own, it is handed those as :class:`~oneiros.store._store.Tally`
    counts the database makes, never fetched or decoded. A golem's stream is mostly episodes, so
    this is most of a long stream. Its ``apply`` still takes them one by one, as a live batch or a
    catch-up shared with other projections delivers them, and must end with the same rows."""

    def tallied(self) -> tuple[type[Event], ...]:
        """The event types it may be handed as counts (asked at each catch-up, so a type
        registered since is counted too)."""
        ...

    def tally(self, tally: Tally, rows: Rows) -> None:
        """What ``apply`` of each of ``tally.count`` such events does, the last at ``tally.version``
        and ``tally.position``; it comes after every other event of the same stretch, so it may
        only move positions forward."""
        ...


@runtime_checkable
class BatchingProjection(Projection, Protocol):
    """A read model that applies a stretch of events at once, for work it can share between them
    (the recall index edits each word's row once per stretch, not once per episode that has it).
    The runner hands it every event of its types between two commits; ``apply`` of one event must
    do what ``apply_batch`` of a stretch holding only that event does."""

    def apply_batch(self, records: Sequence[Recorded], rows: Rows) -> None:
        """What :meth:`apply` of each of ``records``, in order, does."""
        ...


class _Held:
    """The events a batching projection has been handed since its last commit, applied at the next."""

    def __init__(self, projection: BatchingProjection) -> None:
        self.apply_batch = projection.apply_batch
        self.records: list[Recorded] = []

    def add(self, record: Recorded, _rows: Rows) -> None:
        self.records.append(record)

    def flush(self, rows: Rows) -> None:
        if self.records:
            self.apply_batch(self.records, rows)
            self.records = []


_Apply = Callable[[Recorded, Rows], None]


def _applier(projection: Projection, batching: bool) -> tuple[_Apply, _Held | None]:
    """``projection.apply``, or for a ``batching`` projection what holds its events, and the holder
    that :meth:`ProjectionRunner._commit` flushes."""
    if batching:
        held = _Held(cast("BatchingProjection", projection))  # the runner checked it once
        return held.add, held
    return projection.apply, None


CommitListener = Callable[[str, int], None]


class ProjectionRunner:
    """Keeps projections in ``db`` up to date with ``store``."""

    def __init__(
        self,
        store: EventStore,
        db: ProjectionDB,
        projections: Sequence[Projection],
        settings: RunnerSettings | None = None,
        on_commit: CommitListener | None = None,
    ) -> None:
        self.store = store
        self.db = db
        self.projections = list(projections)
        self.settings = settings or RunnerSettings()
        self.on_commit = on_commit
        self._types = {p.name: frozenset(p.types) for p in self.projections}
        self._layouts: dict[str, int] = {p.name: getattr(p, "layout", 0) for p in self.projections}
        # Once: an isinstance of a runtime-checkable Protocol inspects the class each time (40 us).
        self._batching = {p.name: isinstance(p, BatchingProjection) for p in self.projections}
        self._renewed = False

    def _renew(self) -> None:
        """Drop each projection whose rows were written in another layout than its own (once)."""
        if self._renewed:
            return
        self._renewed = True
        for name, layout in self._layouts.items():
            if layout and self.db.position(name) > 0:
                data = self.db.get(name, "layout", "")
                if data is None or msgspec.json.decode(data, type=_Layout).layout != layout:
                    self.db.drop(name)

    def position(self, name: str) -> int:
        return self.db.position(name)

    def low_position(self) -> int:
        at = self.db.positions([p.name for p in self.projections])
        return min((at.get(p.name, 0) for p in self.projections), default=0)

    def catch_up(self, until: int | None = None, stop: threading.Event | None = None) -> dict[str, int]:
        """Bring every projection to the head (or to ``until``); returns their positions. Once
        ``stop`` is set it ends at the next commit (every ``batch_events`` events read), so a
        follower shut down during a long first catch-up keeps what it built and exits promptly."""
        self._renew()
        head = self.store.head()
        target = head if until is None else min(until, head)
        at = self.db.positions([p.name for p in self.projections])
        starts = {p.name: at.get(p.name, 0) for p in self.projections}
        behind = [p for p in self.projections if starts[p.name] < target]
        if len(behind) > 1:
            self._advance_together(behind, starts, target, stop)
        elif behind:
            self._advance(behind[0], target, stop)
        if stop is not None and stop.is_set():
            return {p.name: self.db.position(p.name) for p in self.projections}
        return {name: max(start, target) for name, start in starts.items()}

    def _advance_together(
        self, projections: Sequence[Projection], starts: dict[str, int], target: int, stop: threading.Event | None
    ) -> None:
        """One read of the log for several projections: each event goes to those that read its type
        and have not seen it yet, and all of them commit at the same batch ends."""
        kept = self.settings.kept_rows
        rows = {p.name: Rows(self.db, p.name, empty=starts[p.name] == 0, kept=kept) for p in projections}
        appliers = {p.name: _applier(p, self._batching[p.name]) for p in projections}
        held = {name: holder for name, (_apply, holder) in appliers.items()}
        by_type: dict[type[Event], list[tuple[int, _Apply, Rows]]] = {}
        every = [(starts[p.name], appliers[p.name][0], rows[p.name]) for p in projections if not p.types]
        for p in projections:
            for cls in p.types:
                by_type.setdefault(cls, []).append((starts[p.name], appliers[p.name][0], rows[p.name]))
        committed = {p.name: starts[p.name] for p in projections}
        batch = self.settings.batch_events
        after = min(committed.values())
        records = self.store.read_all(after=after, until=target, types=() if every else tuple(by_type))
        for read, record in enumerate(records, start=1):
            position = record.position
            for start, apply, buffer in by_type.get(type(record.event), ()):
                if position > start:
                    apply(record, buffer)
            for start, apply, buffer in every:
                if position > start:
                    apply(record, buffer)
            if read % batch == 0:
                self._commit_all(projections, committed, position, rows, held)
                if stop is not None and stop.is_set():
                    return
        self._commit_all(projections, committed, target, rows, held)

    def _commit_all(
        self,
        projections: Sequence[Projection],
        committed: dict[str, int],
        position: int,
        rows: dict[str, Rows],
        held: dict[str, _Held | None],
    ) -> None:
        moving = [p.name for p in projections if position > committed[p.name]]
        commits = [self._prepared(name, committed[name], position, rows[name], held[name]) for name in moving]
        self.db.commit_many(commits)
        for name in moving:
            self._committed(name, position, rows[name])
            committed[name] = position

    def _advance(self, projection: Projection, target: int, stop: threading.Event | None = None) -> int:
        start = self.db.position(projection.name)
        if start >= target:
            return start
        rows = Rows(self.db, projection.name, empty=start == 0, kept=self.settings.kept_rows)
        if isinstance(projection, TallyingProjection):
            return self._advance_tallying(projection, rows, start, target, stop=stop)
        committed = start
        batch = self.settings.batch_events
        apply, held = _applier(projection, self._batching[projection.name])
        records = self.store.read_all(after=start, until=target, types=projection.types)
        for applied, record in enumerate(records, start=1):
            apply(record, rows)
            if applied % batch == 0:
                self._commit(projection.name, committed, record.position, rows, held)
                committed = record.position
                if stop is not None and stop.is_set():
                    return committed
        self._commit(projection.name, committed, target, rows, held)
        return target

    def _advance_tallying(
        self, projection: TallyingProjection, rows: Rows, start: int, target: int, *, stop: threading.Event | None
    ) -> int:
        """Stretches of ``batch_events`` positions, each one commit: the events it reads, in order,
        then the counts of those it tallies."""
        committed = start
        tallied = projection.tallied()
        apply, tally = projection.apply, projection.tally
        while committed < target:
            end = min(target, committed + self.settings.batch_events)
            for record in self.store.read_all(after=committed, until=end, types=projection.types, skip=tallied):
                apply(record, rows)
            for counted in self.store.tally(committed, end, tallied):
                tally(counted, rows)
            self._commit(projection.name, committed, end, rows)
            committed = end
            if stop is not None and stop.is_set():
                break
        return committed

    def _commit(self, name: str, expected: int, position: int, rows: Rows, held: _Held | None = None) -> None:
        self.db.commit_many([self._prepared(name, expected, position, rows, held)])
        self._committed(name, position, rows)

    def _prepared(self, name: str, expected: int, position: int, rows: Rows, held: _Held | None) -> Commit:
        """What projection ``name`` writes to move from ``expected`` to ``position``."""
        if held is not None:
            held.flush(rows)
        if expected == 0 and self._layouts.get(name):
            rows.put("layout", "", _Layout(layout=self._layouts[name]))
        return Commit(name, expected, position, rows.writes(), rows.term_writes())

    def _committed(self, name: str, position: int, rows: Rows) -> None:
        rows.committed()
        if self.on_commit is not None:
            self.on_commit(name, position)

    def take(self, batch: Sequence[Recorded]) -> None:
        """Apply a stretch of the log a subscription delivered; each projection records its end.

        Every projection that stood where the stretch begins commits in one transaction. One that
        another runner moved meanwhile (a conflict, or a position short of the stretch's start) is
        brought up from the store on its own instead, so nothing is applied twice or skipped.
        """
        self._renew()
        first, last = batch[0].position, batch[-1].position
        at = self.db.positions([p.name for p in self.projections])
        together: list[tuple[Projection, Rows, _Held | None, int]] = []
        alone: list[Projection] = []
        for projection in self.projections:
            start = at.get(projection.name, 0)
            if start >= last:
                continue
            if start < first - 1:
                alone.append(projection)
                continue
            types = self._types[projection.name]
            rows = Rows(self.db, projection.name, empty=start == 0, kept=self.settings.kept_rows)
            apply, held = _applier(projection, self._batching[projection.name])
            for record in batch:
                # No types reads every event, as the store's read does.
                if record.position > start and (not types or type(record.event) in types):
                    apply(record, rows)
            together.append((projection, rows, held, start))
        try:
            commits = [self._prepared(p.name, start, last, rows, held) for p, rows, held, start in together]
            self.db.commit_many(commits)
        except ProjectionConflict:
            alone = [p for p, *_ in together] + alone
        else:
            for projection, rows, _held, _start in together:
                self._committed(projection.name, last, rows)
        for projection in alone:
            try:
                self._advance(projection, last)
            except ProjectionConflict:
                continue  # the other runner is ahead and carries on; so will this one

    def rebuild(self, name: str | None = None, until: int | None = None) -> dict[str, int]:
        """Drop projection ``name`` (every one if None) and build it again, to ``until`` if given."""
        chosen = [p for p in self.projections if name is None or p.name == name]
        for p in chosen:
            self.db.drop(p.name)
        head = self.store.head()
        target = head if until is None else min(until, head)
        return {p.name: self._advance(p, target) for p in chosen}

    def follow(self, stop: threading.Event) -> None:
        """Catch up, then keep up with new events until ``stop`` is set."""
        follow_log(
            self.store,
            [self],
            stop,
            batch_events=self.settings.batch_events,
            poll_interval_s=self.settings.poll_interval_s,
        )


def wait_for(predicate: Callable[[], bool], timeout: float, interval: float = 0.005) -> bool:
    """Poll ``predicate`` until true or ``timeout`` seconds pass; True if it became true."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
