"""``oneiros rerun``: re-execute past cycles with every generator response read from the log."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import msgspec
import typer
from rich.markup import escape

from oneiros._errors import InputError
from oneiros.cli._common import JsonOpt, StoreOpt, console, emit_json, opened
from oneiros.config import load_config
from oneiros.events import DreamStart, EventStore
from oneiros.generators import make_generator
from oneiros.settings import CycleSettings, GeneratorSettings, PromptSet
from oneiros.workers import RerunReport, rerun_cycle

__all__ = ["register"]

ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="Config file (default $ONEIROS_CONFIG or ./oneiros.toml).")
]


def _settings(
    config: Path | None, generator: str | None, base_url: str | None, prompts: Path | None
) -> CycleSettings:
    """The config's cycle settings, with the options given on top."""
    cycle = load_config(config).cycle
    if generator is not None and generator not in ("offline", "openai"):
        raise InputError(f"unknown generator {generator!r}; use offline or openai")
    chosen = cycle.generator
    if generator is not None or base_url is not None:
        openai = msgspec.structs.replace(chosen.openai, base_url=base_url) if base_url else chosen.openai
        chosen = GeneratorSettings(kind=generator or chosen.kind, openai=openai, seed=chosen.seed)  # type: ignore[arg-type]
    engines = cycle.engines
    if prompts is not None:
        engines = msgspec.structs.replace(engines, prompts=PromptSet.from_toml(prompts))
    return msgspec.structs.replace(cycle, generator=chosen, engines=engines)


def _all_cycles(store: EventStore) -> list[str]:
    return [r.event.cycle_id for r in store.read_all(types=[DreamStart]) if isinstance(r.event, DreamStart)]


def _print(report: RerunReport) -> None:
    where = f"cycle [bold]{report.cycle_id}[/bold] of {report.golem_id}"
    counts = (
        f"{report.events_compared} events, {report.recorded_calls} calls read from the log, "
        f"{report.model_calls} model calls"
    )
    if report.identical:
        console.print(f"{where}: [green]identical[/green] ({counts})", soft_wrap=True)
        return
    first = report.first
    assert first is not None
    at = escape(f" at call {first.call_key}" if first.call_key else f" at event {first.index}")
    line = f"{where}: [red]diverges[/red]{at} in {first.phase or 'the cycle'}: {escape(first.reason)} ({counts})"
    console.print(line, soft_wrap=True, markup=True)
    for divergence in report.divergences[1:]:
        key = divergence.call_key or f"event {divergence.index}"
        line = f"  {divergence.kind} {key} ({divergence.phase}): {divergence.reason}"
        console.print(line, soft_wrap=True, markup=False)


def rerun(  # noqa: PLR0917 - typer maps one parameter to each option
    cycles: Annotated[list[str] | None, typer.Argument(help="Cycle ids to re-run (see --all).")] = None,
    store: StoreOpt = None,
    every: Annotated[bool, typer.Option("--all", help="Re-run every cycle in the log.")] = False,
    seed: Annotated[int, typer.Option("--seed", help="The seed the cycles ran with (dream --seed).")] = 0,
    config: ConfigOpt = None,
    generator: Annotated[
        str | None, typer.Option("--generator", help="offline or openai: how requests were shaped (model, temperature)")
    ] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="The OpenAI-compatible endpoint's URL.")] = None,
    prompts: Annotated[Path | None, typer.Option("--prompts", help="TOML file of prompt overrides.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Re-execute past cycles from their starting position in a scratch copy, every generator
    response read from the log (no model is called, the live golem is never written), and say
    whether each is identical or exactly where and why it diverges. Exit 1 if any diverges."""
    with opened(store) as event_store:  # a oneiros error becomes one line and exit code 2
        settings = _settings(config, generator, base_url, prompts)
        ids = _all_cycles(event_store) if every else list(cycles or [])
        if not ids:
            raise InputError("name a cycle to re-run, or --all")
        # Never called: it only says which model and temperature each request goes out with.
        shape_of = make_generator(settings.generator, seed=seed, env={})
        reports = [rerun_cycle(event_store, c, settings, shape_of=shape_of, seed=seed) for c in ids]
    if as_json:
        emit_json([{**msgspec.to_builtins(r), "first": msgspec.to_builtins(r.first)} for r in reports])
    else:
        for report in reports:
            _print(report)
    if not all(r.identical for r in reports):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command()(rerun)

