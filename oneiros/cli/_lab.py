"""The dream lab: ``oneiros rerun`` (re-execute past cycles with every generator response read
from the log), ``fork`` (re-run one with other settings in a branch store, calling the model only
where the request changed) and ``diff`` (two cycles side by side)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from oneiros._errors import InputError, masked_url
from oneiros._text import counted
from oneiros.cli._common import (
    JsonOpt,
    StoreOpt,
    application,
    console,
    cycle_ids,
    emit_json,
    one_line_errors,
    opened,
    resolve_id,
)
from oneiros.cli._config import load

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from oneiros.lab._diff import CycleDiff
    from oneiros.lab._rerun import RerunReport
    from oneiros.settings._cycle import CycleSettings
    from oneiros.store._store import EventStore

__all__ = ["register"]

ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="Config file (default $ONEIROS_CONFIG or ./oneiros.toml).")
]

GeneratorOpt = Annotated[str | None, typer.Option("--generator", help="offline or openai.")]
BaseUrlOpt = Annotated[str | None, typer.Option("--base-url", help="The OpenAI-compatible endpoint's URL.")]
PromptsOpt = Annotated[Path | None, typer.Option("--prompts", help="TOML file of prompt overrides.")]
TierOpt = Annotated[str | None, typer.Option("--tier", help="core or hardened (default: the config's).")]


def _settings(
    config: Path | None,
    *,
    generator: str | None,
    base_url: str | None,
    prompts: Path | None,
    tier: str | None,
    model: str | None = None,
) -> CycleSettings:
    """The config's cycle settings, with the options given on top."""
    import msgspec

    from oneiros.config._load import load_config
    from oneiros.settings._prompts import PromptSet

    if generator is not None and generator not in ("offline", "openai"):
        raise InputError(f"unknown generator {generator!r}; use offline or openai")
    if tier is not None and tier not in ("core", "hardened"):
        raise InputError(f"unknown tier {tier!r}; use core or hardened")
    # The tier as a flag, under the config's layers: a cap the config sets holds at any tier.
    cycle = load_config(config, flags={"cycle.budget.tier": (tier, "--tier")} if tier else None).cycle
    openai = cycle.generator.openai
    if base_url is not None:
        openai = msgspec.structs.replace(openai, base_url=base_url)
    if model is not None:
        openai = msgspec.structs.replace(openai, models={"core": model, "hardened": model}, phase_models={})
    chosen = msgspec.structs.replace(cycle.generator, kind=generator or cycle.generator.kind, openai=openai)
    engines = cycle.engines
    if prompts is not None:
        engines = msgspec.structs.replace(engines, prompts=PromptSet.from_toml(prompts))
    return msgspec.structs.replace(cycle, generator=chosen, engines=engines)


def _cycle_in(store: EventStore, typed: str) -> str:
    """The cycle ``typed`` (an id or a unique prefix) names in ``store``."""
    return resolve_id(typed, cycle_ids(store), "cycle", f"the log at {masked_url(store.url)}")


def _print(report: RerunReport) -> None:
    where = f"cycle [bold]{report.cycle_id}[/bold] of {report.golem_id}"
    counts = (
        f"{counted(report.events_compared, 'event')}, {counted(report.recorded_calls, 'call')} read from the "
        f"log, {counted(report.model_calls, 'model call')}"
    )
    if report.identical:
        # A cycle that did not complete is re-run only as far as the log goes: say how far.
        upto = {"interrupted": " up to its interrupt", "in_progress": " so far (still under way)"}
        console.print(f"{where}: [green]identical[/green]{upto.get(report.ended, '')} ({counts})", soft_wrap=True)
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


def rerun(
    *,
    cycles: Annotated[
        list[str] | None, typer.Argument(help="Cycle ids (or unique prefixes) to re-run (see --all).")
    ] = None,
    store: StoreOpt = None,
    every: Annotated[bool, typer.Option("--all", help="Re-run every cycle in the log.")] = False,
    seed: Annotated[int, typer.Option("--seed", help="The seed the cycles ran with (dream --seed).")] = 0,
    config: ConfigOpt = None,
    generator: GeneratorOpt = None,
    base_url: BaseUrlOpt = None,
    prompts: PromptsOpt = None,
    tier: TierOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Re-execute past cycles from their starting position in a scratch copy, every generator
    response read from the log (no model is called, the live golem is never written), and say
    whether each is identical or exactly where and why it diverges. Exit 1 if any diverges."""
    import msgspec

    overridden = config is not None or any(o is not None for o in (generator, base_url, prompts, tier))
    with one_line_errors():  # a bad setting is named before the store is looked at
        # Without options, each cycle re-runs with the settings it recorded when it started.
        configured = _settings(config, generator=generator, base_url=base_url, prompts=prompts, tier=tier)
        settings = configured if overridden else None
    with application(store) as app:
        known = cycle_ids(app.store)
        where = f"the log at {masked_url(app.store.url)}"
        ids = known if every else [resolve_id(c, known, "cycle", where) for c in cycles or []]
        if every and not known:
            raise InputError(f"there is no cycle to re-run in {where}")
        if not ids:
            raise InputError("name a cycle to re-run, or --all")
        reports = [app.rerun(c, settings, seed=seed) for c in ids]
    if as_json:
        emit_json([{**msgspec.to_builtins(r), "first": msgspec.to_builtins(r.first)} for r in reports])
    else:
        for report in reports:
            _print(report)
    if not all(r.identical for r in reports):
        raise typer.Exit(1)


def fork(
    *,
    cycle: Annotated[str, typer.Argument(help="The cycle to fork (its id or a unique prefix).")],
    into: Annotated[str, typer.Option("--into", help="A new, empty store URL for the branch.")],
    store: StoreOpt = None,
    seed: Annotated[int, typer.Option("--seed", help="The seed the cycle ran with (dream --seed).")] = 0,
    config: ConfigOpt = None,
    generator: GeneratorOpt = None,
    base_url: BaseUrlOpt = None,
    model: Annotated[str | None, typer.Option("--model", help="Model for every tier and phase.")] = None,
    prompts: PromptsOpt = None,
    tier: TierOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Re-run CYCLE with another model, prompts or settings in the branch store --into: recorded
    answers are reused where the request is unchanged, the model is called only where it differs,
    and the live store is only read. Then compare with `oneiros diff CYCLE CYCLE --other INTO`."""
    import msgspec

    from oneiros.generators._factory import check_api_key

    with one_line_errors():
        settings = _settings(config, generator=generator, base_url=base_url, prompts=prompts, tier=tier, model=model)
        check_api_key(settings.generator, "fork")  # before the store is looked at
    with application(store) as app:
        report = app.fork(_cycle_in(app.store, cycle), into, settings, seed=seed)
    if as_json:
        emit_json({**msgspec.to_builtins(report), "branch": into})
        return
    console.print(
        f"forked cycle [bold]{report.cycle_id}[/bold] into {escape(into)}: {counted(report.recorded_calls, 'call')} "
        f"read from the log, {counted(report.model_calls, 'model call')}, "
        f"{counted(len(report.divergences), 'difference')}",
        soft_wrap=True,
    )


def _side(items: tuple[str, ...], mark: str) -> list[str]:
    return [f"{mark} {item}" for item in items]


def _print_diff(d: CycleDiff) -> None:
    console.print(f"--- {d.a.cycle_id} ({d.a.store})", soft_wrap=True, markup=False)
    console.print(f"+++ {d.b.cycle_id} ({d.b.store})", soft_wrap=True, markup=False)
    for section in ("hypotheses", "counterfactuals", "staged"):
        lines = _side(d.only_a[section], "-") + _side(d.only_b[section], "+")
        if lines:
            console.print(f"{section}:", markup=False)
            for line in lines:
                console.print(f"  {line}", soft_wrap=True, markup=False)
    from rich.table import Table

    table = Table(show_edge=False)
    for column in ("", f"A {d.a.cycle_id}", f"B {d.b.cycle_id}"):
        table.add_column(escape(column), overflow="fold")
    for section in ("hypotheses", "counterfactuals", "staged"):
        table.add_row(section, str(len(getattr(d.a, section))), str(len(getattr(d.b, section))))
    for name in ("quality", "tokens", "cost_usd", "calls", "failed_calls", "overruns", "models"):
        a, b = getattr(d.a, name), getattr(d.b, name)
        mark = " *" if name in d.changed else ""
        left, right = (", ".join(a), ", ".join(b)) if name == "models" else (str(a), str(b))
        table.add_row(name + mark, escape(left), escape(right))
    console.print(table)
    if d.same:
        console.print("no difference in outputs, quality, tokens or cost")


def diff(
    *,
    a: Annotated[str, typer.Argument(help="A cycle id (or unique prefix) in --store.")],
    b: Annotated[str, typer.Argument(help="A cycle id (or unique prefix) in --other (default: --store too).")],
    store: StoreOpt = None,
    config: ConfigOpt = None,
    other: Annotated[str | None, typer.Option("--other", help="Store URL of B (a fork's branch).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Two cycles side by side: hypotheses, counterfactuals and staged entries only one has,
    and quality, tokens, cost, calls and models where they differ."""
    import msgspec

    effective = load(config, None)

    with application(store, config=effective) as app:
        if other is None:
            result = app.diff(_cycle_in(app.store, a), _cycle_in(app.store, b))
        else:
            with opened(other, create=False) as other_store:
                result = app.diff(_cycle_in(app.store, a), _cycle_in(other_store, b), other=other_store)
    if as_json:
        emit_json({**msgspec.to_builtins(result), "same": result.same})
        return
    _print_diff(result)


def register(app: typer.Typer) -> None:
    app.command()(rerun)
    app.command()(fork)
    app.command()(diff)
