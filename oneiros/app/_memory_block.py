"""The memory block: what a golem knows, rendered as a prompt section within a token budget.

First the user's profile (core memory: standing instructions, preferences, who they are), then
what it holds for sure (the newest MEMORY.md's promoted lines), then what recall ranks for the
query, results and related dreams in the one ranking, each dream marked a hypothesis. Every line
names its date and the turns it stands for, so the model (and whoever reads its answer) can go
back to them. A line is whole or absent: one that does not fit is left out, and a shorter one
further down may still take the room. The block is a read: recall runs with ``record=False``, so
asking for it never counts toward recall-driven promotion.
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

import msgspec

from oneiros._errors import InputError, InvalidSetting
from oneiros.app._profile import profile_items
from oneiros.projections._db import ProjectionDB
from oneiros.projections._index import journal_entries
from oneiros.projections._recall import RecallItem, RecallResult, Standing, episode_refs, episode_times, recall_golem
from oneiros.projections._sinks import memory_version
from oneiros.projections._staging import StagedEntry
from oneiros.settings._memory_block import MemoryBlockSettings

if TYPE_CHECKING:
    from oneiros.app._core import Core


__all__ = [
    "MemoryBlock",
    "MemoryBlockItem",
    "Tokenizer",
    "memory_block",
    "render_block",
    "tokenizer",
    "turn_times",
    "within_budget",
]

Tokenizer = Callable[[str], int]
"""What counts a text's tokens."""

Section = Literal["profile", "memory", "recall"]

PROFILE_HEADING = "## Who I work for (profile)"
MEMORY_HEADING = "## What I know (MEMORY.md)"
_SPACE = re.compile(r"\s+")
_CHARS = re.compile(r"chars/([1-9][0-9]*)")


class MemoryBlockItem(msgspec.Struct, frozen=True, kw_only=True):
    """One line of the block and what it stands for. ``line`` quotes data, never an instruction."""

    section: Section
    """``profile`` (the user's profile), ``memory`` (a MEMORY.md line) or ``recall`` (ranked for the query)."""
    kind: str
    """``memory``, or the recall item's kind: episode, observation, belief, insight, dream."""
    ref: str
    """Its id: ``MEMORY.md:v<version>:<line>``, a tick, a dream observation's event id, an entry id."""
    line: str
    """The line as the block shows it."""
    standing: Standing = "fact"
    """``fact``, or ``dream``: a hypothesis, shown as one."""
    rank: int = 0
    """Its place in recall's ranking (0 for a MEMORY.md line)."""
    date: str | None = None
    """When it happened (an episode), was observed, or was dreamt (a dream's output): ``YYYY-MM-DD``."""
    entry_id: str = ""
    """The staged entry a MEMORY.md line, belief, insight or dream came from."""
    source_ticks: tuple[int, ...] = ()
    """The turns (episodes) it stands for."""
    source_refs: tuple[str, ...] = ()
    """Those turns' own ids, where they have one."""


class MemoryBlock(msgspec.Struct, frozen=True, kw_only=True):
    """The block for one golem and query, as every interface returns it."""

    golem_id: str
    query: str | None
    text: str
    """The prompt section: whole lines, at most ``budget_tokens`` tokens."""
    tokens: int
    """``text``'s tokens, as ``tokenizer`` counts them."""
    budget_tokens: int
    tokenizer: str
    items: list[MemoryBlockItem]
    """The lines ``text`` holds, in its order (its headings aside)."""
    left_out: int = 0
    """Candidate lines that did not fit the budget."""


def tokenizer(spec: str) -> Tokenizer:
    """The counter ``spec`` names: ``chars/N`` or ``module:function``."""
    if (chars := _CHARS.fullmatch(spec)) is not None:
        per = int(chars.group(1))
        return lambda text: math.ceil(len(text) / per)
    module, sep, name = spec.partition(":")
    expected = "chars/N (N >= 1) or module:function, a function counting a text's tokens"
    if not sep or not module or not name:
        raise InvalidSetting("memory_block.tokenizer", spec, expected)
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise InvalidSetting("memory_block.tokenizer", spec, f"{expected} ({exc})") from None
    if not callable(found):
        raise InvalidSetting("memory_block.tokenizer", spec, expected)
    counter: Tokenizer = found
    return counter


def render_block(  # noqa: PLR0913 - keyword-only: the budget, and the tokenizer that counts it
    golem_id: str,
    query: str | None,
    candidates: Sequence[MemoryBlockItem],
    *,
    budget_tokens: int,
    count: Tokenizer,
    tokenizer_name: str = "chars/4",
) -> MemoryBlock:
    """The block of ``candidates`` (the profile's lines, MEMORY.md's, then recall's, each one line) that fits
    ``budget_tokens``: each line in order if the whole text with it still fits, its section's
    heading coming in with the section's first line."""
    headings: dict[Section, str] = {
        "profile": PROFILE_HEADING,
        "memory": MEMORY_HEADING,
        "recall": _recall_heading(query),
    }
    lines: list[str] = []
    kept: list[MemoryBlockItem] = []
    opened: set[Section] = set()
    for item in candidates:
        more = [item.line] if item.section in opened else [headings[item.section], item.line]
        if count("\n".join([*lines, *more])) <= budget_tokens:
            lines.extend(more)
            opened.add(item.section)
            kept.append(item)
    text = "\n".join(lines)
    return MemoryBlock(
        golem_id=golem_id,
        query=query,
        text=text,
        tokens=count(text) if text else 0,
        budget_tokens=budget_tokens,
        tokenizer=tokenizer_name,
        items=kept,
        left_out=len(candidates) - len(kept),
    )


def memory_block(  # noqa: PLR0913 - a use case's optional limits, keyword-only, each defaulted
    core: Core,
    golem_id: str,
    query: str | None = None,
    *,
    budget_tokens: int | None = None,
    limit: int | None = None,
    settings: MemoryBlockSettings | None = None,
) -> MemoryBlock:
    """The golem's memory block for ``query`` (MEMORY.md alone if None), within ``budget_tokens``
    and of recall's first ``limit`` results and related dreams (the settings' if None). Writes nothing:
    recall runs unrecorded. The caller's use case brings the read models up and checks the golem."""
    settings = settings or core.config.memory_block
    budget = settings.budget_tokens if budget_tokens is None else budget_tokens
    if budget < 1:
        raise InputError(f"a memory block's budget is at least 1 token, not {budget}")
    if limit is not None and limit < 1:
        raise InputError(f"a memory block's recall limit is at least 1, not {limit}")
    count = tokenizer(settings.tokenizer)
    ranked: list[RecallItem] = []
    db = core.projections.db
    if query is not None and query.strip():
        recall = core.projections.settings.recall
        limit = settings.limit if limit is None else limit
        ranked = recall_golem(db, golem_id, query, limit, settings=recall).ranking()
    else:
        query = None
    entries = {e.entry_id: e for e in core.staged(golem_id)}
    memory = _memory_lines(db, golem_id, entries)
    from_memory = {i.entry_id for i in memory if i.entry_id}
    # The profile is shown whole first: a profile entry recall ranks is not shown twice.
    recalled = [
        i
        for i in ranked
        if i.kind not in ("memory", "profile")
        and not (i.kind in ("belief", "insight") and i.ref in from_memory)
        and (i.kind != "dream" or settings.hypotheses)
    ]
    cycles = {e.cycle_id for e in entries.values()}
    dreamt = {j.cycle_id: j.started_at.date().isoformat() for j in journal_entries(db, sorted(cycles))}
    refs = episode_refs(db, golem_id, (t for i in memory for t in i.source_ticks))
    candidates = [
        *_profile_lines(db, golem_id),
        *(_dated(i, dreamt, entries, refs) for i in memory),
        *(_recalled(i, dreamt, entries) for i in recalled),
    ]
    return render_block(
        golem_id, query, candidates, budget_tokens=budget, count=count, tokenizer_name=settings.tokenizer
    )


def within_budget(result: RecallResult, budget_tokens: int, count: Tokenizer) -> RecallResult:
    """``result`` cut to the longest prefix of its ranking whose texts, one a line, fit
    ``budget_tokens``: the first item that does not fit ends it, so what is kept is still the
    ranking's top. Each list keeps its items of that prefix, in order."""
    kept: list[str] = []
    refs: set[tuple[str, str]] = set()
    for item in result.ranking():
        if count("\n".join([*kept, _one_line(item.text)])) > budget_tokens:
            break
        kept.append(_one_line(item.text))
        refs.add((item.kind, item.ref))
    return msgspec.structs.replace(
        result,
        results=[i for i in result.results if (i.kind, i.ref) in refs],
        related_dreams=[i for i in result.related_dreams if (i.kind, i.ref) in refs],
    )


def turn_times(db: ProjectionDB, golem_id: str, items: Sequence[RecallItem]) -> dict[int, str]:
    """The times of the turns ``items`` stand for (ISO 8601), by tick, where they have one."""
    return episode_times(db, golem_id, (t for i in items for t in i.source_ticks))


def _recall_heading(query: str | None) -> str:
    return f"## Recalled for: {_one_line(query or '')}"


def _one_line(text: str) -> str:
    """Text on one line: a newline in a quoted turn would start a line of its own."""
    return _SPACE.sub(" ", text).strip()


def _source(ticks: Sequence[int], refs: Sequence[str]) -> str:
    if refs:
        return ("turn " if len(refs) == 1 else "turns ") + ", ".join(refs)
    if ticks:
        return ("tick " if len(ticks) == 1 else "ticks ") + ", ".join(str(t) for t in ticks)
    return ""


def _profile_lines(db: ProjectionDB, golem_id: str) -> list[MemoryBlockItem]:
    """The profile's entries in force, each a line with the day it was said and its turns."""
    return [
        MemoryBlockItem(
            section="profile",
            kind="profile",
            ref=item.ref,
            line=_line(item.text, day, _source(item.source_ticks, item.source_refs)),
            date=day,
            source_ticks=item.source_ticks,
            source_refs=item.source_refs,
        )
        for item in profile_items(db, golem_id)
        for day in [item.since[:10] if item.since else None]
    ]


def _line(text: str, *notes: str | None) -> str:
    said = [n for n in notes if n]
    return f"- {_one_line(text)}" + (f" ({'; '.join(said)})" if said else "")


def _memory_lines(db: ProjectionDB, golem_id: str, entries: dict[str, StagedEntry]) -> list[MemoryBlockItem]:
    """The newest MEMORY.md's promoted lines, each matched to the entry it was promoted from (its
    line begins ``- TEXT (dream:CYCLE, confidence``, as the memory sink writes it)."""
    newest = memory_version(db, golem_id)
    if newest is None:
        return []
    by_start = {f"- {e.text} (dream:{e.cycle_id}, confidence ": e for e in entries.values()}
    out: list[MemoryBlockItem] = []
    for n, raw in enumerate(newest.content.splitlines(), start=1):
        if not raw.startswith("- "):
            continue
        entry = next((e for start, e in by_start.items() if raw.startswith(start)), None)
        out.append(
            MemoryBlockItem(
                section="memory",
                kind="memory",
                ref=f"MEMORY.md:v{newest.version}:{n}",
                line=raw if entry is None else entry.text,
                entry_id=entry.entry_id if entry else "",
                source_ticks=entry.lineage.source_episode_ticks if entry else (),
            )
        )
    return out


def _dated(
    item: MemoryBlockItem, dreamt: dict[str, str], entries: dict[str, StagedEntry], refs: dict[int, str]
) -> MemoryBlockItem:
    entry = entries.get(item.entry_id)
    if entry is None:  # a line whose entry is gone from the index: shown as MEMORY.md has it
        return msgspec.structs.replace(item, line=_line(item.line.removeprefix("- ")))
    date = dreamt.get(entry.cycle_id)
    source_refs = tuple(r for t in item.source_ticks if (r := refs.get(t)))
    confidence = f"confidence {entry.confidence_pct / 100:.2f}"
    line = _line(item.line, date, confidence, _source(item.source_ticks, source_refs))
    return msgspec.structs.replace(item, line=line, date=date, source_refs=source_refs)


def _recalled(item: RecallItem, dreamt: dict[str, str], entries: dict[str, StagedEntry]) -> MemoryBlockItem:
    entry = entries.get(item.ref) if item.kind in ("belief", "insight", "dream") else None
    date = item.time[:10] if item.time else (dreamt.get(entry.cycle_id) if entry else None)
    said = f"{item.speaker}: {item.text}" if item.speaker else item.text
    tag = "fact" if item.standing == "fact" else "hypothesis"
    line = _line(f"[{tag}] {said}", date, _source(item.source_ticks, item.source_refs))
    return MemoryBlockItem(
        section="recall",
        kind=item.kind,
        ref=item.ref,
        line=line,
        standing=item.standing,
        rank=item.rank,
        date=date,
        entry_id=entry.entry_id if entry else "",
        source_ticks=item.source_ticks,
        source_refs=item.source_refs,
    )
