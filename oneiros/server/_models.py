"""What the API accepts: request bodies as msgspec Structs, validated on the way in and published
in the OpenAPI schema from the same definitions."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, get_args

import msgspec

from oneiros._errors import InputError
from oneiros.app._dreams import CycleOptions
from oneiros.events._schedule import ActivityKind
from oneiros.events._staging import ReviewDecision, StagingStatus
from oneiros.events._types import Episode, episode_out_of_bounds

__all__ = [
    "ActivityIn",
    "CycleIn",
    "EpisodesIn",
    "ErrorBody",
    "ErrorDetail",
    "FeedbackIn",
    "GolemIn",
    "RecallIn",
    "WhoAmI",
    "checked_id",
    "checked_statuses",
]

_Text = Annotated[str, msgspec.Meta(min_length=1, max_length=10_000)]


def checked_id(name: str, value: str) -> str:
    """``value`` unless it holds a control character, which no id of oneiros has: refused here as the
    caller's mistake (400), where PostgreSQL would fail on a NUL and answer for the server."""
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise InputError(f"{name} {value!r} holds a control character; no id has one")
    return value


def checked_statuses(values: Iterable[str], name: str = "status") -> tuple[str, ...]:
    """The statuses named in ``values`` (each comma-separated); InputError naming the first that is
    not a status as ``name``, where a typo would list nothing, as if no dream had it."""
    chosen = tuple(s for value in values for s in value.split(",") if s)
    known = get_args(StagingStatus)
    if unknown := [s for s in chosen if s not in known]:
        raise InputError(f"{name}={unknown[0]!r} is not a status; use one of {', '.join(known)}")
    return chosen


class GolemIn(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    golem_id: str
    name: str = ""


class EpisodesIn(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Waking episodes to record, validated whole before the first is written."""

    episodes: Annotated[list[Episode], msgspec.Meta(min_length=1, max_length=10_000)]

    def __post_init__(self) -> None:
        # msgspec turns this into a ValidationError with no further path (the body is the root),
        # so the message reads as the schema's own do.
        seen: set[int] = set()
        for index, episode in enumerate(self.episodes):
            if (bad := episode_out_of_bounds(episode)) is not None:
                raise ValueError(f"{bad[1]} - at `$.episodes[{index}].{bad[0]}`")
            if episode.tick in seen:
                raise ValueError(f"tick {episode.tick} is twice in one request - at `$.episodes[{index}].tick`")
            seen.add(episode.tick)


class ActivityIn(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The golem was busy: a message in, an action, or a turn (silence and fatigue count these)."""

    kind: ActivityKind
    detail: str = ""


class CycleIn(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Dense-Mem's ``run_dreaming_cycle``: phase toggles and the output cap, mapped to oneiros's
    phases in docs/server.md."""

    max_outputs: Annotated[int, msgspec.Meta(ge=1, le=50)] = 5
    """Most new dreams (staged entries) this cycle makes (Dense-Mem ``DREAMING_MAX_OUTPUTS``, 1-50, 5)."""
    reflect_enabled: bool = True
    """Dense-Mem's reflect: NREM replay and triage of the golem's episodes."""
    reevaluate_enabled: bool = True
    """Dense-Mem's re_evaluate: stale dreams whose sources are gone, reinforce intact ones."""
    dream_enabled: bool = True
    """Dense-Mem's dream: REM imagination and integration's new staged hypotheses."""
    wait: bool = False
    """Answer once the cycle has ended (at most ``server.cycle_wait_seconds``), with its final
    status (``complete``, ``interrupted``, ``empty``), rather than as soon as it started."""

    def options(self, wait_seconds: float) -> CycleOptions:
        """The cycle this body asks for, waited for at most ``wait_seconds``."""
        return CycleOptions(
            max_outputs=self.max_outputs,
            reflect=self.reflect_enabled,
            dream=self.dream_enabled,
            reevaluate=self.reevaluate_enabled,
            wait=self.wait,
            timeout=wait_seconds,
        )


class FeedbackIn(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Dense-Mem's ``resolve_dream_feedback``."""

    decision: ReviewDecision
    feedback: _Text
    """Why: kept with the decision in the log."""


class RecallIn(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    query: Annotated[str, msgspec.Meta(min_length=1, max_length=2_000)]
    limit: Annotated[int, msgspec.Meta(ge=1, le=100)] = 10


class MemoryBlockIn(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The memory block's question: without a query, MEMORY.md alone."""

    query: Annotated[str, msgspec.Meta(max_length=2_000)] | None = None
    budget_tokens: Annotated[int, msgspec.Meta(ge=1, le=1_000_000)] | None = None
    """At most this many tokens (default: the config's ``memory_block.budget_tokens``)."""


class WhoAmI(msgspec.Struct, frozen=True, kw_only=True):
    """The token's name, scopes and golems, so a client shows only the actions it may take."""

    name: str
    scopes: list[str]
    golems: list[str]
    """The golems it sees; empty for every golem."""
    write: bool
    """Whether it may write (record, dream, decide)."""


class ErrorDetail(msgspec.Struct, frozen=True, kw_only=True):
    type: str
    """The OneirosError class name (docs/errors.md)."""
    message: str
    status: int
    attributes: dict[str, Any] = {}
    """The error's typed attributes (``golem_id``, ``state``, ``trigger``...)."""


class ErrorBody(msgspec.Struct, frozen=True, kw_only=True):
    error: ErrorDetail
