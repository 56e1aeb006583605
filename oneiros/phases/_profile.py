"""The profile (core memory): what the user stands by, found in the night's turns after its
observations, as ``DreamObservation`` outputs of kind ``profile`` (issue 36).

Only the user's side is read (an assistant's turns explain; what it must keep is what the user
said about themselves, their work and their decisions). Each entry names its messages and says
what it is about (``key``); the profile projection keeps the latest entry of each key current and
the earlier ones as what held until then. It comes from a generator step like any other output (the
offline rules, or a model through the ``profile`` prompt), with what NREM's budget has left.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from oneiros.events._observations import DreamObservation
from oneiros.events._types import Episode, Event
from oneiros.generators._lines import said_lines
from oneiros.generators._protocol import TaskInputs
from oneiros.generators._results import ProfileResult
from oneiros.generators._units import ASSISTANTS
from oneiros.phases._common import Steps, json_parser

__all__ = ["profile_night"]

_TEXT = 16_384
_KEY = 128
_PROFILE = json_parser("profile", ProfileResult)


# What a turn that states an instruction, a preference or a fact about the user says somewhere:
# the profile step reads only such turns, so a night of long requests costs it little and leaves
# the budget to the observations (a model is shown fewer turns, never other ones).
_STANCE: Final = re.compile(
    r"\b(?:always|never|prefer\w*|rather|please|make sure|from now on|going forward|when(?:ever)? I ask|"
    r"I (?:want|need) you|I (?:really )?(?:like|love|hate) (?:to|it when)|my name|I'?m an? |I am an? |"
    r"(?:my|our) (?:project|app|application|stack|team|codebase|service)|I'?m (?:building|developing|working on)|"
    r"I am (?:building|developing|working on))",
    re.IGNORECASE,
)


def _users(night: Sequence[Episode]) -> list[Episode]:
    """The user's turns of the night that may state something the profile keeps."""
    return [
        e for e in night if e.speaker is not None and e.speaker.lower() not in ASSISTANTS and _STANCE.search(e.summary)
    ]


def profile_night(steps: Steps, night: Sequence[Episode]) -> list[Event]:
    """The user's turns of the night, a batch at a time, read for profile entries."""
    settings = steps.ctx.settings.consolidation
    if not settings.profile:
        return []
    turns = _users(night)
    out: list[Event] = []
    for start in range(0, len(turns), settings.batch):
        if steps.stopped:
            break
        batch = turns[start : start + settings.batch]
        result = steps.ask(
            f"profile:{start}+{len(batch)}",
            "profile",
            _PROFILE,
            temperature=settings.temperature,
            max_tokens=settings.tokens_per_episode * len(batch),
            given=TaskInputs(episodes=tuple(batch)),
            episodes=said_lines(batch),
        )
        out.extend(_entries(steps, result, batch))
    return out


def _entries(steps: Steps, result: ProfileResult | None, batch: Sequence[Episode]) -> list[Event]:
    """Each entry naming only ticks it was shown, dated by the latest of them (when it began to hold)."""
    known = {e.tick: e for e in batch}
    out: list[Event] = []
    for fact in result.profile if result is not None else ():
        ticks = tuple(t for t in dict.fromkeys(fact.ticks) if t in known)
        key = " ".join(fact.key.split())[:_KEY]
        if not ticks or not key or not fact.text.strip():
            continue
        said = known[max(ticks)]
        entry = DreamObservation(
            cycle_id=steps.ctx.cycle_id,
            kind="profile",
            text=fact.text[:_TEXT],
            subject=(said.speaker or "")[:_KEY] or None,
            about=said.time,
            source_episode_ticks=ticks,
            key=f"{fact.kind}:{key}" if not key.startswith(fact.kind) else key,
            priority="YLW" if fact.kind == "instruction" else "GRN",
        )
        out.append(steps.made(entry))
    return out
