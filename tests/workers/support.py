"""What the RQ worker tests share: worker processes to start and kill, fast
recovery settings, generators that fail or go slow, and checks of a log after a run."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec

from oneiros import Golems, GolemState, open_store, replay
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.events._types import DreamComplete, DreamInterrupted, DreamPhase, DreamStart, GenerationRecorded
from oneiros.generators._protocol import Generation, GenerationRequest
from oneiros.settings._cycle import CycleSettings
from oneiros.settings._runtime import RqSettings
from oneiros.store._store import EventStore

ROOT = Path(__file__).resolve().parents[2]

# Recovery in seconds rather than RQ's minute and a half: heartbeats every second, a started job
# abandoned two seconds after its worker's last one, registries swept every second.
FAST = RqSettings(
    retries=3,
    min_job_timeout=30,
    heartbeat_grace=2,
    job_monitoring_interval=1,
    maintenance_interval=1,
    worker_ttl=17,
)


class FailingGenerator:
    """A model router that is down: every call fails before anything is reserved or recorded."""

    def model_for(self, request: GenerationRequest) -> str:
        raise RuntimeError(f"model router unavailable for {request.call_key.split(':', 1)[1]}")

    def generate(self, request: GenerationRequest) -> Generation:
        raise AssertionError("never reached: model_for fails first")


def failing_generator() -> FailingGenerator:
    return FailingGenerator()


def worker_command(redis: str, store: str, spans: Path, *extra: str, settings: RqSettings = FAST) -> list[str]:
    return [
        sys.executable,
        "-m",
        "oneiros",
        "worker",
        "--queue",
        redis,
        "--store",
        store,
        "--spans",
        str(spans),
        "--rq-settings",
        msgspec.json.encode(settings).decode(),
        *extra,
    ]


class Workers:
    """Worker processes, each the leader of its own process group (its work-horses make their own)."""

    def __init__(self, command: list[str], log_dir: Path) -> None:
        self.command = command
        self.log_dir = log_dir
        self.procs: list[subprocess.Popen[bytes]] = []
        self.worker_class = "simple"
        self.cycle = CycleSettings()
        """What the cycles these workers run are started with (their generator among them)."""

    def start(self, count: int = 1, *extra: str) -> list[subprocess.Popen[bytes]]:
        started = []
        for _ in range(count):
            log = open(self.log_dir / f"worker-{len(self.procs)}.log", "wb")  # noqa: SIM115 - lives as long as the process
            proc = subprocess.Popen([*self.command, *extra], cwd=ROOT, stdout=log, stderr=log, start_new_session=True)
            self.procs.append(proc)
            started.append(proc)
        return started

    def alive(self) -> list[subprocess.Popen[bytes]]:
        return [p for p in self.procs if p.poll() is None]

    @staticmethod
    def horses(proc: subprocess.Popen[bytes]) -> list[int]:
        try:
            text = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text()
        except OSError:
            return []
        return [int(pid) for pid in text.split()]

    def kill(self, proc: subprocess.Popen[bytes]) -> int:
        """SIGKILL the worker and each work-horse's process group; returns the horses killed."""
        horses = self.horses(proc)
        for horse in horses:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(horse, signal.SIGKILL)
        proc.kill()
        proc.wait()
        return len(horses)

    def stop(self) -> None:
        for proc in self.alive():
            for horse in self.horses(proc):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(horse, signal.SIGKILL)
            proc.kill()
            proc.wait()


def new_golems(store_url: str, count: int, prefix: str = "g") -> tuple[EventStore, Golems, list[str]]:
    store = open_store(store_url)
    golems = Golems(store)
    episodes = load_episodes(sample_episodes_path())
    ids = [f"{prefix}{i:03d}" for i in range(count)]
    for golem_id in ids:
        golems.create(golem_id)
        golems.record_episodes(golem_id, episodes)
    return store, golems, ids


def wait_until_awake(golems: Golems, ids: list[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    pending = list(ids)
    while pending:
        pending = [g for g in pending if golems.state(g).mode == "Dreaming"]
        if pending and time.monotonic() > deadline:
            raise AssertionError(
                f"still dreaming after {timeout} s: {pending} ({golems.state(pending[0]).machine_state})"
            )
        time.sleep(0.5)  # each poll reads whole streams: leave the CPU to the workers


def cycle_events(store: EventStore, golem_id: str, cycle_id: str) -> list[tuple[str, Any]]:
    """A cycle's events as (type, payload), the cycle id left out so two runs of it compare."""
    return [
        (r.event.type_name, msgspec.to_builtins(r.event))
        for r in store.read_stream(golem_id)
        if r.meta.cycle_id == cycle_id
    ]


def check_log(store: EventStore, golems: Golems, ids: list[str]) -> dict[str, GolemState]:
    """Contiguous versions, one start and one end per cycle, each phase entered once, each
    generator call recorded once, and live states equal to a replay of the whole log."""
    rebuilt = replay(store)
    live: dict[str, GolemState] = {}
    for golem_id in ids:
        records = store.read_stream(golem_id)
        assert list(range(1, len(records) + 1)) == [r.version for r in records], golem_id
        events = [r.event for r in records]
        starts = [e.cycle_id for e in events if isinstance(e, DreamStart)]
        ends = [e.cycle_id for e in events if isinstance(e, DreamComplete | DreamInterrupted)]
        assert sorted(starts) == sorted(ends), golem_id
        assert len(set(starts)) == len(starts)
        phases = Counter((e.cycle_id, e.phase) for e in events if isinstance(e, DreamPhase))
        assert [] == [k for k, n in phases.items() if n > 1], golem_id
        calls = Counter(e.call_key for e in events if isinstance(e, GenerationRecorded))
        assert [] == [k for k, n in calls.items() if n > 1], golem_id
        for event in events:
            if isinstance(event, DreamInterrupted):
                assert event.reason, f"{golem_id}: interrupted without a reason"
        state = golems.state(golem_id)
        assert "Waking" == state.mode
        assert msgspec.to_builtins(rebuilt[golem_id]) == msgspec.to_builtins(state)
        live[golem_id] = state
    return live


def phase_of(store_url: str, golem_id: str) -> str | None:
    """The golem's dream phase as the store says now; None while there is no store or golem yet
    (another process is still creating them)."""
    try:
        store = open_store(store_url, create=False)
    except Exception:
        return None
    try:
        return Golems(store).state(golem_id).phase
    except Exception:
        return None
    finally:
        store.close()
