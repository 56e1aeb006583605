"""``GET /api/v1/events``: the log as Server-Sent Events (Bardo: ``mode_change``,
``dream_progress``, ``dream_complete``), plus every raw event on request.

Each message's ``id`` is the log position of the event it comes from, one message a position, so a
client that reconnects with ``Last-Event-ID`` resumes right after it: nothing missed, nothing twice.
The stream follows the log itself (a PostgreSQL notification, else a short poll), so it sees cycles
run by ``oneiros worker`` processes anywhere.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterable
from itertools import islice
from typing import Any

import msgspec

from oneiros.events._content import DreamReport
from oneiros.events._staging import golem_of_stream
from oneiros.events._types import DreamComplete, DreamPhase, DreamStart, GenerationRecorded, ModeChanged
from oneiros.projections._runner import RunnerSettings
from oneiros.server._auth import Principal
from oneiros.settings._phases import PHASES
from oneiros.store._store import EventStore, LogSubscription, Recorded, record_row

__all__ = ["BARDO_EVENTS", "RAW_EVENT", "LogTail", "StreamFilter", "sse_messages", "stream"]

BARDO_EVENTS = ("mode_change", "dream_progress", "dream_complete")
RAW_EVENT = "log_event"
_BATCH = 500


def _stream_name(phase: str) -> str:
    """Bardo's name for ``phase`` on the stream ('onset'|'nrem'|'rem'|'integration'|'return'),
    from the phase table; a phase of another table keeps its own name."""
    spec = PHASES.get(phase)
    return spec.stream if spec is not None else phase


class StreamFilter(msgspec.Struct, frozen=True, kw_only=True):
    """Which events one client gets."""

    golems: tuple[str, ...] = ()
    """Only these golems (empty: every golem the token sees)."""
    raw: bool = False
    """Also every log event as ``log_event``."""
    types: tuple[str, ...] = ()
    """Raw events of these types only (empty: all)."""


class _Cycle(msgspec.Struct, kw_only=True):
    number: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    complete: dict[str, Any] | None = None
    """The cycle's dream_complete, held from its DreamComplete until its last phase has begun."""
    returned: bool = False
    """Whether a phase began after DreamComplete (the return phase): its DreamReport sends the held
    dream_complete."""


# What a stream reads of a golem's history before its first position: what the cycle counts and
# where its dream_complete stands. A long-lived golem's stream is mostly episodes, skipped here.
_HISTORY = (DreamStart, GenerationRecorded, DreamComplete, DreamPhase, DreamReport, ModeChanged)


class _Progress:
    """Per golem: which cycle it is in and what it has spent, read from the log as of the first
    event this stream sends for it, then moved by every event after."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.cycles: dict[str, _Cycle] = {}

    def of(self, golem_id: str, position: int) -> _Cycle:
        cycle = self.cycles.get(golem_id)
        if cycle is None:
            cycle = self.cycles[golem_id] = _Cycle()
            for record in self.store.read_stream(golem_id, until=position - 1, types=_HISTORY):
                _bardo(record, cycle)
        return cycle


def _bardo(record: Recorded, cycle: _Cycle) -> tuple[str, dict[str, Any]] | None:
    """The Bardo message ``record`` makes, if any, once it has moved ``cycle``.

    The log has a cycle's DreamComplete before its return phase's DreamPhase (the machine completes
    the cycle, then returns), but Bardo's stream ends a cycle with dream_complete after its last
    progress: so dream_complete is held and sent at the return phase's DreamReport, the cycle's
    first event after its last phase began that has no message of its own. Each position stays
    one message."""
    golem = record.meta.golem_id
    match record.event:
        case GenerationRecorded(tokens_in=tokens_in, tokens_out=tokens_out, cost_usd=usd):
            cycle.tokens += tokens_in + tokens_out
            cycle.cost_usd += usd
        case DreamStart():
            cycle.number += 1
            cycle.tokens, cycle.cost_usd, cycle.complete, cycle.returned = 0, 0.0, None, False
        case ModeChanged(to_mode=mode):
            cycle.complete = None  # a return phase that wrote no report: the cycle ends unannounced
            return "mode_change", {"golem_id": golem, "mode": mode.lower(), "tick": record.version}
        case DreamPhase(cycle_id=cycle_id, phase=phase):
            cycle.returned = cycle.complete is not None
            data = {
                "golem_id": golem,
                "cycle_id": cycle_id,
                "phase": _stream_name(phase),
                "cycleNumber": cycle.number,
                "budgetSpent": cycle.tokens,
            }
            return "dream_progress", data
        case DreamComplete() as complete:
            cycle.complete = {
                "golem_id": golem,
                "cycle_id": complete.cycle_id,
                "cycleNumber": cycle.number,
                "hypothesesGenerated": complete.heuristics_proposed + complete.counterfactuals_generated,
                "insightsFound": complete.insights_crystallized,
                "costUsdc": round(cycle.cost_usd, 8),
            }
        case DreamReport() if cycle.complete is not None and cycle.returned:
            held, cycle.complete = cycle.complete, None
            return "dream_complete", held
    return None


def _message(name: str, data: dict[str, Any], position: int) -> bytes:
    return f"event: {name}\nid: {position}\n".encode() + b"data: " + msgspec.json.encode(data) + b"\n\n"


def sse_messages(
    records: Iterable[Recorded], who: Principal, chosen: StreamFilter, progress: _Progress
) -> Iterable[bytes]:
    """The messages a batch of log records makes for one client: at most one a position, with the
    position as its id, so a client resuming after an id repeats nothing and misses nothing.

    With ``raw``, a position makes its Bardo message if it has one, carrying the log event's row
    in ``log_event``, else the row as a ``log_event`` message."""
    for record in records:
        golem = golem_of_stream(record.meta.golem_id)
        if not who.sees(golem) or (chosen.golems and golem not in chosen.golems):
            continue
        row = None
        if chosen.raw and (not chosen.types or record.event.type_name in chosen.types):
            row = record_row(record)
        bardo = None
        if golem == record.meta.golem_id:  # the golem's own stream, not a side stream
            bardo = _bardo(record, progress.of(golem, record.position))
        if bardo is not None:
            name, data = bardo
            yield _message(name, data if row is None else {**data, RAW_EVENT: row}, record.position)
        elif row is not None:
            yield _message(RAW_EVENT, row, record.position)


class LogTail:
    """One thread per server that watches the log head and wakes every stream when it grows."""

    def __init__(self, store: EventStore, settings: RunnerSettings | None = None) -> None:
        self.store = store
        self.settings = settings or RunnerSettings()
        self._generation = 0
        self._cond: asyncio.Condition | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._events: LogSubscription | None = None

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._cond = asyncio.Condition()
        self._thread = threading.Thread(target=self._watch, name="oneiros-sse-tail", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._events is not None:
            self._events.stop()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def generation(self) -> int:
        return self._generation

    def _watch(self) -> None:
        # The store's subscription: LISTEN/NOTIFY on PostgreSQL, polling on SQLite.
        with self.store.subscribe(poll_interval=self.settings.poll_interval_s) as events:
            self._events = events
            for _record in events:
                if self._stop.is_set():
                    break
                if self._loop is not None:
                    self._loop.call_soon_threadsafe(lambda: asyncio.ensure_future(self._bump()))

    async def _bump(self) -> None:
        assert self._cond is not None
        async with self._cond:
            self._generation += 1
            self._cond.notify_all()

    async def wait(self, seen: int, timeout: float) -> bool:
        """Until the log grew after generation ``seen`` (True) or ``timeout`` passed (False)."""
        assert self._cond is not None
        async with self._cond:
            try:
                await asyncio.wait_for(self._cond.wait_for(lambda: self._generation > seen), timeout)
            except TimeoutError:
                return False
        return True


def _read(store: EventStore, after: int) -> list[Recorded]:
    return list(islice(store.read_all(after=after, page=_BATCH), _BATCH))


async def stream(  # noqa: PLR0913 - the stream's reader, its client and where it starts, keyword-only
    store: EventStore, tail: LogTail, who: Principal, chosen: StreamFilter, *, after: int, heartbeat: float
) -> AsyncIterator[bytes]:
    """Messages from position ``after`` on, for as long as the client stays."""
    progress = _Progress(store)
    last = after
    yield b": oneiros events\n\n"
    while True:
        seen = tail.generation
        records = await asyncio.to_thread(_read, store, last)
        if records:
            for message in await asyncio.to_thread(lambda r: list(sse_messages(r, who, chosen, progress)), records):
                yield message
            last = records[-1].position
            continue
        if not await tail.wait(seen, heartbeat):
            yield b": keep-alive\n\n"
