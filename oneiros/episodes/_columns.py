"""Episodes held as columns: one NumPy array per field the engines scan, and each episode's own
bytes, decoded only for the few episodes a phase actually puts in a prompt.

A Python object per episode costs about 7 KB at a hundred thousand episodes and is rebuilt on
every read; columns cost the numbers themselves plus the episode's JSON, and scanning them is one
array expression instead of a Python loop.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, overload

import msgspec
import numpy as np
import numpy.typing as npt

from oneiros.events._types import Episode

__all__ = ["EpisodeColumns", "Vectors", "episode_micros"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
Matrix = npt.NDArray[np.float32]
_decoder = msgspec.json.Decoder(Episode)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
MICROS_PER_TICK = 60_000_000
"""Where an episode has no time, its tick stands in at one minute a tick (SECONDS_PER_TICK)."""


def episode_micros(episode: Episode) -> int:
    """The episode's time as whole microseconds after the epoch, exactly (see ``episode_time``)."""
    when = episode.time
    if when is None:
        return episode.tick * MICROS_PER_TICK
    # timedelta // timedelta is integer arithmetic on microseconds: exact, and one C call.
    return ((when if when.tzinfo else when.replace(tzinfo=UTC)) - _EPOCH) // _MICROSECOND


class Vectors:
    """Unit embedding rows of a set of episodes, computed only for the rows asked for and kept.

    ``cache`` maps an episode's row in its memory to its vector, so a memory that lives across
    cycles (or a snapshot of it) never embeds an episode twice with the same embedder.
    """

    def __init__(self, columns: EpisodeColumns, embedder: Any, cache: dict[int, Matrix] | None = None) -> None:
        self._columns, self._embedder = columns, embedder
        self._cache: dict[int, Matrix] = {} if cache is None else cache

    def __len__(self) -> int:
        return len(self._columns)

    def row(self, position: int) -> Matrix:
        key = int(self._columns.rows[position])
        vector = self._cache.get(key)
        if vector is None:
            vector = self._cache[key] = self._embedder.embed([self._columns.text(position)])[0]
        return vector

    def all(self) -> Matrix:
        """Every row, as one matrix; what is missing is embedded in one batch.

        Rows embedded here are not kept: only the rows a draw touches are, so the cache (and the
        snapshots that carry it) stays the size of what dreams used, not of the whole memory."""
        rows = self._columns.rows.tolist()
        if not rows:
            return np.zeros((0, 0), np.float32)
        missing = [p for p, r in enumerate(rows) if r not in self._cache]
        embedded = self._embedder.embed([self._columns.text(p) for p in missing]) if missing else None
        fresh = dict(zip(missing, embedded, strict=True)) if embedded is not None else {}
        return np.stack([fresh[p] if p in fresh else self._cache[r] for p, r in enumerate(rows)])


class EpisodeColumns(Sequence[Episode]):
    """Episodes in tick order, one array per scanned field; ``columns[i]`` decodes episode ``i``.

    ``rows`` is each episode's row in the memory it came from (a cache key that never changes);
    ``arousal`` is the current arousal, after depotentiation; ``high`` the current dream priority,
    after micro-consolidation's tags.
    """

    def __init__(  # noqa: PLR0913 - keyword-only: each column of the frame, built in one place (from_episodes)
        self,
        *,
        rows: IntArray,
        ticks: IntArray,
        micros: IntArray,
        arousal: FloatArray,
        numbers: dict[str, FloatArray],
        high: npt.NDArray[np.bool_],
        regime_codes: npt.NDArray[np.int32],
        regimes: Sequence[str],
        own_dims: npt.NDArray[np.int32],
        chunks: tuple[tuple[bytes | memoryview, ...], tuple[int, ...]],
        offsets: IntArray,
    ) -> None:
        self.rows, self.ticks, self.micros, self.arousal = rows, ticks, micros, arousal
        self.significance = numbers["significance"]
        self.pnl, self.surprise = numbers["pnl"], numbers["surprise"]
        self.regret, self.prediction_error = numbers["regret"], numbers["prediction_error"]
        self.original_arousal = numbers["arousal"]
        self.high, self.regime_codes, self.regimes = high, regime_codes, list(regimes)
        self.own_dims = own_dims
        self._chunks = tuple(memoryview(c) for c in chunks[0])
        self._chunk_starts, self._offsets = list(chunks[1]), offsets

    def __len__(self) -> int:
        return len(self.ticks)

    @overload
    def __getitem__(self, index: int) -> Episode: ...
    @overload
    def __getitem__(self, index: slice) -> list[Episode]: ...
    def __getitem__(self, index: int | slice) -> Episode | list[Episode]:
        if isinstance(index, slice):
            return [self._episode(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._episode(index)

    def __iter__(self) -> Iterator[Episode]:
        for index in range(len(self)):
            yield self._episode(index)

    def row_episode(self, row: int) -> Episode:
        """The episode recorded as ``row`` of its memory, as recorded (a later row may replace it)."""
        start, end = int(self._offsets[row]), int(self._offsets[row + 1])
        chunk = bisect_right(self._chunk_starts, start) - 1
        base = self._chunk_starts[chunk]
        return _decoder.decode(self._chunks[chunk][start - base : end - base])

    def _episode(self, position: int) -> Episode:
        episode = self.row_episode(int(self.rows[position]))
        arousal = float(self.arousal[position])
        if arousal != episode.arousal:
            episode = msgspec.structs.replace(episode, arousal=arousal)
        if self.high[position] and episode.dream_priority != "high":  # tagged since it was recorded
            episode = msgspec.structs.replace(episode, dream_priority="high")
        return episode

    @property
    def seconds(self) -> FloatArray:
        """Each episode's time in seconds after the epoch (what ``episode_seconds`` gives)."""
        out: FloatArray = self.micros.astype(np.float64) / 1e6
        return out

    def regime_of(self, position: int) -> str:
        return self.regimes[int(self.regime_codes[position])]

    def text(self, position: int) -> str:
        """What an episode is about, for embedding (``episode_text``)."""
        episode = self._episode(position)
        return " ".join((episode.said(), *episode.tags, episode.regime))

    def position(self, tick: int) -> int | None:
        """Where the episode of ``tick`` is, or None."""
        at = int(np.searchsorted(self.ticks, tick))
        return at if at < len(self.ticks) and int(self.ticks[at]) == tick else None

    def recorded(self, start: int, end: int) -> Sequence[Episode]:
        """The current episodes first recorded as rows ``start`` to ``end`` (end excluded) of their
        memory, in tick order: what arrived in that stretch of the log, each decoded only when read."""
        if end <= start or not len(self):
            return _Positions(self, np.zeros(0, np.int64))
        rows = self.rows
        return _Positions(self, np.flatnonzero((rows >= start) & (rows < end)))

    def by_tick(self) -> Mapping[int, Episode]:
        """A mapping from tick to episode that decodes only the episodes looked up."""
        return _ByTick(self)


class _Positions(Sequence[Episode]):
    """Some of the columns' episodes, by position, decoded only as they are read."""

    def __init__(self, columns: EpisodeColumns, positions: IntArray) -> None:
        self._columns, self._positions = columns, positions

    def __len__(self) -> int:
        return len(self._positions)

    @overload
    def __getitem__(self, index: int) -> Episode: ...
    @overload
    def __getitem__(self, index: slice) -> list[Episode]: ...
    def __getitem__(self, index: int | slice) -> Episode | list[Episode]:
        if isinstance(index, slice):
            return [self._columns[int(p)] for p in self._positions[index]]
        return self._columns[int(self._positions[index])]


class _ByTick(Mapping[int, Episode]):
    def __init__(self, columns: EpisodeColumns) -> None:
        self._columns = columns

    def __getitem__(self, tick: int) -> Episode:
        at = self._columns.position(tick)
        if at is None:
            raise KeyError(tick)
        return self._columns[at]

    def __contains__(self, tick: object) -> bool:
        return isinstance(tick, int) and self._columns.position(tick) is not None

    def __iter__(self) -> Iterator[int]:
        return iter(self._columns.ticks.tolist())

    def __len__(self) -> int:
        return len(self._columns)
