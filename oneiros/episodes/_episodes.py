"""Loading episodes from JSON lines, and reading the episodes a golem has recorded."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import msgspec

from oneiros._errors import EpisodeFileError
from oneiros.events import Episode, EpisodeRecorded, EventStore

__all__ = ["load_episodes", "recorded_episodes", "sample_episodes_path"]

_decoder = msgspec.json.Decoder(Episode)


def load_episodes(path: str | Path) -> list[Episode]:
    """Every episode in a JSONL file, one object a line; a bad line names its number and field."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise EpisodeFileError(str(path), exc.strerror or str(exc)) from None
    episodes: list[Episode] = []
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            episodes.append(_decoder.decode(line))
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise EpisodeFileError(str(path), str(exc), number) from None
    if not episodes:
        raise EpisodeFileError(str(path), "no episodes in file")
    return episodes


def recorded_episodes(store: EventStore, golem_id: str) -> list[Episode]:
    """The episodes recorded for ``golem_id``, in the order they were recorded."""
    return [r.event.episode for r in store.read_stream(golem_id) if isinstance(r.event, EpisodeRecorded)]


def sample_episodes_path() -> Path:
    """The sample episode file shipped with the package."""
    return Path(str(resources.files("oneiros") / "data" / "sample_episodes.jsonl"))
