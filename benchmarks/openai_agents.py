"""What an OpenAI Agents SDK turn costs with ``OneirosSession``, against the SDK's own ``SQLiteSession``.

A turn is what ``Runner.run`` asks of its session: ``get_items()`` (the history), ``add_items`` of
the user's message, then ``add_items`` of the model's reply. Both sessions keep a file of their
own on the same disk, already holding ``--history`` items; each round runs ``--turns`` turns on
each, interleaved. ``turn_ms`` figures are medians over rounds of one turn's wall time;
``restart_ms`` the first ``get_items()`` of a new object on the long session (oneiros folds the
stream once, the SDK reads its table). ``*_vs_sdk`` is the SDK's time over ours: below 1, oneiros
is slower, by what recording every turn as an event, catching its read models up and keeping the
log the only truth costs. Progress goes to stderr; the last line is one JSON object.

    python benchmarks/openai_agents.py [--history 500] [--turns 20] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._common import emit, median_ratio


def _said(role: str, n: int) -> Any:
    return {"role": role, "content": f"turn {n}: deploy the billing service behind a canary, then check the errors"}


async def _turns(session: Any, first: int, turns: int) -> float:
    started = time.perf_counter()
    for n in range(first, first + turns):
        await session.get_items()
        await session.add_items([_said("user", n)])
        await session.add_items([_said("assistant", n)])
    return (time.perf_counter() - started) / turns


async def _restart(make: Any) -> float:
    session = make()
    started = time.perf_counter()
    await session.get_items()
    elapsed = time.perf_counter() - started
    session.close()
    return elapsed


async def main(history: int, turns: int, runs: int) -> dict[str, Any]:
    from agents.memory import SQLiteSession

    from oneiros.integrations.openai_agents import OneirosSession

    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/events.db"

        def ours() -> Any:
            return OneirosSession("alice", url)

        def sdk() -> Any:
            return SQLiteSession("alice", f"{folder}/sdk.db")

        sessions = {"oneiros": ours(), "sdk": sdk()}
        for name, session in sessions.items():
            for start in range(0, history, 100):
                await session.add_items([_said("user", n) for n in range(start, min(start + 100, history))])
            print(f"{name}: {history} items of history", file=sys.stderr)
        times: dict[str, list[float]] = {name: [] for name in sessions}
        restarts: dict[str, list[float]] = {name: [] for name in sessions}
        done = history
        for round_ in range(runs):
            for name, session in sessions.items():
                times[name].append(await _turns(session, done, turns))
                restarts[name].append(await _restart(ours if name == "oneiros" else sdk))
            done += turns
            print(f"round {round_ + 1}/{runs}", file=sys.stderr)
        for session in sessions.values():
            session.close()
    return {
        "history": history,
        "turns": turns,
        "runs": runs,
        "turn_ms": {name: round(statistics.median(t) * 1000, 2) for name, t in times.items()},
        "turn_vs_sdk": median_ratio(times["sdk"], times["oneiros"]),
        "restart_ms": {name: round(statistics.median(t) * 1000, 2) for name, t in restarts.items()},
        "restart_vs_sdk": median_ratio(restarts["sdk"], restarts["oneiros"]),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--history", type=int, default=500)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    emit(asyncio.run(main(args.history, args.turns, args.runs)))
