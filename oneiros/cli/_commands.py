"""``oneiros dream``, ``replay``, ``events`` and ``status``."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from oneiros._errors import InputError, OneirosError, masked_url
from oneiros._text import counted
from oneiros.cli._common import (
    MAX_POSITION,
    GolemFilter,
    GolemOpt,
    JsonOpt,
    StoreOpt,
    application,
    console,
    emit_json,
    err_console,
    limited,
    one_line_errors,
    print_error,
    short_ids,
    table,
)
from oneiros.cli._config import ConfigOpt, PresetOpt, QueueOpt, fail, flag, load
from oneiros.cli._projections import ProjectionsOpt, verify_projections
from oneiros.cli._workers import check_queue, redis_at

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from oneiros.app._oneiros import Oneiros
    from oneiros.app._records import Imported
    from oneiros.app._shapes import CycleRun, Golem
    from oneiros.events._types import Episode
    from oneiros.workers._dispatch import PhaseReport

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


def _dream_flags(
    *,
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


def dream(
    *,
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
    import msgspec

    from oneiros._deps import Deps
    from oneiros.app._dreams import can_fall_asleep
    from oneiros.episodes._episodes import count_episodes, sample_episodes_path
    from oneiros.generators._factory import check_api_key
    from oneiros.runtime._process import load_generator
    from oneiros.telemetry._spans import configure_tracing

    effective = load(
        config,
        preset,
        _dream_flags(
            store=store,
            golem=golem,
            seed=seed,
            tier=tier,
            generator=generator,
            base_url=base_url,
            prompts=prompts,
            queue=queue,
        ),
    )
    golem_id = effective.golem
    with one_line_errors():  # options and episode files are checked before the store is opened
        sources = {path: count_episodes(path) for path in _episode_sources(episodes, sample)}
        if not effective.queue:  # on a queue the workers' environment holds the key
            check_api_key(effective.cycle.generator, "dream")
            load_generator(effective.cycle.generator, effective.cycle.seed or 0)  # a generator it cannot load
        configure_tracing(effective.tracing)
    if effective.queue:  # before the store: a new one is not left behind for a queue that is not there
        with one_line_errors():
            connection = redis_at(effective.queue)
        check_queue(connection, effective.queue)
    deps = Deps(seed=effective.cycle.seed or 0)
    with application(effective.store_url, config=effective, create=True, deps=deps) as app:
        recorded = _record(app, golem_id, sources, quiet=as_json)
        if sample and not as_json:
            console.print(f"sample episodes: {sample_episodes_path()}", soft_wrap=True, highlight=False)
        can_fall_asleep(app.state(golem_id))  # a golem that cannot fall asleep says so before any progress is drawn
        if effective.queue:
            run = _dream_on_queue(app, golem_id, wait=wait, as_json=as_json)
        else:
            try:
                run = app.dream(golem_id) if as_json else _dream_with_progress(app, golem_id, recorded)
            except KeyboardInterrupt:
                _stop_by_hand(app, golem_id)
                raise typer.Exit(130) from None
    run = msgspec.structs.replace(run, episodes_recorded=recorded)
    _print_result(run, as_json)
    if run.interrupted or run.empty:  # a cycle that did not complete is not a success
        raise typer.Exit(1)


def _stop_by_hand(app: Oneiros, golem_id: str) -> None:
    """End the cycle a Ctrl-C stopped, as `oneiros interrupt` would: left dreaming, the golem
    waited for a reconciler to resume a cycle its owner had just stopped."""
    reason = "oneiros dream stopped by Ctrl-C"
    with one_line_errors():
        ended = app.interrupt(golem_id, reason, if_dreaming=True)
    if ended is not None:
        print_error(f"interrupted cycle {ended.cycle_id} of {golem_id} in {ended.phase}: {reason}")


def _dream_on_queue(app: Oneiros, golem_id: str, *, wait: bool, as_json: bool) -> CycleRun:
    """Hand the cycle to the workers; with ``wait`` follow it phase by phase to its end."""
    from oneiros.app._dreams import CycleOptions

    queue = escape(masked_url(app.config.queue))
    if not wait:
        run = app.dream(golem_id, CycleOptions(wait=False))
        if not as_json:
            console.print(f"enqueued cycle [bold]{run.cycle_id}[/bold] of {golem_id} on {queue}")
        return run

    def show(report: PhaseReport) -> None:
        console.print(
            f"  {report.phase:<19} {report.seconds:7.2f} s  {report.tokens:6d} tokens  ${report.cost_usd:.6f}"
            f"  on {report.worker}"
        )

    def following(cycle_id: str) -> None:
        console.print(f"cycle [bold]{cycle_id}[/bold] of {golem_id} enqueued on {queue}; following it")

    if as_json:
        return app.dream(golem_id)
    return app.dream(golem_id, on_start=following, on_queued_phase=show)


def _print_result(run: CycleRun, as_json: bool) -> None:
    import msgspec
    from rich.table import Table

    if run.empty:  # one line, on stderr, whatever the output format: the cycle failed
        print_error(f"cycle {run.cycle_id} of {run.golem_id} produced nothing: {run.empty}")
    if as_json:
        emit_json(run)
        return
    if run.status == "enqueued":
        return
    outcome = Table(title=f"cycle {run.cycle_id}", show_header=False)
    for key, value in (msgspec.to_builtins(run.complete) or {}).items() if run.complete else ():
        if key != "cycle_id":
            outcome.add_row(key.replace("_", " "), str(value))
    outcome.add_row("events appended", str(run.events_appended))
    console.print(outcome)
    if run.interrupted:
        console.print(f"[yellow]interrupted:[/yellow] {escape(run.interrupted)}")


def _episode_sources(episodes: Path | None, sample: bool) -> list[Path]:
    from oneiros.episodes._episodes import sample_episodes_path

    return [p for p in (episodes, sample_episodes_path() if sample else None) if p is not None]


def _record(app: Oneiros, golem_id: str, sources: dict[Path, int], *, quiet: bool) -> int:
    """Create the golem if it is new and record the episodes of ``sources`` (files checked whole,
    with their counts) it does not have yet, a batch a transaction; how many."""
    from oneiros._errors import GolemNotFound
    from oneiros.episodes._episodes import episode_batches

    total = sum(sources.values())
    if not total:
        try:
            app.require_golem(golem_id)
        except GolemNotFound as exc:
            if exc.nearest is None:  # not a typo, it seems: say how to give it something to dream about
                print_error(
                    f"golem {golem_id!r} does not exist yet and has no episodes to dream about; pass "
                    "--episodes FILE (or --sample for the bundled demo episodes)"
                )
            else:
                print_error(exc)
            raise typer.Exit(2) from None
    batches = (batch for path in sources for batch in episode_batches(path))
    return record_batches(app, golem_id, batches, total, quiet=quiet).recorded


def record_batches(
    app: Oneiros, golem_id: str, batches: Iterable[list[Episode]], total: int, *, quiet: bool
) -> Imported:
    """Create the golem if it is new and record the episodes of ``batches`` (``total`` of them,
    checked already) whose ticks it does not have yet (:meth:`~oneiros.app.Oneiros.import_episodes`),
    with a progress bar for a long import, and say what it skipped."""
    with _recording_progress(total, quiet=quiet) as advance:
        imported = app.import_episodes(golem_id, batches, on_batch=advance)
    if imported.skipped:  # an import run again finishes what it had not recorded; say what it left alone
        skipped = imported.skipped
        episodes = counted(skipped, "episode whose tick", "episodes whose ticks")
        err_console.print(escape(f"skipped {episodes} golem {golem_id!r} already has"), highlight=False)
    return imported


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


def _dream_with_progress(app: Oneiros, golem_id: str, recorded: int) -> CycleRun:
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from oneiros.runtime._phase import PhaseOutcome
    from oneiros.settings._phases import PHASES
    from oneiros.settings._vocabulary import DreamPhaseName

    if recorded:
        console.print(f"recorded {counted(recorded, 'episode')} for [bold]{golem_id}[/bold]")
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        names = PHASES.names  # the phases the application layer's golems run
        task = progress.add_task(f"dreaming: {names[0]}", total=len(names))
        spent = [0]

        def on_phase(phase: DreamPhaseName, outcome: PhaseOutcome) -> None:
            index = names.index(phase)
            spent[0] += outcome.tokens_spent
            following = f"dreaming: {names[index + 1]}" if index + 1 < len(names) else "awake"
            progress.update(task, advance=1, description=f"{following} · {counted(spent[0], 'token')} so far")

        return app.dream(golem_id, on_phase=on_phase)


def replay_cmd(
    *,
    store: StoreOpt = None,
    config: ConfigOpt = None,
    golem: GolemFilter = None,
    until: Annotated[
        int | None, typer.Option("--until", min=0, max=MAX_POSITION, help="Rebuild as of this global position.")
    ] = None,
    as_json: JsonOpt = False,
    verify: Annotated[bool, typer.Option("--verify", help="Rebuild every projection and compare digests.")] = False,
    projections: Annotated[str | None, typer.Option("--projections", envvar="ONEIROS_PROJECTIONS")] = None,
) -> None:
    """Rebuild every golem's state (or --golem's) from the log, with no side effects."""
    from rich.progress import BarColumn, Progress, TextColumn

    effective = load(config, None)
    if verify:
        if until is not None:  # else --until was dropped without a word and the head verified
            with one_line_errors():
                raise InputError("--verify compares each projection at its own position; it takes no --until")
        with application(store, config=effective, projections=projections) as app:
            if not verify_projections(app, as_json):
                raise typer.Exit(1)
        return
    with application(store, config=effective) as app:
        if golem:
            app.require_golem(golem)
        head = app.store.head()
        started = time.perf_counter()
        if as_json:
            states = app.replay(until)
        else:
            with Progress(
                TextColumn("replaying"),
                BarColumn(),
                TextColumn("{task.completed}/{task.total}"),
                console=console,
                transient=True,
            ) as progress:
                task = progress.add_task("replay", total=min(head, until) if until is not None else head)
                states = app.replay(until, on_progress=lambda p: progress.update(task, completed=p))
        elapsed = time.perf_counter() - started
        states = [s for s in states if s.golem_id == golem] if golem else states
        position = min(head, until) if until is not None else head
        if as_json:
            emit_json({"position": position, "head": head, "golems": states})
            return
        _states_table(states, f"replayed to position {position} of {head} in {elapsed * 1000:.1f} ms")


def status(
    *,
    store: StoreOpt = None,
    config: ConfigOpt = None,
    golem: GolemFilter = None,
    queue: QueueOpt = None,
    projections: ProjectionsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Each golem's mode, phase and stream version (or --golem's), the log's global position, and
    the cycles under way with their phase, the worker running it and their age."""
    flags: dict[str, tuple[Any, str]] = {}
    flag(flags, "store", store, "--store")
    flag(flags, "queue", queue, "--queue")

    effective = load(config, None, flags)
    with application(effective.store_url, config=effective, projections=projections) as app:
        # From the golems projection, not a replay: a replay folds the whole log on every call
        # (3.7 s at a million episodes).
        if golem:
            app.require_golem(golem)
        overview = app.overview()
    if golem:
        import msgspec

        overview = msgspec.structs.replace(
            overview,
            golems=[g for g in overview.golems if g.golem_id == golem],
            running=[r for r in overview.running if r.golem_id == golem],
        )
    if as_json:
        emit_json(overview)
        return
    _states_table(overview.golems, f"{overview.store} · position {overview.position}")
    running = overview.running
    if running:
        under_way = table(
            f"{counted(len(running), 'cycle')} under way",
            *("golem", "cycle", "phase", "worker", "age"),
            whole=("cycle", "phase"),
        )
        short = short_ids(row.cycle_id for row in running)
        for row in running:
            age = "-" if row.age_seconds is None else f"{row.age_seconds:.0f} s"
            under_way.add_row(row.golem_id, short[row.cycle_id], row.phase or "-", row.worker, age)
        console.print(under_way)


def _states_table(states: list[Golem], title: str) -> None:
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
    *,
    store: StoreOpt = None,
    config: ConfigOpt = None,
    golem: GolemFilter = None,
    after: Annotated[
        int, typer.Option("--after", min=0, max=MAX_POSITION, help="Start after this global position.")
    ] = 0,
    limit: Annotated[int, typer.Option("--limit", min=1, max=MAX_POSITION, help="At most this many events.")] = 200,
    as_json: JsonOpt = False,
) -> None:
    """List the log (the first --limit events after --after)."""
    effective = load(config, None)
    with application(store, config=effective) as app:
        page = app.events(golem, after=after, limit=limit)
    rows = page.items
    with limited(len(rows), page.total or 0, "events"):
        if as_json:
            emit_json(rows)
            return
        shown = table(counted(len(rows), "event"), "pos", "golem", "v", "type", "payload", whole=("pos",))
        for row in rows:
            # Each value as JSON, as --json gives it and a reader pastes it: Python's repr printed
            # tuples, None and single quotes.
            payload = ", ".join(f"{k}={_json_value(v)}" for k, v in row.payload.items() if k != "cycle_id")
            # Whole, wrapped between words: a payload cut at a fixed length ended mid-word.
            shown.add_row(str(row.position), row.golem_id, str(row.version), row.type, escape(payload))
        console.print(shown)


def _json_value(value: object) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, default=str)


def register(app: typer.Typer) -> None:
    app.command("dream")(dream)
    app.command("replay")(replay_cmd)
    app.command("events")(events)
    app.command("status")(status)
