"""The reconciler without a queue: leases beside every kind of store, what a pass decides for a
dreaming golem (running, starting, resumed, interrupted), the in-process resume that finishes a
stranded cycle, and ``oneiros interrupt`` / ``oneiros recover`` on the command line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, StreamConflict, open_store, replay
from oneiros._errors import InvalidSetting
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.events._liveness import PhaseResumed
from oneiros.events._types import DreamInterrupted
from oneiros.projections._db import open_projection_db
from oneiros.runtime._phase import run_phase
from oneiros.runtime._reconcile import Reconciler, Resolution
from oneiros.settings._recovery import RecoverySettings
from oneiros.store._leases import FileLeases, Lease, LeaseStore, MemoryLeases, open_leases
from oneiros.store._store import EventStore
from tests.cli_runner import run_cli
from tests.projections_support import assert_rows_equal_a_rebuild
from tests.workers.support import check_log, phase_of

ROOT = Path(__file__).resolve().parents[1]
START = datetime(2026, 5, 24, 3, 0, tzinfo=UTC)


def _lease(holder: str, *, cycle: str = "c1", phase: str | None = "nrem", ttl: float = 60.0) -> Lease:
    return Lease(golem_id="g", cycle_id=cycle, phase=phase, holder=holder, expires_at=time.time() + ttl)


def test_leases_beside_every_store(store: EventStore) -> None:
    """On memory, SQLite and PostgreSQL: a live lease blocks another holder on the same phase (or
    on the whole cycle), never its own holder, a later phase or a lapsed lease; release by anyone
    but the holder leaves it; reading a store that never had a lease finds none and creates nothing."""
    leases = open_leases(store)
    assert leases.get("g") is None
    first = _lease("a")
    assert leases.acquire(first) is None
    assert first == leases.get("g")
    assert first == leases.acquire(_lease("b"))
    assert first == leases.acquire(_lease("b", phase=None))
    assert leases.acquire(_lease("a", ttl=120)) is None
    leases.release("g", "b")
    assert "a" == (leases.get("g") or _lease("?")).holder
    assert leases.acquire(_lease("b", phase="rem")) is None  # the golem moved on: the old claim is moot
    assert leases.acquire(_lease("c", phase="rem", ttl=-1)) is not None
    leases.release("g", "b")
    assert leases.get("g") is None
    assert leases.acquire(_lease("c", ttl=-1)) is None
    assert leases.acquire(_lease("d")) is None  # a lapsed lease blocks nobody


_ops = st.lists(
    st.tuples(
        st.sampled_from(["acquire", "release"]),
        st.sampled_from(["a", "b"]),
        st.sampled_from(["c1", "c2"]),
        st.sampled_from([None, "nrem", "rem"]),
        st.booleans(),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(ops=_ops)
def test_lease_stores_agree_with_the_rule(ops: list[tuple[str, str, str, str | None, bool]]) -> None:
    """Any sequence of acquires and releases: the memory and file stores hold what the rule says
    (another holder's live lease on the same cycle and an overlapping phase blocks; nothing else)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        stores: list[LeaseStore] = [MemoryLeases(), FileLeases(Path(folder))]
        model: Lease | None = None
        for op, holder, cycle, phase, live in ops:
            lease = _lease(holder, cycle=cycle, phase=phase, ttl=60 if live else -60)
            if op == "acquire":
                other = model if model is not None and model.holder != holder and model.live() else None
                overlaps = other is not None and (other.phase is None or phase is None or other.phase == phase)
                blocked = other is not None and other.cycle_id == cycle and overlaps
                expected = model if blocked else None
                if not blocked:
                    model = lease
                assert [expected] * 2 == [s.acquire(lease) for s in stores]
            else:
                if model is not None and model.holder == holder:
                    model = None
                for s in stores:
                    s.release("g", holder)
            assert [model] * 2 == [s.get("g") for s in stores]


class _Stranded:
    """A golem left in NREM of a cycle by a process that is gone: no lease, the clock moved on."""

    def __init__(self, url: str = "memory://") -> None:
        self.clock = FixedClock(START, step=timedelta(0))
        self.store = open_store(url)
        self.golems = Golems(self.store, deps=Deps(clock=self.clock))
        self.golems.create("g")
        self.golems.record_episodes("g", load_episodes(sample_episodes_path()))
        executor = InProcessExecutor(self.golems)
        state = executor.logs.read("g").state
        from oneiros.runtime._start import open_cycle

        opened = open_cycle(self.golems, executor.settings, state, "owner", cycle_id="lost")
        opened.root.end()
        run_phase(self.golems, "g", "lost", "hypnagogic_onset", executor.generator, opened.settings)
        self.executor = executor
        self.ran: list[tuple[str, str]] = []

    def reconciler(self, **recovery: float) -> Reconciler:
        def run(golem_id: str, cycle_id: str) -> None:
            self.ran.append((golem_id, cycle_id))
            self.executor.resume_cycle(golem_id, cycle_id)

        return Reconciler(self.golems, RecoverySettings(**recovery), run=run)  # type: ignore[arg-type]


def test_a_stranded_in_process_cycle_is_resumed_to_its_end() -> None:
    """Within the grace the phase is left alone; past it, with no lease, the pass records
    PhaseResumed (attempt 1, with why) and runs the rest of the cycle here; the cycle completes,
    the golem wakes, and the next pass finds no golem dreaming."""
    world = _Stranded()
    reconciler = world.reconciler()
    (starting,) = reconciler.pass_once()
    assert ("starting", "last event 0.0 s ago") == (starting.action, starting.detail)
    world.clock.advance(timedelta(seconds=11))
    (resumed,) = reconciler.pass_once()
    assert (
        Resolution(
            golem_id="g",
            cycle_id="lost",
            phase="nrem",
            action="resumed",
            attempt=1,
            detail="no live job or process (no lease); run in this process",
        )
        == resumed
    )
    assert [("g", "lost")] == world.ran
    events = [r.event for r in world.store.read_stream("g")]
    assert [PhaseResumed(cycle_id="lost", phase="nrem", attempt=1, reason="no live job or process (no lease)")] == [
        e for e in events if isinstance(e, PhaseResumed)
    ]
    state = world.golems.state("g")
    assert ("Waking", 1) == (state.mode, state.cycles_completed)
    assert [] == reconciler.pass_once()
    assert msgspec.to_builtins(replay(world.store)["g"]) == msgspec.to_builtins(state)


def test_a_cycle_this_process_runs_is_never_stranded_before_its_thread_takes_the_lease() -> None:
    """A cycle on a live thread of the reconciler's own process (a server's) is running, lease or
    none, however long since its last event; once the thread is gone it counts as stranded."""
    world = _Stranded()
    world.clock.advance(timedelta(minutes=5))
    alive = {"lost"}
    reconciler = Reconciler(
        world.golems, RecoverySettings(), run=lambda g, c: world.ran.append((g, c)), own=lambda: alive
    )
    (running,) = reconciler.pass_once()
    assert (("running", "on a thread of this process"), []) == ((running.action, running.detail), world.ran)
    alive.clear()
    (resumed,) = reconciler.pass_once()
    assert ("resumed", [("g", "lost")]) == (resumed.action, world.ran)


def test_a_live_lease_keeps_the_reconciler_away_and_a_lapsed_one_does_not() -> None:
    """A process holding the golem's lease on the cycle is running it, however old its last
    event; once that lease lapses the phase counts as stranded."""
    world = _Stranded()
    world.clock.advance(timedelta(minutes=5))
    leases = open_leases(world.store)
    leases.acquire(Lease(golem_id="g", cycle_id="lost", phase=None, holder="elsewhere", expires_at=time.time() + 60))
    (running,) = world.reconciler().pass_once()
    assert ("running", "held by elsewhere") == (running.action, running.detail)
    leases.acquire(Lease(golem_id="g", cycle_id="lost", phase=None, holder="elsewhere", expires_at=time.time() - 1))
    (resumed,) = world.reconciler().pass_once()
    assert "no live job or process (its lease lapsed); run in this process" == resumed.detail


def test_a_lease_whose_holder_died_on_this_host_is_no_claim() -> None:
    """A lease naming this host and a process that has exited blocks no other holder and keeps
    no reconciler away, before it lapses; a live process's lease on this host still does."""
    import socket

    world = _Stranded()
    world.clock.advance(timedelta(minutes=5))
    leases = open_leases(world.store)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    here = socket.gethostname()
    claim = Lease(
        golem_id="g", cycle_id="lost", phase=None, holder="killed", expires_at=time.time() + 60, host=here,
        pid=int(dead.stdout),
    )  # fmt: skip
    assert leases.acquire(claim) is None
    assert claim.gone()
    assert leases.acquire(msgspec.structs.replace(claim, holder="mine", pid=os.getpid())) is None
    assert "mine" == (leases.get("g") or claim).holder
    assert leases.acquire(claim) is not None  # this process is alive: its claim holds
    leases.release("g", "mine")
    assert leases.acquire(claim) is None
    (resumed,) = world.reconciler().pass_once()
    assert "no live job or process (its holder is gone); run in this process" == resumed.detail


def test_after_the_configured_attempts_the_cycle_ends_with_the_reason() -> None:
    """A phase resumed ``attempts`` times that is stranded again ends its cycle interrupted
    (source failure) with a reason naming the phase and the count; nothing is run a fourth time."""
    world = _Stranded()
    for attempt in (1, 2):
        world.golems.resume_phase(world.golems.state("g"), attempt, "test")
    world.clock.advance(timedelta(minutes=1))
    (ended,) = world.reconciler(attempts=2).pass_once()
    assert ("interrupted", 2, "nrem stranded: no live job or process after 2 resumes") == (
        ended.action,
        ended.attempt,
        ended.detail,
    )
    assert [] == world.ran
    (interrupted,) = [r.event for r in world.store.read_stream("g") if isinstance(r.event, DreamInterrupted)]
    assert ("failure", "nrem stranded: no live job or process after 2 resumes", "nrem") == (
        interrupted.source,
        interrupted.reason,
        interrupted.phase,
    )


def test_two_reconcilers_deciding_at_once_resume_once() -> None:
    """A resume is recorded at the version the reconciler looked at: the second of two deciding
    on the same state gets StreamConflict and records nothing."""
    world = _Stranded()
    seen = world.golems.state("g")
    world.golems.resume_phase(seen, 1, "first")
    with pytest.raises(StreamConflict):
        world.golems.resume_phase(seen, 1, "second")
    resumed = [r.event for r in world.store.read_stream("g") if isinstance(r.event, PhaseResumed)]
    assert ["first"] == [e.reason for e in resumed]


def test_recovery_settings_are_checked() -> None:
    """Durations must be finite and positive, renewals come before the lease lapses, and attempts
    are not negative; the error names the key and what it takes."""
    with pytest.raises(InvalidSetting) as caught:
        RecoverySettings(lease_seconds=float("nan"))
    assert "invalid setting recovery.lease_seconds = nan: expected a finite number of seconds above 0" == str(
        caught.value
    )
    with pytest.raises(InvalidSetting) as caught:
        RecoverySettings(lease_seconds=4, renew_seconds=5)
    assert "invalid setting recovery.renew_seconds = 5: expected less than lease_seconds (4)" == str(caught.value)
    with pytest.raises(InvalidSetting) as caught:
        RecoverySettings(attempts=-1)
    assert "invalid setting recovery.attempts = -1: expected 0 or more" == str(caught.value)


def _cli(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {
        **os.environ,
        "ONEIROS_STORE": f"sqlite:///{tmp_path}/events.db",
        "ONEIROS_SPANS": str(tmp_path / "spans.jsonl"),
        **env,
    }
    return run_cli([*args], env=environ, cwd=ROOT)


def test_oneiros_interrupt_ends_a_cycle_and_refuses_a_golem_awake(tmp_path: Path) -> None:
    """`oneiros interrupt --golem GOLEM --reason` ends a dreaming golem's cycle as its owner, with
    the reason, in one line and exit 0; a second time (the golem by position, the deprecated form)
    the golem is awake and the one-line error says so (exit 2); an unknown golem is named, and a
    near one offered."""
    world = _Stranded(f"sqlite:///{tmp_path}/events.db")
    world.store.close()
    done = _cli(tmp_path, "interrupt", "--golem", "g", "--reason", "stuck since the outage")
    assert (0, "interrupted cycle lost of g in nrem: stuck since the outage\n", "") == (
        done.returncode,
        done.stdout,
        done.stderr,
    )
    again = _cli(tmp_path, "interrupt", "g", "--reason", "again")
    assert (2, "error: golem 'g' cannot 'interrupt' in state 'Waking': it is not dreaming\n") == (
        again.returncode,
        again.stderr,
    )
    unknown = _cli(tmp_path, "interrupt", "--golem", "nobody", "--reason", "x")
    assert (2, "error: golem 'nobody' does not exist\n") == (
        unknown.returncode,
        unknown.stderr,
    )
    typo = _cli(tmp_path, "interrupt", "--golem", "gg", "--reason", "x")
    assert (2, "error: golem 'gg' does not exist; did you mean 'g'?\n") == (typo.returncode, typo.stderr)
    store = open_store(f"sqlite:///{tmp_path}/events.db")
    (interrupted,) = [r.event for r in store.read_stream("g") if isinstance(r.event, DreamInterrupted)]
    assert ("owner", "stuck since the outage") == (interrupted.source, interrupted.reason)


def test_recover_reads_and_creates_nothing_on_a_missing_store(tmp_path: Path) -> None:
    """`oneiros recover` on a path with no store says so in a line (exit 2) and leaves no file."""
    missing = _cli(tmp_path, "recover")
    assert 2 == missing.returncode
    assert missing.stderr.startswith(f"error: no store at sqlite:///{tmp_path}/events.db")
    assert [] == sorted(p.name for p in tmp_path.iterdir() if p.name != "spans.jsonl")


def test_killed_dream_is_finished_by_recover_then_dreams_again(tmp_path: Path) -> None:
    """An in-process `oneiros dream` SIGKILLed in REM leaves the golem dreaming; `oneiros recover`
    (once its lease lapsed) resumes REM in its own process, reusing the generations recorded,
    and finishes the cycle; the next `dream` starts a new cycle. Nothing is duplicated and the
    projections, fed as the log grew, equal a rebuild."""
    fast = {
        "ONEIROS_RECOVERY__LEASE_SECONDS": "1.5",
        "ONEIROS_RECOVERY__RENEW_SECONDS": "0.3",
        "ONEIROS_RECOVERY__GRACE_SECONDS": "0.5",
    }
    url = f"sqlite:///{tmp_path}/events.db"
    environ = {**os.environ, "ONEIROS_STORE": url, "ONEIROS_SPANS": str(tmp_path / "spans.jsonl"), **fast}
    dream = subprocess.Popen(
        [sys.executable, "-m", "oneiros", "dream", "--sample", "--generator", "sleep:0.1", "--golem", "crash"],
        env=environ,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    live = open_projection_db(f"sqlite:///{tmp_path}/projections.db")
    from oneiros.projections._runner import ProjectionRunner
    from oneiros.projections._service import ProjectionSettings, make_projections

    runner = ProjectionRunner(open_store(url), live, make_projections(ProjectionSettings()))
    try:
        deadline = time.monotonic() + 60
        while phase_of(url, "crash") != "rem":
            assert time.monotonic() < deadline, "the dream never reached REM"
            time.sleep(0.1)
        time.sleep(0.3)  # a generation or two into REM
        runner.catch_up()
    finally:
        dream.kill()
        dream.wait()
    store = open_store(url)
    assert "Dreaming" == Golems(store).state("crash").mode
    time.sleep(2)  # the lease lapses
    recovered = _cli(tmp_path, "recover", "--json", **fast)
    assert 0 == recovered.returncode, recovered.stderr
    (row,) = msgspec.json.decode(recovered.stdout)
    assert ("crash", "rem", "resumed", 1, "complete") == (
        row["golem_id"],
        row["phase"],
        row["action"],
        row["attempt"],
        row["outcome"],
    )
    again = _cli(tmp_path, "dream", "--golem", "crash", "--json", **fast)
    assert 0 == again.returncode, again.stderr
    state = Golems(store).state("crash")
    assert ("Waking", 2, 0) == (state.mode, state.cycles_completed, state.cycles_interrupted)
    check_log(store, Golems(store), ["crash"])
    runner.catch_up()
    assert_rows_equal_a_rebuild(store, live)


def test_recover_watch_resumes_what_strands_while_it_runs_and_stops_on_sigterm(tmp_path: Path) -> None:
    """`oneiros recover --watch --json` keeps passing: a cycle stranded while it runs is resumed
    and shown as a JSON line; SIGTERM ends it with exit 0."""
    import signal

    world = _Stranded(f"sqlite:///{tmp_path}/events.db")
    world.store.close()
    environ = {
        **os.environ,
        "ONEIROS_STORE": f"sqlite:///{tmp_path}/events.db",
        "ONEIROS_SPANS": str(tmp_path / "spans.jsonl"),
        "ONEIROS_RECOVERY__INTERVAL_SECONDS": "0.2",
        "ONEIROS_RECOVERY__GRACE_SECONDS": "0.5",
    }
    watch = subprocess.Popen(
        [sys.executable, "-m", "oneiros", "recover", "--watch", "--json"],
        env=environ,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert watch.stdout is not None
        (row,) = msgspec.json.decode(watch.stdout.readline())
        assert ("g", "lost", "nrem", "resumed", "complete") == (
            row["golem_id"],
            row["cycle_id"],
            row["phase"],
            row["action"],
            row["outcome"],
        )
    finally:
        watch.send_signal(signal.SIGTERM)
        assert 0 == watch.wait(timeout=30)
    assert "Waking" == Golems(open_store(f"sqlite:///{tmp_path}/events.db")).state("g").mode
