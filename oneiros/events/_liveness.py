"""Events of a cycle's liveness: what the reconciler did about a phase nobody was running.

A lease (``_leases.py``) says who runs a phase right now; it is a hint and may be lost. What must
survive a reconciler's own restart is recorded here, in the golem's stream: each resume of a
stranded phase, numbered, so the number of attempts comes from the log and two reconcilers
racing to resume one phase cannot both do it (the second append loses the version race).
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from oneiros.events._types import CycleEvent, DreamPhaseName, event_type

__all__ = ["PhaseResumed"]


@event_type("PhaseResumed")
class PhaseResumed(CycleEvent, frozen=True, kw_only=True):
    """``phase`` of the cycle had no live job or process; attempt ``attempt`` (1 for the first
    resume) was started, for ``reason``. A host fact of the cycle, never a dream output."""

    phase: DreamPhaseName
    attempt: Annotated[int, msgspec.Meta(ge=1)]
    reason: str = ""
