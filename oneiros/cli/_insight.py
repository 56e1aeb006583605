"""Insight into dreaming: ``oneiros health`` (the dreaming-health alarms), ``lineage`` (where a
staged entry came from, exactly) and ``ab`` (an offline A/B of two configurations on a recorded
timeline)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from oneiros.cli._common import JsonOpt, StoreOpt, console, emit_json, opened

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from oneiros.events import EventStore

__all__ = ["register"]

ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="Config file (default $ONEIROS_CONFIG or ./oneiros.toml).")
]


def _settle(store: EventStore, config: Path | None) -> Any:
    """Bring the staging and health processes to the head (each decision once, as every reading
    command does); returns the health process, which holds what the alarms judge."""
    from oneiros.config import load_config
    from oneiros.validation import HealthProcess, StagingProcess

    loaded = load_config(config)
    StagingProcess(store, loaded.staging).catch_up()
    process = HealthProcess(store, loaded.health)
    process.catch_up()
    return process


def health(
    golem: Annotated[str | None, typer.Option("--golem", help="Only this golem.")] = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """A golem's dreaming health: cycles that staged nothing, cycles without a promotion, the
    validation hit rate, cost without yield and budget overruns, with the alarms raised now.

    Like every reading command it first brings the validation layer to the log's head, so the
    alarms it shows are recorded (once) in the log."""
    import msgspec

    from oneiros.validation import health_metrics, health_report

    with opened(store) as event_store:
        process = _settle(event_store, config)
        names = [golem] if golem is not None else sorted(process.golems)
        rows = []
        for name in names:
            report = health_report(event_store, name)
            known = process.golems.get(name)
            metrics = health_metrics(known) if known is not None else None
            rows.append({"golem_id": name, "metrics": metrics, **msgspec.to_builtins(report)})
    if as_json:
        emit_json({"golems": rows})
        return
    _print_health(rows)


def _print_health(rows: list[dict[str, Any]]) -> None:
    from rich.table import Table

    table = Table(title="dreaming health")
    for column in ("golem", "cycles", "empty in a row", "since promotion", "$ since promotion", "hit rate", "alarms"):
        table.add_column(column)
    for row in rows:
        m = row["metrics"] or {}
        rate = m.get("hit_rate_pct")
        alarms = ", ".join(a["alarm"] for a in row["alarms"])
        table.add_row(
            escape(row["golem_id"]),
            str(m.get("cycles", 0)),
            str(m.get("empty_cycles_in_a_row", 0)),
            f"{m.get('cycles_since_promotion', 0)} cycles",
            f"{m.get('usd_since_promotion', 0.0):.6f}",
            "-" if rate is None else f"{rate:.0f}% of {m.get('confidence_moves', 0)}",
            f"[red]{alarms}[/red]" if alarms else "[green]none[/green]",
        )
    console.print(table)
    for row in rows:
        for alarm in row["alarms"]:
            line = f"  {row['golem_id']}: {alarm['alarm']} since cycle {alarm['cycle_id']}: {alarm['detail']}"
            console.print(line, markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command()(health)
