"""``oneiros recall``: what a golem knows that matches a query, from the terminal, or as the memory
block a prompt takes. A read: it records no recall and creates nothing."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from oneiros.cli._common import GolemOpt, JsonOpt, StoreOpt, application, console, emit_json, err_console, table
from oneiros.cli._config import ConfigOpt, load
from oneiros.cli._projections import ProjectionsOpt

if TYPE_CHECKING:  # annotations only: the command imports these on first use
    from oneiros.projections._recall import RecallItem

__all__ = ["register"]


def recall(
    *,
    query: Annotated[str, typer.Argument(metavar="QUERY", help="What to recall.", show_default=False)],
    golem: GolemOpt = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            min=1,
            max=100,
            help="At most this many results, and as many related dreams (default 10; with --block memory_block.limit).",
        ),
    ] = None,
    budget_tokens: Annotated[
        int | None,
        typer.Option(
            "--budget-tokens",
            min=1,
            help="Keep the ranking's top that fits this many tokens (memory_block.tokenizer counts them).",
        ),
    ] = None,
    block: Annotated[
        bool, typer.Option("--block", help="Print the memory block: MEMORY.md's lines, then the ranking, as a prompt.")
    ] = False,
    store: StoreOpt = None,
    config: ConfigOpt = None,
    projections: ProjectionsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What a golem knows that matches QUERY, in recall's one ranking: results and related dreams
    (hypotheses), with the turns each stands for and when. Records no recall; --json is the REST
    answer's shape."""
    from oneiros.app._memory_block import tokenizer, turn_times, within_budget

    effective = load(config, None)
    golem = golem or effective.golem
    with application(store, config=effective, projections=projections) as app:
        if block:
            made = app.memory_block(golem, query, budget_tokens=budget_tokens, limit=limit)
            if as_json:
                emit_json(made)
            else:  # written as it is: a console would wrap long lines at its width
                sys.stdout.write(made.text + "\n" if made.text else "")
            return
        found = app.recall(golem, query, limit or 10, record=False)
        shown = (
            found
            if budget_tokens is None
            else within_budget(found, budget_tokens, tokenizer(effective.memory_block.tokenizer))
        )
        times = turn_times(app.projections.db, golem, shown.ranking())
    if as_json:
        emit_json(shown)
        return
    ranking = shown.ranking()
    if not ranking:
        console.print(f"nothing recalled for {query!r}", markup=False, highlight=False)
    else:
        console.print(_table(query, ranking, times))
    left = len(found.ranking()) - len(ranking)
    if left:
        err_console.print(f"{left} more past --budget-tokens {budget_tokens}", highlight=False)


def _table(query: str, ranking: list[RecallItem], times: dict[int, str]) -> object:
    from rich.text import Text

    made = table(f"recall: {query}", "#", "standing", "relevance", "text", "turns", "when", whole=("#",))
    # The text is what is read: from 80 columns up it keeps room for a phrase a line (narrower,
    # that room would push the last column off the screen); the turns fold.
    made.columns[4].max_width = 10
    if console.width >= 80:
        made.columns[3].min_width = 20
    place = {i.ref: i.rank for i in ranking}
    for item in ranking:
        named = item.speaker and not item.text.lower().startswith(item.speaker.lower())
        said = f"{item.speaker}: {item.text}" if named else item.text
        if item.replaces is not None:
            # The later value on the same thing: the reader sees which earlier one it replaced.
            said += (
                f"\n(replaces #{place[item.replaces]})" if item.replaces in place else "\n(replaces an earlier value)"
            )
        made.add_row(
            str(item.rank),
            f"{'result' if item.standing == 'fact' else 'dream'}\n{item.kind}",
            f"{item.relevance:.2f}",
            Text(said),
            Text(", ".join(item.source_refs) or ", ".join(str(t) for t in item.source_ticks)),
            _when(item, times),
        )
    return made


def _when(item: RecallItem, times: dict[int, str]) -> str:
    """The item's own day, else the span of its turns' days (--json has the times)."""
    if item.time:
        return item.time[:10]
    days = sorted({times[t][:10] for t in item.source_ticks if t in times})
    if not days:
        return ""
    return days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"


def register(app: typer.Typer) -> None:
    app.command("recall")(recall)
