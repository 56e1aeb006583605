"""``oneiros dream``, ``replay``, ``events`` and ``status``."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from oneiros._errors import GolemNotFound, InputError, OneirosError, masked_url
from oneiros.cli._common import (
    MAX_POSITION,
    GolemFilter,
    GolemOpt,
    JsonOpt,
    StoreOpt,
    console,
    emit_json,
    err_console,
    limited,
    one_line_errors,
    opened,
    print_error,
    short_ids,
    table,
)
from oneiros.cli._config import ConfigOpt, PresetOpt, QueueOpt, fail, flag, load
from oneiros.cli._projections import ProjectionsOpt, golem_states, verify_projections
from oneiros.cli._workers import check_queue, queue_executor, redis_at

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from oneiros.config._load import OneirosConfig
    from oneiros.events._types import Episode
    from oneiros.fsm._service import Golems
    from oneiros.runtime._executor import CycleResult, InProcessExecutor
    from oneiros.runtime._golem_log import GolemLogs
    from oneiros.store._leases import Lease
    from oneiros.store._store import EventStore
    from oneiros.workers._dispatch import PhaseReport, RqExecutor

__all__ = ["record_batches", "register"]

_EPISODE_BATCH = 10_000
"""Episodes a progress bar waits for: what ``episode_batches`` records a transaction."""

TierOpt = Annotated[
    str | None,
    typer.Option("--tier", help="Budget tier: core (rule-based, T0) or hardened (T1/T2, rich dreams)."),
]
GeneratorOpt = Annotated[
    str | None,
    typer.Option("--generator", help="offline (deterministic, no network) or openai (OpenAI-compatible HTTP)."),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option("--base-url", help="OpenAI-compatible endpoint (key from $OPENAI_API_KEY)."),
]
PromptsOpt = Annotated[Path | None, typer.Option("--prompts", help="TOML file of prompt overrides.")]


def _dream_flags(  # noqa: PLR0917 - one argument per option of `dream`
    store: str | None,
    golem: str | None,
    seed: int | None,
    tier: str | None,
    generator: str | None,
    base_url: str | None,
    prompts: Path | None,
    queue: str | None,
) -> dict[str, tuple[Any, str]]:
    flags: dict[str, tuple[Any, str]] = {}
    flag(flags, "store", store, "--store")
    flag(flags, "golem", golem, "--golem")
    flag(flags, "queue", queue, "--queue")
    flag(flags, "cycle.seed", seed, "--seed")
    flag(flags, "cycle.budget.tier", tier, "--tier")
    flag(flags, "cycle.generator.kind", generator, "--generator")
    flag(flags, "cycle.generator.openai.base_url", base_url, "--base-url")
    if prompts is not None:
        import msgspec

        from oneiros.settings._prompts import PromptSet

        try:
            flags["cycle.engines.prompts"] = (msgspec.to_builtins(PromptSet.from_toml(prompts)), "--prompts")
        except OneirosError as exc:
            raise fail(exc) from None
    return flags


def dream(  # noqa: PLR0917 - typer maps one parameter to each option
    store: StoreOpt = None,
    golem: GolemOpt = None,
    episodes: Annotated[
        Path | None,
        typer.Option(
            "--episodes",
            help="JSONL episodes to record first: validated whole before anything is written, then recorded "
            "10,000 a transaction (an import cut short is finished by running it again).",
        ),
    ] = None,
    sample: Annotated[
        bool, typer.Option("--sample", help="Record the bundled sample trading episodes first (a demo golem).")
    ] = False,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the cycle's draws (cycle.seed).")] = None,
    as_json: JsonOpt = False,
    tier: TierOpt = None,
    generator: GeneratorOpt = None,
    base_url: BaseUrlOpt = None,
    prompts: PromptsOpt = None,
    queue: QueueOpt = None,
    wait: Annotated[
        bool, typer.Option("--wait", help="With a queue: follow the cycle phase by phase, exit with its outcome.")
    ] = False,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
) -> None:
    """Run one dream cycle now, or hand it to `oneiros worker` when a queue is configured."""
    from oneiros._deps import Deps
    from oneiros.episodes._episodes import count_episodes, sample_episodes_path
    from oneiros.fsm._service import Golems
    from oneiros.generators._factory import check_api_key
    from oneiros.runtime._executor import InProcessExecutor
    from oneiros.runtime._golem_log import GolemLogs
    from oneiros.runtime._process import load_generator
    from oneiros.telemetry._tracing import configure_tracing

    effective = load(config, preset, _dream_flags(store, golem, seed, tier, generator, base_url, prompts, queue))
    golem_id = effective.golem
    with one_line_errors():  # options and episode files are checked before the store is opened
        sources = {path: count_episodes(path) for path in _episode_sources(episodes, sample)}
        if not effective.queue:  # on a queue the workers' environment holds the key
            check_api_key(effective.cycle.generator, "dream")
        chosen = None if effective.queue else load_generator(effective.cycle.generator, effective.cycle.seed or 0)
        configure_tracing(effective.tracing)
    if effective.queue:  # before the store: a new one is not left behind for a queue that is not there
        with one_line_errors():
            connection = redis_at(effective.queue)
        check_queue(connection, effective.queue)
    with opened(effective.store_url, create=True) as event_store:
        golems = Golems(
            event_store,
            deps=Deps(seed=effective.cycle.seed or 0),
            snapshots=effective.snapshots,
            races=effective.races,
        )
        executor = (
            None if effective.queue else InProcessExecutor(golems, chosen, effective.cycle, recovery=effective.recovery)
        )
        queued = queue_executor(golems, effective) if effective.queue else None
        logs = executor.logs if executor else GolemLogs.of(golems)
        recorded = _record(golems, golem_id, sources, logs, quiet=as_json)
        if sample and not as_json:
            console.print(f"sample episodes: {sample_episodes_path()}", soft_wrap=True, highlight=False)
        with one_line_errors():  # a golem that cannot fall asleep says so before any progress is drawn
            _check_can_dream(golems, golem_id)
            # A stored episode the engines cannot fold: one line before DreamStart, rather than a
            # cycle that a worker would find it cannot dream.
            logs.read(golem_id)
        if queued is not None:
            _dream_on_queue(queued, golem_id, effective, recorded, wait=wait, as_json=as_json)
            return
        assert executor is not None  # no queue: this process runs the cycle
        follow = executor.run_cycle if as_json else lambda g: _dream_with_progress(golems, g, recorded, executor)
        try:
            result = follow(golem_id)
        except KeyboardInterrupt:
            _stop_by_hand(golems, golem_id)
            raise typer.Exit(130) from None
        _print_result(result, recorded, event_store.url, as_json)
        if result.interrupted or result.empty:  # a cycle that did not complete is not a success
            raise typer.Exit(1)


def _stop_by_hand(golems: Golems, golem_id: str) -> None:
    """End the cycle a Ctrl-C stopped, as `oneiros interrupt` would: left dreaming, the golem
    waited for a reconciler to resume a cycle its owner had just stopped."""
    from oneiros.fsm._golem import GolemState
    from oneiros.fsm._races import retry_race

    reason = "oneiros dream stopped by Ctrl-C"

    def attempt() -> GolemState | None:
        state = golems.state(golem_id)
        if state.mode != "Dreaming":
            return None
        golems.interrupt(golem_id, "owner", reason, known=state)
        return state

    with one_line_errors():
        state = retry_race(attempt, golems.races, golems.deps)
    if state is not None:
        print_error(f"interrupted cycle {state.cycle_id} of {golem_id} in {state.phase}: {reason}")


def _dream_on_queue(
    executor: RqExecutor, golem_id: str, effective: OneirosConfig, recorded: int, *, wait: bool, as_json: bool
) -> None:
    golems = executor.golems
    cycle_id = executor.start_cycle(golem_id)
    if not wait:
        executor.detach()
        enqueued = {
            "cycle_id": cycle_id,
            "golem_id": golem_id,
            "queue": masked_url(effective.queue),
            "rq_queue": effective.rq.queue,
            "enqueued": True,
            "episodes_recorded": recorded,
            "store": masked_url(golems.store.url),
        }
        if as_json:
            emit_json(enqueued)
        else:
            console.print(
                f"enqueued cycle [bold]{cycle_id}[/bold] of {golem_id} on {escape(masked_url(effective.queue))}"
            )
        return
    if not as_json:
        queue = escape(masked_url(effective.queue))
        console.print(f"cycle [bold]{cycle_id}[/bold] of {golem_id} enqueued on {queue}; following it")

    def show(report: PhaseReport) -> None:
        console.print(
            f"  {report.phase:<19} {report.seconds:7.2f} s  {report.tokens:6d} tokens  ${report.cost_usd:.6f}"
            f"  on {report.worker}"
        )

    result = executor.wait(golem_id, cycle_id, timeout=None, on_phase=None if as_json else show)
    _print_result(result, recorded, golems.store.url, as_json)
    if result.interrupted or result.empty:
        raise typer.Exit(1)


def _print_result(result: CycleResult, recorded: int, store_url: str, as_json: bool) -> None:
    import msgspec
    from rich.table import Table

    payload: dict[str, Any] = {
        "cycle_id": result.cycle_id,
        "golem_id": result.golem_id,
        "events_appended": result.events_appended,
        "episodes_recorded": recorded,
        "complete": msgspec.to_builtins(result.complete) if result.complete else None,
        "interrupted": result.interrupted,
        "empty": result.empty,
        "store": masked_url(store_url),
    }
    if result.empty:  # one line, on stderr, whatever the output format: the cycle failed
        cycle = f"cycle {result.cycle_id} of {result.golem_id}"
        print_error(f"{cycle} produced nothing: {result.empty}")
    if as_json:
        emit_json(payload)
        return
    outcome = Table(title=f"cycle {result.cycle_id}", show_header=False)
    for key, value in (msgspec.to_builtins(result.complete) or {}).items() if result.complete else ():
        if key != "cycle_id":
            outcome.add_row(key.replace("_", " "), str(value))
    outcome.add_row("events appended", str(result.events_appended))
    console.print(outcome)
    if result.interrupted:
        console.print(f"[yellow]interrupted:[/yellow] {escape(result.interrupted)}")


def _episode_sources(episodes: Path | None, sample: bool) -> list[Path]:
    from oneiros.episodes._episodes import sample_episodes_path

    return [p for p in (episodes, sample_episodes_path() if sample else None) if p is not None]


def _record(golems: Golems, golem_id: str, sources: dict[Path, int], logs: GolemLogs, *, quiet: bool) -> int:
    """Create the golem if it is new and record the episodes of ``sources`` (files checked whole,
    with their counts) it does not have yet, a batch a transaction; how many."""
    from oneiros.episodes._episodes import episode_batches

    total = sum(sources.values())
    if not total and not _golem_exists(golems, golem_id):
        err_console.print(
            f"[red]error:[/red] golem {golem_id!r} does not exist yet and has no episodes to dream about; "
            "pass --episodes FILE (or --sample for the bundled demo episodes)"
        )
        raise typer.Exit(2)
    batches = (batch for path in sources for batch in episode_batches(path))
    return record_batches(golems, golem_id, batches, total, logs, quiet=quiet)[0]


def record_batches(
    golems: Golems, golem_id: str, batches: Iterable[list[Episode]], total: int, logs: GolemLogs, *, quiet: bool
) -> tuple[int, int]:
    """Create the golem if it is new and record the episodes of ``batches`` (``total`` of them,
    checked already) whose ticks it does not have yet, a batch a transaction: (recorded, skipped).
    An import cut short is finished by running it again."""
    if not _golem_exists(golems, golem_id):
        golems.create(golem_id)
    # From the fold the cycle reads anyway (a snapshot and what came since), not a full read.
    known = set(logs.read(golem_id).memory.columns().ticks.tolist()) if total else set()
    recorded = skipped = 0
    with _recording_progress(total, quiet=quiet) as advance:
        for batch in batches:
            new_ones = [e for e in batch if e.tick not in known]
            recorded += len(golems.record_episodes(golem_id, new_ones)) if new_ones else 0
            skipped += len(batch) - len(new_ones)
            advance(len(batch))
    if skipped:  # an import run again finishes what it had not recorded; say what it left alone
        episodes = "episode whose tick" if skipped == 1 else "episodes whose ticks"
        err_console.print(escape(f"skipped {skipped:,} {episodes} golem {golem_id!r} already has"), highlight=False)
    return recorded, skipped


@contextlib.contextmanager
def _recording_progress(total: int, *, quiet: bool) -> Iterator[Callable[[int], None]]:
    """A progress bar over ``total`` episodes, for an import long enough to want one."""
    if quiet or total <= _EPISODE_BATCH:
        yield lambda _n: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    with Progress(
        "recording episodes", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=console
    ) as progress:
        task = progress.add_task("recording", total=total)
        yield lambda n: progress.advance(task, n)


def _check_can_dream(golems: Golems, golem_id: str) -> None:
    """Raise the machine's own IllegalCommand when ``golem_id`` cannot fall asleep now (it is
    still dreaming, or stranded mid-cycle), as ``fall_asleep`` would once the cycle had started."""
    from oneiros._errors import IllegalCommand

    state = golems.state(golem_id)
    if state.mode == "Dreaming":
        # Say what to do: the cycle may still be running elsewhere, or be stranded by a crash.
        detail = (
            f"cycle {state.cycle_id} is in {state.phase}; `oneiros status` shows who runs it, "
            f"`oneiros recover` resumes it if nothing does, `oneiros interrupt {golem_id} --reason ...` ends it"
        )
        raise IllegalCommand(golem_id, state.machine_state, "fall_asleep", detail)
    if state.mode != "Waking":
        raise IllegalCommand(golem_id, state.machine_state, "fall_asleep")


def _golem_exists(golems: Golems, golem_id: str) -> bool:
    try:
        golems.state(golem_id)
    except GolemNotFound:
        return False
    return True


def _dream_with_progress(
    golems: Golems, golem_id: str, recorded: int, executor: InProcessExecutor | None = None
) -> CycleResult:
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from oneiros.runtime._executor import InProcessExecutor
    from oneiros.runtime._phase import PhaseOutcome
    from oneiros.settings._vocabulary import DreamPhaseName

    if recorded:
        console.print(f"recorded {recorded} episodes for [bold]{golem_id}[/bold]")
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        names = golems.phases.names
        task = progress.add_task(f"dreaming: {names[0]}", total=len(names))
        spent = [0]

        def on_phase(phase: DreamPhaseName, outcome: PhaseOutcome) -> None:
            index = names.index(phase)
            spent[0] += outcome.tokens_spent
            following = f"dreaming: {names[index + 1]}" if index + 1 < len(names) else "awake"
            progress.update(task, advance=1, description=f"{following} · {spent[0]} tokens so far")

        executor = executor or InProcessExecutor(golems)
        executor.on_phase = on_phase
        return executor.run_cycle(golem_id)


def replay_cmd(
    store: StoreOpt = None,
    until: Annotated[
        int | None, typer.Option("--until", min=0, max=MAX_POSITION, help="Rebuild as of this global position.")
    ] = None,
    as_json: JsonOpt = False,
    verify: Annotated[bool, typer.Option("--verify", help="Rebuild every projection and compare digests.")] = False,
    projections: Annotated[str | None, typer.Option("--projections", envvar="ONEIROS_PROJECTIONS")] = None,
) -> None:
    """Rebuild every golem's state from the log, with no side effects."""
    from rich.progress import BarColumn, Progress, TextColumn

    from oneiros.fsm._service import replay

    if verify:
        if until is not None:  # else --until was dropped without a word and the head verified
            with one_line_errors():
                raise InputError("--verify compares each projection at its own position; it takes no --until")
        with opened(store) as event_store:
            if not verify_projections(event_store, projections, as_json):
                raise typer.Exit(1)
        return
    with opened(store) as event_store:
        head = event_store.head()
        started = time.perf_counter()
        if as_json:
            states = replay(event_store, until=until)
        else:
            with Progress(
                TextColumn("replaying"),
                BarColumn(),
                TextColumn("{task.completed}/{task.total}"),
                console=console,
                transient=True,
            ) as progress:
                task = progress.add_task("replay", total=min(head, until) if until is not None else head)
                states = replay(event_store, until=until, on_progress=lambda p: progress.update(task, completed=p))
        elapsed = time.perf_counter() - started
        position = min(head, until) if until is not None else head
        if as_json:
            emit_json({"position": position, "head": head, "golems": [s.summary() for s in states.values()]})
            return
        _states_table(states.values(), f"replayed to position {position} of {head} in {elapsed * 1000:.1f} ms")


def _lease_holder(lease: Lease | None, cycle_id: str) -> str:
    """Who runs a cycle started without a queue, from its lease: the process holding it, or that
    nothing does (a killed `dream`: `oneiros recover` resumes it)."""
    if lease is None or lease.cycle_id != cycle_id or not lease.live() or lease.gone():
        return "nothing holds it (oneiros recover)"
    return lease.holder


def _running(event_store: EventStore, states: Any, effective: OneirosConfig) -> list[dict[str, Any]]:
    """Each cycle under way: its phase, where that phase runs and how long the cycle has run."""
    from datetime import UTC, datetime

    from oneiros.events._liveness import PhaseResumed
    from oneiros.events._types import DreamStart
    from oneiros.store._leases import open_leases
    from oneiros.store._snapshots import read_cycle

    rows: list[dict[str, Any]] = []
    now = datetime.now(UTC)
    leases = open_leases(event_store)
    for state in states:
        if state.mode != "Dreaming" or state.cycle_id is None:
            continue
        cycle = read_cycle(event_store, state.golem_id, state.cycle_id)
        start = next((r.meta.time for r in cycle if isinstance(r.event, DreamStart)), None)
        resumes = sum(1 for r in cycle if isinstance(r.event, PhaseResumed) and r.event.phase == state.phase)
        if effective.queue:
            from oneiros.workers._connect import phase_worker

            worker = phase_worker(effective.queue, state.cycle_id, state.phase, resumes)
        else:
            worker = _lease_holder(leases.get(state.golem_id), state.cycle_id)
        rows.append(
            {
                "golem_id": state.golem_id,
                "cycle_id": state.cycle_id,
                "phase": state.phase,
                "worker": worker,
                "age_seconds": round((now - start).total_seconds(), 1) if start is not None else None,
            }
        )
    return rows


def status(
    store: StoreOpt = None,
    config: ConfigOpt = None,
    queue: QueueOpt = None,
    projections: ProjectionsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Each golem's mode, phase and stream version, the log's global position, and the cycles under
    way with their phase, the worker running it and their age."""
    flags: dict[str, tuple[Any, str]] = {}
    flag(flags, "store", store, "--store")
    flag(flags, "queue", queue, "--queue")

    effective = load(config, None, flags)
    with opened(effective.store_url) as event_store:
        # From the golems projection, not a replay: a replay folds the whole log on every call
        # (3.7 s at a million episodes).
        states = golem_states(event_store, projections)
        head = event_store.head()
        running = _running(event_store, states, effective)
        if as_json:
            emit_json(
                {
                    "position": head,
                    "store": masked_url(event_store.url),
                    "golems": [s.summary() for s in states],
                    "running": running,
                }
            )
            return
        _states_table(states, f"{masked_url(event_store.url)} · position {head}")
        if running:
            under_way = table(
                f"{len(running)} cycles under way", "golem", "cycle", "phase", "worker", "age", whole=("cycle", "phase")
            )
            short = short_ids(row["cycle_id"] for row in running)
            for row in running:
                age = "-" if row["age_seconds"] is None else f"{row['age_seconds']:.0f} s"
                under_way.add_row(row["golem_id"], short[row["cycle_id"]], row["phase"] or "-", row["worker"], age)
            console.print(under_way)


def _states_table(states: Any, title: str) -> None:
    states = list(states)
    shown = table(
        title,
        *("golem", "state", "cycle", "version", "episodes", "completed", "interrupted"),
        whole=("state", "cycle"),
    )
    short = short_ids(s.cycle_id for s in states if s.cycle_id)
    for s in states:
        shown.add_row(
            s.golem_id,
            s.machine_state,
            short[s.cycle_id] if s.cycle_id else "-",
            str(s.version),
            str(s.episodes),
            str(s.cycles_completed),
            str(s.cycles_interrupted),
        )
    console.print(shown)


def events(
    store: StoreOpt = None,
    golem: GolemFilter = None,
    after: Annotated[
        int, typer.Option("--after", min=0, max=MAX_POSITION, help="Start after this global position.")
    ] = 0,
    limit: Annotated[int, typer.Option("--limit", min=1, max=MAX_POSITION, help="At most this many events.")] = 200,
    as_json: JsonOpt = False,
) -> None:
    """List the log (the first --limit events after --after)."""
    from oneiros.store._snapshots import read_stream_pages
    from oneiros.store._store import Recorded, decode_rows, record_row

    with opened(store) as event_store:
        if golem:
            # Counted from stored rows, and only the events shown decoded: a golem's stream may
            # hold a million episodes.
            records: list[Recorded] = []
            total = 0
            for page in read_stream_pages(event_store, golem):
                fresh = [stored for stored in page if stored[0] > after]
                records.extend(decode_rows(fresh[: limit - len(records)]))
                total += len(fresh)
        else:
            records = []
            for record in event_store.read_all(after=after):
                records.append(record)
                if len(records) >= limit:
                    break
            # Positions are contiguous: what lies after the last one shown is the rest of the log.
            total = len(records) + (event_store.head() - records[-1].position if records else 0)
        with limited(len(records), total, "events"):
            rows = [record_row(r) for r in records]
            if as_json:
                emit_json(rows)
                return
            shown = table(f"{len(rows)} events", "pos", "golem", "v", "type", "payload", whole=("pos",))
            for row in rows:
                payload = ", ".join(f"{k}={v}" for k, v in row["payload"].items() if k != "cycle_id")
                shown.add_row(str(row["position"]), row["golem_id"], str(row["version"]), row["type"], payload[:120])
            console.print(shown)


def register(app: typer.Typer) -> None:
    app.command("dream")(dream)
    app.command("replay")(replay_cmd)
    app.command("events")(events)
    app.command("status")(status)
