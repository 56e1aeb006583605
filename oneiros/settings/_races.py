"""How a command that lost its version race tries again."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

import msgspec

from oneiros._errors import InvalidSetting

__all__ = ["RaceSettings"]

RACES_ENV = "ONEIROS_RACES__"


class RaceSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Bounded retries, with full jitter, of a command that lost its version race.

    Not from the source documents: operating defaults. The backoff is "exponential backoff with
    full jitter" (M. Brooker, *Exponential Backoff And Jitter*, AWS Architecture Blog, 2015): the
    n-th retry waits a uniform draw in ``[0, min(max_seconds, base_seconds * 2**n)]``, which spreads
    writers that collided apart instead of making them collide again in step. The bound is
    measured: in tests/test_chaos_writers.py (six processes on one golem on a loaded two-core
    machine, a dreamer appending every few milliseconds with the offline generator) a host fact on
    PostgreSQL took up to 10 tries, and up to 19 with ``ONEIROS_CHAOS_SCALE=4``; 64 tries leave a
    wide margin, and wait about 3 s on average before giving up (6 s at most).
    """

    attempts: int = 64
    """Tries in all (the first and its retries) before the StreamConflict reaches the caller."""
    base_seconds: float = 0.005
    """Upper bound of the first retry's wait."""
    max_seconds: float = 0.1
    """Cap on any one wait."""

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise InvalidSetting("races.attempts", self.attempts, "a positive number of tries")
        for key, value in (("races.base_seconds", self.base_seconds), ("races.max_seconds", self.max_seconds)):
            if not math.isfinite(value) or value < 0:
                raise InvalidSetting(key, value, "a finite number of seconds, 0 or more")

    def wait(self, retry: int, draw: float) -> float:
        """Seconds before retry number ``retry`` (0 for the first), for a uniform ``draw`` in [0, 1)."""
        return draw * min(self.max_seconds, self.base_seconds * 2.0 ** min(retry, 60))

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> RaceSettings:
        """From ``ONEIROS_RACES__ATTEMPTS``, ``__BASE_SECONDS`` and ``__MAX_SECONDS`` (what
        ``oneiros.toml``'s ``[races]`` answers to), for code that reads no config file."""
        source = os.environ if env is None else env
        values: dict[str, float | int] = {}
        for name, kind in (("attempts", int), ("base_seconds", float), ("max_seconds", float)):
            raw = source.get(RACES_ENV + name.upper())
            if raw is None or not raw.strip():
                continue
            try:
                values[name] = kind(raw)
            except ValueError:
                raise InvalidSetting(f"races.{name}", raw, kind.__name__, f"env {RACES_ENV}{name.upper()}") from None
        return cls(**values)  # type: ignore[arg-type]
