"""``oneiros report``, ``budget`` and ``pairs``: what a dream produced, what dreaming has cost, and
which distant memories the next dream would pair."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from oneiros._errors import InputError
from oneiros.cli._common import (
    GolemOpt,
    JsonOpt,
    StoreOpt,
    console,
    cycle_ids,
    emit_json,
    golem_of,
    one_line_errors,
    opened,
    resolve_id,
    short_ids,
    table,
)
from oneiros.cli._config import ConfigOpt, load
from oneiros.cli._projections import up_to_date
from oneiros.settings._cycle import EngineSettings

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from oneiros.store._store import EventStore

__all__ = ["register"]

TierOpt = Annotated[
    str | None,
    typer.Option(
        "--tier",
        help="Show the config's caps at this tier: core or hardened (default: the caps the last cycle ran with).",
    ),
]


def report(
    store: StoreOpt = None,
    golem: GolemOpt = None,
    cycle: Annotated[
        str | None, typer.Option("--cycle", help="This cycle's report, or a unique prefix (default: the latest).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """The DreamReport and wake-up summary of a golem's latest (or a given) cycle; --cycle alone
    names its golem."""
    import msgspec
    from rich.markup import escape
    from rich.tree import Tree

    from oneiros.events._types import DreamStart
    from oneiros.projections._journal import dream_reports

    with opened(store) as event_store:
        with one_line_errors():
            if cycle and golem is None:
                # A cycle names its golem, as rerun, fork and diff take it: looked up among the
                # default golem's alone, another golem's cycle was "no cycle matches".
                golem_of_cycle = {
                    r.event.cycle_id: r.meta.golem_id
                    for r in event_store.read_all(types=[DreamStart])
                    if isinstance(r.event, DreamStart)
                }
                cycle = resolve_id(cycle, golem_of_cycle, "cycle")
                golem = golem_of_cycle[cycle]
            golem = golem_of(golem)
            where = f"the cycles of golem {golem!r}"
            cycle = resolve_id(cycle, cycle_ids(event_store, golem), "cycle", where) if cycle else None
            found = [r for r in dream_reports(event_store, golem) if cycle is None or r[0].cycle_id == cycle]
            if not found:
                raise InputError(f"golem {golem!r} has no dream report" + (f" for cycle {cycle!r}" if cycle else ""))
        dream, summary, staged = found[-1]
        quality, basis = _quality(event_store, dream.cycle_id, dream.journal.dream_quality_score)
        if as_json:
            emit_json(
                {
                    "report": msgspec.to_builtins(dream),
                    "wake_up": msgspec.to_builtins(summary) if summary else None,
                    "quality_pct": quality,
                    "quality_basis": basis,
                }
            )
            return
        j = dream.journal
        title = f"[bold]dream {dream.cycle_id}[/bold] · quality {quality}%"
        tree = Tree(f"{title} · {j.tokens_spent} tokens · ${j.total_cost_usd:.4f}")
        tree.add(escape(f"quality: {basis}"))
        nrem = tree.add(f"NREM: {j.phase1_summary.episodes_replayed} episodes replayed")
        t = j.phase1_summary.triage_decisions
        nrem.add(f"triage: preserve {t.preserve}, abstract {t.abstract}, forget {t.forget}")
        for pattern in j.phase1_summary.patterns_found:
            nrem.add(escape(pattern))
        rem = tree.add(
            f"REM: {j.phase2_summary.counterfactuals_generated} counterfactuals, "
            f"{j.phase2_summary.emotional_episodes_processed} episodes depotentiated"
        )
        for item in (*j.phase2_summary.creative_hypotheses, *j.phase2_summary.threats_simulated):
            rem.add(escape(item))
        console.print(tree)
        columns = ("entry", "kind", "conf", "content", "validation criterion")
        outputs = table(f"{len(staged)} staged outputs", *columns, whole=("entry",))
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


def _quality(store: EventStore, cycle_id: str, self_assessed: float) -> tuple[int, str]:
    """The cycle's quality as the journal has it (its own score, recalibrated as its outputs are
    validated), so `report` and `journal` show one figure in one form, and what it is made of."""
    from oneiros.projections._index import journal_entry
    from oneiros.projections._journal import JournalSettings, quality_basis

    with up_to_date(store, reads=("journal",)) as projections:
        entry = journal_entry(projections.db, cycle_id)
    if entry is None:
        return round(self_assessed * 100), f"self-assessed {round(self_assessed * 100)}%"
    return int(entry.quality_pct), entry.quality_basis or quality_basis(entry, JournalSettings())


def budget(
    store: StoreOpt = None,
    golem: GolemOpt = None,
    tier: TierOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What dreaming has spent against each cap, as of the golem's latest event: the caps its last
    cycle ran with (recorded in its DreamStart), or with --config, or before any cycle, the
    config's (oneiros.toml, ONEIROS_*); --tier shows the config's caps at that tier."""
    from typing import get_args

    from oneiros.events._types import DreamStart
    from oneiros.runtime._budget import Ledger, budget_report
    from oneiros.settings._vocabulary import Tier

    if tier is not None and tier not in get_args(Tier):  # CycleBudget takes any string; no caps would show
        with one_line_errors():
            raise InputError(f"unknown tier {tier!r}; use {' or '.join(get_args(Tier))}")
    # The caps every other process enforces: the defaults alone ignored a configured month_usd.
    # Another tier's are the config's at that tier: its caps fill only what the config leaves unset.
    caps = load(config, None, {"cycle.budget.tier": (tier, "--tier")} if tier else None).cycle.budget
    golem = golem_of(golem)
    with opened(store) as event_store:
        version = event_store.stream_version(golem)
        if not version:
            raise InputError(f"golem {golem!r} has no events")
        # Only what the ledger reads (a long-lived golem's stream is mostly episodes), and the
        # time of the stream's last event, which the caps' windows end at.
        last = event_store.read_stream(golem, after_version=version - 1)
        history = event_store.read_stream(golem, types=(DreamStart, *Ledger.reads))
        # The caps that bound the last cycle, wherever it ran: a worker's or another shell's config
        # may differ from this one's, and the default caps would call a hardened cycle over budget.
        started = [r.event.settings for r in history if isinstance(r.event, DreamStart)]
        if config is None and tier is None and started and started[-1] is not None:
            caps = started[-1].budget
        last_cycle, rows = budget_report(history, caps, now=last[-1].meta.time)
        if as_json:
            emit_json({"golem_id": golem, "tier": caps.tier, "cycle_id": last_cycle, "caps": rows})
            return
        shown = table(f"{golem} · {caps.tier} tier · last cycle {last_cycle}", "cap", "tokens", "of", "usd", "of")
        for row in rows:
            shown.add_row(
                row["cap"],
                str(row["tokens"]),
                str(row["token_cap"] or "-"),
                f"{row['usd']:.6f}",
                "-" if row["usd_cap"] is None else f"{row['usd_cap']:.2f}",
            )
        console.print(shown)


def pairs(
    store: StoreOpt = None,
    golem: GolemOpt = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draw.")] = 0,
    embedder: Annotated[
        Literal["hashing", "none"], typer.Option("--embedder", help="hashing or none (random fallback).")
    ] = "hashing",
    as_json: JsonOpt = False,
) -> None:
    """The distant memory pairs a dream would draw now (Bumblebee's selection)."""
    import numpy as np

    from oneiros._deps import rng_for
    from oneiros.episodes._vectors import make_embedder
    from oneiros.fsm._service import Golems
    from oneiros.phases._pairs import select_distant_pairs
    from oneiros.runtime._golem_log import GolemLogs

    golem = golem_of(golem)
    with opened(store) as event_store:
        golems = Golems(event_store)
        golems.state(golem)
        # The fold a cycle reads (from the latest snapshot), embedding only the memories drawn.
        memory = GolemLogs.of(golems).read(golem).memory
        episodes = memory.columns()
        settings = EngineSettings().rem.pairs
        vectors = memory.vectors(make_embedder(embedder), embedder)
        rng = np.random.default_rng(rng_for(seed, golem, "pairs").getrandbits(64))
        draw = select_distant_pairs(episodes.seconds, episodes.significance, vectors, settings, rng)

        def similarity(a: int, b: int) -> float | None:
            if vectors is None:
                return None
            if isinstance(vectors, np.ndarray):
                return round(float(vectors[a] @ vectors[b]), 4)
            return round(float(vectors.row(a) @ vectors.row(b)), 4)

        rows: list[dict[str, Any]] = [
            {
                "first": episodes[a].tick,
                "second": episodes[b].tick,
                "first_summary": episodes[a].summary,
                "second_summary": episodes[b].summary,
                "similarity": similarity(a, b),
            }
            for a, b in draw.pairs
        ]
        if as_json:
            emit_json({"fallback": draw.fallback, "pairs": rows})
            return
        title = f"{len(rows)} distant pairs" + (" (random temporal fallback)" if draw.fallback else "")
        drawn = table(title, "tick", "memory", "tick", "memory", "cosine")
        for row in rows:
            drawn.add_row(
                str(row["first"]),
                row["first_summary"],
                str(row["second"]),
                row["second_summary"],
                "-" if row["similarity"] is None else f"{row['similarity']:.3f}",
            )
        console.print(drawn)


def register(app: typer.Typer) -> None:
    app.command("report")(report)
    app.command("budget")(budget)
    app.command("pairs")(pairs)
