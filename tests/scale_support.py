"""A fixed log for the scale tests: episodes of every shape the engines read (times and none,
replaced ticks, high priority, own embeddings absent), and the cycles' events as comparable lines."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import msgspec

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, SequentialIds, open_store
from oneiros.events._types import DreamStart, Episode, Outcome
from oneiros.settings._cycle import CycleBudget, CycleSettings
from oneiros.store._store import Recorded

WORDS = [
    "eth",
    "btc",
    "sol",
    "oracle",
    "gas",
    "liquidity",
    "funding",
    "basis",
    "vault",
    "bridge",
    "whale",
    "breakout",
    "range",
    "dump",
    "hedge",
]


def fixed_episodes(n: int, seed: int = 3) -> list[Episode]:
    rng = random.Random(seed)
    start = datetime(2025, 6, 1, tzinfo=UTC)
    out = []
    for i in range(n):
        tick = i if i % 17 else max(0, i - 5)  # every 17th replaces an earlier tick
        out.append(
            Episode(
                tick=tick,
                summary=" ".join(rng.sample(WORDS, 4)),
                time=None if i % 11 == 0 else start + timedelta(minutes=37 * i, microseconds=rng.randrange(10**6)),
                tags=tuple(rng.sample(WORDS, rng.randrange(3))),
                regime=rng.choice(("ranging", "trending", "volatile")),
                significance=round(rng.random(), 3),
                arousal=round(rng.random(), 3),
                outcome=Outcome(
                    surprise=round(rng.random(), 3), pnl=round(rng.uniform(-0.04, 0.04), 4), regret=rng.random() / 4
                ),
                prediction_error=rng.uniform(-0.2, 0.2),
                dream_priority="high" if i % 13 == 0 else "normal",
            )
        )
    return out


def cycle_lines(tier: str = "core", n: int = 400, cycles: int = 2) -> list[str]:
    """Every event of ``cycles`` cycles over a fixed log, episodes recorded between them, one
    JSON line each: type, version and data (metadata carries no information a cycle decides)."""
    deps = Deps(clock=FixedClock(datetime(2026, 2, 1, 2, 0, tzinfo=UTC)), ids=SequentialIds("c"), seed=11)
    golems = Golems(open_store("memory://"), deps=deps)
    golems.create("g")
    episodes = fixed_episodes(n)
    half = len(episodes) // 2
    golems.record_episodes("g", episodes[:half])
    settings = CycleSettings(budget=CycleBudget(tier=tier))  # type: ignore[arg-type]
    executor = InProcessExecutor(golems, settings=settings)
    lines: list[str] = []
    for index in range(cycles):
        head = golems.store.head()
        executor.run_cycle("g", cycle_id=f"cycle-{index}")
        lines += [_line(r) for r in golems.store.read_all(after=head)]
        golems.record_episodes("g", episodes[half:] if index == 0 else episodes[:7])
    return lines


def _line(record: Recorded) -> str:
    data = msgspec.to_builtins(record.event)
    if isinstance(record.event, DreamStart):
        # The settings a cycle records are what it was given, not what it decided (and came after
        # these lines were captured).
        data.pop("settings", None)
    return msgspec.json.encode({"type": record.event.type_name, "version": record.version, "data": data}).decode()
