"""Losing a version race ends in a retry, not a failure: the helper every writer shares.

Every command appends at the stream version its state was read at; another writer that appended
first makes the store refuse it with :class:`StreamConflict`. A command that builds its events from
the state it reads can simply read again and retry while it is still legal (the machine refuses it
with IllegalCommand once it is not). A phase cannot: its outputs were computed from the state it
started with, so it is rebased only over *host facts*, the events a host records while the golem
dreams, which move neither the machine nor the cycle (see :func:`is_host_fact`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from oneiros._deps import Deps
from oneiros._errors import StreamConflict
from oneiros.events._types import CycleEvent, Event, GolemCreated, ModeChanged
from oneiros.settings._races import RaceSettings

__all__ = ["is_host_fact", "retry_race"]

T = TypeVar("T")


def is_host_fact(event: Event) -> bool:
    """True for what a host records through ``Golems.record``/``record_episodes`` (episodes,
    activity, held and released messages, scheduler decisions, behavioral phase changes, micro
    consolidation): events of no cycle that do not change the golem's mode. A phase whose append
    lost its race to such events only is still legal at the new head, with the same outputs."""
    return not isinstance(event, CycleEvent | GolemCreated | ModeChanged)


def retry_race(
    attempt: Callable[[], T],
    settings: RaceSettings | None = None,
    deps: Deps | None = None,
    *,
    attempts: int | None = None,
) -> T:
    """Call ``attempt`` until it does not lose a version race, at most ``settings.attempts`` times
    (``attempts`` overrides; 0 means no bound), waiting a jittered, growing pause between tries.

    ``attempt`` must read the state it appends at afresh each time (and so re-check that its
    command is still legal); the last StreamConflict reaches the caller when the tries run out.
    Any other error ends the retries at once."""
    settings = settings or RaceSettings()
    deps = deps or Deps()
    limit = settings.attempts if attempts is None else attempts
    tried = 0
    while True:
        try:
            return attempt()
        except StreamConflict:
            tried += 1
            if limit and tried >= limit:
                raise
            deps.sleep(settings.wait(tried - 1, deps.jitter()))
