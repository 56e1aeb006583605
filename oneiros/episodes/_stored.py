"""Episodes held as their JSON: a process that keeps every episode of a long-lived golem (the
validation sweep, the daemon's micro-consolidation fiber) holds a million of them in a few hundred
bytes each, rather than as decoded objects, and decodes only the few it reads."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import msgspec

from oneiros.events._types import Episode

__all__ = ["StoredEpisodes"]

_episode_json = msgspec.json.Encoder()
_episode_from_json = msgspec.json.Decoder(Episode)


class StoredEpisodes(Mapping[int, Episode]):
    """Episodes by tick kept as their JSON (``stored``, shared, not copied), each decoded when it is
    looked up."""

    __slots__ = ("_stored",)

    def __init__(self, stored: dict[int, bytes]) -> None:
        self._stored = stored

    @staticmethod
    def encode(episode: Episode) -> bytes:
        return _episode_json.encode(episode)

    def __getitem__(self, tick: int) -> Episode:
        return _episode_from_json.decode(self._stored[tick])

    def __contains__(self, tick: object) -> bool:
        return tick in self._stored

    def __iter__(self) -> Iterator[int]:
        return iter(self._stored)

    def __len__(self) -> int:
        return len(self._stored)
