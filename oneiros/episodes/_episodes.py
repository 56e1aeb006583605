"""Loading episodes from JSON lines, and reading the episodes a golem has recorded."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import msgspec

from oneiros._errors import EpisodeFileError
from oneiros._input import DECODE_ERRORS, unreadable
from oneiros.events._types import Episode, EpisodeRecorded, episode_out_of_bounds
from oneiros.store._store import EventStore

__all__ = ["count_episodes", "episode_batches", "load_episodes", "recorded_episodes", "sample_episodes_path"]

_decoder = msgspec.json.Decoder(Episode)


def load_episodes(path: str | Path) -> list[Episode]:
    """Every episode in a JSONL file, one object a line; a bad line names its number and field."""
    episodes = [episode for batch in episode_batches(path) for episode in batch]
    if not episodes:
        raise EpisodeFileError(str(path), "no episodes in file")
    return episodes


def count_episodes(path: str | Path) -> int:
    """How many episodes a JSONL file holds, every line checked as :func:`load_episodes` checks it
    (a bad line names its number and field), none kept: a million-line file is validated whole
    before anything is written, without holding it."""
    count = sum(len(batch) for batch in episode_batches(path))
    if not count:
        raise EpisodeFileError(str(path), "no episodes in file")
    return count


def episode_batches(path: str | Path, size: int = 10_000) -> Iterator[list[Episode]]:
    """The episodes of a JSONL file, ``size`` at a time, read a line at a time.

    A line past the bounds of :func:`~oneiros.events._types.episode_out_of_bounds`, or with a tick an
    earlier line of the file already has, is an error naming it: a golem's ticks are unique, and
    of two lines with one tick dreams would only ever see the second."""
    path = Path(path)
    try:
        lines = path.open("rb")
    except OSError as exc:
        raise EpisodeFileError(str(path), exc.strerror or str(exc)) from None
    with lines:
        batch: list[Episode] = []
        seen: set[int] = set()
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                episode = _decoder.decode(line)
            except DECODE_ERRORS as exc:
                raise EpisodeFileError(str(path), unreadable(exc, line), number) from None
            if (bad := episode_out_of_bounds(episode)) is not None:
                raise EpisodeFileError(str(path), f"{bad[1]} - at `$.{bad[0]}`", number)
            if episode.tick in seen:
                first = _line_of(path, episode.tick)
                raise EpisodeFileError(str(path), f"tick {episode.tick} is already on line {first}", number)
            seen.add(episode.tick)
            batch.append(episode)
            if len(batch) == size:
                yield batch
                batch = []
        if batch:
            yield batch


def _line_of(path: Path, tick: int) -> int:
    """The first line of ``path`` with ``tick`` (found again only for the error: a set of ticks is
    a tenth of the memory of a line number for each)."""
    with path.open("rb") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip() and _decoder.decode(line).tick == tick:
                return number
    raise AssertionError(f"tick {tick} not in {path}")  # pragma: no cover - it was read just now


def recorded_episodes(store: EventStore, golem_id: str) -> list[Episode]:
    """The episodes recorded for ``golem_id``, in the order they were recorded."""
    return [r.event.episode for r in store.read_stream(golem_id) if isinstance(r.event, EpisodeRecorded)]


def sample_episodes_path() -> Path:
    """The sample episode file shipped with the package."""
    return Path(str(resources.files("oneiros") / "data" / "sample_episodes.jsonl"))
