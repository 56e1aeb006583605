"""Time arithmetic of the gates: local days, circadian hours and sleep windows, all in IANA zones.

Every function takes an aware ``now`` and the zone by name; nothing reads the wall clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, time, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

import msgspec

from oneiros.events._types import DreamTrigger

__all__ = ["Check", "cycles_since", "hhmm", "local_day_start", "seconds", "window_start", "zone"]


class Check(msgspec.Struct, frozen=True, array_like=True):
    """One gate, precondition or trigger: whether it passed and the values it compared."""

    name: str
    passed: bool
    detail: str

    def reason(self) -> str:
        return f"{'pass' if self.passed else 'FAIL'} {self.name}: {self.detail}"


@lru_cache(maxsize=64)
def zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


@lru_cache(maxsize=256)
def hhmm(text: str) -> int:
    """Minutes after midnight of ``"HH:MM"`` (validated by the config)."""
    return int(text[:2]) * 60 + int(text[3:5])


def seconds(value: float) -> str:
    """``3599`` → ``"59m59s"``: durations in reasons read like the documents' figures."""
    total = int(value)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def local_day_start(local: datetime) -> datetime:
    """Midnight that began ``local``'s calendar day, in its zone."""
    return datetime.combine(local.date(), time(0), tzinfo=local.tzinfo)


def window_start(now: datetime, start: str, end: str, zone_name: str) -> datetime | None:
    """When the window ``start``-``end`` (local to ``zone_name``) that holds ``now`` opened, or None
    if ``now`` is outside it. ``end`` before ``start`` spans midnight; ``end == start`` is all day."""
    local = now.astimezone(zone(zone_name))
    minute = local.hour * 60 + local.minute
    first, last = hhmm(start), hhmm(end)
    day = local_day_start(local)
    if first < last:
        inside = first <= minute < last
        opened = day
    elif first == last:
        inside, opened = True, day
    else:
        inside = minute >= first or minute < last
        opened = day if minute >= first else day - timedelta(days=1)
    if not inside:
        return None
    return datetime.combine(opened.date(), time(first // 60, first % 60), tzinfo=local.tzinfo)


def cycles_since(
    starts: Sequence[tuple[datetime, DreamTrigger]], since: datetime, trigger: DreamTrigger | None = None
) -> int:
    """Cycles started at or after ``since`` (newest last in ``starts``), of ``trigger`` if given."""
    count = 0
    for started, kind in reversed(starts):
        if started < since:
            break
        if trigger is None or kind == trigger:
            count += 1
    return count
