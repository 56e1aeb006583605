"""``oneiros run``, ``oneiros config show`` and ``oneiros should-dream``."""

from __future__ import annotations

import signal
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from oneiros._errors import GolemNotFound, OneirosError
from oneiros.cli._common import JsonOpt, StoreOpt, console, emit_json, err_console, opened

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from rich.table import Table

    from oneiros.config import OneirosConfig
    from oneiros.scheduling import Decision

__all__ = ["register"]

ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="Config file (default $ONEIROS_CONFIG or ./oneiros.toml).")
]
PresetOpt = Annotated[str | None, typer.Option("--preset", help="bumblebee, bardo, dense-mem, ethos or openseed.")]
GolemOpt = Annotated[str | None, typer.Option("--golem", help="Golem id (default: the config's golem).")]

config_app = typer.Typer(help="The effective configuration.", no_args_is_help=True)


def _load(path: Path | None, preset: str | None) -> OneirosConfig:
    from oneiros.config import load_config

    try:
        return load_config(path, preset=preset)
    except OneirosError as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        rows: list[tuple[str, Any]] = []
        for key, inner in value.items():
            rows += _flatten(inner, f"{prefix}{key}.")
        return rows
    return [(prefix[:-1], value)]


@config_app.command("show")
def show(config: ConfigOpt = None, preset: PresetOpt = None, as_json: JsonOpt = False) -> None:
    """Print the effective config: defaults, preset, file and ONEIROS_* variables merged."""
    import msgspec
    from rich.table import Table

    from oneiros.config import env_var

    effective = _load(config, preset)
    data = msgspec.to_builtins(effective)
    if as_json:
        emit_json(data)
        return
    table = Table(title=f"effective config (preset: {effective.preset or 'none'})")
    for column in ("key", "value", "override with"):
        table.add_column(column, overflow="fold")
    for key, value in _flatten(data):
        shown = msgspec.json.encode(value).decode()
        table.add_row(key, shown, env_var(key))
    console.print(table)


def _decision_table(decision: Decision, title: str) -> Table:
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
    as_json: JsonOpt = False,
) -> None:
    """Explain whether a golem would dream now: every gate and trigger with its values."""
    from oneiros.scheduling import fold_schedule, should_dream

    effective = _load(config, preset)
    golem_id = golem or effective.golem
    try:
        now = datetime.fromisoformat(at) if at else datetime.now(UTC)
    except ValueError:
        err_console.print(f"[red]error:[/red] --at {at!r} is not an ISO time")
        raise typer.Exit(2) from None
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    with opened(store or effective.store or None) as event_store:
        state = fold_schedule(golem_id, event_store.read_stream(golem_id))
        if state.mode is None:
            raise GolemNotFound(golem_id)
        decision = should_dream(effective.schedule, state, now, tick=tick, tick_seconds=effective.daemon.tick_seconds)
        if as_json:
            emit_json(
                {
                    "golem_id": golem_id,
                    "at": now.isoformat(),
                    "dream": decision.dream,
                    "trigger": decision.trigger,
                    "bardo_trigger": decision.bardo_trigger,
                    "blocked_by": list(decision.blocked_by),
                    "urgency": decision.urgency,
                    "threshold": decision.threshold,
                    "deep": decision.deep,
                    "checks": [{"name": c.name, "passed": c.passed, "detail": c.detail} for c in decision.checks],
                }
            )
            return
        verdict = f"dream ({decision.trigger}; Bardo: {decision.bardo_trigger})" if decision.dream else "no dream"
        console.print(_decision_table(decision, f"{golem_id} at {now.isoformat()}: {verdict}"))


def run(
    *,
    store: StoreOpt = None,
    golem: GolemOpt = None,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    ticks: Annotated[int, typer.Option("--ticks", help="Stop after this many ticks (0: until SIGTERM).")] = 0,
    tick_seconds: Annotated[
        float | None, typer.Option("--tick-seconds", min=0.001, help="Override daemon.tick_seconds (> 0).")
    ] = None,
    sample: Annotated[
        bool, typer.Option("--sample", help="Give a new golem the bundled sample trading episodes (a demo).")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Run the heartbeat daemon: record activity, decide each tick, dream when the config says.

    SIGTERM or SIGINT stops it cleanly: a running cycle finishes (or, past the grace period, is
    recorded as interrupted) before the process exits."""
    import msgspec

    from oneiros._deps import Deps
    from oneiros.daemon import Daemon
    from oneiros.episodes import load_episodes, sample_episodes_path
    from oneiros.fsm import Golems
    from oneiros.workers import InProcessExecutor

    effective = _load(config, preset)
    if tick_seconds is not None:
        daemon_settings = msgspec.structs.replace(effective.daemon, tick_seconds=tick_seconds)
        effective = msgspec.structs.replace(effective, daemon=daemon_settings)
    golem_id = golem or effective.golem
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda _signum, _frame: stop.set())
    with opened(store or effective.store or None, create=True) as event_store:
        golems = Golems(event_store, deps=Deps(), snapshots=effective.snapshots)
        try:
            golems.state(golem_id)
        except GolemNotFound:
            golems.create(golem_id)
            if sample:
                golems.record_episodes(golem_id, load_episodes(sample_episodes_path()))
            if not as_json:
                console.print(
                    f"created golem [bold]{golem_id}[/bold]"
                    + (" with the bundled sample episodes" if sample else " with no episodes yet")
                )
        executor = InProcessExecutor(golems, settings=effective.cycle)
        daemon = Daemon(golems, golem_id, executor, schedule=effective.schedule, daemon=effective.daemon)
        if not as_json:
            console.print(
                f"[bold]{golem_id}[/bold] heartbeat every {effective.daemon.tick_seconds:g}s on {event_store.url}"
            )
        count = 0
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
            console.print(f"stopped after {count} ticks, {len(daemon.results)} cycles; golem is {daemon.state.mode}")


def register(app: typer.Typer) -> None:
    app.command("run")(run)
    app.command("should-dream")(should_dream_cmd)
    app.add_typer(config_app, name="config")
