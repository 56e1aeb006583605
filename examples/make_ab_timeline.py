"""Writes ab_timeline.jsonl, the timeline `oneiros ab` replays in the tests and docs/insight.md.

Three rounds of the bundled sample episodes (ticks shifted by 1000 and times by 30 days a round),
each half followed by a dream point and then by four outcomes per episode of that half: what
happened each time the same situation came back (the episode's tags and regime, confirming when it gained,
contradicting when it lost). Run: python examples/make_ab_timeline.py
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "oneiros" / "data" / "sample_episodes.jsonl"
OUT = Path(__file__).with_name("ab_timeline.jsonl")
ROUNDS = 3
ECHOES = 4


def main() -> None:
    episodes = [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]
    lines: list[dict[str, object]] = []
    for round_ in range(ROUNDS):
        shift = 1000 * round_
        halves = (episodes[: len(episodes) // 2], episodes[len(episodes) // 2 :])
        for half in halves:
            shifted = []
            for e in half:
                moved = dict(e, tick=e["tick"] + shift)
                moved["time"] = (datetime.fromisoformat(e["time"]) + timedelta(days=30 * round_)).isoformat()
                shifted.append(moved)
                lines.append({"tick": moved["tick"], "episode": moved})
            tick = shifted[-1]["tick"] + 1
            lines.append({"tick": tick, "dream": True})
            for index, e in enumerate(shifted, start=1):
                for _ in range(ECHOES):
                    # The echoes of one episode share a tick, so a half's outcomes end before the next episode.
                    verdict = "confirms" if e["outcome"]["pnl"] >= 0 else "contradicts"
                    outcome = {"verdict": verdict, "summary": e["summary"], "tags": e["tags"], "regime": e["regime"]}
                    lines.append({"tick": tick + index, "outcome": outcome})
    OUT.write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))


if __name__ == "__main__":
    main()
