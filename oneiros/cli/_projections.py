"""``oneiros journal``, ``staging``, ``outcome``, ``review``, ``reevaluate``, ``memory``, ``follow``,
``rebuild``, and the projection half of ``replay --verify``."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from oneiros._errors import InputError, masked_url
from oneiros._text import counted
from oneiros.cli._common import (
    MAX_POSITION,
    GolemFilter,
    GolemOpt,
    JsonOpt,
    StoreOpt,
    application,
    console,
    emit_json,
    entry_ids,
    limited,
    one_line_errors,
    print_error,
    resolve_id,
    short_ids,
    table,
)
from oneiros.cli._config import ConfigOpt, load

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from oneiros.app._oneiros import Oneiros
    from oneiros.app._shapes import Entry
    from oneiros.projections._profile import ProfileItem

__all__ = ["ProjectionsOpt", "register", "verify_projections"]

ProjectionsOpt = Annotated[
    str | None,
    typer.Option(
        "--projections", envvar="ONEIROS_PROJECTIONS", help="Projection database URL (default: beside the store)."
    ),
]
LimitOpt = Annotated[int, typer.Option("--limit", min=1, max=MAX_POSITION, help="At most this many rows.")]
IdsOpt = Annotated[
    bool,
    typer.Option("--ids", help="Print only the ids, one a line, for a shell variable: ID=$(oneiros ... --ids)."),
]


def _spinner(text: str) -> AbstractContextManager[object]:
    # Only on a terminal: --json output and pipes stay clean.
    return console.status(text, spinner="dots") if console.is_terminal else nullcontext()


def journal(
    *,
    store: StoreOpt = None,
    config: ConfigOpt = None,
    projections: ProjectionsOpt = None,
    golem: GolemFilter = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print journal.md (Bumblebee's shape).")] = False,
    limit: LimitOpt = 200,
    as_json: JsonOpt = False,
    ids: IdsOpt = False,
) -> None:
    """One entry per dream cycle (the latest --limit): phases, counts, cost, duration and quality."""
    effective = load(config, None)
    with application(store, config=effective, projections=projections) as app:
        page = app.journal(golem, limit=limit)
        entries = page.items[::-1]  # the latest --limit, oldest first
        if ids:  # a README block takes a cycle id this way where a reader copies one from a table
            _print_ids(e.cycle_id for e in entries)
            return
        with limited(len(entries), page.total or 0, "cycles (the latest)"):
            if as_json:
                emit_json(entries)
                return
            if markdown:
                text = app.journal_markdown(golem, limit=limit)
                console.print(text, markup=False, highlight=False, soft_wrap=True)
                return
            shown = table(
                f"dream journal · {counted(len(entries), 'cycle')} · replay: episodes replayed · hyp/cf/ins: "
                "hypotheses, counterfactuals, insights",
                *("cycle", "golem", "status", "replay", "hyp/cf/ins", "staged", "tokens", "quality"),
                whole=("cycle", "status"),
            )
            short = short_ids(e.cycle_id for e in entries)
            for e in entries:
                shown.add_row(
                    short[e.cycle_id],
                    e.golem_id,
                    (e.status if e.status != "interrupted" else f"interrupted ({e.interrupted_by})")
                    + (" [red]empty[/red]" if e.empty else ""),
                    str(len(e.episodes_replayed)),
                    f"{len(e.hypotheses)}/{len(e.counterfactuals)}/{len(e.insights)}",
                    str(e.staged),
                    str(e.tokens_in + e.tokens_out),
                    f"{e.quality_pct}%",
                )
            console.print(shown)


def staging(
    *,
    store: StoreOpt = None,
    config: ConfigOpt = None,
    projections: ProjectionsOpt = None,
    golem: GolemFilter = None,
    status: Annotated[
        list[str] | None, typer.Option("--status", help="Only entries in this status (repeatable).")
    ] = None,
    limit: LimitOpt = 200,
    as_json: JsonOpt = False,
    ids: IdsOpt = False,
) -> None:
    """The staging buffer (the first --limit entries): every dream output with its confidence,
    status and criterion."""
    from typing import get_args

    from oneiros.events._staging import StagingStatus

    known = get_args(StagingStatus)
    unknown = [s for s in status or () if s not in known]
    if unknown:  # else a typo lists no entry, as if none had that status
        with one_line_errors():
            raise InputError(f"unknown status {unknown[0]!r}; use one of {', '.join(known)}")
    effective = load(config, None)
    with application(store, config=effective, projections=projections) as app:
        page = app.entries(golem, status or (), limit=limit)
        entries = page.items
        if ids:
            _print_ids(e.entry_id for e in entries)
            return
        with limited(len(entries), page.total or 0, "entries"):
            if as_json:
                emit_json(entries)
                return
            # When every row is one golem's (--golem, or a store of one golem), its column would
            # only take the text's room: the title names it instead.
            golems = {e.golem_id for e in entries}
            only = golem or (next(iter(golems)) if len(golems) == 1 else None)
            title = f"staging buffer · {counted(len(entries), 'entry')}" + (f" of {only}" if only else "")
            short = short_ids(e.entry_id for e in entries)
            if console.width < _WIDE:
                _staging_blocks(title, entries, short, only)
                return
            # The reason an entry is held for review gets a column only when some entry is held.
            held = any(e.quarantine is not None for e in entries)
            columns = (
                "entry",
                *(() if only else ("golem",)),
                *("kind", "status", "conf", "+/-", "criterion", "text"),
                *(("quarantined",) if held else ()),
            )
            shown = table(title, *columns, whole=("entry", "status"))
            for e in entries:
                shown.add_row(
                    short[e.entry_id],
                    *(() if only else (e.golem_id,)),
                    e.kind,
                    e.status,
                    f"{e.confidence:.2f}",
                    f"{e.confirmations}/{e.contradictions}",
                    escape(_criterion(e)),
                    escape(e.text),  # whole: the column folds, a cut sentence reads as nonsense
                    *((escape(e.quarantine.why) if e.quarantine is not None else "",) if held else ()),
                )
            console.print(shown)


def _print_ids(ids: Iterable[str]) -> None:
    """Whole ids, one a line, nothing else: what ``$(...)`` takes."""
    for one in ids:
        console.print(one, markup=False, highlight=False, soft_wrap=True)


_WIDE = 120
"""Terminals at least this wide show the staging buffer as a table; narrower ones an entry a block."""


def _criterion(entry: Entry) -> str:
    return " ".join(entry.criterion.all_of) + (f" @{entry.criterion.regime}" if entry.criterion.regime else "")


def _staging_blocks(title: str, entries: list[Entry], short: dict[str, str], only: str | None) -> None:
    """The staging buffer for a narrow terminal: each entry's figures on one line and its sentence
    wrapped under it at the full width, where eight table columns would leave it a word a line."""
    from rich.padding import Padding

    console.print(f"[bold]{escape(title)}[/bold]")
    for e in entries:
        figures = [
            f"[bold]{short[e.entry_id]}[/bold]",
            *(() if only else (escape(e.golem_id),)),
            e.kind.replace("_", " "),
            e.status,
            f"{e.confidence:.2f} ({e.confirmations}/{e.contradictions})",
        ]
        console.print("  ".join(figures))
        console.print(Padding(escape(e.text), (0, 0, 0, 4)))
        console.print(Padding(f"[dim]criterion:[/dim] {escape(_criterion(e))}", (0, 0, 0, 4)))
        if e.quarantine is not None:
            console.print(Padding(f"[yellow]quarantined:[/yellow] {escape(e.quarantine.why)}", (0, 0, 0, 4)))


def outcome(
    *,
    tick: Annotated[int, typer.Option("--tick", help="The waking tick the outcome happened at.")],
    verdict: Annotated[str, typer.Option("--verdict", help="confirms or contradicts.")],
    golem: GolemOpt = None,
    entry: Annotated[
        str | None,
        typer.Option("--entry", help="The staged entry it bears on, or a unique prefix (else matched by criterion)."),
    ] = None,
    summary: Annotated[str, typer.Option("--summary", help="What happened.")] = "",
    tag: Annotated[list[str] | None, typer.Option("--tag", help="A tag of the outcome (repeatable).")] = None,
    regime: Annotated[str | None, typer.Option("--regime", help="The regime it happened in.")] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Say why each entry moved, and why the nearest others did not.")
    ] = False,
    store: StoreOpt = None,
    config: ConfigOpt = None,
    projections: ProjectionsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Record a waking outcome and run the validation sweep on it: it moves the active entries it is
    relevant to (staging.min_relevance)."""
    from oneiros.cli._explain import print_explanation
    from oneiros.events._staging import Verdict
    from oneiros.validation._review import OutcomeInput

    if verdict not in ("confirms", "contradicts"):
        print_error(f"verdict {verdict!r} must be 'confirms' or 'contradicts'")
        raise typer.Exit(2)
    v: Verdict = "confirms" if verdict == "confirms" else "contradicts"
    effective = load(config, None)
    golem = golem or effective.golem
    with application(store, config=effective, projections=projections) as app:
        entry = resolve_id(entry, entry_ids(app.store), "entry") if entry else None
        moved = app.record_outcome(
            golem,
            OutcomeInput(tick=tick, verdict=v, summary=summary, tags=tuple(tag or ()), regime=regime, entry_id=entry),
            explain=explain or not as_json,  # the text names the nearest entry when nothing moved
        )
        if as_json:
            emit_json(moved)
            return
        console.print(f"outcome recorded at position {moved.position}; {counted(len(moved.entries), 'entry')} moved")
        if not explain:
            for e in moved.entries:
                held = " (quarantined: only a review promotes it)" if e.quarantine is not None and e.active else ""
                console.print(f"  {e.entry_id}: {e.status} at {e.confidence:.2f}{held}")
        if moved.explain is not None:
            print_explanation(moved.explain, whole=explain)


def review(
    *,
    entry_id: Annotated[str, typer.Argument(help="The staged entry's id, or a unique prefix (3d48:2).")],
    decision: Annotated[
        str,
        typer.Option(
            "--decision", help="reinforce, stale, reject, promote_candidate, or revoke (withdraw a promoted entry)."
        ),
    ],
    reason: Annotated[str, typer.Option("--reason", help="Why.")],
    who: Annotated[str, typer.Option("--who", help="Who decides.")] = "owner",
    store: StoreOpt = None,
    config: ConfigOpt = None,
    projections: ProjectionsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Decide on a staged entry (Dense-Mem's feedback decisions), or revoke a promoted one: MEMORY.md's
    next version drops its line, with who and why kept in its history."""
    from typing import get_args

    from oneiros.events._staging import ReviewDecision

    decisions: tuple[ReviewDecision, ...] = get_args(ReviewDecision)
    if decision not in decisions:
        print_error(f"decision {decision!r} must be one of {', '.join(decisions)}")
        raise typer.Exit(2)
    chosen: ReviewDecision = decisions[decisions.index(decision)]
    effective = load(config, None)
    with application(store, config=effective, projections=projections) as app:
        entry = app.review(resolve_id(entry_id, entry_ids(app.store), "entry"), chosen, who=who, why=reason)
        if as_json:
            emit_json(entry)
            return
        console.print(f"{entry.entry_id} is now [bold]{entry.status}[/bold] " + escape(f"({who}: {reason})"))
        if entry.quarantine is not None:
            console.print("quarantined, so only a review promotes it: " + escape(entry.quarantine.why))
        newest = app.memory(entry.golem_id) if entry.status in ("promoted", "revoked") else None
        if newest is not None:  # where the promotion or the revocation shows in MEMORY.md
            before = f" (oneiros memory --diff {newest.version - 1} {newest.version})" if newest.version > 1 else ""
            console.print(escape(f"MEMORY.md v{newest.version}: {newest.reason}{before}"), soft_wrap=True)


def reevaluate(
    golem: GolemOpt = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
    projections: ProjectionsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Dense-Mem's re_evaluate: stale entries whose source episodes are gone, reinforce intact ones."""
    effective = load(config, None)
    golem = golem or effective.golem
    # With no log there is nothing to re-evaluate: the store is not made.
    with application(store, config=effective, projections=projections) as app:
        decisions = app.reevaluate(golem)
        if as_json:
            emit_json(decisions)
            return
        console.print(counted(len(decisions), "decision"))
        for d in decisions:
            console.print(escape(f"  {d.entry_id}: {d.decision} ({d.why})"))


_OBSERVATIONS = 20
"""How many observations ``memory --observations`` shows without ``--limit``: a screenful. It took a
number of its own (``--observations N``), so README's ``memory --observations`` failed with
"requires an argument"."""


def memory(
    *,
    golem: GolemOpt = None,
    diff: Annotated[tuple[int, int] | None, typer.Option("--diff", help="Show the diff between two versions.")] = None,
    write: Annotated[
        Path | None, typer.Option("--write", help="Write MEMORY.md (and the one it replaces) here.")
    ] = None,
    rollback: Annotated[int | None, typer.Option("--rollback", help="Restore this version as a new one.")] = None,
    reason: Annotated[str, typer.Option("--reason", help="Why (for --rollback).")] = "",
    who: Annotated[str, typer.Option("--who", help="Who (for --rollback).")] = "owner",
    observations: Annotated[
        bool,
        typer.Option(
            "--observations",
            help="Show the newest --limit observations (OpenSeed's facts, RED/YLW/GRN) instead.",
        ),
    ] = False,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            min=0,
            max=MAX_POSITION,
            help=f"With --observations: how many, newest last (default {_OBSERVATIONS}).",
        ),
    ] = None,
    profile: Annotated[
        bool,
        typer.Option("--profile", help="Show the user's profile (standing instructions, preferences, who they are)."),
    ] = False,
    history: Annotated[
        bool, typer.Option("--history", help="With --profile: the entries later ones replaced too.")
    ] = False,
    store: StoreOpt = None,
    config: ConfigOpt = None,
    projections: ProjectionsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """MEMORY.md as dream promotions wrote it (Ethos): the newest version, a diff, a file, a rollback;
    or the observations page: the facts dreams drew from the episodes; or the user's profile."""
    from oneiros.app._shapes import Memory

    if limit is not None and not observations:  # else it was dropped without a word
        with one_line_errors():
            raise InputError("--limit counts observations: it goes with --observations")
    effective = load(config, None)
    golem = golem or effective.golem
    with application(store, config=effective, projections=projections) as app:
        if profile:
            _profile(app.profile(golem, history=history), as_json)
            return
        if observations:
            count = _OBSERVATIONS if limit is None else limit
            shown = app.observations(golem).items[-count:] if count > 0 else []
            if as_json:
                emit_json(shown)
                return
            for o in shown:
                console.print(f"{o.priority} {o.time} {o.text}", markup=False, highlight=False)
            return
        if rollback is not None:
            app.rollback_memory(golem, rollback, who=who, why=reason)
        if diff is not None:
            text = app.memory_diff(golem, *diff)
            if as_json:
                emit_json({"diff": text})
            else:
                console.print(text, markup=False, highlight=False)
            return
        newest = app.memory(golem)
        written = app.write_memory(golem, write) if write is not None else None
    if as_json:
        emit_json(Memory(memory=newest, written=str(written) if written else None))
        return
    if newest is None:
        console.print(f"no MEMORY.md for golem {golem!r} yet: nothing has been promoted")
        return
    console.print(f"MEMORY.md v{newest.version} ({newest.reason})", markup=False)
    console.print(newest.content, markup=False, highlight=False)
    if written is not None:
        console.print(f"written to {written}", markup=False)


def _profile(items: list[ProfileItem], as_json: bool) -> None:
    if as_json:
        emit_json(items)
        return
    if not items:
        console.print("no profile yet: no dream has found an instruction, a preference or a fact about the user")
    for item in items:
        held = "" if item.current else f" (until {(item.until or '?')[:10]})"
        turns = ", ".join(item.source_refs or [str(t) for t in item.source_ticks])
        console.print(
            f"{(item.since or '')[:10]} [{item.key}] {item.text}{held} ({turns})", markup=False, highlight=False
        )


def follow(store: StoreOpt = None, config: ConfigOpt = None, projections: ProjectionsOpt = None) -> None:
    """Keep the staging and health processes and every projection up with the log until interrupted."""
    with application(store, config=load(config, None), projections=projections) as app:
        stop = threading.Event()
        # SIGTERM (docker stop, systemd) stops it as Ctrl-C does: cleanly, exit 0, not killed mid-batch.
        previous = signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())
        where = f"following {masked_url(app.store.url)} into {masked_url(app.projections.db.url)}; Ctrl-C stops"
        console.print(escape(where))
        try:
            app.follow(stop)
        except KeyboardInterrupt:
            stop.set()
        finally:
            signal.signal(signal.SIGTERM, previous)


def rebuild(
    *,
    name: Annotated[str | None, typer.Argument(help="The projection (default: all).")] = None,
    until: Annotated[
        int | None, typer.Option("--until", min=0, max=MAX_POSITION, help="Build as of this global position.")
    ] = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
    projections: ProjectionsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Drop a projection (or all) and build it again from the log, to the head or as of a position."""
    effective = load(config, None)
    with application(store, config=effective, projections=projections) as app, _spinner("rebuilding"):
        positions = app.rebuild(name, until)
        if as_json:
            emit_json(positions)
            return
        for projection, position in positions.items():
            console.print(f"{projection}: rebuilt to position {position}")


def verify_projections(app: Oneiros, as_json: bool) -> bool:
    """Every projection brought to the log head and rebuilt into a scratch store, digests compared
    (:meth:`~oneiros.app.Oneiros.verify`); True when all match."""
    with _spinner("rebuilding projections into a scratch store"):
        results = app.verify()
    ok = all(r.ok for r in results)
    if as_json:
        emit_json(
            {
                "ok": ok,
                "projections": [
                    {
                        "projection": r.projection,
                        "position": r.position,
                        "ok": r.ok,
                        "live": r.live,
                        "rebuilt": r.rebuilt,
                    }
                    for r in results
                ],
            }
        )
        return ok
    digests = table("projection digests: live vs rebuilt", "projection", "position", "live", "rebuilt", "match")
    for r in results:
        digests.add_row(
            r.projection,
            str(r.position),
            r.live[:16],
            r.rebuilt[:16],
            "[green]yes[/green]" if r.ok else "[red]NO[/red]",
        )
    console.print(digests)
    return ok


def register(app: typer.Typer) -> None:
    app.command("journal")(journal)
    app.command("staging")(staging)
    app.command("outcome")(outcome)
    app.command("review")(review)
    app.command("reevaluate")(reevaluate)
    app.command("follow")(follow)
    app.command("rebuild")(rebuild)
    app.command("memory")(memory)
