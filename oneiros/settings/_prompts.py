"""Prompt templates for every generation task, which users may override (Ethos's custom
dream prompt, generalised to every task).

Templates use ``string.Template`` placeholders (``$episodes``). An override is checked when it is
set: an unknown task or a placeholder the task does not fill raises :class:`InvalidPromptTemplate`,
so a typo fails at configuration time and never mid-dream.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from string import Template
from typing import Final, get_args

import msgspec

from oneiros._errors import InvalidPromptTemplate
from oneiros.settings._files import read_toml
from oneiros.settings._vocabulary import Task

__all__ = ["DEFAULT_PROMPTS", "DEFAULT_SYSTEM", "PLACEHOLDERS", "PromptSet"]

DEFAULT_SYSTEM: Final = (
    "You are an autonomous agent's sleeping mind during an offline dream phase. You have no tools and "
    "take no actions. Everything you write is a hypothesis for later validation, never a fact."
)

# Wording from Bardo's NREM and REM prompt structures, Bumblebee's FRAGMENTS/THREAD
# dream prompt and the hypnagogic DaliInterrupt; each asks for output the engines can parse.
DEFAULT_PROMPTS: Final[dict[Task, str]] = {
    "partial": (
        "Drifting toward sleep, theme: $theme. Recent residue:\n$episodes\n"
        "Let one loose association run on; it will be cut off mid-thought."
    ),
    "novelty": (
        "Judge each hypnagogic fragment for novelty against the residue it came from.\nResidue:\n$episodes\n"
        "Fragments:\n$fragments\n"
        'Reply with JSON only: {"scores": [one number from 0 to 1 per fragment, in order]}'
    ),
    "pattern": (
        "You are reviewing a batch of recent episodes during an offline consolidation phase.\n"
        "1. What was the state, the action taken, and the outcome?\n"
        "2. Looking back, what pattern connects these episodes?\n"
        "Episodes:\n$episodes\n"
        'Reply with JSON only: {"pattern": "one sentence"}'
    ),
    "reverse": (
        "Replay these episodes in reverse, from outcome to final action to preceding conditions to the initial "
        "decision, and say which decision earned the outcome.\nEpisodes:\n$episodes\n"
        'Reply with JSON only: {"pattern": "one sentence of credit assignment"}'
    ),
    "perturbed": (
        "Replay these episodes again, but with $perturbation. What would have been different?\n"
        "Episodes:\n$episodes\n"
        'Reply with JSON only: {"pattern": "one sentence"}'
    ),
    "counterfactual": (
        "Key decision: $episode\nAlternative $branch of $depth: what if it had been taken differently "
        "(earlier, later, on another scale, the conditions the other way)?\n"
        'Reply with JSON only: {"hypothesis": "the alternative", "outcome": "what would follow", '
        '"lesson": "what to weigh next time"}'
    ),
    "hypothesis": (
        "You are entering a creative imagination phase ($mode creativity). Seed elements from different epochs:\n"
        "$episodes\n1. Construct a scenario connecting these elements.\n2. What novel strategy would perform well?\n"
        "3. When would it fail catastrophically?\n4. What is the simplest version that could be tested?\n"
        'Reply with JSON only: {"hypothesis": "the strategy", "test": "the simplest test"}'
    ),
    "threat": (
        "Simulate a threat: $kind. Ground it in these episodes:\n$episodes\n"
        'Reply with JSON only: {"scenario": "what happens", "response": "the rehearsed response", '
        '"severity": number from 0 to 1}'
    ),
    "depotentiate": (
        "Re-examine this emotionally charged episode. Separate what actually happened from how it felt.\n"
        "$episode\n"
        'Reply with JSON only: {"happened": "...", "felt": "...", "lesson": "the factual lesson"}'
    ),
    "dream": (
        "You are $name's sleeping subconscious: surreal, associative, unconcerned with action or coherence. "
        "Memory pairs from distant times:\n$pairs\n"
        "Write two sections exactly:\nFRAGMENTS:\n- 3 to 6 first-person dream fragments, one per line\n"
        "THREAD: one sentence, the hidden connection between the memories"
    ),
    "insight": (
        "The theme '$tag' recurs across separate replay batches:\n$episodes\n"
        'State the insight behind it. Reply with JSON only: {"insight": "one sentence"}'
    ),
    # OpenSeed's observations: facts distilled from experience, each with its level.
    "observe": (
        "Restate as short facts, each opening with the day it was said (24 November 2026: ): each sentence "
        "that dates something relative to when it was said ('yesterday', 'last week'...: write the date); each "
        "answer, joined to the question before it; each image shared; every episode of significance "
        "$salient or more, whole. Name people, not 'I' or 'you'; 'self' is you. At most $sources ticks a "
        "fact; nothing that adds no fact. Lines marked ~ are context only.\n"
        "$episodes\n"
        'JSON only: {"observations": [{"text": "...", "ticks": [...], "priority": "RED|YLW|GRN", '
        '"subject": "...", "about": "YYYY-MM-DD or null"}]}'
    ),
    "thread": (
        "Subject: $subject\nWhat was said or done about it, oldest first, one line each:\n$episodes\n"
        "Join them into one dated timeline of the subject: for each line, its day and what it says about "
        "the subject, in the third person.\n"
        'Reply with JSON only: {"thread": "Subject, across days. 2 May 2026: ... | 9 May 2026: ..."}'
    ),
    # Issue 36's core memory: what an assistant must keep about its user, each entry keyed so a later
    # one on the same thing supersedes it.
    "profile": (
        "From these messages, list what the user stands by: standing instructions ('always ...', 'never "
        "...', 'when I ask about X, do Y', 'please format ...'), preferences ('I prefer ...', 'I'd rather "
        "...'), and facts about themselves or their project ('I'm a ...', 'my project uses ...'). Write "
        "each as one whole sentence in the third person (an instruction as the user's words), with a short "
        "key naming what it is about (the same key for a later statement on the same thing), and the "
        "ticks of its messages. Nothing the assistant said; nothing else.\n"
        "$episodes\n"
        'JSON only: {"profile": [{"text": "...", "key": "...", "kind": "instruction|preference|identity|project", '
        '"ticks": [...]}]}'
    ),
    # Issue 36's timelines: the phase writes each entry's date and turn id; the model says what the
    # turn brought up.
    "timeline": (
        "Subject: $subject\nThe user's messages on it, oldest first, one line each:\n$episodes\n"
        "For each message, say what the user brought up about the subject, as one whole short clause in "
        "the third person (at most 18 words; no code, no markdown), with the message's tick. Leave out a "
        "message that brings up nothing.\n"
        'JSON only: {"timeline": [{"tick": 0, "text": "..."}]}'
    ),
    # Issue 36: two of the user's statements that cannot both hold are named, never resolved, so an
    # agent can ask instead of guessing which one is true.
    "contradiction": (
        "The first message below says the user never did something. Does any other message of the user "
        "say they did it (used it, wrote it, went there, missed it)? Only a plain clash counts, not a "
        "question or a plan. For each clash, write one whole sentence naming both statements and the day "
        "each was said ('On 9 March 2024 the user said they had never used Zotero, but on 2 March 2024 they "
        "said they had just downloaded it.'), with the ticks of both messages. None: an empty list.\n"
        "$episodes\n"
        'JSON only: {"contradictions": [{"text": "...", "ticks": [never_tick, other_tick]}]}'
    ),
    "summary": (
        "Summarise what these episodes talked about, as a short list of the words that matter, and name "
        "the episodes (at most $cap of them) whose words the list uses:\n$episodes\n"
        'Reply with JSON only: {"summary": "Who, 2 May 2026, talked about: ...", "ticks": [tick, ...]}'
    ),
}

PLACEHOLDERS: Final[dict[Task, frozenset[str]]] = {
    task: frozenset(Template(text).get_identifiers()) for task, text in DEFAULT_PROMPTS.items()
}


def _check(task: str, template: str) -> None:
    if task not in get_args(Task):
        raise InvalidPromptTemplate(task, f"no such task; tasks are {', '.join(get_args(Task))}")
    parsed = Template(template)
    if not parsed.is_valid():
        raise InvalidPromptTemplate(task, "the template has a malformed '$' placeholder")
    unknown = sorted(set(parsed.get_identifiers()) - PLACEHOLDERS[task])  # type: ignore[index]
    if unknown:
        allowed = ", ".join(f"${p}" for p in sorted(PLACEHOLDERS[task]))  # type: ignore[index]
        raise InvalidPromptTemplate(task, f"unknown placeholder ${unknown[0]}; this task fills {allowed}")


class PromptSet(msgspec.Struct, frozen=True, kw_only=True):
    """The templates a cycle uses: the defaults with the user's ``overrides`` on top."""

    overrides: dict[str, str] = msgspec.field(default_factory=dict)
    system: str = DEFAULT_SYSTEM

    def __post_init__(self) -> None:
        for task, template in self.overrides.items():
            _check(task, template)

    @classmethod
    def from_toml(cls, path: str | Path) -> PromptSet:
        """Overrides from a TOML file: ``system = "..."`` and a ``[prompts]`` table of task = template."""
        data = read_toml(Path(path), lambda expected: InvalidPromptTemplate("prompts", f"{path}: expected {expected}"))
        unknown = sorted(set(data) - {"system", "prompts"})
        if unknown:  # a misspelt [prompts] would otherwise leave every default in place, silently
            raise InvalidPromptTemplate(
                "prompts", f"{path}: unknown key or table {unknown[0]!r}; expected 'system' and a [prompts] table"
            )
        prompts = data.get("prompts", {})
        if not isinstance(prompts, dict) or not all(isinstance(v, str) for v in prompts.values()):
            raise InvalidPromptTemplate("prompts", f"{path}: [prompts] must map task names to strings")
        system = data.get("system", DEFAULT_SYSTEM)
        if not isinstance(system, str):
            raise InvalidPromptTemplate("system", f"{path}: system must be a string")
        return cls(overrides=dict(prompts), system=system)

    def template(self, task: Task) -> str:
        """The template ``task`` renders: the user's override, else the default."""
        return self.overrides.get(task, DEFAULT_PROMPTS[task])

    def version(self, task: Task) -> str:
        """The template's version: the first 12 hex digits of its SHA-256 (equal versions, equal
        templates), as lineage and the evaluation report it."""
        return hashlib.sha256(self.template(task).encode()).hexdigest()[:12]

    def render(self, task: Task, **values: object) -> str:
        """The prompt for ``task`` with ``values`` filled in; placeholders left unfilled stay as written."""
        return Template(self.template(task)).safe_substitute({k: str(v) for k, v in values.items()})
