"""``oneiros run``, ``oneiros config show`` and ``oneiros should-dream``."""

from __future__ import annotations

import signal
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from oneiros._errors import GolemNotFound, OneirosError, masked_url
from oneiros._text import counted
from oneiros.cli._common import (
    MAX_POSITION,
    GolemOpt,
    JsonOpt,
    StoreOpt,
    application,
    console,
    emit_json,
    one_line_errors,
    opened,
    print_error,
)
from oneiros.cli._config import ConfigOpt, PresetOpt, QueueOpt, fail, flag, load
from oneiros.cli._projections import ProjectionsOpt
from oneiros.cli._workers import check_queue, redis_at

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from rich.table import Table

    from oneiros.app._shapes import ShouldDream
    from oneiros.config._load import OneirosConfig
    from oneiros.fsm._service import Golems

__all__ = ["register"]

config_app = typer.Typer(help="The effective configuration.", no_args_is_help=True)


def _load(path: Path | None, preset: str | None) -> OneirosConfig:
    return load(path, preset)


def _source(key: str, sources: dict[str, str]) -> str:
    parts = key.split(".")
    for end in range(len(parts), 0, -1):
        found = sources.get(".".join(parts[:end]))
        if found is not None:
            return found
    return "default"


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        rows: list[tuple[str, Any]] = []
        for key, inner in value.items():
            rows += _flatten(inner, f"{prefix}{key}.")
        return rows
    return [(prefix[:-1], value)]


@config_app.command("show")
def show(
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    as_json: JsonOpt = False,
    sources_too: Annotated[
        bool, typer.Option("--sources", help="With --json: one row per key with its value and source.")
    ] = False,
) -> None:
    """Print the effective config: each key's value and where it came from (default, preset, file,
    ONEIROS_* variable), with the variable that overrides it. Secrets are never config keys."""
    import msgspec
    from rich.markup import escape
    from rich.table import Table

    from oneiros.config._load import env_var, explain_config

    try:
        effective, sources = explain_config(config, preset=preset)
    except OneirosError as exc:
        raise fail(exc) from None
    data = msgspec.to_builtins(effective)
    if as_json:
        if sources_too:
            rows = [{"key": k, "value": v, "source": _source(k, sources)} for k, v in _flatten(data)]
            emit_json(rows)
        else:
            emit_json(data)
        return
    lines = [
        (key, msgspec.json.encode(masked_url(value) if key in ("store", "queue") else value).decode())
        for key, value in _flatten(data)
    ]
    title = f"effective config (preset: {effective.preset or 'none'})"
    widest = max(len(key) for key, _ in lines)
    if console.width < 2 * widest + 40:
        # Too narrow for a key and its variable side by side, whole: a key a line, never split.
        console.print(
            escape(f"{title} · any key is overridden by ONEIROS_ and the key, dots as __ (ONEIROS_SCHEDULE__MODE)"),
            highlight=False,
        )
        for key, shown in lines:
            source = _source(key, sources)
            console.print(
                escape(f"{key} = {shown}") + ("" if source == "default" else f"  [dim]· {escape(source)}[/dim]")
            )
        return
    table = Table(title=title)
    for column in ("key", "value", "from", "override with"):
        table.add_column(column, overflow="fold", no_wrap=column in ("key", "override with"))
    for key, shown in lines:
        # Values are data: a pattern such as "[/?(system|inst)]" must not be read as Rich markup.
        table.add_row(key, escape(shown), _source(key, sources), env_var(key))
    console.print(table)


def _decision_table(decision: ShouldDream, title: str) -> Table:
    from rich.table import Table

    table = Table(title=title)
    for column in ("check", "verdict", "values"):
        table.add_column(column, overflow="fold")
    for check in decision.checks:
        verdict = "[green]pass[/green]" if check.passed else "[red]FAIL[/red]"
        table.add_row(check.name, verdict, check.detail)
    return table


def should_dream_cmd(
    *,
    store: StoreOpt = None,
    golem: GolemOpt = None,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    at: Annotated[str | None, typer.Option("--at", help="ISO time to decide at (default: now).")] = None,
    tick: Annotated[int, typer.Option("--tick", help="Heartbeat tick number (for the interval trigger).")] = 0,
    projections: ProjectionsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Explain whether a golem would dream now: every gate and trigger with its values."""
    effective = _load(config, preset)
    golem_id = golem or effective.golem
    try:
        now = datetime.fromisoformat(at) if at else datetime.now(UTC)
    except ValueError:
        print_error(f"--at {at!r} is not an ISO time")
        raise typer.Exit(2) from None
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    with application(store or effective.store or None, config=effective, projections=projections) as app:
        decision = app.should_dream(golem_id, at=now, tick=tick)
    if as_json:
        emit_json(decision)
        return
    verdict = f"dream ({decision.trigger}; Bardo: {decision.bardo_trigger})" if decision.dream else "no dream"
    console.print(_decision_table(decision, f"{golem_id} at {now.isoformat()}: {verdict}"))


def run(
    *,
    store: StoreOpt = None,
    golem: GolemOpt = None,
    queue: QueueOpt = None,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    ticks: Annotated[
        int, typer.Option("--ticks", min=0, max=MAX_POSITION, help="Stop after this many ticks (0: until SIGTERM).")
    ] = 0,
    tick_seconds: Annotated[
        float | None, typer.Option("--tick-seconds", min=0.001, help="Override daemon.tick_seconds (> 0).")
    ] = None,
    sample: Annotated[
        bool,
        typer.Option("--sample", help="Create the golem if new, with the bundled sample trading episodes (a demo)."),
    ] = False,
    create: Annotated[
        bool,
        typer.Option("--create", help="Create the golem if new, with no episodes (a deployment's first start)."),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Run the heartbeat daemon: record activity, decide each tick, dream when the config says.

    With a queue configured each cycle runs on the `oneiros worker` processes, phase by phase,
    while the heartbeat goes on; without one it runs in this process. SIGTERM or SIGINT stops it
    cleanly: a running cycle finishes (or, past the grace period, is recorded as interrupted)
    before the process exits."""
    from oneiros.app._oneiros import Oneiros
    from oneiros.daemon._follower import LogFollower
    from oneiros.telemetry._logging import configure_logging

    flags: dict[str, Any] = {}
    flag(flags, "store", store, "--store")
    flag(flags, "golem", golem, "--golem")
    flag(flags, "queue", queue, "--queue")
    flag(flags, "daemon.tick_seconds", tick_seconds, "--tick-seconds")
    effective = load(config, preset, flags)
    configure_logging(effective.log)
    _check_cycles_can_run(effective)
    golem_id = effective.golem
    if not (sample or create):  # only --sample or --create makes the golem: a typo (or no --golem) must not
        with application(effective.store_url, config=effective) as app:
            app.require_golem(golem_id)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda _signum, _frame: stop.set())
    with opened(effective.store_url, create=True) as event_store, Oneiros(event_store, effective) as app:
        _ensure_golem(app.factory.golems(event_store), golem_id, sample=sample, quiet=as_json)
        daemon = app.heartbeat(golem_id)
        where = f"on {masked_url(effective.queue)} ({effective.rq.queue})" if effective.queue else "in-process"
        if not as_json:
            every = f"heartbeat every {effective.daemon.tick_seconds:g}s"
            console.print(f"[bold]{golem_id}[/bold] {every} on {masked_url(event_store.url)}; cycles {where}")
        count = 0
        # The validation sweep, health alarms and projections, kept up while nobody reads.
        follower = LogFollower(event_store, effective.staging, effective.health) if effective.daemon.follow else None
        if follower is not None:
            follower.start()
        while not stop.is_set() and not daemon.stopped:
            decision = daemon.tick()
            count += 1
            if decision is not None and decision.dream and not as_json:
                console.print(
                    f"dreaming ({decision.trigger}): " + "; ".join(c.reason() for c in decision.checks if c.passed)
                )
            if ticks and count >= ticks:
                break
            stop.wait(effective.daemon.tick_seconds)
        daemon.shutdown()
        if follower is not None:
            follower.stop()
        summary = {
            "golem_id": golem_id,
            "ticks": count,
            "cycles": [
                {"cycle_id": r.cycle_id, "complete": r.complete is not None, "interrupted": r.interrupted}
                for r in daemon.results
            ],
            "mode": daemon.state.mode,
        }
        if as_json:
            emit_json(summary)
        else:
            console.print(
                f"stopped after {counted(count, 'tick')}, {counted(len(daemon.results), 'cycle')}; "
                f"golem is {daemon.state.mode}"
            )


def _check_cycles_can_run(effective: OneirosConfig) -> None:
    """Exit with one line if the daemon's cycles could not run: said before the store is opened or
    a golem created, since a daemon that cannot dream must not start."""
    from oneiros.generators._factory import check_api_key
    from oneiros.telemetry._spans import configure_tracing

    with one_line_errors():
        configure_tracing(effective.tracing)
        if not effective.queue:  # on a queue the workers' environment holds the key
            check_api_key(effective.cycle.generator, "run")
    if effective.queue:
        with one_line_errors():
            connection = redis_at(effective.queue)
        check_queue(connection, effective.queue)


def _ensure_golem(golems: Golems, golem_id: str, *, sample: bool, quiet: bool) -> None:
    """Create the daemon's golem if it is new, which only ``--sample`` (with the bundled sample
    episodes) or ``--create`` asks for; without them the golem was checked to exist."""
    from oneiros.episodes._episodes import load_episodes, sample_episodes_path

    try:
        golems.state(golem_id)
        return
    except GolemNotFound:
        golems.create(golem_id)
    if sample:
        golems.record_episodes(golem_id, load_episodes(sample_episodes_path()))
    if not quiet:
        with_what = " with the bundled sample episodes" if sample else " with no episodes yet"
        console.print(f"created golem [bold]{golem_id}[/bold]{with_what}")


def register(app: typer.Typer) -> None:
    app.command("run")(run)
    app.command("should-dream")(should_dream_cmd)
    app.add_typer(config_app, name="config")
