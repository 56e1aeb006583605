"""The offline generator's profile (core memory): what a user stands by, found by rule in what they
said (never in an assistant's turns), in the JSON shape the ``profile`` prompt asks a model for.

Four kinds, each keyed by what it is about so a later entry on the same thing supersedes it:

* instructions: "Always use type hints.", "Never push to main.", "When I ask about deploys, list the
  rollback steps.", "Please format answers as tables."; kept in the user's words;
* preferences: "I prefer tabs over spaces.", "I'd rather use Postgres.", "I like to keep functions short.",
  and one said in passing inside a longer request ("I'm trying to keep the app small, so I prefer
  dependency-free solutions, can you help ...?" gives "User prefers dependency-free solutions.");
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
from oneiros.generators._units import ASSISTANTS, clean_sentence, prose_sentences

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
# A preference said in passing: after a clause's start, up to where the clause ends (a request,
# a reason, another clause); ", rather than ..." stays with it.
_IN_PASSING: Final = re.compile(
    r"(?:^|[,;]\s+|\b(?:so|and|but|because|since)\s+)(?:I(?:'d| would)?\s+"
    r"(?:really\s+|generally\s+|usually\s+|much\s+|strongly\s+|definitely\s+|also\s+)?(?P<verb>prefer|rather)"
    r"|(?:as stated in\s+)?my preference (?:is|for))\s+(?P<about>\S.*)",
    re.I,
)
_CLAUSE_END: Final = re.compile(
    r",\s+(?=(?:so|and|but|can|could|would|will|how|what|which|where|when|why|is|are|do|does|did|should|any|"
    r"I|I'm|I've|I'd|though|however|considering|especially|since|because|as|or|if|maybe|then|please|just|"
    r"also|like|while|given|plus)\b)|[?;!:]|\s[-\u2013\u2014]\s|\.(?=\s|$)",
    re.I,
)
_FILLER: Final = re.compile(r",\s*(?:you know|I mean)(?=,)", re.I)
_LONGEST_ABOUT = 200
_WORD: Final = re.compile(r"[A-Za-z][\w+#.-]*")
# Words that say how an instruction holds, not what it is about: "always use tabs" and "never use
# tabs" are about one thing.
_MODE_WORDS: Final = frozenset({"always", "never", "please", "don't", "ever", "not", "rather", "prefer", "using"})


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


def _in_passing(sentence: str, line: SaidLine) -> _Entry | None:
    """A preference stated inside a longer sentence, as a whole sentence of its own."""
    found = _IN_PASSING.search(sentence)
    if found is None:
        return None
    about = found.group("about")
    end = _CLAUSE_END.search(about)
    about = _FILLER.sub("", (about[: end.start()] if end else about)).strip().rstrip(",.")
    if not about or len(about) > _LONGEST_ABOUT:
        return None
    said = f"I'd rather {about}." if (found.group("verb") or "").lower() == "rather" else f"I prefer {about}."
    clean = clean_sentence(said)
    if clean is None:
        return None
    return _Entry(
        text=third_person(clean, line.speaker), key=_key("preference", about), kind="preference", ticks=(line.tick,)
    )


def _profile(request: GenerationRequest) -> str:
    """Every sentence of a user's turn that states an instruction, a preference or a fact about
    them or their project, as a profile entry, and every preference said in passing inside a
    longer sentence; an assistant's turns give none."""
    entries: list[_Entry] = []
    for line, raw in said_of(request):
        if line.context or (line.speaker is not None and line.speaker.lower() in ASSISTANTS):
            continue
        for sentence in prose_sentences(raw):
            clean = clean_sentence(sentence)
            entry = _entry(clean, line) if clean is not None and not clean.endswith("?") else None
            if entry is None:
                entry = _in_passing(sentence, line)
            if entry is not None:
                entries.append(entry)
    return msgspec.json.encode({"profile": entries}).decode()


PROFILE: Final = {"profile": _profile}
"""The offline writer of the profile task."""
