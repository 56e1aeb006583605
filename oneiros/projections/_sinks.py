"""Output sinks: where dream results go once the log says so, each a rebuildable projection.

* ``beliefs``: Bumblebee dream beliefs (confidence 0.35, source ``dream:<id>``), withdrawn
  when their staged entry is refuted, rejected, displaced, expired or its promotion revoked;
* ``noise``: ``[dream]``-tagged fragments for the waking noise buffer, at most 2 a cycle;
* ``observations``: OpenSeed observations with RED / YLW / GRN priority: the facts a dream
  drew from the episodes (``DreamObservation``), and the news that a hypothesis was validated or
  revoked; never a hypothesis itself (those wait in staging). Its deep sleep every 10th dream
  prunes, and sets the priorities (the open hypotheses held most confidently) and the diary;
* ``memory``: Ethos MEMORY.md consolidation. Only a promoted entry (by the sweep or by
  review) adds a line, only a revocation (a review, with who and why) drops one, each in a new
  version; every version is kept for diff and rollback.

Sinks write rows, never files: replay has no side effects. :func:`write_memory_file` puts a
version on disk when someone asks.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import msgspec

from oneiros.events._content import DreamFragments, StagedKind
from oneiros.events._observations import DreamObservation, Priority
from oneiros.events._staging import (
    EntryDisplaced,
    EntryExpired,
    EntryPromoted,
    EntryRefuted,
    EntryReviewed,
    EntryStaged,
    MemoryRolledBack,
)
from oneiros.events._types import DreamComplete, Event
from oneiros.projections._db import ProjectionDB
from oneiros.projections._runner import Projection, Rows
from oneiros.store._store import Recorded

__all__ = [
    "Belief",
    "BeliefSink",
    "MemorySink",
    "MemoryVersion",
    "NoiseFragment",
    "NoiseSink",
    "Observation",
    "ObservationSink",
    "SinkSettings",
    "beliefs",
    "memory_diff",
    "memory_version",
    "memory_versions",
    "noise_fragments",
    "observations",
    "sink_projections",
    "write_memory_file",
]

_WITHDRAWN = (EntryRefuted, EntryDisplaced, EntryExpired)


class SinkSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Which sinks run and how."""

    enabled: tuple[str, ...] = ("beliefs", "noise", "observations", "memory")
    belief_confidence_pct: int = 35
    """Confidence of a dream-derived belief (Bumblebee, ``belief_confidence: 0.35``)."""
    belief_kinds: tuple[StagedKind, ...] = ("novel_insight", "confirmed_pattern")
    """Staged kinds that become beliefs: Bumblebee's THREAD is the cycle's connecting insight."""
    max_noise_fragments: int = 2
    """``[dream]`` fragments per cycle (Bumblebee, ``max_noise_fragments: 2``)."""
    deep_sleep_every: int = 10
    """Dreams between deep sleeps (OpenSeed, ``DEEP_SLEEP_EVERY``)."""
    green_ttl_hours: int = 48
    """GRN observations older than this are pruned at deep sleep (OpenSeed)."""
    priorities: int = 5
    """Top priorities rewritten at deep sleep (OpenSeed: "top 3-5 priorities")."""


class Belief(msgspec.Struct, kw_only=True):
    entry_id: str
    content: str
    confidence_pct: int
    source: str
    category: str = "dream_insight"
    validated: bool = False


class BeliefSink:
    name = "beliefs"
    types: tuple[type[Event], ...] = (EntryStaged, EntryPromoted, EntryReviewed, *_WITHDRAWN)

    def __init__(self, settings: SinkSettings) -> None:
        self.settings = settings

    def apply(self, record: Recorded, rows: Rows) -> None:
        match record.event:
            case EntryStaged(kind=kind, golem_id=golem, entry_id=entry_id, text=text, lineage=lineage):
                if kind in self.settings.belief_kinds:
                    belief = Belief(
                        entry_id=entry_id,
                        content=text,
                        confidence_pct=self.settings.belief_confidence_pct,
                        source=f"dream:{lineage.cycle_id}",
                    )
                    rows.put("belief", f"{golem}/{entry_id}", belief)
            case EntryPromoted(golem_id=golem, entry_id=entry_id, confidence_pct=pct):
                key = f"{golem}/{entry_id}"
                if (found := rows.get("belief", key, Belief)) is not None:
                    found.validated, found.confidence_pct = True, pct
                    rows.put("belief", key, found)
            case (
                EntryRefuted()
                | EntryDisplaced()
                | EntryExpired()
                | EntryReviewed(status="rejected" | "stale" | "revoked") as gone
            ):
                key = f"{gone.golem_id}/{gone.entry_id}"
                if rows.get("belief", key, Belief) is not None:
                    rows.delete("belief", key)


class NoiseFragment(msgspec.Struct, kw_only=True):
    cycle_id: str
    text: str


class NoiseSink:
    """Rows ``fragment/<golem>/<position>/<n>``: Bumblebee's FRAGMENTS, ``[dream]``-tagged, at most
    ``max_noise_fragments`` a cycle."""

    name = "noise"
    types: tuple[type[Event], ...] = (DreamFragments,)

    def __init__(self, settings: SinkSettings) -> None:
        self.settings = settings

    def apply(self, record: Recorded, rows: Rows) -> None:
        event = record.event
        assert isinstance(event, DreamFragments)
        count = rows.get("count", event.cycle_id, _Count) or _Count()
        for n, text in enumerate(event.fragments):
            if count.n >= self.settings.max_noise_fragments:
                break
            count.n += 1
            key = f"{record.meta.golem_id}/{record.position:012d}/{n}"
            rows.put("fragment", key, NoiseFragment(cycle_id=event.cycle_id, text=f"[dream] {text}"))
        rows.put("count", event.cycle_id, count)


class _Count(msgspec.Struct, kw_only=True):
    n: int = 0


def _minute(when: datetime) -> str:
    """``when`` as ``%Y-%m-%d %H:%M`` (isoformat's first 16 characters: a third of strftime's cost)."""
    return when.isoformat(" ", "minutes")[:16]


class Observation(msgspec.Struct, kw_only=True):
    priority: Priority
    text: str
    time: str
    entry_id: str = ""


class _ObserverState(msgspec.Struct, kw_only=True):
    dreams: int = 0
    active: dict[str, int] = msgspec.field(default_factory=dict)
    """Active entry id -> its observation's key, for supersession."""
    texts: dict[str, str] = msgspec.field(default_factory=dict)
    confidence: dict[str, int] = msgspec.field(default_factory=dict)
    observation_keys: list[str] = msgspec.field(default_factory=list)


class ObservationSink:
    """Rows ``observation/<golem>/<position>``; at every 10th dream, ``diary/<golem>/<n>`` and
    ``priorities/<golem>``, and stale observations deleted."""

    name = "observations"
    layout = 1
    """1: rows are the dreams' facts (DreamObservation) and validations, no longer every staged entry."""
    types: tuple[type[Event], ...] = (
        DreamObservation,
        EntryStaged,
        EntryPromoted,
        EntryRefuted,
        DreamComplete,
        *_WITHDRAWN,
        EntryReviewed,
    )

    def __init__(self, settings: SinkSettings) -> None:
        self.settings = settings

    def apply(self, record: Recorded, rows: Rows) -> None:
        event = record.event
        golem = getattr(event, "golem_id", None) or record.meta.golem_id
        state = rows.get("state", golem, _ObserverState) or _ObserverState()
        key = f"{golem}/{record.position:012d}"
        match event:
            case DreamObservation(text=text, priority=priority):
                rows.put("observation", key, Observation(priority=priority, text=text, time=_minute(record.meta.time)))
                state.observation_keys.append(key)
            case EntryStaged(entry_id=entry_id, text=text, confidence_pct=pct):
                # A hypothesis, not an observation: kept for the priorities and for the news of its
                # validation or revocation.
                state.active[entry_id] = record.position
                state.texts[entry_id] = text
                state.confidence[entry_id] = pct
            case EntryPromoted(entry_id=entry_id) | EntryReviewed(entry_id=entry_id, status="revoked"):
                # A promotion and its revocation are both news the agent reads, the revocation with its reason.
                said = "revoked" if isinstance(event, EntryReviewed) else "validated"
                why = f" ({event.who}: {event.why})" if isinstance(event, EntryReviewed) else ""
                text = f"{said}: {state.texts.get(entry_id, entry_id)}{why}"
                stamp = _minute(record.meta.time)
                rows.put("observation", key, Observation(priority="RED", text=text, time=stamp, entry_id=entry_id))
                state.observation_keys.append(key)
                self._resolve(state, entry_id)
            case DreamComplete():
                state.dreams += 1
                if state.dreams % self.settings.deep_sleep_every == 0:
                    self._deep_sleep(golem, state, record, rows)
            case EntryReviewed(status="proposed" | "reinforced"):
                pass
            case EntryRefuted() | EntryDisplaced() | EntryExpired() | EntryReviewed() as resolved:
                self._resolve(state, resolved.entry_id)
        rows.put("state", golem, state)

    @staticmethod
    def _resolve(state: _ObserverState, entry_id: str) -> None:
        state.active.pop(entry_id, None)
        state.confidence.pop(entry_id, None)

    def _deep_sleep(self, golem: str, state: _ObserverState, record: Recorded, rows: Rows) -> None:
        now = record.meta.time
        horizon = now - timedelta(hours=self.settings.green_ttl_hours)
        kept: list[str] = []
        pruned = 0
        for key in state.observation_keys:
            obs = rows.get("observation", key, Observation)
            if obs is None:
                continue
            old_green = obs.priority == "GRN" and obs.time < horizon.strftime("%Y-%m-%d %H:%M")
            superseded = obs.priority == "YLW" and bool(obs.entry_id) and obs.entry_id not in state.active
            if old_green or superseded:
                rows.delete("observation", key)
                pruned += 1
            else:
                kept.append(key)
        state.observation_keys = kept
        top = sorted(state.active, key=lambda e: (-state.confidence.get(e, 0), state.active[e]))[
            : self.settings.priorities
        ]
        rows.put("priorities", golem, _Priorities(items=[state.texts[e] for e in top], at=now.isoformat()))
        diary = (
            f"Deep sleep after dream {state.dreams}: pruned {pruned} observations, kept {len(kept)}, "
            f"{len(state.active)} hypotheses open."
        )
        rows.put("diary", f"{golem}/{state.dreams:06d}", _Diary(text=diary, at=now.isoformat()))


class _Priorities(msgspec.Struct, kw_only=True):
    items: list[str]
    at: str


class _Diary(msgspec.Struct, kw_only=True):
    text: str
    at: str


class MemoryVersion(msgspec.Struct, kw_only=True):
    version: int
    content: str
    reason: str
    position: int


class _MemoryHead(msgspec.Struct, kw_only=True):
    version: int = 0


class MemorySink:
    """Rows ``version/<golem>/<n>`` (every MEMORY.md version) and ``head/<golem>``."""

    name = "memory"
    types: tuple[type[Event], ...] = (EntryStaged, EntryPromoted, EntryReviewed, MemoryRolledBack)
    header = "# MEMORY\n\n## Dream-validated knowledge\n"

    def __init__(self, settings: SinkSettings) -> None:
        self.settings = settings

    def apply(self, record: Recorded, rows: Rows) -> None:
        match record.event:
            case EntryStaged(entry_id=entry_id, text=text, lineage=lineage):
                # The text is needed when the entry is promoted; the promotion event does not carry it.
                rows.put("text", entry_id, _Text(text=text, cycle_id=lineage.cycle_id))
            case EntryPromoted(golem_id=golem, entry_id=entry_id, confidence_pct=pct, by=by):
                added = f"{_line_of(rows, entry_id)}, confidence {pct / 100:.2f}, by {by})\n"
                self._next_version(rows, record, golem, lambda content: content + added, f"promoted {entry_id}")
            case EntryReviewed(golem_id=golem, entry_id=entry_id, status="revoked", who=who, why=why):
                line = _line_of(rows, entry_id)
                reason = f"revoked {entry_id} by {who}: {why}"
                self._next_version(rows, record, golem, lambda content: _without_line(content, line), reason)
            case MemoryRolledBack(golem_id=golem, to_version=version, who=who, why=why):
                old = rows.get("version", f"{golem}/{version:06d}", MemoryVersion)
                reason = f"rolled back to v{version} by {who}: {why}"
                self._next_version(rows, record, golem, lambda content: old.content if old else content, reason)

    def _next_version(
        self, rows: Rows, record: Recorded, golem: str, change: Callable[[str], str], reason: str
    ) -> None:
        """Write the golem's next MEMORY.md version: ``change`` of its current content."""
        head = rows.get("head", golem, _MemoryHead) or _MemoryHead()
        current = rows.get("version", f"{golem}/{head.version:06d}", MemoryVersion)
        content = change(current.content if current else self.header)
        head.version += 1
        rows.put(
            "version",
            f"{golem}/{head.version:06d}",
            MemoryVersion(version=head.version, content=content, reason=reason, position=record.position),
        )
        rows.put("head", golem, head)


class _Text(msgspec.Struct, kw_only=True):
    text: str
    cycle_id: str


def _line_of(rows: Rows, entry_id: str) -> str:
    """How an entry's MEMORY.md line begins, up to its confidence: ``- TEXT (dream:CYCLE``."""
    text = rows.get("text", entry_id, _Text)
    return f"- {text.text} (dream:{text.cycle_id}" if text else f"- {entry_id} (dream"


def _without_line(content: str, start: str) -> str:
    """``content`` without the last line that begins ``start, confidence`` (a rollback may have
    taken it out already: then nothing changes, and the version still records the revocation)."""
    lines = content.splitlines(keepends=True)
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].startswith(start + ", confidence "):
            return "".join(lines[:index] + lines[index + 1 :])
    return content


def sink_projections(settings: SinkSettings | None = None) -> list[Projection]:
    settings = settings or SinkSettings()
    made: dict[str, Projection] = {
        "beliefs": BeliefSink(settings),
        "noise": NoiseSink(settings),
        "observations": ObservationSink(settings),
        "memory": MemorySink(settings),
    }
    return [made[name] for name in settings.enabled if name in made]


def memory_version(db: ProjectionDB, golem_id: str, version: int | None = None) -> MemoryVersion | None:
    """MEMORY.md of ``golem_id`` at ``version`` (the newest if None)."""
    if version is None:
        data = db.get("memory", "head", golem_id)
        if data is None:
            return None
        version = msgspec.json.decode(data, type=_MemoryHead).version
    data = db.get("memory", "version", f"{golem_id}/{version:06d}")
    return None if data is None else msgspec.json.decode(data, type=MemoryVersion)


def memory_diff(db: ProjectionDB, golem_id: str, old: int, new: int) -> str:
    """A unified diff of two MEMORY.md versions."""
    a, b = memory_version(db, golem_id, old), memory_version(db, golem_id, new)
    return "".join(
        difflib.unified_diff(
            (a.content if a else "").splitlines(keepends=True),
            (b.content if b else "").splitlines(keepends=True),
            f"MEMORY.md v{old}",
            f"MEMORY.md v{new}",
        )
    )


def write_memory_file(db: ProjectionDB, golem_id: str, directory: str | Path) -> Path | None:
    """Write the newest MEMORY.md to ``directory``, keeping the one it replaces as MEMORY.md.v<N>."""
    newest = memory_version(db, golem_id)
    if newest is None:
        return None
    target = Path(directory) / "MEMORY.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    previous = memory_version(db, golem_id, newest.version - 1) if newest.version > 1 else None
    if previous is not None:
        (target.parent / f"MEMORY.md.v{previous.version}").write_text(previous.content)
    target.write_text(newest.content)
    return target


def beliefs(db: ProjectionDB, golem_id: str) -> list[Belief]:
    """The golem's dream beliefs, oldest entry first."""
    return [msgspec.json.decode(d, type=Belief) for _k, _key, d in db.scan("beliefs", "belief", f"{golem_id}/")]


def noise_fragments(db: ProjectionDB, golem_id: str) -> list[NoiseFragment]:
    """The golem's ``[dream]`` noise fragments, in log order."""
    return [msgspec.json.decode(d, type=NoiseFragment) for _k, _key, d in db.scan("noise", "fragment", f"{golem_id}/")]


def observations(db: ProjectionDB, golem_id: str) -> list[Observation]:
    """The golem's observations still kept, in log order."""
    return [
        msgspec.json.decode(d, type=Observation)
        for _k, _key, d in db.scan("observations", "observation", f"{golem_id}/")
    ]


def memory_versions(db: ProjectionDB, golem_id: str) -> list[MemoryVersion]:
    """Every MEMORY.md version of the golem, oldest first."""
    return [msgspec.json.decode(d, type=MemoryVersion) for _k, _key, d in db.scan("memory", "version", f"{golem_id}/")]
