"""History files: a log written out as JSON lines, one stored event a line, exactly as stored.

They back the golden replay tests (``tests/histories/``) and let users move a log between stores.
An export keeps each event's state as the stored JSON, so an old schema version stays old in the
file and is upcast when read, the same as from a database; an import appends through the store
like any other write, at the current schema versions.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from oneiros._errors import CorruptEvent, EventError, StreamConflict
from oneiros.events._codec import decode_event
from oneiros.events._types import Event, EventMeta
from oneiros.store._store import EventStore, StreamAppend

__all__ = ["HistoryLine", "export_history", "import_history"]


class HistoryLine(msgspec.Struct, frozen=True):
    position: int
    golem_id: str
    version: int
    topic: str
    state: msgspec.Raw


def export_history(store: EventStore, path: str | Path) -> int:
    """Write the whole log to ``path``; returns the number of events written."""
    encoder = msgspec.json.Encoder()
    count = 0
    with open(path, "wb") as out:
        for position, golem_id, version, topic, state in store.read_stored():
            out.write(encoder.encode(HistoryLine(position, golem_id, version, topic, msgspec.Raw(state))))
            out.write(b"\n")
            count += 1
    return count


def _read_lines(path: Path) -> list[tuple[HistoryLine, EventMeta, Event]]:
    decoder = msgspec.json.Decoder(HistoryLine)
    lines: list[tuple[HistoryLine, EventMeta, Event]] = []
    for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = decoder.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise CorruptEvent(None, f"{path.name}:{number}", str(exc)) from None
        # Decode now so a bad history is refused before anything is written.
        meta, event = decode_event(line.topic, bytes(line.state), line.position)
        lines.append((line, meta, event))
    return lines


def import_history(store: EventStore, path: str | Path) -> int:
    """Append every event in ``path`` to ``store`` in one transaction, keeping stream versions and
    the log's order. Events are stored at their current schema version (older ones upcast).

    The whole file is checked first, and the store refuses versions it already holds, so a bad or
    repeated import writes nothing.
    """
    lines = _read_lines(Path(path))
    # One StreamAppend per run of consecutive lines of one stream, so the log keeps its order.
    appends: list[StreamAppend] = []
    run: list[tuple[EventMeta, Event]] = []
    for index, (line, meta, event) in enumerate(lines):
        run.append((meta, event))
        following = lines[index + 1][0] if index + 1 < len(lines) else None
        if following is None or following.golem_id != line.golem_id or following.version != line.version + 1:
            appends.append(StreamAppend(line.golem_id, line.version - len(run), run))
            run = []
    try:
        store.append_streams(appends)
    except StreamConflict:
        raise EventError(f"history {Path(path).name} overlaps events already in the store") from None
    return len(lines)
