"""Injected time, ids and randomness (DESIGN.md contract 11).

Everything that would otherwise read the wall clock, mint a uuid or draw a random number takes one
of these, so tests, replay and benchmarks are deterministic when they want to be.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import msgspec

__all__ = [
    "Clock",
    "Deps",
    "Draw",
    "FixedClock",
    "IdSource",
    "SequentialIds",
    "Sleep",
    "SystemClock",
    "UuidIds",
    "rng_for",
]

Clock = Callable[[], datetime]
IdSource = Callable[[], str]
Draw = Callable[[], float]
"""A uniform draw in [0, 1)."""
Sleep = Callable[[float], None]


def SystemClock() -> datetime:  # noqa: N802 - reads as the type of clock it is
    """The wall clock in UTC."""
    return datetime.now(UTC)


class FixedClock:
    """A clock that starts at ``start`` and moves ``step`` forward on every reading."""

    def __init__(self, start: datetime, step: timedelta = timedelta(seconds=1)) -> None:
        if start.tzinfo is None:
            raise ValueError("FixedClock needs a timezone-aware start")
        self._now = start
        self._step = step
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            now = self._now
            self._now = now + self._step
            return now

    def advance(self, delta: timedelta) -> None:
        with self._lock:
            self._now += delta


def UuidIds() -> str:  # noqa: N802 - reads as the type of id source it is
    """Random uuid4 hex ids."""
    return uuid.uuid4().hex


class SequentialIds:
    """Ids ``prefix-000001``, ``prefix-000002``… for deterministic runs."""

    def __init__(self, prefix: str = "id") -> None:
        self._prefix = prefix
        self._counter = itertools.count(1)
        self._lock = threading.Lock()

    def __call__(self) -> str:
        with self._lock:
            return f"{self._prefix}-{next(self._counter):06d}"


def rng_for(seed: int, *scope: str) -> random.Random:
    """A random source derived from ``seed`` and a scope such as (cycle_id, phase).

    Deriving per scope keeps a phase's draws the same whether it runs alone, after a crash or on
    another worker: nothing depends on how many draws some earlier code made.
    """
    digest = hashlib.blake2b("\x1f".join((str(seed), *scope)).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


class Deps(msgspec.Struct, frozen=True, kw_only=True):
    """The clock, id source and seed a runtime uses, and the jitter and sleep of its retries."""

    clock: Clock = SystemClock
    ids: IdSource = UuidIds
    seed: int = 0
    jitter: Draw = random.random
    """Spreads retries of a lost version race apart; never feeds what a cycle produces (``seed`` does)."""
    sleep: Sleep = time.sleep
