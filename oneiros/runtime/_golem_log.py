"""Everything a phase reads from a golem's stream, folded once and then only caught up.

A phase needs the golem's state, its episode memory, the budget ledger, the staged entries of
earlier cycles and the current cycle's own events. :class:`GolemLog` folds all of them in one pass
over the stream; :class:`GolemLogs` keeps one per golem in this process and, before handing it
out, reads only the events after the last one it folded. A fresh process (an RQ worker) starts
from the latest snapshot beside the log instead of the first event, so no phase anywhere reads
the whole stream once a snapshot exists. Snapshots are taken every ``SnapshotSettings.every``
events folded; one that the log disagrees with is ignored (see ``oneiros.store._snapshots``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from datetime import datetime

import msgspec

from oneiros.episodes._fold import EpisodeMemory, EpisodeMemoryState
from oneiros.events._content import DreamStaged
from oneiros.events._types import CycleEvent, DreamComplete, DreamStart, Episode, EpisodeRecorded
from oneiros.fsm._golem import GolemState
from oneiros.fsm._service import Golems
from oneiros.runtime._budget import Ledger
from oneiros.settings._runtime import SnapshotSettings
from oneiros.store._backends import Row
from oneiros.store._snapshots import (
    Snapshot,
    SnapshotKind,
    SnapshotStore,
    decode_records,
    encode_records,
    read_from_snapshot,
    read_stream_pages,
    seal_parts,
)
from oneiros.store._store import EventStore, Recorded, decode_rows

__all__ = ["GolemLog", "GolemLogs"]

_KIND = "cycle-reader"
# 2: the ledger keeps held reservations and settled spend apart (orphans are released);
# 3: the state's cycle counts carry generation calls, failures and staged entries;
# 4: the episode memory is nested in the body, not bytes of its own;
# 5: the night (the rows of episodes recorded since the last completed cycle began);
# 6: episodes as EpisodeRecorded v4 holds them (a shared image a field, not in the summary).
_FORMAT = 6


class _Body(msgspec.Struct, frozen=True, kw_only=True):
    # Views, not copies: the episode memory alone is most of a snapshot, so it is encoded in the
    # same pass as the rest rather than into bytes of its own first.
    state: memoryview
    memory: EpisodeMemoryState
    ledger: memoryview
    staged: memoryview
    cycle: memoryview
    night: tuple[int, int] = (0, 0)


class _EpisodeData(msgspec.Struct, frozen=True, gc=False):
    episode: msgspec.Raw


class _EpisodeOnly(msgspec.Struct, frozen=True, gc=False):
    data: _EpisodeData


# An EpisodeRecorded as stored, reduced to its episode's JSON (the metadata is skipped, not built).
_episode_only = msgspec.json.Decoder(_EpisodeOnly)
_EPISODE_SLICE = 8_192
_Pages = Iterable[Sequence[Row]]
_ROWS_BEYOND = 50_000
"""A held log this many events behind is caught up from stored rows in pages, not one read."""
_EPISODE_TOPIC = f"{EpisodeRecorded.type_name}.v{EpisodeRecorded.schema_version}"


class GolemLog:
    """One golem's stream folded into what phases read. ``last`` is the last event folded."""

    def __init__(self, golem_id: str) -> None:
        self.state = GolemState(golem_id=golem_id)
        self.memory = EpisodeMemory()
        self.ledger = Ledger()
        self.staged: list[Recorded] = []
        """Every DreamStaged record, in log order."""
        self.cycle: list[Recorded] = []
        """The current cycle's records, from its DreamStart; empty while waking."""
        self.last: Recorded | None = None
        self.consolidated = 0
        """Episode rows the last completed cycle's night reached: what a later night starts from."""
        self.night_end = 0
        """Episode rows recorded when the current (or last) cycle began: where its night ends."""

    @property
    def night(self) -> tuple[int, int]:
        """The current cycle's night as episode rows (start, end): every episode recorded after the
        night of the last cycle that completed, up to this cycle's start. An interrupted cycle's
        night is the next cycle's too; what arrives while a cycle runs is the next night's."""
        return (min(self.consolidated, self.night_end), self.night_end)

    @property
    def now(self) -> datetime | None:
        """The time of the last event folded."""
        return self.last.meta.time if self.last is not None else None

    def apply(self, record: Recorded) -> None:
        self.state.apply(record)
        event = record.event
        if type(event) is EpisodeRecorded:  # most of a long stream: nothing else folds it
            self.memory.add(event.episode)
            self.last = record
            return
        self.memory.apply(event)
        self.ledger.apply(record)
        if isinstance(event, DreamStaged):
            self.staged.append(record)
        match event:
            case DreamStart():
                self.cycle = [record]
                self.night_end = self.memory.rows
            case CycleEvent(cycle_id=cycle_id) if self.cycle and cycle_id == self.state.cycle_id:
                self.cycle.append(record)
        if type(event) is DreamComplete:
            self.consolidated = self.night_end
        if self.state.cycle_id is None:
            self.cycle = []
        self.last = record

    def fold(self, records: Iterable[Recorded]) -> None:
        """:meth:`apply` each record; a run of EpisodeRecorded goes to the memory at once."""
        episodes: list[Episode] = []
        last: Recorded | None = None
        for record in records:
            event = record.event
            if type(event) is EpisodeRecorded:
                episodes.append(event.episode)
                last = record
                continue
            if last is not None:
                self._episodes(len(episodes), last)
                self.memory.extend(episodes)
                episodes, last = [], None
            self.apply(record)
        if last is not None:
            self._episodes(len(episodes), last)
            self.memory.extend(episodes)

    def fold_rows(self, pages: Iterable[Sequence[Row]]) -> None:
        """:meth:`fold` over stored rows (``read_stream_pages``): an EpisodeRecorded of the current
        schema is never decoded whole, only its episode's bytes and the fields the memory's columns
        hold (see ``EpisodeMemory.add_encoded``); every other row is decoded and applied."""
        for rows in pages:
            start = 0
            for at, row in enumerate(rows):
                if row[2] == _EPISODE_TOPIC:
                    continue
                self._episode_rows(rows[start:at])
                self.fold(decode_rows(rows[at : at + 1]))
                start = at + 1
            self._episode_rows(rows[start:])

    def _episode_rows(self, rows: Sequence[Row]) -> None:
        # In slices, so a page of episodes is never held decoded twice over (the memory's peak).
        for start in range(0, len(rows), _EPISODE_SLICE):
            self._episode_slice(rows[start : start + _EPISODE_SLICE])

    def _episode_slice(self, rows: Sequence[Row]) -> None:
        last = next(decode_rows(rows[-1:]))
        try:
            # Decodes every row before the memory changes; checks what it decodes as the store's
            # decode would (the other fields were checked when the event was appended).
            self.memory.add_encoded([_episode_only.decode(state).data.episode for _p, _v, _t, state in rows])
        except msgspec.MsgspecError:
            self.fold(decode_rows(rows))  # a damaged row: the store's decode names it
            return
        self._episodes(len(rows), last)

    def _episodes(self, count: int, last: Recorded) -> None:
        self.state.apply_episodes(count, last)
        self.last = last

    def to_snapshot(self) -> Snapshot:
        assert self.last is not None, "an empty stream has nothing to snapshot"
        body = _Body(
            state=memoryview(msgspec.msgpack.encode(self.state)),
            memory=self.memory.to_state(),
            ledger=memoryview(self.ledger.to_bytes()),
            staged=memoryview(encode_records(self.staged)),
            cycle=memoryview(encode_records(self.cycle)),
            night=(self.consolidated, self.night_end),
        )
        return Snapshot.of(_KIND, _FORMAT, self.last, msgspec.msgpack.encode(body))

    @classmethod
    def from_snapshot(cls, snapshot: Snapshot, last: Recorded) -> GolemLog:
        body = msgspec.msgpack.decode(snapshot.body, type=_Body)
        log = cls(snapshot.stream)
        log.state = msgspec.msgpack.decode(body.state, type=GolemState)
        if log.state.version != snapshot.version or log.state.golem_id != snapshot.stream:
            raise ValueError("cycle reader snapshot: the state is not the snapshot's")
        log.memory = EpisodeMemory.from_state(body.memory)
        log.ledger = Ledger.from_bytes(body.ledger)
        log.staged = decode_records(body.staged)
        log.cycle = decode_records(body.cycle)
        log.consolidated, log.night_end = body.night
        log.last = last
        return log


class GolemLogs:
    """This process's folded logs, one per golem, caught up on every read."""

    def __init__(
        self,
        store: EventStore,
        snapshots: SnapshotStore,
        settings: SnapshotSettings | None = None,
        golems: Golems | None = None,
    ) -> None:
        self.store, self.snapshots, self.golems = store, snapshots, golems
        self.settings = settings or SnapshotSettings.from_env()
        self._held: dict[str, GolemLog] = {}
        self._snapshot_versions: dict[str, int] = {}
        self._snapshot_mentions: dict[str, int] = {}

    @classmethod
    def of(cls, golems: Golems) -> GolemLogs:
        """Logs over ``golems``'s store, sharing its snapshots."""
        return cls(golems.store, golems.snapshots, golems.snapshot_settings, golems)

    def _after(self, golem_id: str, last: Recorded) -> tuple[Iterable[Recorded], _Pages | None] | None:
        """What the golem's stream holds after ``last``: its events, or, for a log far behind
        (another process recorded a year of episodes meanwhile), pages of its stored rows to fold
        as a fresh fold does rather than a million decoded events at once. None when the stream
        no longer holds ``last`` where it was."""
        if self.store.stream_version(golem_id) - last.version > _ROWS_BEYOND:
            pages = iter(read_stream_pages(self.store, golem_id, after_version=last.version - 1))
            first = next(pages, [])
            if first and next(decode_rows(first[:1])) == last:
                return (), itertools.chain([first[1:]], pages)
            return None
        records = self.store.read_stream(golem_id, after_version=last.version - 1)
        return (records[1:], None) if records and records[0] == last else None

    def read(self, golem_id: str) -> GolemLog:
        """The golem's log folded to the head, reading only what came after what is held."""
        log = self._held.get(golem_id)
        tail: Iterable[Recorded] = ()
        rows: _Pages | None = None
        fresh = False
        if log is not None and log.last is not None:
            caught = self._after(golem_id, log.last)
            if caught is None:
                log = None
            else:
                tail, rows = caught
        if log is None:
            log, tail = read_from_snapshot(
                self.store, self.snapshots, golem_id, SnapshotKind(_KIND, _FORMAT), GolemLog.from_snapshot
            )
            if log is None:
                # No snapshot to start from: the whole stream, folded from its rows (``tail``, the
                # same stream decoded, is a generator that has read nothing yet).
                log, fresh = GolemLog(golem_id), True
            else:
                self._snapshot_versions[golem_id] = log.state.version
                self._snapshot_mentions[golem_id] = log.memory.mentions_read
        before = log.last
        if fresh:
            log.fold_rows(read_stream_pages(self.store, golem_id))
        elif rows is not None:
            log.fold_rows(rows)
        else:
            log.fold(tail)
        self._held[golem_id] = log
        if self.golems is not None and log.last is not None and log.last is not before:
            self.golems.remember(log.state, log.last)  # its next command need not read this again
        every = self.settings.every
        # A snapshot also when threads' index has read many rows since the last (a first night
        # over a long history): the next process starts from it instead of reading them again.
        behind = log.state.version - self._snapshot_versions.get(golem_id, 0)
        read = log.memory.mentions_read - self._snapshot_mentions.get(golem_id, 0)
        if every > 0 and log.last is not None and (behind >= every or read >= every):
            self.snapshots.put(golem_id, _KIND, seal_parts(log.to_snapshot()))
            self._snapshot_versions[golem_id] = log.state.version
            self._snapshot_mentions[golem_id] = log.memory.mentions_read
        return log
