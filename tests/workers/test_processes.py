"""Worker processes against the real servers: PostgreSQL holds the log, a private redis-server the
jobs. Many workers at once, workers killed mid-phase (work-horse included), and one trace across
two workers. The chaos run's size comes from ``ONEIROS_CHAOS_CYCLES`` (30 by default)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from redis import Redis

from oneiros import Golems, InProcessExecutor, open_store
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.events._types import GenerationRecorded
from oneiros.settings._cycle import CycleSettings
from oneiros.settings._generator import GeneratorSettings
from oneiros.settings._runtime import TracingSettings
from oneiros.store._store import EventStore
from oneiros.telemetry._spanfile import read_spans
from oneiros.telemetry._spans import configure_tracing
from oneiros.workers._dispatch import RqExecutor
from tests.conftest import postgres_url
from tests.workers.support import (
    FAST,
    ROOT,
    Workers,
    check_log,
    cycle_events,
    new_golems,
    wait_until_awake,
    worker_command,
)

pytestmark = [pytest.mark.postgres, pytest.mark.redis]


@pytest.fixture
def pg_url(pg_schema: str) -> str:
    return postgres_url(pg_schema)


@pytest.fixture
def spans(tmp_path: Path) -> Path:
    return tmp_path / "spans.jsonl"


@pytest.fixture
def workers(
    redis_url: str, pg_url: str, spans: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Workers]:
    generator, worker_class = getattr(request, "param", ("offline", "simple"))
    settings = msgspec.structs.replace(FAST, worker_class=worker_class)
    pool = Workers(worker_command(redis_url, pg_url, spans, settings=settings), tmp_path)
    pool.worker_class = worker_class
    pool.cycle = CycleSettings(generator=GeneratorSettings(kind=generator))
    yield pool
    pool.stop()


def _generations(events: list[tuple[str, Any]]) -> dict[str, Any]:
    return {payload["call_key"]: payload for kind, payload in events if kind == "GenerationRecorded"}


def _check_generations_against_undisturbed_run(store: EventStore, golem_id: str, cycle_id: str) -> None:
    """Every generator call the disturbed cycle recorded is the call an undisturbed run of the same
    cycle makes, with the same answer: nothing was paid for twice or recorded wrong.

    The cycles themselves may differ: a call cut off by a kill keeps its reservation counted at its
    worst case (budgets are hard), so the retried phase can stop on its budget sooner, or restate a
    shorter batch of the night (an observe step sized to what is left, its size in its key).
    """
    reference_store = open_store("memory://")
    reference = Golems(reference_store)
    reference.create(golem_id)
    reference.record_episodes(golem_id, load_episodes(sample_episodes_path()))
    InProcessExecutor(reference).run_cycle(golem_id, cycle_id=cycle_id)
    expected = _generations(cycle_events(reference_store, golem_id, cycle_id))
    actual = _generations(cycle_events(store, golem_id, cycle_id))
    assert actual
    shared = actual.keys() & expected.keys()
    assert {key: expected[key] for key in shared} == {key: actual[key] for key in shared}
    assert [] == [key for key in actual.keys() - shared if not _a_shorter_observe_step(key, expected)]


def _a_shorter_observe_step(call_key: str, reference: dict[str, Any]) -> bool:
    """Whether ``call_key`` is an observe step over fewer episodes than the reference's from the same start."""
    prefix, _, span = call_key.rpartition(":observe:")
    start, _, size = span.partition("+")
    sizes = [int(k.rpartition("+")[2]) for k in reference if k.startswith(f"{prefix}:observe:{start}+")]
    return bool(prefix and size.isdigit() and sizes and int(size) < min(sizes))


def test_four_workers_run_fifty_cycles(redis_url: str, pg_url: str, workers: Workers) -> None:
    """4 worker processes run 50 cycles (25 golems, two cycles each): all complete, each stream has
    contiguous versions, no event is duplicated, and live states equal a replay of the log."""
    store, golems, ids = new_golems(pg_url, 25)
    executor = RqExecutor(golems, Redis.from_url(redis_url), FAST, workers.cycle)
    workers.start(4)
    for _round in range(2):
        for golem_id in ids:
            executor.start_cycle(golem_id)
        wait_until_awake(golems, ids, timeout=120)
    states = check_log(store, golems, ids)
    assert 50 == sum(s.cycles_completed for s in states.values())
    assert 0 == sum(s.cycles_interrupted for s in states.values())


# Each call takes 0.6 s so that NREM outlasts the poll that spots its first generation: at 0.3 s, on
# a loaded machine, the phase once finished before the kill landed and there was nothing to resume.
@pytest.mark.parametrize(
    "workers", [("sleep:0.6", "fork"), ("sleep:0.6", "simple")], indirect=True, ids=["fork", "simple"]
)
def test_killed_worker_resumes_from_the_log(redis_url: str, pg_url: str, workers: Workers, spans: Path) -> None:
    """SIGKILL to a worker (and its work-horse, for the forking class) mid-NREM: another worker
    retries the job, reuses the generations already recorded instead of paying for them again, and
    the cycle completes with no event duplicated."""
    store, golems, (golem_id,) = new_golems(pg_url, 1)
    executor = RqExecutor(golems, Redis.from_url(redis_url), FAST, workers.cycle)
    (first,) = workers.start(1)
    cycle_id = executor.start_cycle(golem_id, cycle_id="crash-cycle")
    deadline = time.monotonic() + 30
    while not any(
        isinstance(r.event, GenerationRecorded) and r.event.phase == "nrem" for r in store.read_stream(golem_id)
    ):
        assert time.monotonic() < deadline, "NREM never recorded a generation"
        time.sleep(0.05)
    assert (1 if workers.worker_class == "fork" else 0) == workers.kill(first)
    workers.start(1)
    result = executor.wait(golem_id, cycle_id, timeout=60)
    assert result.interrupted is None
    assert result.complete is not None
    check_log(store, golems, [golem_id])
    _check_generations_against_undisturbed_run(store, golem_id, cycle_id)
    nrem = [s for s in read_spans(spans) if s.name == "phase nrem" and s.attributes.get("oneiros.ran")]
    assert 1 == len(nrem)
    assert nrem[0].attributes["rq.attempt"] >= 2
    assert nrem[0].attributes["oneiros.reused_generations"] >= 1


@pytest.mark.slow
@pytest.mark.parametrize(
    "workers", [("sleep:0.05", "fork"), ("sleep:0.05", "simple")], indirect=True, ids=["fork", "simple"]
)
def test_chaos_kills_lose_and_duplicate_nothing(redis_url: str, pg_url: str, workers: Workers) -> None:
    """Workers and their work-horses SIGKILLed at random moments during 30 cycles: every cycle ends
    completed or interrupted with a reason, nothing is duplicated, every recorded generator call is
    the one an undisturbed run makes, and live states equal a replay of the whole log."""
    cycles = int(os.environ.get("ONEIROS_CHAOS_CYCLES", "30"))
    store, golems, ids = new_golems(pg_url, cycles)
    executor = RqExecutor(golems, Redis.from_url(redis_url), FAST, workers.cycle)
    rng = random.Random(int(os.environ.get("ONEIROS_CHAOS_SEED", "5")))
    workers.start(4)
    cycle_ids = {golem_id: executor.start_cycle(golem_id, cycle_id=f"chaos-{golem_id}") for golem_id in ids}
    horses_killed = kills = 0
    deadline = time.monotonic() + 120
    while any(golems.state(g).mode == "Dreaming" for g in ids) and kills < cycles:
        assert time.monotonic() < deadline, "chaos run did not finish"
        time.sleep(rng.uniform(0.2, 0.8))
        busy = [p for p in workers.alive() if workers.horses(p)]
        victim = rng.choice(busy or workers.alive())
        horses_killed += workers.kill(victim)
        kills += 1
        workers.start(1)
    wait_until_awake(golems, ids, timeout=120)
    assert horses_killed >= 1 or workers.worker_class == "simple"
    states = check_log(store, golems, ids)
    assert cycles == sum(s.cycles_completed + s.cycles_interrupted for s in states.values())
    for golem_id, cycle_id in cycle_ids.items():
        _check_generations_against_undisturbed_run(store, golem_id, cycle_id)


def test_one_cycle_across_two_workers_is_one_trace(redis_url: str, pg_url: str, workers: Workers, spans: Path) -> None:
    """One worker runs onset and NREM, another the rest: every span shares the cycle's trace id, the
    phases hang under the cycle's root, generator calls and appends under their phase, and the
    events carry the trace context."""
    configure_tracing(TracingSettings(spans_path=str(spans)))  # the starter's root span, next to the workers'
    store, golems, (golem_id,) = new_golems(pg_url, 1)
    executor = RqExecutor(golems, Redis.from_url(redis_url), FAST, workers.cycle)
    cycle_id = executor.start_cycle(golem_id)
    (first,) = workers.start(1, "--max-jobs", "2")
    assert 0 == first.wait(timeout=60)
    (second,) = workers.start(1, "--burst")
    assert 0 == second.wait(timeout=60)
    result = executor.wait(golem_id, cycle_id, timeout=5)
    assert result.complete is not None

    found = read_spans(spans)
    (root,) = [s for s in found if s.name == "cycle"]
    assert {root.trace_id} == {s.trace_id for s in found}
    assert root.parent_id is None
    by_id = {s.span_id: s for s in found}
    phases = [s for s in found if s.name.startswith("phase ")]
    assert ["hypnagogic_onset", "nrem", "rem", "integration", "hypnopompic_return"] == [
        s.attributes["oneiros.phase"] for s in sorted(phases, key=lambda s: s.start_ns)
    ]
    assert all(root.span_id == s.parent_id for s in phases)
    assert 2 == len({s.attributes["rq.worker"] for s in phases})
    for span in found:
        if span.name in ("generate", "store.append"):
            assert by_id[span.parent_id or ""].name in ("fall_asleep", *(p.name for p in phases)), span.name
    generations = [s for s in found if s.name == "generate"]
    assert generations
    assert all(
        {"gen_ai.response.model", "gen_ai.usage.input_tokens", "oneiros.cost_usd"} <= set(s.attributes)
        for s in generations
    )
    assert root.start_ns <= min(s.start_ns for s in phases)
    assert root.end_ns >= max(s.end_ns for s in phases)
    for record in store.read_stream(golem_id):
        if record.meta.cycle_id == cycle_id:
            assert root.trace_id == record.meta.trace["traceparent"].split("-")[1]


def test_cli_dream_queue_worker_and_trace(redis_url: str, tmp_path: Path) -> None:
    """`dream --queue` enqueues, `worker --burst` runs the cycle, `trace` draws it and `--json` lists its spans."""
    env = {
        **os.environ,
        "ONEIROS_STORE": f"sqlite:///{tmp_path}/events.db",
        "ONEIROS_SPANS": str(tmp_path / "spans.jsonl"),
    }

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "oneiros", *args], capture_output=True, text=True, env=env, cwd=ROOT, check=False
        )

    enqueued = run("dream", "--sample", "--queue", redis_url, "--json")
    assert 0 == enqueued.returncode, enqueued.stderr
    cycle_id = msgspec.json.decode(enqueued.stdout)["cycle_id"]
    worked = run(
        "worker", "--queue", redis_url, "--burst", "--count", "2", "--rq-settings", msgspec.json.encode(FAST).decode()
    )
    assert 0 == worked.returncode, worked.stderr
    drawn = run("trace", cycle_id)
    assert 0 == drawn.returncode, drawn.stderr
    assert f"cycle {cycle_id}" in drawn.stdout
    assert "phase hypnopompic_return" in drawn.stdout
    raw = msgspec.json.decode(run("trace", cycle_id, "--json").stdout)
    assert {"cycle", "fall_asleep", "generate", "store.append", "phase nrem"} <= {s["name"] for s in raw}
    missing = run("trace", "no-such-cycle")
    assert 2 == missing.returncode
    said = " ".join(missing.stderr.split())
    assert f"no cycle matches 'no-such-cycle' in the spans at {tmp_path / 'spans.jsonl'}" in said
