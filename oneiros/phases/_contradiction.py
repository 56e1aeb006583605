"""Contradictions: a user's "I've never ..." said in the night, and another of their turns, from
any night, that says they did it, named together as a ``DreamObservation`` of kind
``contradiction`` (issue 36), so an agent can ask instead of guessing which one holds.

The step picks the few turns worth asking about by what the never-statement is about: the
history's user turns that carry its rarest content word (a word most turns carry says nothing
about one experience). The generator (the offline rule, or a model through the ``contradiction``
prompt) decides whether they clash. The item is keyed by the never-statement's tick, so finding it
again on a later night supersedes the earlier item rather than adding a second.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Final

from oneiros.events._observations import DreamObservation
from oneiros.events._types import Episode, Event
from oneiros.generators._contradiction import negated_object, stems
from oneiros.generators._lines import said_lines
from oneiros.generators._protocol import TaskInputs
from oneiros.generators._results import ContradictionResult
from oneiros.generators._units import ASSISTANTS, prose_sentences
from oneiros.phases._common import Steps, json_parser

__all__ = ["contradiction_night"]

_TEXT = 16_384
_KEY = 128
_PARSE = json_parser("contradiction", ContradictionResult)
_CANDIDATES = 6
# A word carried by more of the user's turns than this share is not what one experience is about.
_COMMON = 0.05


_CUE: Final = re.compile(r"\b(?:never|not|haven't)\b", re.IGNORECASE)


def _user(e: Episode) -> bool:
    return e.speaker is not None and e.speaker.lower() not in ASSISTANTS


def _about(e: Episode) -> set[str]:
    """What the never-statements of ``e`` say was never done, as stems."""
    out: set[str] = set()
    for sentence in prose_sentences(e.summary):
        negated = negated_object(sentence)
        if negated is not None:
            out |= stems(negated[1]).keys()
    return out


def contradiction_night(steps: Steps, night: Sequence[Episode]) -> list[Event]:
    """Each of the user's never-statements, asked about with the history's user turns that share
    the rarest word of what it names, when the statement or one of those turns is of the night (a
    clash told nights apart is found on the night of its later half)."""
    tonight = {e.tick for e in night if _user(e)}
    if not tonight:
        return []
    history = [e for e in steps.ctx.episodes if _user(e)]
    nevers = [(e, about) for e in history if _CUE.search(e.summary) for about in (_about(e),) if about]
    if not nevers:
        return []
    words = {e.tick: set(stems(e.summary)) for e in history}
    df = Counter(w for ws in words.values() for w in ws)
    common = max(3, int(len(history) * _COMMON))
    settings = steps.ctx.settings.consolidation
    out: list[Event] = []
    for turn, about in nevers:
        if steps.stopped:
            break
        # The turn itself carries every word it names: a word no other turn carries ties it to none.
        rare = [w for w in about if 1 < df[w] <= common]
        if not rare:
            continue
        rarest = min(rare, key=lambda w: (df[w], w))
        # Only the same speaker can contradict themselves (two people in a chat each speak for their own).
        others = [e for e in history if e.tick != turn.tick and e.speaker == turn.speaker and rarest in words[e.tick]]
        # The nearest turns first: a clash is likelier told about the same stretch of work.
        others = sorted(others, key=lambda e: abs(e.tick - turn.tick))[:_CANDIDATES]
        if not others or (turn.tick not in tonight and not any(e.tick in tonight for e in others)):
            continue
        result = steps.ask(
            f"contradiction:{turn.tick}",
            "contradiction",
            _PARSE,
            temperature=settings.temperature,
            max_tokens=settings.tokens_per_episode * (1 + len(others)),
            given=TaskInputs(episodes=(turn, *others)),
            episodes=said_lines([turn, *others]),
        )
        out.extend(_items(steps, result, turn, [turn, *others]))
    return out


def _items(steps: Steps, result: ContradictionResult | None, turn: Episode, shown: Sequence[Episode]) -> list[Event]:
    """Each clash naming the never-statement and a turn it was shown, keyed by the never-statement."""
    known = {e.tick: e for e in shown}
    for found in result.contradictions if result is not None else ():
        ticks = tuple(t for t in dict.fromkeys(found.ticks) if t in known)
        if turn.tick not in ticks or len(ticks) < 2 or not found.text.strip():
            continue
        item = DreamObservation(
            cycle_id=steps.ctx.cycle_id,
            kind="contradiction",
            text=found.text[:_TEXT],
            subject=(turn.speaker or "")[:_KEY] or None,
            about=turn.time,
            source_episode_ticks=(turn.tick, *sorted(t for t in ticks if t != turn.tick)),
            key=f"contradiction:{turn.tick}",
            priority="YLW",
        )
        # One item a never-statement: its key would supersede a second anyway.
        return [steps.made(item)]
    return []
