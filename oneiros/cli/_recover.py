"""``oneiros recover`` (a reconciler pass, or passes with ``--watch``) and ``oneiros interrupt``
(a person ends a cycle)."""

from __future__ import annotations

import signal
import threading
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from oneiros.cli._common import (
    GolemOpt,
    JsonOpt,
    StoreOpt,
    application,
    console,
    emit_json,
    one_line_errors,
    opened,
    print_error,
    short_ids,
    table,
)
from oneiros.cli._config import ConfigOpt, QueueOpt, flag, load

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from collections.abc import Callable

    from oneiros.runtime._executor import CycleResult
    from oneiros.runtime._reconcile import Reconciler, Resolution

__all__ = ["register"]


def recover(
    store: StoreOpt = None,
    queue: QueueOpt = None,
    config: ConfigOpt = None,
    watch: Annotated[
        bool, typer.Option("--watch", help="Keep going: a pass every recovery.interval_seconds until stopped.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Find golems dreaming in a phase that nothing runs, and resume it or end the cycle.

    A phase is running while a process holds its lease or the queue holds its job. A stranded
    one is resumed (enqueued when a queue is configured, else run here to the end of its cycle),
    reusing every generator response already recorded; after recovery.attempts resumes, or when
    its job failed for good, the cycle ends interrupted with the reason. Exit 1 when the queue
    could not be reached."""
    from oneiros.app._oneiros import Oneiros

    flags: dict[str, tuple[Any, str]] = {}
    flag(flags, "store", store, "--store")
    flag(flags, "queue", queue, "--queue")
    effective = load(config, None, flags)
    with opened(effective.store_url) as event_store, Oneiros(event_store, effective) as app:
        results: dict[str, CycleResult] = {}
        if watch:

            def here(golem_id: str, _cycle_id: str, resume: Callable[[], CycleResult]) -> None:
                results[golem_id] = resume()

            with one_line_errors():
                reconciler = app.reconciler(resume_on=here)
            _watch(reconciler, results, as_json)
            return
        with one_line_errors():
            found = app.recover(resumed=results.__setitem__)
        _show(found, results, as_json)
        if any(r.action == "unreachable" for r in found):
            raise typer.Exit(1)


def _row(resolution: Resolution, results: dict[str, CycleResult]) -> dict[str, Any]:
    import msgspec

    row: dict[str, Any] = msgspec.to_builtins(resolution)
    result = results.pop(resolution.golem_id, None)
    if result is not None and resolution.action == "resumed":
        row["outcome"] = f"interrupted: {result.interrupted}" if result.interrupted else "complete"
    return row


def _show(found: list[Resolution], results: dict[str, CycleResult], as_json: bool) -> None:
    rows = [_row(r, results) for r in found]
    if as_json:
        emit_json(rows)
        return
    if not rows:
        console.print("no golem is dreaming")
        return
    title = f"{sum(1 for r in found if r.acted)} of {len(rows)} dreaming golems needed recovery"
    shown = table(title, "golem", "cycle", "phase", "action", "attempt", "detail", whole=("cycle", "action"))
    short = short_ids(row["cycle_id"] for row in rows)
    for row in rows:
        detail = row["detail"] + (f" → {row['outcome']}" if "outcome" in row else "")
        attempt = str(row["attempt"]) if row["attempt"] else "-"
        shown.add_row(row["golem_id"], short[row["cycle_id"]], row["phase"], row["action"], attempt, detail)
    console.print(shown)


def _watch(reconciler: Reconciler, results: dict[str, CycleResult], as_json: bool) -> None:
    """Pass after pass until SIGINT or SIGTERM; each pass that acted is shown (a JSON line each)."""
    stop = threading.Event()

    def on_signal(_signum: int, _frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    def on_pass(found: list[Resolution]) -> None:
        acted = [r for r in found if r.acted]
        if acted:
            _show(acted, results, as_json)

    reconciler.watch(stop.wait, on_pass)


def interrupt(
    *,
    reason: Annotated[str, typer.Option("--reason", help="Why, as the log will say it.")],
    positional: Annotated[
        str | None, typer.Argument(metavar="[GOLEM]", help="Deprecated: use --golem.", show_default=False)
    ] = None,
    golem: GolemOpt = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """End the golem's dream cycle now, interrupted by its owner with --reason (kept in the log).

    What the cycle produced so far stays; a phase running on a worker or in a `dream` finds its
    next append refused and stops. An error if the golem is not dreaming."""
    if positional is not None and golem is not None and positional != golem:
        print_error(f"golem {positional!r} and --golem {golem!r} disagree; give --golem only")
        raise typer.Exit(2)
    flags: dict[str, tuple[Any, str]] = {}
    flag(flags, "store", store, "--store")
    flag(flags, "golem", golem or positional, "--golem")
    effective = load(config, None, flags)
    golem = effective.golem
    with application(effective.store_url, config=effective) as app:
        ended = app.interrupt(golem, reason)
    assert ended is not None  # not dreaming is an IllegalCommand, said above
    if as_json:
        emit_json(ended)
        return
    console.print(escape(f"interrupted cycle {ended.cycle_id} of {golem} in {ended.phase}: {reason}"))


def register(app: typer.Typer) -> None:
    app.command("recover")(recover)
    app.command("interrupt")(interrupt)
