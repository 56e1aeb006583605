"""History files: a log written out as JSON lines, one stored event a line, exactly as stored.

They back the golden replay tests (``tests/histories/``) and let users move a log between stores.
The event's state is kept as the stored JSON, so an old schema version stays old in the file and
is upcast when read, the same as from a database.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import msgspec
from eventsourcing.persistence import IntegrityError, StoredEvent

from oneiros._errors import CorruptEvent, EventError
from oneiros.events._codec import decode_event
from oneiros.events._store import EventStore

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
        after = 0
        while rows := store.backend.rows(after, 5_000, None, ()):
            for position, golem_id, version, topic, state in rows:
                out.write(encoder.encode(HistoryLine(position, golem_id, version, topic, msgspec.Raw(state))))
                out.write(b"\n")
                count += 1
            after = rows[-1][0]
    return count


def _read_lines(path: Path) -> list[HistoryLine]:
    decoder = msgspec.json.Decoder(HistoryLine)
    lines: list[HistoryLine] = []
    for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = decoder.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise CorruptEvent(None, f"{path.name}:{number}", str(exc)) from None
        # Decode now so a bad history is refused before anything is written.
        decode_event(line.topic, bytes(line.state), line.position)
        lines.append(line)
    return lines


def import_history(store: EventStore, path: str | Path) -> int:
    """Append every event in ``path`` to ``store`` in one transaction, keeping stream versions.

    The whole file is checked first, and the store refuses versions it already holds, so a bad or
    repeated import writes nothing.
    """
    lines = _read_lines(Path(path))
    stored: Iterable[StoredEvent] = [
        StoredEvent(line.golem_id, line.version, line.topic, bytes(line.state)) for line in lines
    ]
    try:
        store.backend.insert(list(stored))
    except IntegrityError:
        raise EventError(f"history {Path(path).name} overlaps events already in the store") from None
    return len(lines)
