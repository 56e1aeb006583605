"""``oneiros report``, ``budget`` and ``pairs``: what a dream produced, what dreaming has cost, and
which distant memories the next dream would pair; plus the tier/generator options of ``dream``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from oneiros._errors import ConfigError, InputError
from oneiros.cli._common import JsonOpt, StoreOpt, console, emit_json, opened
from oneiros.settings import CycleBudget, CycleSettings, EngineSettings, PromptSet

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from oneiros.generators import Generator

__all__ = ["BaseUrlOpt", "GeneratorOpt", "PromptsOpt", "TierOpt", "cycle_setup", "register"]

GolemOpt = Annotated[str, typer.Option("--golem", help="Golem id.")]
TierOpt = Annotated[
    str, typer.Option("--tier", help="Budget tier: core (rule-based, T0) or hardened (T1/T2, rich dreams).")
]
GeneratorOpt = Annotated[
    str, typer.Option("--generator", help="offline (deterministic, no network) or openai (OpenAI-compatible HTTP).")
]
BaseUrlOpt = Annotated[
    str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint (key from $OPENAI_API_KEY).")
]
PromptsOpt = Annotated[Path | None, typer.Option("--prompts", help="TOML file of prompt overrides.")]


def cycle_setup(
    seed: int, tier: str = "core", generator: str = "offline", base_url: str | None = None, prompts: Path | None = None
) -> tuple[Generator, CycleSettings]:
    """The generator and settings the ``dream`` options ask for; a bad option raises ConfigError."""
    from oneiros.generators import OfflineGenerator, OpenAIConfig, OpenAIGenerator

    if tier not in ("core", "hardened"):
        raise ConfigError(f"unknown tier {tier!r}; use core or hardened")
    prompt_set = PromptSet.from_toml(prompts) if prompts is not None else PromptSet()
    settings = CycleSettings(budget=CycleBudget(tier=tier), engines=EngineSettings(prompts=prompt_set))  # type: ignore[arg-type]
    if generator == "offline":
        return OfflineGenerator(seed=seed), settings
    if generator == "openai":
        config = OpenAIConfig(base_url=base_url) if base_url else OpenAIConfig()
        return OpenAIGenerator(config), settings
    raise ConfigError(f"unknown generator {generator!r}; use offline or openai")


def report(
    store: StoreOpt = None,
    golem: GolemOpt = "golem",
    cycle: Annotated[str | None, typer.Option("--cycle", help="This cycle's report (default: the latest).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """The DreamReport and wake-up summary of a golem's latest (or a given) cycle."""
    import msgspec
    from rich.markup import escape
    from rich.table import Table
    from rich.tree import Tree

    from oneiros.projections import dream_reports

    with opened(store) as event_store:
        found = [r for r in dream_reports(event_store, golem) if cycle is None or r[0].cycle_id == cycle]
        if not found:
            raise InputError(f"golem {golem!r} has no dream report" + (f" for cycle {cycle!r}" if cycle else ""))
        dream, summary, staged = found[-1]
        if as_json:
            emit_json(
                {"report": msgspec.to_builtins(dream), "wake_up": msgspec.to_builtins(summary) if summary else None}
            )
            return
        j = dream.journal
        title = f"[bold]dream {dream.cycle_id}[/bold] · quality {j.dream_quality_score:.2f}"
        tree = Tree(f"{title} · {j.tokens_spent} tokens · ${j.total_cost_usd:.4f}")
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
        table = Table(title=f"{len(staged)} staged outputs")
        for column in ("entry", "kind", "conf", "content", "validation criterion"):
            table.add_column(column, overflow="fold")
        for s in staged:
            table.add_row(s.entry_id, s.kind, f"{s.confidence:.2f}", escape(s.content), escape(s.validation_criterion))
        console.print(table)
        if summary is not None:
            console.print(escape(summary.text))
            for line in summary.highlights:
                console.print(f"  {escape(line)}")


def budget(
    store: StoreOpt = None,
    golem: GolemOpt = "golem",
    tier: TierOpt = "core",
    as_json: JsonOpt = False,
) -> None:
    """What dreaming has spent against each cap, as of the golem's latest event."""
    from rich.table import Table

    from oneiros.workers import budget_report

    with opened(store) as event_store:
        history = event_store.read_stream(golem)
        if not history:
            raise InputError(f"golem {golem!r} has no events")
        last_cycle, rows = budget_report(history, CycleBudget(tier=tier))  # type: ignore[arg-type]
        if as_json:
            emit_json({"golem_id": golem, "tier": tier, "cycle_id": last_cycle, "caps": rows})
            return
        table = Table(title=f"{golem} · {tier} tier · last cycle {last_cycle}")
        for column in ("cap", "tokens", "of", "usd", "of"):
            table.add_column(column)
        for row in rows:
            table.add_row(
                row["cap"],
                str(row["tokens"]),
                str(row["token_cap"] or "-"),
                f"{row['usd']:.6f}",
                "-" if row["usd_cap"] is None else f"{row['usd_cap']:.2f}",
            )
        console.print(table)


def pairs(
    store: StoreOpt = None,
    golem: GolemOpt = "golem",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draw.")] = 0,
    embedder: Annotated[
        Literal["hashing", "none"], typer.Option("--embedder", help="hashing or none (random fallback).")
    ] = "hashing",
    as_json: JsonOpt = False,
) -> None:
    """The distant memory pairs a dream would draw now (Bumblebee's selection)."""
    import numpy as np
    from rich.table import Table

    from oneiros._deps import rng_for
    from oneiros.engines import select_distant_pairs
    from oneiros.episodes import make_embedder
    from oneiros.fsm import Golems
    from oneiros.workers import GolemLogs

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
        table = Table(title=f"{len(rows)} distant pairs" + (" (random temporal fallback)" if draw.fallback else ""))
        for column in ("tick", "memory", "tick", "memory", "cosine"):
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(
                str(row["first"]),
                row["first_summary"],
                str(row["second"]),
                row["second_summary"],
                "-" if row["similarity"] is None else f"{row['similarity']:.3f}",
            )
        console.print(table)


def register(app: typer.Typer) -> None:
    app.command("report")(report)
    app.command("budget")(budget)
    app.command("pairs")(pairs)
