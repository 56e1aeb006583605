"""One writer process of the concurrent-writers chaos test (tests/test_chaos_writers.py).

``python -m tests.chaos_writer ROLE STORE_URL WRITER COUNT [GO_FILE]`` waits for GO_FILE, then
writes to golem ``g`` and prints, as its last line, one JSON object of what it wrote (what the
test counts against the log):

* ``episodes``: COUNT batches of two episodes, ticks unique to this writer;
* ``activity``: COUNT ActivityRecorded, details unique to this writer;
* ``outcomes``: COUNT OutcomeRecorded on the feedback stream, ticks unique to this writer;
* ``dreamer``: COUNT in-process cycles (a start refused because the golem dreams already is
  retried after a pause); ``faulty`` the same with a generator that raises in REM every other cycle.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from oneiros import Deps, Golems, IllegalCommand, InProcessExecutor, open_store
from oneiros.events._schedule import ActivityRecorded
from oneiros.events._types import Episode
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._protocol import Generation, GenerationRequest
from oneiros.validation._review import Feedback, OutcomeInput

_BASE = 1_000_000
_PAUSE_S = 0.05


class _Faulty:
    """The offline generator, raising in REM of the even-numbered cycles: a phase that fails."""

    def __init__(self) -> None:
        self.inner = OfflineGenerator(seed=0)

    def generate(self, request: GenerationRequest) -> Generation:
        number = int(request.call_key.split(":", 1)[0].rsplit("-c", 1)[1])
        if request.phase == "rem" and number % 2 == 0:
            raise RuntimeError("chaos: model exploded")
        return self.inner.generate(request)


def _dream(golems: Golems, writer: int, count: int, faulty: bool) -> dict[str, object]:
    executor = InProcessExecutor(golems, _Faulty() if faulty else None)
    cycles: list[str] = []
    refused = 0
    for n in range(count):
        cycle_id = f"w{writer}-c{n}"
        deadline = time.monotonic() + 120
        while True:
            try:
                executor.run_cycle("g", cycle_id=cycle_id)
            except IllegalCommand:  # another process's cycle is on: try again once it woke
                refused += 1
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
                continue
            cycles.append(cycle_id)
            break
    return {"cycles": cycles, "refused": refused}


def main(role: str, url: str, writer: int, count: int) -> dict[str, object]:
    store = open_store(url)
    go = Path(sys.argv[5]) if len(sys.argv) > 5 else None
    while go is not None and not go.exists():  # every process starts writing at the same moment
        time.sleep(0.01)
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        time.sleep(seconds)

    golems = Golems(store, deps=Deps(seed=writer, sleep=sleep))
    retries: list[int] = []

    def _pace() -> None:
        retries.append(len(sleeps))
        sleeps.clear()
        time.sleep(_PAUSE_S)  # host facts keep arriving while the dreamers dream

    first = _BASE + writer * 100_000
    try:
        if role == "episodes":
            ticks: list[int] = []
            for n in range(count):
                batch = [first + 2 * n, first + 2 * n + 1]
                golems.record_episodes("g", [Episode(tick=t, summary=f"writer {writer} tick {t}") for t in batch])
                ticks += batch
                _pace()
            return {"episodes": ticks, "retries": retries}
        if role == "activity":
            details = [f"w{writer}-a{n}" for n in range(count)]
            for detail in details:
                golems.record("g", [ActivityRecorded(kind="action", detail=detail)])
                _pace()
            return {"activity": details, "retries": retries}
        if role == "outcomes":
            feedback = Feedback(store)
            outcome_ticks = [first + n for n in range(count)]
            for tick in outcome_ticks:
                feedback.record_outcome("g", OutcomeInput(tick=tick, verdict="confirms", summary=f"w{writer}"))
                _pace()
            return {"outcomes": outcome_ticks}
        return _dream(golems, writer, count, faulty=role == "faulty")
    finally:
        store.close()


if __name__ == "__main__":
    role, url, writer, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    print(json.dumps(main(role, url, writer, count)))
