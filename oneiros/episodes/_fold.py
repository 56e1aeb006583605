"""The episodic memory read model: episodes as the log leaves them after every dream's effects.

Replay strength (+0.5 a replay), depotentiated arousal and triage decisions are events; this model
folds them over the recorded episodes, so what NREM and REM read is rebuilt from the log alone.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import msgspec
import numpy as np
import numpy.typing as npt

from oneiros._errors import InputError, InvalidEvent
from oneiros._input import check_plain
from oneiros.episodes._columns import MICROS_PER_TICK, EpisodeColumns, Vectors
from oneiros.episodes._mentions import Mentions
from oneiros.episodes._vectors import Embedder, embedding_matrix
from oneiros.events._content import EpisodeDepotentiated, EpisodeTriaged, ReplayStrengthened, TriageDecision
from oneiros.events._micro import EpisodePrioritized
from oneiros.events._types import MAX_TICK, DreamComplete, Episode, EpisodeRecorded
from oneiros.store._store import Recorded

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
Matrix = npt.NDArray[np.float32]
_encoder = msgspec.json.Encoder()

__all__ = [
    "SECONDS_PER_TICK",
    "EpisodeMemory",
    "EpisodeMemoryState",
    "columns_of",
    "episode_seconds",
    "episode_time",
    "episodes_from_dicts",
]

SECONDS_PER_TICK = 60.0
"""Where an episode has no time, its tick stands in at one minute a tick (Bardo: "a 4-hour
sleep window at 1 tick/minute")."""


def episodes_from_dicts(items: Iterable[dict[str, Any]]) -> list[Episode]:
    """Episodes from plain Python mappings, each checked like a line of an episode file: one with
    a lone surrogate in a string, or nested past :data:`~oneiros._input.MAX_DEPTH`, is
    MalformedInput naming the episode and where in it."""
    out: list[Episode] = []
    for index, item in enumerate(items):
        check_plain(item, f"episode {index}")
        try:
            out.append(msgspec.convert(item, Episode))
        except msgspec.ValidationError as exc:
            raise InputError(f"episode {index}: {exc}") from None
    return out


class _Strength(dict[int, float]):
    """Replay strength by tick; an episode never replayed has strength 0."""

    def __missing__(self, tick: int) -> float:
        return 0.0


_FLUSH_EVERY = 32_768
# The fields of Episode the columns hold, with Episode's own types, bounds and defaults, so that an
# episode's JSON decodes into just these (summary, tags and the rest are skipped, not built).
_COLUMN_FIELDS = (
    *("tick", "time", "regime", "significance", "arousal", "outcome", "prediction_error", "embedding"),
    "dream_priority",
)


def _column_field(f: msgspec.structs.FieldInfo) -> tuple[Any, ...]:
    if f.required:
        return (f.name, f.type)
    if f.default_factory is not msgspec.NODEFAULT:
        return (f.name, f.type, msgspec.field(default_factory=f.default_factory))
    return (f.name, f.type, f.default)


_ColumnFields: Any = msgspec.defstruct(
    "_ColumnFields",
    [_column_field(f) for f in msgspec.structs.fields(Episode) if f.name in _COLUMN_FIELDS],
    kw_only=True,
    frozen=True,
    gc=False,
)
_column_decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(_ColumnFields)
_NUMBERS = ("significance", "arousal", "pnl", "surprise", "regret", "prediction_error")
_INTS = ("ticks", "micros")


class EpisodeMemoryState(msgspec.Struct, kw_only=True):
    """The memory as plain data, for snapshots: one bytes field per column."""

    count: int
    ints: dict[str, memoryview]
    numbers: dict[str, memoryview]
    high: memoryview
    regime_codes: memoryview
    regimes: list[str]
    own_dims: memoryview
    chunks: list[memoryview]
    """The episodes' JSON in the chunks it was appended in (joining them would copy it all)."""
    chunk_starts: list[int]
    offsets: memoryview
    strength: list[tuple[int, float]]
    triage: list[tuple[int, str]]
    overrides: list[tuple[int, float, int]]
    prioritized: list[int]
    vectors: dict[str, tuple[memoryview, memoryview, int]]
    """Per embedder: the rows embedded, their vectors, the vector size."""
    mentions: Mentions = msgspec.field(default_factory=Mentions)


class EpisodeMemory:
    """Every recorded episode with its current strength, arousal and latest triage decision.

    Held as columns (``columns()``): an array per field engines scan and each episode's JSON, so
    a million episodes fit, scan as arrays and snapshot as bytes. Rows only ever append; a later
    episode with the same tick replaces the earlier one in ``columns()`` and ``episodes()``.
    """

    def __init__(self, episodes: Iterable[Episode] = ()) -> None:
        self._ints: dict[str, IntArray] = {k: np.zeros(0, np.int64) for k in _INTS}
        self._numbers: dict[str, FloatArray] = {k: np.zeros(0, np.float64) for k in _NUMBERS}
        self._high = np.zeros(0, bool)
        self._regime_codes = np.zeros(0, np.int32)
        self._own_dims = np.zeros(0, np.int32)
        # Each episode's JSON, in chunks as they came (appending never copies what is there);
        # row i is bytes offsets[i]:offsets[i+1] counted over the chunks laid end to end.
        self._chunks: list[bytes | memoryview] = []
        self._chunk_starts: list[int] = []
        self._offsets = np.zeros(1, np.int64)
        # Columns of rows appended since the arrays above were last joined, by column: joining at
        # every append copied the whole of each array again (a cold fold of a million episodes
        # spent a third of its time there); joined once when the columns are next read.
        self._unjoined: dict[str, list[npt.NDArray[Any]]] = {}
        self._count = 0
        self._bytes = 0
        self._pending: list[Episode] = []
        self._regimes: dict[str, int] = {}
        self.strength: dict[int, float] = _Strength()
        self.triage: dict[int, TriageDecision] = {}
        # Depotentiation by tick: the arousal after it and how many rows existed then, so an
        # episode recorded again later keeps its own arousal.
        self._overrides: dict[int, tuple[float, int]] = {}
        self._vectors: dict[str, dict[int, Matrix]] = {}
        self._columns: EpisodeColumns | None = None
        self._mentions = Mentions()
        self.prioritized: set[int] = set()
        """Episodes the micro-consolidation fiber tagged ``dream_priority: high`` for the next
        full dream cycle (Bardo); the tag ends when a cycle completes."""
        for episode in episodes:
            self.add(episode)

    @classmethod
    def from_records(cls, records: Iterable[Recorded]) -> EpisodeMemory:
        memory = cls()
        for record in records:
            memory.apply(record.event)
        return memory

    @property
    def rows(self) -> int:
        """Episodes recorded, counting each replaced one."""
        return self._count + len(self._pending)

    def add(self, episode: Episode) -> None:
        """Record an episode; a later one with the same tick replaces it."""
        self._pending.append(episode)
        self._columns = None
        if len(self._pending) >= _FLUSH_EVERY:  # columns, not objects, even while folding a long stream
            self._flush()

    def extend(self, episodes: Iterable[Episode]) -> None:
        """:meth:`add` each episode in turn."""
        pending = self._pending
        for episode in episodes:
            pending.append(episode)
            if len(pending) >= _FLUSH_EVERY:
                self._flush()
                pending = self._pending
        self._columns = None

    def apply(self, event: object) -> None:
        """Fold one event; events that do not touch episodes are ignored."""
        match event:
            case EpisodeRecorded(episode=episode):
                self.add(episode)
            case ReplayStrengthened(episode_tick=tick, delta=delta):
                self.strength[tick] = self.strength[tick] + delta
            case EpisodeDepotentiated(episode_tick=tick, arousal_after=arousal):
                self._overrides[tick] = (arousal, self.rows)
                self._columns = None
            case EpisodeTriaged(episode_tick=tick, decision=decision):
                self.triage[tick] = decision
            case EpisodePrioritized(episode_tick=tick):
                self.prioritized.add(tick)
                self._columns = None
            case DreamComplete() if self.prioritized:
                self.prioritized.clear()
                self._columns = None

    def add_encoded(self, encoded: Sequence[bytes | memoryview]) -> None:
        """Record episodes given as their JSON (as the log stores them inside EpisodeRecorded):
        what :meth:`add` does for each, without building an :class:`Episode` per row. Only the
        fields the columns hold are decoded; the bytes are kept as they are."""
        if not encoded:
            return
        self._flush()  # episodes added before these come first
        decode = _column_decoder.decode
        self._append([decode(e) for e in encoded], encoded)

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        if pending:
            self._append(pending, [_encoder.encode(e) for e in pending])

    def _append(self, episodes: Sequence[Any], encoded: Sequence[bytes | memoryview]) -> None:
        # One pass per column in C-speed comprehensions; a tuple per episode costs more.
        codes = self._regimes
        ticks = [e.tick for e in episodes]
        if ticks and max(ticks) > MAX_TICK:  # recorded before ticks were bounded at input
            raise InvalidEvent(
                "EpisodeRecorded",
                f"tick {max(ticks)} is past the largest tick {MAX_TICK} (recorded by an older oneiros); "
                "this golem's episodes cannot be dreamt over",
                "episode.tick",
            )
        ints = {
            "ticks": ticks,
            # episode_micros, inlined: a call per episode is a tenth of a cold fold's columns
            "micros": [
                ((t if t.tzinfo else t.replace(tzinfo=UTC)) - _EPOCH) // _MICROSECOND
                if (t := e.time) is not None
                else e.tick * MICROS_PER_TICK
                for e in episodes
            ],
        }
        numbers = {
            "significance": [e.significance for e in episodes],
            "arousal": [e.arousal for e in episodes],
            "pnl": [e.outcome.pnl for e in episodes],
            "surprise": [e.outcome.surprise for e in episodes],
            "regret": [e.outcome.regret for e in episodes],
            "prediction_error": [e.prediction_error for e in episodes],
        }
        unjoined = self._unjoined
        for key, values in ints.items():
            unjoined.setdefault(key, []).append(np.asarray(values, np.int64))
        for key, floats in numbers.items():
            unjoined.setdefault(key, []).append(np.asarray(floats, np.float64))
        unjoined.setdefault("high", []).append(np.asarray([e.dream_priority == "high" for e in episodes], bool))
        regimes = [e.regime for e in episodes]
        for regime in dict.fromkeys(regimes):  # codes in order of first appearance
            codes.setdefault(regime, len(codes))
        regime_codes = list(map(codes.__getitem__, regimes))
        unjoined.setdefault("regime_codes", []).append(np.asarray(regime_codes, np.int32))
        dims = [len(e.embedding) if e.embedding else 0 for e in episodes]
        unjoined.setdefault("own_dims", []).append(np.asarray(dims, np.int32))
        lengths = np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)))
        self._chunk_starts.append(self._bytes)
        self._chunks.append(b"".join(encoded))
        unjoined.setdefault("offsets", []).append(self._bytes + lengths)
        self._bytes += int(lengths[-1]) if len(lengths) else 0
        self._count += len(encoded)
        self._columns = None

    def _join(self) -> None:
        """Append the rows added since the last join to the column arrays, one copy per column."""
        self._flush()
        unjoined, self._unjoined = self._unjoined, {}
        if not unjoined:
            return
        for key in _INTS:
            self._ints[key] = np.concatenate([self._ints[key], *unjoined[key]])
        for key in _NUMBERS:
            self._numbers[key] = np.concatenate([self._numbers[key], *unjoined[key]])
        self._high = np.concatenate([self._high, *unjoined["high"]])
        self._regime_codes = np.concatenate([self._regime_codes, *unjoined["regime_codes"]])
        self._own_dims = np.concatenate([self._own_dims, *unjoined["own_dims"]])
        self._offsets = np.concatenate([self._offsets, *unjoined["offsets"]])

    def columns(self) -> EpisodeColumns:
        """The current episodes in tick order, as columns (kept until the memory changes)."""
        if self._columns is not None and not self._pending:
            return self._columns
        self._join()
        ticks = self._ints["ticks"]
        in_order = len(ticks) < 2 or bool(np.all(ticks[1:] > ticks[:-1]))
        if in_order:  # the usual case: every row is current, already in tick order
            rows = np.arange(len(ticks), dtype=np.int64)
        else:  # the latest row of each tick, in tick order
            _unique, first_from_end = np.unique(ticks[::-1], return_index=True)
            rows = (len(ticks) - 1 - first_from_end).astype(np.int64)

        def pick(column: npt.NDArray[Any]) -> npt.NDArray[Any]:
            return column if in_order else column[rows]

        arousal = np.array(pick(self._numbers["arousal"]), np.float64)
        high = np.array(pick(self._high), bool)
        sorted_ticks = pick(ticks)
        for tick, (after, rows_then) in self._overrides.items():
            at = int(np.searchsorted(sorted_ticks, tick))
            if at < len(rows) and int(sorted_ticks[at]) == tick and int(rows[at]) < rows_then:
                arousal[at] = after
        for tick in self.prioritized:  # tagged by micro-consolidation until a cycle completes
            at = int(np.searchsorted(sorted_ticks, tick))
            if at < len(rows) and int(sorted_ticks[at]) == tick:
                high[at] = True
        self._columns = EpisodeColumns(
            rows=rows,
            ticks=sorted_ticks,
            micros=pick(self._ints["micros"]),
            arousal=arousal,
            numbers={k: pick(v) for k, v in self._numbers.items()},
            high=high,
            regime_codes=pick(self._regime_codes),
            regimes=list(self._regimes),
            own_dims=pick(self._own_dims),
            chunks=(tuple(self._chunks), tuple(self._chunk_starts)),
            offsets=self._offsets,
        )
        return self._columns

    def vectors(self, embedder: Embedder | None, name: str) -> Vectors | Matrix | None:
        """Unit vectors of ``columns()``: the episodes' own embeddings when every one has one of
        the same size, else ``embedder``'s, computed once per episode and embedder (``name`` and
        the embedder's ``version``, where it has one) and kept (snapshots keep them too); None when
        neither is available."""
        columns = self.columns()
        if not len(columns):
            return None
        dims = columns.own_dims
        if int(dims[0]) > 0 and bool(np.all(dims == dims[0])):
            return embedding_matrix(list(columns), None)
        if embedder is None:
            return None
        key = f"{name}|{getattr(embedder, 'version', '')}"
        return Vectors(columns, embedder, self._vectors.setdefault(key, {}))

    @property
    def mentions_read(self) -> int:
        """Rows the subjects index has read (see :meth:`mentions`)."""
        return self._mentions.rows

    def mentions(self, rows: int) -> Mentions:
        """The subjects the first ``rows`` rows named (see ``Mentions``), read on from where the
        last call stopped: each row is read once, whatever the number of calls."""
        held = self._mentions
        if not held.current or held.rows > rows:
            held = self._mentions = Mentions()
        if held.rows < rows:
            columns = self.columns()
            end = min(rows, self.rows)
            held.add((columns.row_episode(row) for row in range(held.rows, end)), end)
        return held

    def __len__(self) -> int:
        return len(self.columns())

    def episodes(self) -> list[Episode]:
        """Every episode in tick order, with its current (depotentiated) arousal and dream priority."""
        return list(self.columns())

    @property
    def arousal(self) -> Mapping[int, float]:
        """Each episode's current arousal, by tick."""
        columns = self.columns()
        return dict(zip(columns.ticks.tolist(), columns.arousal.tolist(), strict=True))

    def get(self, tick: int) -> Episode | None:
        return self.columns().by_tick().get(tick)

    # -- snapshots ---------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """Everything this memory holds, as bytes that ``from_bytes`` reads back: the same bytes
        for the same episodes, however they were appended (the episodes' JSON as one chunk)."""
        state = self.to_state()
        if len(state.chunks) > 1:
            state.chunks, state.chunk_starts = [memoryview(b"".join(state.chunks))], [0]
        return msgspec.msgpack.encode(state)

    def to_state(self) -> EpisodeMemoryState:
        """Everything this memory holds as plain data, its columns as views (not copies): for a
        snapshot that encodes it along with other things, in one pass."""
        self._join()

        def raw(array: npt.NDArray[Any]) -> memoryview:
            return np.ascontiguousarray(array).reshape(-1).view(np.uint8).data

        vectors: dict[str, tuple[memoryview, memoryview, int]] = {}
        for name, cache in self._vectors.items():
            if cache:
                keys = np.fromiter(cache, np.int64, len(cache))
                matrix = np.stack([cache[int(k)] for k in keys]).astype(np.float32)
                vectors[name] = (raw(keys), raw(matrix), int(matrix.shape[1]))
        state = EpisodeMemoryState(
            count=len(self._offsets) - 1,
            ints={k: raw(v) for k, v in self._ints.items()},
            numbers={k: raw(v) for k, v in self._numbers.items()},
            high=raw(self._high),
            regime_codes=raw(self._regime_codes),
            regimes=list(self._regimes),
            own_dims=raw(self._own_dims),
            chunks=[memoryview(c) for c in self._chunks],
            chunk_starts=list(self._chunk_starts),
            offsets=raw(self._offsets),
            strength=sorted(self.strength.items()),
            triage=sorted(self.triage.items()),
            overrides=sorted((t, a, n) for t, (a, n) in self._overrides.items()),
            prioritized=sorted(self.prioritized),
            vectors=vectors,
            mentions=self._mentions,
        )
        return state

    @classmethod
    def from_bytes(cls, data: bytes | memoryview) -> EpisodeMemory:
        """The memory ``to_bytes`` wrote; raises ValueError (or msgspec's errors) if it is damaged."""
        return cls.from_state(msgspec.msgpack.decode(data, type=EpisodeMemoryState))

    @classmethod
    def from_state(cls, state: EpisodeMemoryState) -> EpisodeMemory:
        """The memory ``to_state`` gave; raises ValueError if it is damaged."""
        memory = cls()
        n = state.count
        memory._ints = {k: np.frombuffer(state.ints[k], np.int64) for k in _INTS}
        memory._numbers = {k: np.frombuffer(state.numbers[k], np.float64) for k in _NUMBERS}
        memory._high = np.frombuffer(state.high, bool)
        memory._regime_codes = np.frombuffer(state.regime_codes, np.int32)
        memory._own_dims = np.frombuffer(state.own_dims, np.int32)
        memory._offsets = np.frombuffer(state.offsets, np.int64)
        memory._chunks, memory._chunk_starts = list(state.chunks), list(state.chunk_starts)
        sizes = [c.nbytes for c in state.chunks]
        memory._count, memory._bytes = n, sum(sizes)
        if [0, *itertools.accumulate(sizes)][: len(sizes)] != state.chunk_starts:
            raise ValueError("episode memory snapshot: chunks and their starts disagree")
        arrays = [*memory._ints.values(), *memory._numbers.values(), memory._high, memory._regime_codes]
        if any(len(a) != n for a in arrays) or len(memory._offsets) != n + 1:
            raise ValueError("episode memory snapshot: columns of different lengths")
        if int(memory._offsets[-1]) != memory._bytes:
            raise ValueError("episode memory snapshot: episode bytes cut short")
        memory._regimes = {name: code for code, name in enumerate(state.regimes)}
        memory.strength.update(state.strength)
        memory.triage.update({t: cast("TriageDecision", d) for t, d in state.triage})
        memory._overrides = {t: (a, rows) for t, a, rows in state.overrides}
        memory.prioritized = set(state.prioritized)
        memory._mentions = state.mentions
        for name, (keys, matrix, dims) in state.vectors.items():
            rows = np.frombuffer(keys, np.int64)
            vectors = np.frombuffer(matrix, np.float32).reshape(len(rows), dims)
            memory._vectors[name] = dict(zip(rows.tolist(), vectors, strict=True))
        return memory

    def query(  # noqa: PLR0913 - keyword-only filters, each optional, as a query API takes them
        self,
        *,
        regime: str | None = None,
        tags: Sequence[str] = (),
        since: datetime | None = None,
        until: datetime | None = None,
        min_significance: float = 0.0,
        exclude_forgotten: bool = False,
        limit: int | None = None,
    ) -> list[Episode]:
        """Episodes matching every given filter, in tick order."""
        wanted = set(tags)
        out = []
        for episode in self.episodes():
            when = episode_time(episode)
            if regime is not None and episode.regime != regime:
                continue
            if wanted and not wanted.issubset(episode.tags):
                continue
            if (since is not None and when < since) or (until is not None and when > until):
                continue
            if episode.significance < min_significance:
                continue
            if exclude_forgotten and self.triage.get(episode.tick) == "forget":
                continue
            out.append(episode)
            if limit is not None and len(out) >= limit:
                break
        return out


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def episode_time(episode: Episode) -> datetime:
    """The episode's time (UTC when it names no zone), or its tick read as minutes after the epoch."""
    if episode.time is not None:
        return episode.time if episode.time.tzinfo else episode.time.replace(tzinfo=UTC)
    return _EPOCH + timedelta(seconds=episode.tick * SECONDS_PER_TICK)


def episode_seconds(episodes: Sequence[Episode]) -> npt.NDArray[np.float64]:
    """Each episode's time in seconds, as one array."""
    return np.fromiter(
        (episode_time(e).timestamp() for e in episodes),
        dtype=np.float64,
        count=len(episodes),
    )


def columns_of(episodes: Sequence[Episode]) -> EpisodeColumns:
    """``episodes`` as columns: itself when it already is, else built (a later tick replaces an
    earlier one, as in the episode memory)."""
    if isinstance(episodes, EpisodeColumns):
        return episodes
    return EpisodeMemory(episodes).columns()
