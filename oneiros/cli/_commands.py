"""``oneiros dream``, ``replay``, ``events`` and ``status``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from oneiros._errors import GolemNotFound
from oneiros.cli._common import JsonOpt, StoreOpt, console, emit_json, err_console, one_line_errors, opened
from oneiros.cli._content import BaseUrlOpt, GeneratorOpt, PromptsOpt, TierOpt, cycle_setup
from oneiros.cli._projections import verify_projections
from oneiros.cli._workers import enqueue_cycle

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from oneiros.events import Episode
    from oneiros.fsm import Golems
    from oneiros.workers import CycleResult, InProcessExecutor

__all__ = ["register"]

GolemOpt = Annotated[str, typer.Option("--golem", help="Golem id.")]


def dream(  # noqa: PLR0917 - typer maps one parameter to each option
    store: StoreOpt = None,
    golem: GolemOpt = "golem",
    episodes: Annotated[
        Path | None,
        typer.Option("--episodes", help="JSONL episodes to record first (validated whole before anything is written)."),
    ] = None,
    sample: Annotated[
        bool, typer.Option("--sample", help="Record the bundled sample trading episodes first (a demo golem).")
    ] = False,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the offline generator.")] = 0,
    as_json: JsonOpt = False,
    tier: TierOpt = "core",
    generator: GeneratorOpt = "offline",
    base_url: BaseUrlOpt = None,
    prompts: PromptsOpt = None,
    queue: Annotated[
        str | None,
        typer.Option("--queue", help="Redis URL: enqueue the cycle for `oneiros worker` instead of running it here."),
    ] = None,
) -> None:
    """Run one dream cycle now (or enqueue it for the workers with --queue)."""
    import msgspec
    from rich.table import Table

    from oneiros._deps import Deps
    from oneiros.episodes import load_episodes, sample_episodes_path
    from oneiros.fsm import Golems
    from oneiros.workers import InProcessExecutor

    with one_line_errors():  # options and episode files are checked before the store is opened
        chosen, settings = cycle_setup(seed, tier, generator, base_url, prompts)
        loaded = [e for path in _episode_sources(episodes, sample) for e in load_episodes(path)]
    with opened(store, create=True) as event_store:
        golems = Golems(event_store, deps=Deps(seed=seed))
        executor = InProcessExecutor(golems, chosen, settings)
        recorded = _record(golems, golem, loaded, executor)
        if sample and not as_json:
            console.print(f"recorded the bundled sample episodes into {golem} ({sample_episodes_path()})")
        if queue is not None:
            enqueued = enqueue_cycle(golems, golem, queue, cycle_settings=settings)
            enqueued |= {"episodes_recorded": recorded, "store": event_store.url}
            if as_json:
                emit_json(enqueued)
            else:
                console.print(f"enqueued cycle [bold]{enqueued['cycle_id']}[/bold] of {golem} on {queue}")
            return
        result = executor.run_cycle(golem) if as_json else _dream_with_progress(golems, golem, recorded, executor)
        payload: dict[str, Any] = {
            "cycle_id": result.cycle_id,
            "golem_id": result.golem_id,
            "events_appended": result.events_appended,
            "episodes_recorded": recorded,
            "complete": msgspec.to_builtins(result.complete) if result.complete else None,
            "interrupted": result.interrupted,
            "store": event_store.url,
        }
        if as_json:
            emit_json(payload)
            return
        table = Table(title=f"cycle {result.cycle_id}", show_header=False)
        for key, value in (msgspec.to_builtins(result.complete) or {}).items() if result.complete else ():
            if key != "cycle_id":
                table.add_row(key.replace("_", " "), str(value))
        table.add_row("events appended", str(result.events_appended))
        console.print(table)
        if result.interrupted:
            console.print(f"[yellow]interrupted:[/yellow] {result.interrupted}")


def _episode_sources(episodes: Path | None, sample: bool) -> list[Path]:
    from oneiros.episodes import sample_episodes_path

    return [p for p in (episodes, sample_episodes_path() if sample else None) if p is not None]


def _record(golems: Golems, golem_id: str, loaded: list[Episode], executor: InProcessExecutor) -> int:
    """Create the golem if it is new and record the episodes it does not have yet; how many."""
    new = not _golem_exists(golems, golem_id)
    if new and not loaded:
        err_console.print(
            f"[red]error:[/red] golem {golem_id!r} does not exist yet and has no episodes to dream about; "
            "pass --episodes FILE (or --sample for the bundled demo episodes)"
        )
        raise typer.Exit(2)
    if new:
        golems.create(golem_id)
    # From the fold the cycle reads anyway (a snapshot and what came since), not a full read.
    known = set(executor.logs.read(golem_id).memory.columns().ticks.tolist())
    return len(golems.record_episodes(golem_id, [e for e in loaded if e.tick not in known]))


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

    from oneiros.events import DREAM_PHASES, DreamPhaseName
    from oneiros.workers import InProcessExecutor, PhaseOutcome

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
        task = progress.add_task("dreaming: hypnagogic_onset", total=len(DREAM_PHASES))
        spent = [0]

        def on_phase(phase: DreamPhaseName, outcome: PhaseOutcome) -> None:
            index = DREAM_PHASES.index(phase)
            spent[0] += outcome.tokens_spent
            following = f"dreaming: {DREAM_PHASES[index + 1]}" if index + 1 < len(DREAM_PHASES) else "awake"
            progress.update(task, advance=1, description=f"{following} · {spent[0]} tokens so far")

        executor = executor or InProcessExecutor(golems)
        executor.on_phase = on_phase
        return executor.run_cycle(golem_id)


def replay_cmd(
    store: StoreOpt = None,
    until: Annotated[int | None, typer.Option("--until", help="Rebuild as of this global position.")] = None,
    as_json: JsonOpt = False,
    verify: Annotated[bool, typer.Option("--verify", help="Rebuild every projection and compare digests.")] = False,
    projections: Annotated[str | None, typer.Option("--projections", envvar="ONEIROS_PROJECTIONS")] = None,
) -> None:
    """Rebuild every golem's state from the log, with no side effects."""
    from rich.progress import BarColumn, Progress, TextColumn

    from oneiros.fsm import replay

    if verify:
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


def status(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Each golem's mode, phase and stream version, and the log's global position."""
    from oneiros.fsm import replay

    with opened(store) as event_store:
        states = replay(event_store)
        head = event_store.head()
        if as_json:
            emit_json({"position": head, "store": event_store.url, "golems": [s.summary() for s in states.values()]})
            return
        _states_table(states.values(), f"{event_store.url} · position {head}")


def _states_table(states: Any, title: str) -> None:
    from rich.table import Table

    table = Table(title=title)
    for column in ("golem", "state", "cycle", "version", "episodes", "completed", "interrupted"):
        table.add_column(column)
    for s in states:
        table.add_row(
            s.golem_id,
            s.machine_state,
            s.cycle_id or "-",
            str(s.version),
            str(s.episodes),
            str(s.cycles_completed),
            str(s.cycles_interrupted),
        )
    console.print(table)


def events(
    store: StoreOpt = None,
    golem: Annotated[str | None, typer.Option("--golem", help="Only this golem's stream.")] = None,
    after: Annotated[int, typer.Option("--after", help="Start after this global position.")] = 0,
    limit: Annotated[int, typer.Option("--limit", help="At most this many events.")] = 200,
    as_json: JsonOpt = False,
) -> None:
    """List the log."""
    from rich.table import Table

    from oneiros.events import record_row

    with opened(store) as event_store:
        if golem:
            records = [r for r in event_store.read_stream(golem) if r.position > after][:limit]
        else:
            records = []
            for record in event_store.read_all(after=after):
                records.append(record)
                if len(records) >= limit:
                    break
        rows = [record_row(r) for r in records]
        if as_json:
            emit_json(rows)
            return
        table = Table(title=f"{len(rows)} events")
        for column in ("pos", "golem", "v", "type", "payload"):
            table.add_column(column, overflow="fold")
        for row in rows:
            payload = ", ".join(f"{k}={v}" for k, v in row["payload"].items() if k != "cycle_id")
            table.add_row(str(row["position"]), row["golem_id"], str(row["version"]), row["type"], payload[:120])
        console.print(table)


def register(app: typer.Typer) -> None:
    app.command("dream")(dream)
    app.command("replay")(replay_cmd)
    app.command("events")(events)
    app.command("status")(status)
