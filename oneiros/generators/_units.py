"""Knowledge units: what a message says, as whole sentences a fact can be made of, with its
markdown read as structure and its code kept apart.

An assistant's transcript is markdown: headings, emphasis, lists, tables, tree drawings and fenced
code. None of that is words: a heading or a table row is dropped, emphasis and inline code marks
are taken off their words, a list item is a sentence of its own, and a fenced code block becomes
an artifact named in one line ("a Python code block defining get_db"), never pasted into a fact.
A sentence that cannot stand whole (it runs on into a list with a colon, trails off in "...", or
is longer than a fact should be) is dropped rather than cut. English only; nothing about any one
domain.
"""

from __future__ import annotations

import re
from typing import Final

import msgspec

from oneiros._text import ASSISTANTS
from oneiros.generators._prose import sentences

__all__ = ["ASSISTANTS", "Units", "clean_sentence", "committed", "prose_sentences", "units"]


_LONGEST: Final = 320
"""A sentence longer than this is an explanation, not a fact: dropped, never cut."""

_FENCE: Final = re.compile(r"^\s{0,3}(```+|~~~+)\s*([\w+#.-]*)")
_HEADING: Final = re.compile(r"^\s{0,3}#{1,6}(?:\s|$)")
_RULE: Final = re.compile(r"^\s{0,3}(?:[-*_]\s*){3,}$")
_TABLE: Final = re.compile(r"^\s*\|")
_TREE: Final = re.compile(r"\|--|\+--|`--|[├└│┬┴┼─]")
_ITEM: Final = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_QUOTE: Final = re.compile(r"^\s*>\s?")
_LINK: Final = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS: Final = re.compile(r"(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1(?!\w)")
_INLINE_CODE: Final = re.compile(r"`+([^`]*)`+")
_LEFTOVER: Final = re.compile(r"\*\*|__|`|\|--|[├└│]|^#|\s#{1,6}\s|<[a-z/][^>]*>")
_ELLIPSIS: Final = re.compile(r"(?:\.\.\.|…)")
_MARKER: Final = re.compile(r"\s*->->\s*[\d,\s]*$")
"""An index a transcript tool appends to a message ("->-> 1,2"): no words of the speaker's."""
_WHOLE: Final = re.compile(r"^[\"'(]?[A-Z0-9].*[.!?][\"')]?$")
_DANGLING: Final = frozenset(
    """a an the and or but nor of to in on at by for with from into about as than that which who if because
    while when where so like via per is are was were be been has have had do does did will would can could
    should may might must my your our their his her its""".split()  # noqa: SIM905 - read as prose
)

# What a code block defines, by its first line that defines or states something.
_DEFINES: Final = (
    re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)"),
    re.compile(r"^\s*class\s+([A-Za-z_]\w*)"),
    re.compile(r"^\s*(?:export\s+)?(?:async\s+)?function\s+([A-Za-z_$][\w$]*)"),
    re.compile(r"^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)"),
    re.compile(r"^\s*(?:pub\s+)?fn\s+([A-Za-z_]\w*)"),
    re.compile(r"^\s*func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)"),
    re.compile(r"^\s*(?:CREATE\s+TABLE|create\s+table)\s+(?:IF\s+NOT\s+EXISTS\s+)?([\w.\"]+)"),
)
_LANGUAGES: Final = {
    "py": "Python", "python": "Python", "js": "JavaScript", "javascript": "JavaScript", "ts": "TypeScript",
    "typescript": "TypeScript", "sh": "shell", "bash": "shell", "shell": "shell", "zsh": "shell",
    "console": "shell", "sql": "SQL", "html": "HTML", "css": "CSS", "json": "JSON", "yaml": "YAML",
    "yml": "YAML", "toml": "TOML", "rust": "Rust", "rs": "Rust", "go": "Go", "java": "Java",
    "c": "C", "cpp": "C++", "c++": "C++", "csharp": "C#", "cs": "C#", "ruby": "Ruby", "rb": "Ruby",
    "php": "PHP", "jsx": "JSX", "tsx": "TSX", "dockerfile": "Dockerfile", "ini": "INI", "xml": "XML",
}  # fmt: skip
_WORDY: Final = re.compile(r"[A-Za-z_][\w.-]*")


class Units(msgspec.Struct, frozen=True, kw_only=True):
    """A message's knowledge units: its whole sentences, and one line for each code block."""

    sentences: tuple[str, ...] = ()
    artifacts: tuple[str, ...] = ()


def _artifact(language: str, code: list[str]) -> str:
    """One line naming a code block: its language (from the fence's tag) and what it defines or
    does first, as plain words."""
    kind = _LANGUAGES.get(language.lower(), language if language.isalpha() else "")
    article = "an" if kind[:1] in ("A", "E", "I", "O", "U") or kind == "HTML" else "a"
    head = f"{article} {kind} code block" if kind else "a code block"
    for line in code:
        for pattern in _DEFINES:
            if found := pattern.match(line):
                return f"{head} defining {found.group(1).strip(chr(34))}"
    for line in code:
        words = _WORDY.findall(line)
        if words and not line.lstrip().startswith(("#", "//", "--", "<!--", "/*")):
            return f"{head} starting with {' '.join(words[:4])}"
    return head


def _plain(text: str) -> str:
    """``text`` with links, inline code and emphasis marks taken off its words, spaces made one."""
    text = _INLINE_CODE.sub(r"\1", _MARKER.sub("", _LINK.sub(r"\1", text)))
    for _ in range(2):  # nested emphasis ("***x***") comes off in two passes
        text = _EMPHASIS.sub(r"\2", text)
    return " ".join(text.split()).strip()


def clean_sentence(text: str) -> str | None:
    """``text`` as a whole sentence of plain words, or None when it cannot stand as one: markup
    that is not words is taken off, and a sentence that trails off, runs into a list (a colon at
    its end), is too long, or still carries markup is dropped."""
    text = _plain(text)
    if not text or len(text) > _LONGEST or _ELLIPSIS.search(text) or _LEFTOVER.search(text):
        return None
    if text[-1].isalnum() or text[-1] == ")":
        # A list item or a chat line often ends without a full stop: it is whole unless its last
        # word cannot end a sentence.
        last = re.findall(r"[A-Za-z]+", text[-30:])
        if last and last[-1].lower() in _DANGLING:
            return None
        text += "."
    text = text[:1].upper() + text[1:]
    return text if _WHOLE.match(text) else None


def _paragraphs(text: str) -> tuple[list[str], list[str]]:
    """``text``'s prose as paragraphs (a list item or a quote line each its own) and its code
    blocks as artifact lines; headings, rules, tables and tree drawings dropped."""
    paragraphs: list[str] = []
    artifacts: list[str] = []
    current: list[str] = []
    code: list[str] | None = None
    language = ""

    def close() -> None:
        if current:
            paragraphs.append(" ".join(current))
            current.clear()

    for line in text.splitlines():
        fence = _FENCE.match(line)
        if code is not None:
            if fence and not fence.group(2):
                artifacts.append(_artifact(language, code))
                code = None
            else:
                code.append(line)
            continue
        if fence:
            close()
            code, language = [], fence.group(2)
            continue
        if not line.strip() or _HEADING.match(line) or _RULE.match(line) or _TABLE.match(line) or _TREE.search(line):
            close()
            continue
        item = _ITEM.match(line) or _QUOTE.match(line)
        if item:
            close()
        current.append(line[item.end() :].strip() if item else line.strip())
    close()
    if code is not None:  # a block the message (or its part) ends inside
        artifacts.append(_artifact(language, code))
    return paragraphs, artifacts


def prose_sentences(text: str) -> list[str]:
    """``text``'s prose sentences as written, however long, markup off their words and headings,
    tables and code left out: what a rule looks into for a clause (a preference said in passing
    inside a long request), where :func:`units` keeps only sentences that can stand whole."""
    paragraphs, _artifacts = _paragraphs(text)
    out: list[str] = []
    for paragraph in paragraphs:
        for sentence in sentences(paragraph):
            plain = _plain(sentence)
            if plain:
                out.append(plain)
    return out


def units(text: str) -> Units:
    """``text``'s knowledge units: every whole sentence of its prose, in order, and a line for
    each of its code blocks."""
    paragraphs, artifacts = _paragraphs(text)
    kept: list[str] = []
    for paragraph in paragraphs:
        for sentence in sentences(paragraph):
            clean = clean_sentence(sentence)
            if clean is not None:
                kept.append(clean)
    return Units(sentences=tuple(kept), artifacts=tuple(artifacts))


_COMMITTED: Final = re.compile(
    r"^(?:I|We)(?:'ll| will| have| 've| decided| chose| changed| updated| added| fixed| created| renamed|"
    r" removed| moved| replaced| set up| switched| recommend| suggest)\b"
)


def committed(sentence: str) -> bool:
    """Whether an assistant's ``sentence`` says what it decided or committed to ("I'll add the
    index", "I've updated the schema"), not what it explains."""
    return bool(_COMMITTED.match(sentence.replace("\u2019", "'")))
