"""The deployed whole, as processes: compose.yaml's services run locally against this test's own
Redis and PostgreSQL; a daemon configured by a file alone schedules a cycle that two workers run on
an OpenAI-compatible server; a worker's own config never overrides the cycle's; a plain
`oneiros dream` leaves a trace to draw."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from redis import Redis

from oneiros import Golems, open_store
from oneiros.config._load import load_config
from oneiros.daemon._daemon import Daemon
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.events._staging import STAGING_STREAM, side_stream
from oneiros.events._types import DreamPhase, DreamStart
from oneiros.settings._cycle import CycleSettings
from oneiros.settings._generator import GeneratorSettings
from oneiros.settings._scheduling import PhaseValues, PreconditionSettings, ScheduleSettings
from oneiros.settings._vocabulary import BEHAVIORAL_PHASES
from oneiros.store._store import EventStore
from oneiros.telemetry._spanfile import read_spans
from oneiros.workers._dispatch import RqExecutor
from tests.conftest import postgres_url
from tests.workers.conftest import _free_port
from tests.workers.deployment import (
    OURS,
    Processes,
    chat_server,
    clean_env,
    compose_services,
    local_command,
    wait_for,
)
from tests.workers.support import FAST, ROOT, worker_command

pytestmark = [pytest.mark.postgres, pytest.mark.redis]
PHASES = ["hypnagogic_onset", "nrem", "rem", "integration", "hypnopompic_return"]
SECRET = "sk-test-never-logged-3f9a"
SERVER_TOKEN = "oneiros_test-server-token-from-the-environment-7c1e"


@pytest.fixture
def pg_url(pg_schema: str) -> str:
    return postgres_url(pg_schema)


def _golem_with_episodes(store_url: str, golem_id: str = "golem") -> EventStore:
    """The host's part: a golem and its episodes (a deployment brings no sample data of its own)."""
    store = open_store(store_url)
    golems = Golems(store)
    golems.create(golem_id)
    golems.record_episodes(golem_id, load_episodes(sample_episodes_path()))
    return store


def _awake_after_a_cycle(store: EventStore, golem_id: str = "golem") -> bool:
    """A cycle completed and the golem woke: hypnopompic return, the phase after DreamComplete, ran too."""
    state = Golems(store).state(golem_id)
    return state.cycles_completed >= 1 and state.mode == "Waking"


def test_compose_file_is_a_deployment_that_publishes_nothing() -> None:
    """compose.yaml has PostgreSQL, Redis and Jaeger, a scalable worker, a daemon whose mounted
    config schedules, and a server whose token comes from the environment; no service publishes a
    port unless compose.ports.yaml is added on purpose, and that publishes the API on loopback only."""
    services = compose_services()
    assert {"postgres", "redis", "jaeger", "worker", "daemon", "server"} == set(services)
    assert [] == [name for name, s in services.items() if "ports" in s]
    assert 2 == services["worker"]["deploy"]["replicas"]
    assert {"worker", "daemon", "server"} == {name for name, s in services.items() if s.get("image") == OURS}
    assert ["oneiros", "serve"] == services["server"]["command"][:2]
    assert "${ONEIROS_SERVER_TOKEN:-}" == services["server"]["environment"]["ONEIROS_SERVER_TOKEN"]
    published = yaml.safe_load((ROOT / "compose.ports.yaml").read_text())["services"]
    assert ["127.0.0.1:8420:8420"] == published["server"]["ports"]
    (mount,) = [v for v in services["daemon"]["volumes"] if v.endswith(":ro")]
    source, target = mount.split(":")[:2]
    assert target in services["daemon"]["command"]
    assert load_config(ROOT / source, environ={}).schedule.enabled
    assert "sample" not in json.dumps(services)


def test_compose_services_run_as_local_processes(redis_url: str, pg_url: str, tmp_path: Path) -> None:
    """Each oneiros service's command from compose.yaml, run as a local process (two worker
    replicas) against this test's servers: the daemon schedules a cycle with its mounted config,
    the workers run its five phases, the daemon's follower admits the outputs, the server answers
    with the token from the environment (and 401 without it), the golem gets no sample episodes,
    and all stop cleanly."""
    store = _golem_with_episodes(pg_url)
    episodes = store.read_stream("golem")
    spans_dir = tmp_path / "spans"
    spans_dir.mkdir()
    procs = Processes(tmp_path)
    services = compose_services()
    port = _free_port()
    for name in ("daemon", "worker", "server"):
        argv, env = local_command(services[name], {"spans": spans_dir})
        assert env["ONEIROS_STORE"].startswith("postgresql://oneiros:oneiros@postgres:5432/")
        assert "redis://redis:6379/0" == env["ONEIROS_QUEUE"]
        env = {**env, "ONEIROS_STORE": pg_url, "ONEIROS_QUEUE": redis_url}
        env.pop("OTEL_EXPORTER_OTLP_ENDPOINT")  # no Jaeger here; the span file stands in
        # Only time is compressed: a tick a second, no 2 h of silence, one cycle, fast recovery.
        env |= {
            "ONEIROS_DAEMON__TICK_SECONDS": "0.5",
            "ONEIROS_SCHEDULE__SILENCE_SECONDS": "0",
            "ONEIROS_SCHEDULE__MAX_PER_DAY": "1",
            "ONEIROS_RQ_SETTINGS": msgspec.json.encode(FAST).decode(),
        }
        if name == "server":  # loopback and a free port here; the token as an operator sets it
            assert "${ONEIROS_SERVER_TOKEN:-}" == services[name]["environment"]["ONEIROS_SERVER_TOKEN"]
            env |= {
                "ONEIROS_SERVER__HOST": "127.0.0.1",
                "ONEIROS_SERVER__PORT": str(port),
                "ONEIROS_SERVER__QUEUE": redis_url,
                "ONEIROS_SERVER_TOKEN": SERVER_TOKEN,
            }
        for replica in range(services[name].get("deploy", {}).get("replicas", 1)):
            procs.start(f"{name}-{replica}", argv, clean_env(**env))
    try:
        wait_for(lambda: _awake_after_a_cycle(store), 90, "a completed cycle", procs)
        staging = side_stream("golem", STAGING_STREAM)
        wait_for(lambda: bool(store.read_stream(staging)), 30, "the daemon's follower admitting outputs", procs)
        url = f"http://127.0.0.1:{port}/api/v1/golems/golem"
        wait_for(lambda: _get(url, SERVER_TOKEN)[0] == 200, 30, "the server", procs)
        status, body = _get(url, SERVER_TOKEN)
        unauthenticated, _ = _get(url, None)
    finally:
        codes = procs.stop()
    # uvicorn ends its graceful shutdown by raising the SIGTERM it caught again, as a server should.
    assert {"daemon-0": 0, "worker-0": 0, "worker-1": 0, "server-0": -signal.SIGTERM} == codes
    assert "Application shutdown complete." in procs.output("server-0")
    assert (200, 401) == (status, unauthenticated)
    assert ("golem", 1) == (body["golem_id"], body["cycles_completed"])
    assert [] == [n for n in procs.procs if SERVER_TOKEN in procs.output(n)]
    records = store.read_stream("golem")
    (start,) = [r.event for r in records if isinstance(r.event, DreamStart)]
    assert "idle" == start.trigger
    assert len([r for r in episodes if r.event.type_name == "EpisodeRecorded"]) == len(
        [r for r in records if r.event.type_name == "EpisodeRecorded"]
    )
    phase_lines = [
        json.loads(line)
        for name in ("worker-0", "worker-1")
        for line in procs.output(name).splitlines()
        if line.startswith("{") and '"phase end"' in line
    ]
    assert PHASES == sorted((p["phase"] for p in phase_lines), key=PHASES.index)
    found = read_spans(spans_dir / "spans.jsonl")
    assert {"cycle", *(f"phase {p}" for p in PHASES)} <= {s.name for s in found}


def _get(url: str, token: str | None) -> tuple[int, Any]:
    """The status and JSON body of a GET, with a bearer token if given; 0 if nothing answers."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, None
    except OSError:
        return 0, None


def _e2e_config(path: Path, pg_url: str, redis_url: str, base_url: str, spans: Path) -> None:
    models = {p: f"m-{p}" for p in ("hypnagogic_onset", "nrem", "rem", "integration")}
    path.write_text(
        f'store = "{pg_url}"\nqueue = "{redis_url}"\ngolem = "golem"\n'
        '[schedule]\nenabled = true\nmode = "owner"\nidle_trigger = true\nsilence_seconds = 0\n'
        "cooldown_seconds = 0\ndream_hours = [" + ", ".join(str(h) for h in range(24)) + "]\nmax_per_day = 1\n"
        "require_no_pending_messages = false\n"
        "[schedule.preconditions.first_dream_episodes]\n"
        "thriving = 0\nstable = 0\nconservation = 0\ndeclining = 0\nterminal = 0\n"
        "[daemon]\ntick_seconds = 0.5\n"
        f'[tracing]\nspans_path = "{spans}"\n'
        f"[rq]\n{''.join(f'{k} = {json.dumps(v)}{chr(10)}' for k, v in msgspec.to_builtins(FAST).items())}"
        '[cycle.budget]\ntier = "hardened"\n'
        "[cycle.engines]\nexploration_temperature = 0.65\n"
        "[cycle.engines.nrem]\ntemperature = 0.25\n"
        "[cycle.engines.rem]\ndream_temperature = 1.05\n"
        "[cycle.engines.integration]\ntemperature = 0.15\n"
        "[cycle.engines.consolidation]\ntemperature = 0.05\n"
        '[cycle.generator]\nkind = "openai"\n'
        f'[cycle.generator.openai]\nbase_url = "{base_url}"\nretries = 0\n'
        'models = { core = "m-core", hardened = "m-hardened" }\n'
        "phase_models = { " + ", ".join(f'{k} = "{v}"' for k, v in models.items()) + " }\n"
    )


def test_daemon_with_a_config_file_schedules_a_cycle_that_two_workers_run(  # noqa: PLR0915 - one story end to end
    redis_url: str, pg_url: str, tmp_path: Path
) -> None:
    """`oneiros run --config FILE` alone (no ONEIROS_* variables) schedules a cycle; two
    `oneiros worker` processes, given only the store, the queue and the API key, run its five
    phases against a chat-completions server at the configured base URL, with the configured
    models and temperatures; the journal shows the cycle; the trace has the daemon's root span and
    every worker's phase spans; the API key is in no log, span, job or event."""
    store = _golem_with_episodes(pg_url)
    config = tmp_path / "daemon.toml"  # not ./oneiros.toml: the workers, started here too, must not read it
    procs = Processes(tmp_path)
    with chat_server() as server:
        spans = tmp_path / "spans.jsonl"
        _e2e_config(config, pg_url, redis_url, server.base_url, spans)
        procs.start("daemon", [sys.executable, "-m", "oneiros", "run", "--config", str(config)], clean_env())
        worker = [sys.executable, "-m", "oneiros", "worker", "--queue", redis_url, "--store", pg_url]
        for n in range(2):
            argv = [*worker, "--log-format", "json", "--spans", str(spans)]
            procs.start(f"worker-{n}", argv, clean_env(OPENAI_API_KEY=SECRET))
        try:
            wait_for(lambda: _awake_after_a_cycle(store), 120, "a completed cycle", procs)
        finally:
            codes = procs.stop()
        seen = server.seen()
    assert {"daemon": 0, "worker-0": 0, "worker-1": 0} == codes
    assert {f"Bearer {SECRET}"} == server.authorizations
    assert {"m-hypnagogic_onset", "m-nrem", "m-rem", "m-integration"} == set(seen)
    assert ({0.25, 0.05}, {0.15}) == (seen["m-nrem"], seen["m-integration"])  # replay, then its observations
    assert {0.65, 1.05} <= seen["m-rem"]
    records = store.read_stream("golem")
    (start,) = [r for r in records if isinstance(r.event, DreamStart)]
    assert start.event.settings is not None
    assert "hardened" == start.event.settings.budget.tier
    phases = [r.event.phase for r in records if isinstance(r.event, DreamPhase)]
    assert PHASES == phases

    journal = subprocess.run(
        [sys.executable, "-m", "oneiros", "journal", "--store", pg_url, "--json"],
        capture_output=True, text=True, cwd=tmp_path, env=clean_env(), check=False,
    )  # fmt: skip
    assert 0 == journal.returncode, journal.stderr
    (entry,) = json.loads(journal.stdout)
    assert (start.event.cycle_id, "golem") == (entry["cycle_id"], entry["golem_id"])

    found = read_spans(spans)
    (root,) = [s for s in found if s.name == "cycle"]
    assert procs.procs["daemon"].pid == root.pid
    phase_spans = [s for s in found if s.name.startswith("phase ")]
    assert PHASES == sorted((s.attributes["oneiros.phase"] for s in phase_spans), key=PHASES.index)
    assert {root.span_id} == {s.parent_id for s in phase_spans}
    assert {s.pid for s in phase_spans} <= {procs.procs["worker-0"].pid, procs.procs["worker-1"].pid}
    assert "complete" == root.attributes["oneiros.outcome"]

    dumped = Redis.from_url(redis_url)
    jobs = b"".join(dumped.dump(key) or b"" for key in dumped.keys("rq:job:*"))
    texts = [spans.read_text(), *(procs.output(n) for n in procs.procs), jobs.decode("latin-1")]
    texts.append(json.dumps([msgspec.to_builtins(r.event) for r in records]))
    assert [] == [t[:80] for t in texts if SECRET in t]
    lines = [json.loads(line) for line in procs.output("worker-0").splitlines() if line.startswith("{")]
    lines += [json.loads(line) for line in procs.output("worker-1").splitlines() if line.startswith("{")]
    ends = [line for line in lines if line["message"] == "phase end"]
    assert PHASES == sorted((e["phase"] for e in ends), key=PHASES.index)
    assert all({"cycle", "golem", "phase", "worker", "seconds", "tokens", "cost"} <= set(e) for e in ends)
    assert os.environ.get("OPENAI_API_KEY", "") != SECRET


def test_a_worker_configured_core_runs_a_cycle_started_hardened_as_hardened(redis_url: str, tmp_path: Path) -> None:
    """`ONEIROS_CYCLE__BUDGET__CYCLE_TOKENS=9000 dream --queue --tier hardened --wait` with a worker
    whose own config says core with 1,000 tokens: the cycle records hardened with the 9,000 the
    dreamer set (a tier supplies defaults, never overrides a cap), every phase runs on its share
    of it, `--wait` reports each phase with its worker and exits 0; the worker's local tier and
    caps are never used."""
    store_url = f"sqlite:///{tmp_path}/events.db"
    (tmp_path / "worker.toml").write_text('[cycle.budget]\ntier = "core"\ncycle_tokens = 1000\n')
    env = clean_env(ONEIROS_STORE=store_url, ONEIROS_QUEUE=redis_url, ONEIROS_SPANS=str(tmp_path / "spans.jsonl"))
    env["ONEIROS_RQ_SETTINGS"] = msgspec.json.encode(FAST).decode()
    procs = Processes(tmp_path)
    procs.start("worker", [sys.executable, "-m", "oneiros", "worker", "--config", str(tmp_path / "worker.toml")], env)
    try:
        dreamt = subprocess.run(
            [sys.executable, "-m", "oneiros", "dream", "--sample", "--tier", "hardened", "--wait"],
            capture_output=True, text=True, cwd=tmp_path, check=False, timeout=120,
            env={**env, "ONEIROS_CYCLE__BUDGET__CYCLE_TOKENS": "9000"},
        )  # fmt: skip
    finally:
        codes = procs.stop()
    assert 0 == dreamt.returncode, dreamt.stdout + dreamt.stderr
    assert {"worker": 0} == codes
    followed = [line.split()[0] for line in dreamt.stdout.splitlines() if line.startswith("  ")]
    assert PHASES == followed[: len(PHASES)]
    store = open_store(store_url)
    records = store.read_stream("golem")
    (start,) = [r.event for r in records if isinstance(r.event, DreamStart)]
    assert start.settings is not None
    assert ("hardened", 9_000) == (start.settings.budget.tier, start.settings.budget.cycle_tokens)
    budgets = [r.event.budget_tokens for r in records if isinstance(r.event, DreamPhase)]
    assert 9_000 * 0.3 == budgets[PHASES.index("rem")]  # the stable phase's REM share of the cycle
    assert any(r.event.type_name == "DreamComplete" for r in records)


def test_trace_after_a_plain_dream_draws_the_cycle(tmp_path: Path) -> None:
    """`oneiros dream` in-process, then `oneiros trace CYCLE`: the tree has the cycle, its five
    phases, generator calls and store appends, all from the one process."""
    env = clean_env()
    run = [sys.executable, "-m", "oneiros"]
    dreamt = subprocess.run(
        [*run, "dream", "--sample", "--json"], capture_output=True, text=True, cwd=tmp_path, env=env, check=False
    )
    assert 0 == dreamt.returncode, dreamt.stderr
    cycle_id = json.loads(dreamt.stdout)["cycle_id"]
    wide = {**env, "COLUMNS": "200"}
    drawn = subprocess.run(
        [*run, "trace", cycle_id], capture_output=True, text=True, cwd=tmp_path, env=wide, check=False
    )
    assert 0 == drawn.returncode, drawn.stderr
    assert f"cycle {cycle_id}" in drawn.stdout
    for name in ("cycle", "fall_asleep", *(f"phase {p}" for p in PHASES), "generate", "store.append"):
        assert name in drawn.stdout, name


def test_standard_rq_tools_with_the_serializer_and_a_plain_rq_worker_strands_nothing(
    redis_url: str, tmp_path: Path
) -> None:
    """A plain `rq worker` (pickle) takes a phase job and fails it: `rq info` and `rq requeue` with
    ``--serializer oneiros.workers.JsonSerializer`` still read the job, and the requeued phase runs
    to a complete cycle on `oneiros worker`. Without the requeue, the next `oneiros worker` sweep
    ends the cycle interrupted with a reason naming the serializer: the golem is never stranded."""
    env = clean_env(
        ONEIROS_STORE=f"sqlite:///{tmp_path}/events.db",
        ONEIROS_QUEUE=redis_url,
        ONEIROS_RQ_SETTINGS=msgspec.json.encode(FAST).decode(),
        ONEIROS_SPANS=str(tmp_path / "spans.jsonl"),
    )
    serializer = ["--serializer", "oneiros.workers.JsonSerializer"]
    rq = [str(Path(sys.executable).parent / "rq")]

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(argv), capture_output=True, text=True, cwd=tmp_path, env=env, check=False, timeout=120
        )

    def plain_worker_fails_a_phase() -> str:
        enqueued = run(sys.executable, "-m", "oneiros", "dream", "--sample", "--json")
        assert 0 == enqueued.returncode, enqueued.stderr
        assert 0 == run(*rq, "worker", "--url", redis_url, "--burst", FAST.queue).returncode
        return str(json.loads(enqueued.stdout)["cycle_id"])

    first = plain_worker_fails_a_phase()
    info = run(*rq, "info", "--url", redis_url, *serializer, "--only-queues", FAST.queue)
    assert 0 == info.returncode, info.stderr
    assert FAST.queue in info.stdout
    requeued = run(*rq, "requeue", "--url", redis_url, *serializer, "--queue", FAST.queue, "--all")
    assert 0 == requeued.returncode, requeued.stderr
    assert 0 == run(sys.executable, "-m", "oneiros", "worker", "--burst").returncode

    second = plain_worker_fails_a_phase()
    assert 0 == run(sys.executable, "-m", "oneiros", "worker", "--burst").returncode
    store = open_store(f"sqlite:///{tmp_path}/events.db")
    records = store.read_stream("golem")
    ends = {r.event.cycle_id: r.event for r in records if r.event.type_name in ("DreamComplete", "DreamInterrupted")}
    assert "DreamComplete" == ends[first].type_name
    assert (
        "hypnagogic_onset failed for good: a worker without oneiros's serializer took the job "
        "(run RQ tools with --serializer oneiros.workers.JsonSerializer)"
    ) == getattr(ends[second], "reason", None)
    assert "Waking" == Golems(store).state("golem").mode


@pytest.mark.parametrize("ending", ["wake", "death"])
def test_a_wake_or_death_interrupt_reaches_a_cycle_running_on_workers(
    ending: str, redis_url: str, tmp_path: Path
) -> None:
    """The daemon dispatches to RQ and keeps its heartbeat; `oneiros status` shows the running
    cycle with its phase, worker and age; an owner's wake interrupt (or the golem's death)
    mid-cycle is recorded, the phase job running then stops without appending, no later phase
    starts, and the daemon's cycle thread ends with the interrupt as its result."""
    store_url = f"sqlite:///{tmp_path}/events.db"
    store = _golem_with_episodes(store_url)
    golems = Golems(store)
    slow = CycleSettings(generator=GeneratorSettings(kind="sleep:1.0"))
    executor = RqExecutor(golems, Redis.from_url(redis_url), FAST, slow, poll_interval=0.1)
    no_wait = PreconditionSettings(first_dream_episodes=PhaseValues(**dict.fromkeys(BEHAVIORAL_PHASES, 0)))
    daemon = Daemon(golems, "golem", executor, schedule=ScheduleSettings(preconditions=no_wait))
    procs = Processes(tmp_path)
    procs.start("worker", worker_command(redis_url, store_url, tmp_path / "spans.jsonl"), clean_env())
    try:
        daemon.direct("dream now")
        assert daemon.tick() is not None
        assert None is daemon.tick()  # the heartbeat answers while the cycle runs on the worker
        wait_for(lambda: golems.state("golem").phase == "nrem", 60, "NREM under way", procs)
        shown = subprocess.run(
            [sys.executable, "-m", "oneiros", "status", "--json", "--store", store_url, "--queue", redis_url],
            capture_output=True, text=True, cwd=tmp_path, env=clean_env(), check=False,
        )  # fmt: skip
        assert 0 == shown.returncode, shown.stderr
        (running,) = json.loads(shown.stdout)["running"]
        assert "golem" == running["golem_id"]
        assert running["phase"] in ("nrem", "rem")
        assert running["worker"] not in ("no job", "queued", "-")
        assert running["age_seconds"] >= 0
        if ending == "wake":
            assert daemon.interrupt("owner", "the owner needs the golem")
        else:
            assert None is daemon.die("the owner needs the golem")
        assert daemon.wait(30)
        wait_for(lambda: "then=cycle not running" in procs.output("worker"), 30, "the NREM job to stop", procs)
    finally:
        codes = procs.stop()
    assert {"worker": 0} == codes
    (result,) = daemon.results
    assert "the owner needs the golem" == result.interrupted
    records = store.read_stream("golem")
    types = [r.event.type_name for r in records]
    after = types[types.index("DreamInterrupted") :]
    assert "DreamPhase" not in after
    assert "GenerationRecorded" not in after
    assert ("Waking" if ending == "wake" else "Dying") == golems.state("golem").mode
