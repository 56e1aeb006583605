"""The offline generator's profile (core memory): what a user stands by, found by rule in what they
said (never in an assistant's turns), in the JSON shape the ``profile`` prompt asks a model for.

Four kinds, each keyed by what it is about so a later entry on the same thing supersedes it:

* instructions: "Always use type hints.", "Never push to main.", "When I ask about deploys, list the
  rollback steps.", "Please format answers as tables."; kept in the user's words;
* preferences: "I prefer tabs over spaces.", "I'd rather use Postgres.", "I like to keep functions short.";
* identity: "I'm a data engineer.", "My name is Craig.";
* project: "My project uses Django 4.2.", "I'm building a portfolio website.".

English only; the key is the kind and the first content words of what the entry is about, so
"Always use tabs." and a later "Never use tabs." share one.
"""

from __future__ import annotations

import re
from typing import Final

import msgspec

from oneiros._text import FUNCTION_WORDS
from oneiros.generators._lines import SaidLine
from oneiros.generators._observe import said_of
from oneiros.generators._prose import third_person
from oneiros.generators._protocol import GenerationRequest
from oneiros.generators._units import ASSISTANTS, units

__all__ = ["PROFILE"]

_KEY_WORDS = 2
_Rule = tuple[str, re.Pattern[str]]

# Each rule: the kind, and a pattern whose group "about" is what the entry is about.
_RULES: Final[tuple[_Rule, ...]] = (
    ("instruction", re.compile(r"^(?:please\s+)?(?:always|never|don't ever|do not ever)\s+(?P<about>.+)", re.I)),
    ("instruction", re.compile(r"^when(?:ever)? I ask (?:you )?(?:about|for) (?P<about>[^,]+),", re.I)),
    (
        "instruction",
        re.compile(
            r"^(?:please|make sure (?:to|you)|I want you to|I need you to)\s+"
            r"(?P<about>(?:format|use|keep|write|include|avoid|respond|answer|reply|add|give|show|explain)\b.+)",
            re.I,
        ),
    ),
    (
        "preference",
        re.compile(r"^I(?:'d| would) (?:rather|prefer)(?: to)?\s+(?P<about>.+)", re.I),
    ),
    (
        "preference",
        re.compile(r"^I (?:really |generally |usually )?(?:prefer|like to keep|like to use)\s+(?P<about>.+)", re.I),
    ),
    ("identity", re.compile(r"^my name is\s+(?P<about>.+)", re.I)),
    ("identity", re.compile(r"^I(?:'m| am) (?:a|an)\s+(?P<about>.+)", re.I)),
    (
        "project",
        re.compile(
            r"^(?:my|our) (?:project|app|application|stack|team|codebase|service)\s+(?P<about>(?:uses|runs|is)\b.+)",
            re.I,
        ),
    ),
    ("project", re.compile(r"^I(?:'m| am) (?:building|developing|working on)\s+(?P<about>.+)", re.I)),
)
_WORD: Final = re.compile(r"[A-Za-z][\w+#.-]*")
# Words that say how an instruction holds, not what it is about: "always use tabs" and "never use
# tabs" are about one thing.
_MODE_WORDS: Final = frozenset({"always", "never", "please", "don't", "ever", "not", "rather", "prefer"})


class _Entry(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    key: str
    kind: str
    ticks: tuple[int, ...]


def _key(kind: str, about: str) -> str:
    """The kind, then the first content words of what an entry is about: identity and project
    facts have one each (a later "I'm a ..." supersedes the earlier)."""
    if kind in ("identity", "project"):
        return kind
    words = [w.lower().rstrip(".-") for w in _WORD.findall(about)]
    content = [w for w in words if w not in FUNCTION_WORDS and w not in _MODE_WORDS][:_KEY_WORDS]
    return f"{kind}:{' '.join(content)}" if content else kind


def _entry(sentence: str, line: SaidLine) -> _Entry | None:
    for kind, pattern in _RULES:
        found = pattern.match(sentence)
        if found is None:
            continue
        who = line.speaker or "the user"
        if kind == "instruction":
            text = f"{who.capitalize()}'s instruction: {sentence}"
        else:
            text = third_person(sentence, line.speaker)
        return _Entry(text=text, key=_key(kind, found.group("about")), kind=kind, ticks=(line.tick,))
    return None


def _profile(request: GenerationRequest) -> str:
    """Every sentence of a user's turn that states an instruction, a preference or a fact about
    them or their project, as a profile entry; an assistant's turns give none."""
    entries: list[_Entry] = []
    for line, raw in said_of(request):
        if line.context or (line.speaker is not None and line.speaker.lower() in ASSISTANTS):
            continue
        for sentence in units(raw).sentences:
            if sentence.endswith("?"):
                continue
            entry = _entry(sentence, line)
            if entry is not None:
                entries.append(entry)
    return msgspec.json.encode({"profile": entries}).decode()


PROFILE: Final = {"profile": _profile}
"""The offline writer of the profile task."""
