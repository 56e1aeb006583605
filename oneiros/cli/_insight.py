"""Insight into dreaming: ``oneiros health`` (the dreaming-health alarms), ``lineage`` (where a
staged entry came from, exactly) and ``ab`` (an offline A/B of two configurations on a recorded
timeline)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from oneiros._errors import InputError
from oneiros._text import counted
from oneiros.cli._common import (
    GolemFilter,
    JsonOpt,
    StoreOpt,
    application,
    console,
    emit_json,
    entry_ids,
    one_line_errors,
    resolve_id,
    table,
)

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from oneiros.app._shapes import Health

__all__ = ["register"]

ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="Config file (default $ONEIROS_CONFIG or ./oneiros.toml).")
]


def health(
    golem: GolemFilter = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 when any alarm is raised (for cron and monitoring).")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Each golem's dreaming health (or --golem's): cycles that staged nothing, cycles without a promotion, the
    validation hit rate, cost without yield and budget overruns, with the alarms raised now.

    The table's columns: cycles dreamt; empty run, the latest cycles in a row that staged nothing;
    unpromoted, cycles since the last promotion, and $ unpromoted, what they cost; the sweep's hit
    rate; the alarms raised. Like every reading command it first brings the validation layer to
    the log's head, so the alarms it shows are recorded (once) in the log."""
    from oneiros.config._load import load_config

    with one_line_errors():
        loaded = load_config(config)
    with application(store, config=loaded) as app:
        rows = app.health(golem)
    if as_json:
        emit_json({"golems": rows})
    else:
        _print_health(rows)
    if check and any(row.alarms for row in rows):
        raise typer.Exit(1)


def _print_health(rows: list[Health]) -> None:
    shown = table(
        "dreaming health",
        # Short headings, so that every column fits 80: what each counts is in `oneiros health --help`.
        *("golem", "cycles", "empty run", "unpromoted", "$ unpromoted", "hit rate", "alarms"),
        whole=("golem",),
    )
    for row in rows:
        m = row.metrics
        rate = m.hit_rate_pct if m is not None else None
        alarms = ", ".join(a.alarm for a in row.alarms)
        shown.add_row(
            escape(row.golem_id),
            str(m.cycles if m else 0),
            str(m.empty_cycles_in_a_row if m else 0),
            str(m.cycles_since_promotion if m else 0),
            f"{m.usd_since_promotion if m else 0.0:.6f}",
            "-" if rate is None or m is None else f"{rate:.0f}% of {m.confidence_moves}",
            f"[red]{alarms}[/red]" if alarms else "[green]none[/green]",
        )
    console.print(shown)
    for row in rows:
        for alarm in row.alarms:
            line = f"  {row.golem_id}: {alarm.alarm} since cycle {alarm.cycle_id}: {alarm.detail}"
            console.print(line, markup=False, soft_wrap=True)


def lineage(
    entry: Annotated[str, typer.Argument(help="The staged entry's id, or a unique prefix of it.")],
    golem: Annotated[
        str | None, typer.Option("--golem", help="Look for the entry among this golem's only (default: every golem's).")
    ] = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Where a staged entry came from, exactly: its source episodes, the output and the generator
    call (call key and request hash) it came from, the prompt template and its version, the model,
    tokens and cost, and every move: its quarantine, each outcome or review that moved its
    confidence, each recall that returned it, and how it was promoted (sweep, review or recalls)."""
    from oneiros.config._load import load_config

    with one_line_errors():
        loaded = load_config(config)
    with application(store, config=loaded) as app:
        # With --golem, a prefix another golem's entries share too still names one entry.
        if golem:
            app.require_golem(golem)  # else "no entry matches", as if the golem had none
        where = f"the staged entries of golem {golem!r}" if golem else ""
        # The short ids the tables show (`3d48b0c1:004`) resolve too.
        found = app.lineage(resolve_id(entry, entry_ids(app.store, golem), "entry", where), golem)
    if as_json:
        emit_json(found)
        return
    console.print(lineage_tree(found))


def lineage_tree(found: Any) -> Any:
    """The lineage as a rich Tree: entry, then where it came from, then what moved it."""
    from rich.tree import Tree

    pct = f"{found.staged_confidence_pct}% → {found.confidence_pct}%"
    root = Tree(f"[bold]{escape(found.entry_id)}[/bold] {found.kind} · {pct} · golem {escape(found.golem_id)}")
    root.add(escape(found.text))
    made = root.add(f"made in cycle {escape(found.cycle_id)}, phase {found.phase or '-'}")
    made.add(f"output {escape(found.output_event_id)} at position {found.output_position}")
    sources = made.add(f"source episodes ({len(found.source_episodes)})")
    for episode in found.source_episodes:
        sources.add(f"tick {episode.tick}: {escape(episode.said())}")
    g = found.generation
    if g is None:
        made.add("no generator call (an output made without the model)")
    else:
        how = "by call key" if found.exact else "by prompt and model (recorded before call keys)"
        call = made.add(f"generation [bold]{escape(g.call_key)}[/bold] at position {g.position}, found {how}")
        call.add(f"request hash {escape(g.request_hash or '-')}")
        call.add(f"model {escape(g.model)} (asked for {escape(g.requested_model or '-')}), temperature {g.temperature}")
        call.add(f"tokens {g.tokens_in} in + {g.tokens_out} out, ${g.cost_usd:.6f}")
        t = found.prompt_template
        if t is not None:
            kind = "override" if t.overridden else "default"
            call.add(f"prompt template {t.task} version {t.version} ({kind})")
    moved = root.add(f"moves ({len(found.moves)})")
    for m in found.moves:
        moved.add(escape(_move_line(m)))
    return root


_MOVE_LINES: dict[str, Any] = {
    "review": lambda m: f"review {m.decision} by {m.who}{_at(m.time)} → {m.status}: {m.why}",
    "promoted": lambda m: f"promoted at {m.after_pct}% by {m.who}: {m.why}",
    "refuted": lambda m: f"refuted at {m.after_pct}%",
    "quarantined": lambda m: f"quarantined, only a review promotes it: {m.why}",
    "recall": lambda m: f"recalled under {m.query!r} (score {m.score:.2f})",
}


def _at(time: str | None) -> str:
    """`` at 2026-11-24 09:00`` (UTC, as the log has it)."""
    return f" at {time[:16].replace('T', ' ')}" if time else ""


def _move_line(m: Any) -> str:
    if m.kind == "outcome":
        what = m.outcome or {}
        summary = what.get("summary", "")  # optional: without one, no dangling "tick 1001: "
        bore = f", relevance {m.relevance:.2f}" if m.relevance is not None else ""
        return (
            f"@{m.position} outcome {m.verdict}: {m.before_pct}% → {m.after_pct}%"
            f" (tick {what.get('tick', '?')}{f': {summary}' if summary else ''}{bore})"
        )
    line = _MOVE_LINES.get(m.kind)
    return f"@{m.position} " + (line(m) if line is not None else f"{m.kind}: {m.why}")


ArmOpt = Annotated[str | None, typer.Option(help="An oneiros.toml for the arm, or 'off' for no dreaming.")]


def _arm(name: str, spec: str | None, default: str, recordings: Path | None) -> Any:
    from oneiros.config._load import load_config
    from oneiros.lab._ab import Arm

    chosen = spec if spec is not None else default
    if chosen == "off":
        return Arm(name=name, label="not dreaming", dreams=False)
    path = None if chosen == "default" else Path(chosen)
    if path is not None and not path.is_file():
        raise InputError(f"no config file {chosen!r} for arm {name}; give an oneiros.toml or 'off'")
    # The default arm dreams as `oneiros dream` would here: oneiros.toml and ONEIROS_* if any.
    config = load_config(path)
    label = f"dreaming, {path.name if path is not None else 'this config'}"
    record = recordings / f"{name}.jsonl" if recordings is not None else None
    return Arm(name=name, label=label, cycle=config.cycle, staging=config.staging, recordings=record)


def ab(
    timeline: Annotated[Path, typer.Argument(help="A timeline of episodes, outcomes and dream points (JSON lines).")],
    config_a: ArmOpt = None,
    config_b: ArmOpt = None,
    recordings: Annotated[
        Path | None,
        typer.Option(help="Keep each arm's generator calls here; later runs answer from them, not the model."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Offline A/B: replay a recorded timeline twice, each arm in its own throwaway store (arm a:
    dreaming with this directory's config; arm b: not dreaming), and compare insights promoted,
    their precision, the sweep's hit rate, tokens and cost."""
    import msgspec

    from oneiros.lab._ab import run_ab

    with one_line_errors():
        if recordings is not None and recordings.exists() and not recordings.is_dir():
            raise InputError(f"--recordings {str(recordings)!r} is not a directory; give a directory (made if missing)")
        arms = [_arm("a", config_a, "default", recordings), _arm("b", config_b, "off", recordings)]
        report = run_ab(timeline, arms)
    if as_json:
        emit_json(msgspec.to_builtins(report))
        return
    _print_ab(report)


def _print_ab(report: Any) -> None:
    from rich.table import Table

    title = (
        f"A/B on {report.timeline}: {counted(report.episodes, 'episode')}, {counted(report.outcomes, 'outcome')}, "
        f"{counted(report.dream_points, 'dream point')}"
    )
    table = Table(title=escape(title))
    table.add_column("")
    for arm in report.arms:
        table.add_column(escape(f"{arm.arm}: {arm.label}"))

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.1f}%"

    rows: list[tuple[str, Callable[[Any], str]]] = [
        ("cycles", lambda a: str(a.cycles)),
        ("entries staged", lambda a: str(a.staged)),
        ("insights promoted", lambda a: str(a.promoted)),
        ("refuted", lambda a: str(a.refuted)),
        (
            "precision",
            lambda a: (
                f"{pct(a.precision)} ({a.confirmed_after_promotion}/"
                f"{a.confirmed_after_promotion + a.contradicted_after_promotion})"
            ),
        ),
        ("sweep hit rate", lambda a: pct(a.hit_rate)),
        ("tokens", lambda a: str(a.tokens)),
        ("cost", lambda a: f"${a.cost_usd:.4f}"),
        ("model calls", lambda a: f"{a.model_calls} ({a.recorded_calls} from recordings)"),
    ]
    for name, cell in rows:
        table.add_row(name, *(cell(a) for a in report.arms))
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command()(health)
    app.command()(lineage)
    app.command()(ab)
