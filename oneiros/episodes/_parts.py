"""A transcript's message as episode summaries: whole when it fits, else in parts under the cap.

An episode's summary holds at most :data:`SUMMARY_LIMIT` characters (a bound of the event schema,
``oneiros.events._types.Summary``), while a coding agent's message or a tool's output has no bound.
No message is refused for its length: a long one is cut into parts that, joined, give back every
character in order. Its fenced code blocks become parts of their own (a block longer than a part is
cut at line ends), and prose is cut at a paragraph, else a line, else a space, so each part reads
on its own. The importers give a message of several parts the ids ``<id>#1``, ``<id>#2`` ...
(:func:`part_refs`), so whatever a dream draws from a part still names the message.
"""

from __future__ import annotations

import re

__all__ = ["SUMMARY_LIMIT", "part_refs", "refs_of", "summary_parts"]

SUMMARY_LIMIT = 16_384
"""The most characters an episode's summary holds (``Summary``'s ``max_length``)."""

# A fenced block from its opening line to its closing fence's line end, so cutting around it leaves
# the fences with the code. An unclosed fence runs to the end of the text, as Markdown renders it.
_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[ \t]*(?:\n|\Z)|\Z)", re.MULTILINE | re.DOTALL)
_BREAKS = ("\n\n", "\n", " ")
_PART = re.compile(r"(.+)#[1-9]\d*", re.DOTALL)


def summary_parts(text: str, limit: int = SUMMARY_LIMIT) -> list[str]:
    """``text`` as one part when it fits in ``limit`` characters, else as parts of at most ``limit``
    that join back into it; code blocks are parts of their own, and a part is only whitespace
    only where neither part beside it has room for it."""
    if limit < 2:
        raise ValueError("a part holds at least two characters")
    if len(text) <= limit:
        return [text]
    parts: list[str] = []
    for segment in _segments(text):
        parts.extend(_cut(segment, limit))
    return _absorb_blanks(parts, limit)


def part_refs(ref: str, count: int) -> list[str]:
    """The ids of a message's ``count`` parts: its own id when it is whole, else ``<id>#1`` ..."""
    return [ref] if count == 1 else [f"{ref}#{n}" for n in range(1, count + 1)]


def refs_of(ref: str) -> tuple[str, ...]:
    """The ids an episode's ``ref`` stands for: itself and, for a part ``<id>#<n>``, the message's
    ``<id>`` too (both, since an id of the source's own may end in ``#<n>``)."""
    found = _PART.fullmatch(ref)
    return (ref, found.group(1)) if found else (ref,)


def _segments(text: str) -> list[str]:
    """Prose and fenced code blocks, alternately, in order; every character in exactly one."""
    out: list[str] = []
    start = 0
    for block in _FENCE.finditer(text):
        if block.start() > start:
            out.append(text[start : block.start()])
        out.append(block.group())
        start = block.end()
    if start < len(text):
        out.append(text[start:])
    return out


def _cut(text: str, limit: int) -> list[str]:
    """``text`` cut into pieces of at most ``limit``, each at the last paragraph, line or word
    break in its second half where there is one, else at the limit itself."""
    pieces: list[str] = []
    while len(text) > limit:
        window = text[:limit]
        at = limit
        for mark in _BREAKS:
            found = window.rfind(mark)
            if found + len(mark) > limit // 2:
                at = found + len(mark)
                break
        pieces.append(text[:at])
        text = text[at:]
    if text:
        pieces.append(text)
    return pieces


def _absorb_blanks(parts: list[str], limit: int) -> list[str]:
    """Whitespace between blocks joined to the part before it (or after it, at the start) where the
    two fit in one part: a part that is only whitespace is no episode anyone could read."""
    out: list[str] = []
    pending = ""
    for part in parts:
        if not part.strip():
            if out and not pending and len(out[-1]) + len(part) <= limit:
                out[-1] += part
            elif len(pending) + len(part) <= limit:
                pending += part
            else:
                out.append(pending)
                pending = part
            continue
        if pending and len(pending) + len(part) <= limit:
            out.append(pending + part)
        else:
            out.extend((pending, part) if pending else (part,))
        pending = ""
    if pending:
        out.append(pending)
    return out
