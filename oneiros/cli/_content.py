"""``oneiros report``, ``budget`` and ``pairs``: what a dream produced, what dreaming has cost, and
which distant memories the next dream would pair."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from oneiros._errors import InputError
from oneiros._text import counted
from oneiros.cli._common import (
    GolemOpt,
    JsonOpt,
    StoreOpt,
    application,
    console,
    cycle_ids,
    emit_json,
    golem_of,
    resolve_id,
    short_ids,
    table,
)
from oneiros.cli._config import ConfigOpt, load

__all__ = ["register"]

TierOpt = Annotated[
    str | None,
    typer.Option(
        "--tier",
        help="Show the caps at this tier: core or hardened; a cap someone set holds (default: the last cycle's).",
    ),
]


def report(
    store: StoreOpt = None,
    config: ConfigOpt = None,
    golem: GolemOpt = None,
    cycle: Annotated[
        str | None, typer.Option("--cycle", help="This cycle's report, or a unique prefix (default: the latest).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """The DreamReport and wake-up summary of a golem's latest (or a given) cycle; --cycle alone
    names its golem."""
    from rich.markup import escape
    from rich.tree import Tree

    from oneiros.events._types import DreamStart

    effective = load(config, None)
    with application(store, config=effective) as app:
        if cycle and golem is None:
            # A cycle names its golem, as rerun, fork and diff take it: looked up among the
            # default golem's alone, another golem's cycle was "no cycle matches".
            golem_of_cycle = {
                r.event.cycle_id: r.meta.golem_id
                for r in app.store.read_all(types=[DreamStart])
                if isinstance(r.event, DreamStart)
            }
            cycle = resolve_id(cycle, golem_of_cycle, "cycle")
            golem = golem_of_cycle[cycle]
        golem = golem or effective.golem
        where = f"the cycles of golem {golem!r}"
        cycle = resolve_id(cycle, cycle_ids(app.store, golem), "cycle", where) if cycle else None
        found = app.report(golem, cycle)
        if found.report is None:
            raise InputError(f"golem {golem!r} has no dream report" + (f" for cycle {cycle!r}" if cycle else ""))
    if as_json:
        emit_json(found)
        return
    dream, summary, staged, quality = found.report, found.wake_up, found.staged, found.quality_pct
    j = dream.journal
    title = f"[bold]dream {dream.cycle_id}[/bold] · quality {quality}%"
    tree = Tree(f"{title} · {counted(j.tokens_spent, 'token')} · ${j.total_cost_usd:.4f}")
    if found.quality_basis:
        tree.add(escape(f"quality: {found.quality_basis}"))
    nrem = tree.add(f"NREM: {counted(j.phase1_summary.episodes_replayed, 'episode')} replayed")
    t = j.phase1_summary.triage_decisions
    nrem.add(f"triage: preserve {t.preserve}, abstract {t.abstract}, forget {t.forget}")
    for pattern in j.phase1_summary.patterns_found:
        nrem.add(escape(pattern))
    rem = tree.add(
        f"REM: {counted(j.phase2_summary.counterfactuals_generated, 'counterfactual')}, "
        f"{counted(j.phase2_summary.emotional_episodes_processed, 'episode')} depotentiated"
    )
    for item in (*j.phase2_summary.creative_hypotheses, *j.phase2_summary.threats_simulated):
        rem.add(escape(item))
    console.print(tree)
    columns = ("entry", "kind", "conf", "content", "validation criterion")
    outputs = table(counted(len(staged), "staged output"), *columns, whole=("entry", "kind"))
    short = short_ids(s.entry_id for s in staged)
    for s in staged:
        outputs.add_row(
            short[s.entry_id], s.kind, f"{s.confidence:.2f}", escape(s.content), escape(s.validation_criterion)
        )
    console.print(outputs)
    if summary is not None:
        console.print(escape(summary.text))
        for line in summary.highlights:
            console.print(f"  {escape(line)}")


def budget(
    store: StoreOpt = None,
    golem: GolemOpt = None,
    tier: TierOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What dreaming has spent against each cap, as of the golem's latest event: the caps its last
    cycle ran with (recorded in its DreamStart), or with --config, or before any cycle, the
    config's (oneiros.toml, ONEIROS_*); --tier shows those caps at another tier (a cap someone set
    holds there; the ones the tier gave follow it)."""
    # The caps every other process enforces: the defaults alone ignored a configured month_usd.
    effective = load(config, None)
    golem = golem_of(golem)
    with application(store, config=effective) as app:
        # The caps its last cycle recorded, unless --config names the ones to judge by.
        spent = app.budget(golem, tier=tier, recorded=config is None)
    if as_json:
        emit_json(spent)
        return
    shown = table(f"{golem} · {spent.tier} tier · last cycle {spent.cycle_id}", "cap", "tokens", "of", "usd", "of")
    for row in spent.caps:
        shown.add_row(
            row.cap,
            str(row.tokens),
            str(row.token_cap or "-"),
            f"{row.usd:.6f}",
            "-" if row.usd_cap is None else f"{row.usd_cap:.2f}",
        )
    console.print(shown)


def pairs(
    *,
    store: StoreOpt = None,
    config: ConfigOpt = None,
    golem: GolemOpt = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draw.")] = 0,
    embedder: Annotated[
        Literal["hashing", "none"], typer.Option("--embedder", help="hashing or none (random fallback).")
    ] = "hashing",
    as_json: JsonOpt = False,
) -> None:
    """The distant memory pairs a dream would draw now (Bumblebee's selection)."""
    effective = load(config, None)
    golem = golem or effective.golem
    with application(store, config=effective) as app:
        drawn = app.pairs(golem, seed=seed, embedder=embedder)
    if as_json:
        emit_json(drawn)
        return
    title = f"{len(drawn.pairs)} distant pairs" + (" (random temporal fallback)" if drawn.fallback else "")
    shown = table(title, "tick", "memory", "tick", "memory", "cosine")
    for pair in drawn.pairs:
        shown.add_row(
            str(pair.first),
            pair.first_summary,
            str(pair.second),
            pair.second_summary,
            "-" if pair.similarity is None else f"{pair.similarity:.3f}",
        )
    console.print(shown)


def register(app: typer.Typer) -> None:
    app.command("report")(report)
    app.command("budget")(budget)
    app.command("pairs")(pairs)
