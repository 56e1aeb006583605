"""``oneiros journal``, ``staging``, ``outcome``, ``review``, ``reevaluate``, ``follow``, and the
projection half of ``replay --verify``."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from oneiros._errors import InputError, masked_url
from oneiros.cli._common import (
    MAX_POSITION,
    GolemFilter,
    GolemOpt,
    JsonOpt,
    StoreOpt,
    console,
    emit_json,
    entry_ids,
    golem_of,
    limited,
    one_line_errors,
    opened,
    print_error,
    resolve_id,
    short_ids,
    table,
)

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from oneiros.fsm._golem import GolemState
    from oneiros.projections._service import Projections
    from oneiros.projections._staging import StagedEntry
    from oneiros.scheduling._schedule_state import ScheduleState
    from oneiros.settings._health import HealthSettings
    from oneiros.settings._staging import StagingSettings
    from oneiros.store._store import EventStore

__all__ = [
    "ProjectionsOpt",
    "catch_up_progress",
    "golem_states",
    "register",
    "schedule_state",
    "up_to_date",
    "verify_projections",
]

ProjectionsOpt = Annotated[
    str | None,
    typer.Option(
        "--projections", envvar="ONEIROS_PROJECTIONS", help="Projection database URL (default: beside the store)."
    ),
]
LimitOpt = Annotated[int, typer.Option("--limit", min=1, max=MAX_POSITION, help="At most this many rows.")]


@contextmanager
def _projections(
    store: EventStore, url: str | None, reads: Sequence[str] = (), *, update: bool = True
) -> Iterator[Projections]:
    """The projections beside ``store``, with the sweep and the projections a command ``reads`` (every
    one if none is named) brought to the log head. A command brings up only what it shows: after a
    large import the recall index alone takes seconds, which ``journal`` should not wait for; the
    next command that reads it, or ``oneiros follow``, brings it up."""
    from oneiros.daemon._catch_up import update as bring_up_to_date
    from oneiros.projections._db import default_projection_url, open_projection_db
    from oneiros.projections._service import Projections

    with Projections(store, open_projection_db(url or default_projection_url(store.url))) as projections:
        if update:
            with catch_up_progress(store) as on_progress:
                bring_up_to_date(projections, _staging_settings(), _health_settings(), reads, on_progress)
        yield projections


_MOVING = {"sweep": "validation sweep", "health": "health checks"}


@contextmanager
def catch_up_progress(store: EventStore) -> Iterator[Callable[[str, int], None] | None]:
    """A bar over the log's positions while the sweep and projections catch up (after a large
    import that is seconds of work), naming what is moving. Only on a terminal, and gone when done."""
    if not console.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:,}/{task.total:,} events"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        head = [store.head()]
        task = progress.add_task("bringing projections up to the log head", total=head[0])

        def moved(what: str, position: int) -> None:
            # The sweep's decisions move the head on while it runs.
            head[0] = max(head[0], position)
            progress.update(
                task, description=_MOVING.get(what, f"projection {what}"), completed=position, total=head[0]
            )

        yield moved


def up_to_date(
    store: EventStore, url: str | None = None, reads: Sequence[str] = ()
) -> AbstractContextManager[Projections]:
    """The projections beside ``store`` (or at ``url``), the sweep and those named in ``reads`` (all
    if none) brought up to the log head."""
    return _projections(store, url, reads)


@contextmanager
def _brought_up(store: EventStore, url: str | None, name: str) -> Iterator[Projections]:
    """The projections beside ``store`` (or at ``url``) with the one named ``name`` brought to the
    log head, and not the sweep: for read models of the golems' own streams, which no decision of
    the sweep changes."""
    with _projections(store, url, update=False) as projections:
        with catch_up_progress(store) as on_progress:
            projections.update([name], on_progress)
        yield projections


def golem_states(store: EventStore, url: str | None = None) -> list[GolemState]:
    """Every golem's state at the log head, by id, from the ``golems`` projection (at ``url``, else
    beside the store) brought up to it: a fold of the whole log only the first time, then of what
    came since. The sweep is not run: a golem's state is its own stream alone."""
    with _brought_up(store, url, "golems") as projections:
        return sorted(projections.golems(), key=lambda s: s.golem_id)


def schedule_state(store: EventStore, golem_id: str, url: str | None = None) -> ScheduleState:
    """``golem_id``'s schedule state at the log head, from the ``schedule`` projection brought up to
    it (as :func:`golem_states`): the first call folds the log, later ones what came since."""
    from oneiros._errors import GolemNotFound

    with _brought_up(store, url, "schedule") as projections:
        state = projections.schedule(golem_id)
    if state is None:
        raise GolemNotFound(golem_id)
    return state


def _staging_settings() -> StagingSettings:
    """The sweep runs with the config's [staging] settings (oneiros.toml, ONEIROS_STAGING__*)."""
    from oneiros.config._load import load_config

    return load_config().staging


def _health_settings() -> HealthSettings:
    """The health alarms run with the config's [health] settings (oneiros.toml, ONEIROS_HEALTH__*)."""
    from oneiros.config._load import load_config

    return load_config().health


def _spinner(text: str) -> AbstractContextManager[object]:
    # Only on a terminal: --json output and pipes stay clean.
    return console.status(text, spinner="dots") if console.is_terminal else nullcontext()


def _entry_row(e: StagedEntry) -> dict[str, Any]:
    import msgspec

    return {
        "entry_id": e.entry_id,
        "golem_id": e.golem_id,
        "kind": e.kind,
        "status": e.status,
        "confidence": e.confidence_pct / 100,
        "confirmations": e.confirmations,
        "contradictions": e.contradictions,
        "text": e.text,
        "criterion": msgspec.to_builtins(e.criterion),
        "lineage": msgspec.to_builtins(e.lineage),
        "staged_tick": e.staged_tick,
        "resolved_by": e.resolved_by,
        "reviews": msgspec.to_builtins(e.reviews),
        "quarantine": None if e.quarantine is None else e.quarantine.as_row(),
    }


def journal(  # noqa: PLR0917 - typer commands take one parameter per CLI option
    store: StoreOpt = None,
    projections: ProjectionsOpt = None,
    golem: GolemFilter = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print journal.md (Bumblebee's shape).")] = False,
    limit: LimitOpt = 200,
    as_json: JsonOpt = False,
) -> None:
    """One entry per dream cycle (the latest --limit): phases, counts, cost, duration and quality."""
    import msgspec

    from oneiros.projections._journal import journal_markdown

    with opened(store) as event_store, _projections(event_store, projections, ("journal",)) as p:
        every = p.journal(golem)
        entries = every[-limit:]
        with limited(len(entries), len(every), "cycles (the latest)"):
            if as_json:
                emit_json([msgspec.to_builtins(e) for e in entries])
                return
            if markdown:
                console.print(journal_markdown(entries), markup=False, highlight=False, soft_wrap=True)
                return
            shown = table(
                f"dream journal · {len(entries)} cycles · replay: episodes replayed · hyp/cf/ins: hypotheses, "
                "counterfactuals, insights",
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


def staging(  # noqa: PLR0917 - typer commands take one parameter per CLI option
    store: StoreOpt = None,
    projections: ProjectionsOpt = None,
    golem: GolemFilter = None,
    status: Annotated[
        list[str] | None, typer.Option("--status", help="Only entries in this status (repeatable).")
    ] = None,
    limit: LimitOpt = 200,
    as_json: JsonOpt = False,
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
    with opened(store) as event_store, _projections(event_store, projections, ("staging",)) as p:
        every = p.staging(golem, status or ())
        entries = every[:limit]
        with limited(len(entries), len(every), "entries"):
            if as_json:
                emit_json([_entry_row(e) for e in entries])
                return
            # When every row is one golem's (--golem, or a store of one golem), its column would
            # only take the text's room: the title names it instead.
            golems = {e.golem_id for e in entries}
            only = golem or (next(iter(golems)) if len(golems) == 1 else None)
            title = f"staging buffer · {len(entries)} entries" + (f" of {only}" if only else "")
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
                    f"{e.confidence_pct / 100:.2f}",
                    f"{e.confirmations}/{e.contradictions}",
                    escape(_criterion(e)),
                    escape(e.text),  # whole: the column folds, a cut sentence reads as nonsense
                    *((escape(e.quarantine.why) if e.quarantine is not None else "",) if held else ()),
                )
            console.print(shown)


_WIDE = 120
"""Terminals at least this wide show the staging buffer as a table; narrower ones an entry a block."""


def _criterion(entry: StagedEntry) -> str:
    return " ".join(entry.criterion.all_of) + (f" @{entry.criterion.regime}" if entry.criterion.regime else "")


def _staging_blocks(title: str, entries: list[StagedEntry], short: dict[str, str], only: str | None) -> None:
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
            f"{e.confidence_pct / 100:.2f} ({e.confirmations}/{e.contradictions})",
        ]
        console.print("  ".join(figures))
        console.print(Padding(escape(e.text), (0, 0, 0, 4)))
        console.print(Padding(f"[dim]criterion:[/dim] {escape(_criterion(e))}", (0, 0, 0, 4)))
        if e.quarantine is not None:
            console.print(Padding(f"[yellow]quarantined:[/yellow] {escape(e.quarantine.why)}", (0, 0, 0, 4)))


def outcome(  # noqa: PLR0917 - typer commands take one parameter per CLI option
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
    projections: ProjectionsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Record a waking outcome and run the validation sweep on it: it moves the active entries it is
    relevant to (staging.min_relevance)."""
    from oneiros.cli._explain import print_explanation
    from oneiros.events._staging import Verdict
    from oneiros.validation._explain import explain_outcome
    from oneiros.validation._review import Feedback, OutcomeInput

    if verdict not in ("confirms", "contradicts"):
        print_error(f"verdict {verdict!r} must be 'confirms' or 'contradicts'")
        raise typer.Exit(2)
    v: Verdict = "confirms" if verdict == "confirms" else "contradicts"
    golem = golem_of(golem)
    with opened(store, create=True) as event_store:
        with one_line_errors():
            entry = resolve_id(entry, entry_ids(event_store), "entry") if entry else None
            record = Feedback(event_store).record_outcome(
                golem,
                OutcomeInput(
                    tick=tick, verdict=v, summary=summary, tags=tuple(tag or ()), regime=regime, entry_id=entry
                ),
            )
        with _projections(event_store, projections, ("staging",)) as p:
            moved = Feedback(event_store).moved_by(record)
            touched = [e for e in p.staging(golem) if e.entry_id in moved]
        why = explain_outcome(event_store, record, _staging_settings())
        if as_json:
            payload: dict[str, Any] = {"position": record.position, "entries": [_entry_row(e) for e in touched]}
            if explain:
                import msgspec

                payload["explain"] = msgspec.to_builtins(why)
            emit_json(payload)
            return
        console.print(f"outcome recorded at position {record.position}; {len(touched)} entries moved")
        if not explain:
            for e in touched:
                held = " (quarantined: only a review promotes it)" if e.quarantine is not None and e.active else ""
                console.print(f"  {e.entry_id}: {e.status} at {e.confidence_pct / 100:.2f}{held}")
        print_explanation(why, whole=explain)


def review(  # noqa: PLR0917 - typer commands take one parameter per CLI option
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
    projections: ProjectionsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Decide on a staged entry (Dense-Mem's feedback decisions), or revoke a promoted one: MEMORY.md's
    next version drops its line, with who and why kept in its history."""
    from typing import get_args

    from oneiros.events._staging import ReviewDecision
    from oneiros.projections._sinks import memory_version
    from oneiros.validation._review import Feedback

    decisions: tuple[ReviewDecision, ...] = get_args(ReviewDecision)
    if decision not in decisions:
        print_error(f"decision {decision!r} must be one of {', '.join(decisions)}")
        raise typer.Exit(2)
    chosen: ReviewDecision = decisions[decisions.index(decision)]
    with opened(store) as event_store:
        with one_line_errors():
            entry_id = resolve_id(entry_id, entry_ids(event_store), "entry")
            Feedback(event_store).review(entry_id, chosen, who=who, why=reason)
        with _projections(event_store, projections, ("staging", "memory")) as p:
            entry = next(e for e in p.staging() if e.entry_id == entry_id)
            newest = memory_version(p.db, entry.golem_id) if chosen in ("promote_candidate", "revoke") else None
        if as_json:
            emit_json(_entry_row(entry))
            return
        console.print(f"{entry.entry_id} is now [bold]{entry.status}[/bold] " + escape(f"({who}: {reason})"))
        if entry.quarantine is not None:
            console.print("quarantined, so only a review promotes it: " + escape(entry.quarantine.why))
        if newest is not None:  # where the promotion or the revocation shows in MEMORY.md
            before = f" (oneiros memory --diff {newest.version - 1} {newest.version})" if newest.version > 1 else ""
            console.print(escape(f"MEMORY.md v{newest.version}: {newest.reason}{before}"), soft_wrap=True)


def reevaluate(
    golem: GolemOpt = None,
    store: StoreOpt = None,
    projections: ProjectionsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Dense-Mem's re_evaluate: stale entries whose source episodes are gone, reinforce intact ones."""
    import msgspec

    from oneiros.validation._review import Feedback

    with opened(store) as event_store:  # with no log there is nothing to re-evaluate: NoStore, nothing made
        records = Feedback(event_store).reevaluate(golem_of(golem))
        with _projections(event_store, projections):
            pass
        rows = [msgspec.to_builtins(r.event) for r in records]
        if as_json:
            emit_json(rows)
            return
        console.print(f"{len(rows)} decisions")
        for row in rows:
            console.print(escape(f"  {row['entry_id']}: {row['decision']} ({row['why']})"))


def memory(  # noqa: PLR0917 - typer commands take one parameter per CLI option
    golem: GolemOpt = None,
    diff: Annotated[tuple[int, int] | None, typer.Option("--diff", help="Show the diff between two versions.")] = None,
    write: Annotated[
        Path | None, typer.Option("--write", help="Write MEMORY.md (and the one it replaces) here.")
    ] = None,
    rollback: Annotated[int | None, typer.Option("--rollback", help="Restore this version as a new one.")] = None,
    reason: Annotated[str, typer.Option("--reason", help="Why (for --rollback).")] = "",
    who: Annotated[str, typer.Option("--who", help="Who (for --rollback).")] = "owner",
    store: StoreOpt = None,
    projections: ProjectionsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """MEMORY.md as dream promotions wrote it (Ethos): the newest version, a diff, a file, a rollback."""
    import msgspec

    from oneiros.projections._sinks import memory_diff, memory_version, write_memory_file
    from oneiros.validation._review import Feedback

    golem = golem_of(golem)
    with opened(store) as event_store:
        if rollback is not None:
            _check_memory_versions(golem, Feedback(event_store).memory_versions(golem), rollback)
            Feedback(event_store).rollback_memory(golem, rollback, who=who, why=reason)
        with _projections(event_store, projections, ("memory",)) as p:
            newest = memory_version(p.db, golem)
            if diff is not None:
                _check_memory_versions(golem, newest.version if newest else 0, *diff)
                text = memory_diff(p.db, golem, *diff)
                if as_json:
                    emit_json({"diff": text})
                else:
                    console.print(text, markup=False, highlight=False)
                return
            try:
                written = write_memory_file(p.db, golem, write) if write is not None else None
            except OSError as exc:
                raise InputError(f"cannot write MEMORY.md into {str(write)!r}: {exc.strerror or exc}") from None
        if as_json:
            emit_json({"version": msgspec.to_builtins(newest), "written": str(written) if written else None})
            return
        if newest is None:
            console.print(f"no MEMORY.md for golem {golem!r} yet: nothing has been promoted")
            return
        console.print(f"MEMORY.md v{newest.version} ({newest.reason})", markup=False)
        console.print(newest.content, markup=False, highlight=False)
        if written is not None:
            console.print(f"written to {written}", markup=False)


def _check_memory_versions(golem: str, versions: int, *asked: int) -> None:
    """InputError naming the versions there are when one of ``asked`` is not among them."""
    for version in asked:
        if not 1 <= version <= versions:
            have = {0: "no versions yet: nothing has been promoted", 1: "only version 1"}.get(
                versions, f"versions 1-{versions}"
            )
            raise InputError(f"MEMORY.md of golem {golem!r} has {have}; there is no version {version}")


def follow(store: StoreOpt = None, projections: ProjectionsOpt = None) -> None:
    """Keep the staging and health processes and every projection up with the log until interrupted."""
    from oneiros.daemon._catch_up import follow as follow_all

    with opened(store) as event_store, _projections(event_store, projections, update=False) as p:
        stop = threading.Event()
        # SIGTERM (docker stop, systemd) stops it as Ctrl-C does: cleanly, exit 0, not killed mid-batch.
        previous = signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())
        console.print(escape(f"following {masked_url(event_store.url)} into {masked_url(p.db.url)}; Ctrl-C stops"))
        try:
            follow_all(p, stop, _staging_settings(), _health_settings())
        except KeyboardInterrupt:
            stop.set()
        finally:
            signal.signal(signal.SIGTERM, previous)


def rebuild(
    name: Annotated[str | None, typer.Argument(help="The projection (default: all).")] = None,
    until: Annotated[
        int | None, typer.Option("--until", min=0, max=MAX_POSITION, help="Build as of this global position.")
    ] = None,
    store: StoreOpt = None,
    projections: ProjectionsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Drop a projection (or all) and build it again from the log, to the head or as of a position."""
    from oneiros.validation._sweep import StagingProcess

    with opened(store) as event_store, _projections(event_store, projections, update=False) as p:
        with _spinner("rebuilding"):
            StagingProcess(event_store, _staging_settings(), runner=p.settings.runner).catch_up()
            positions = p.rebuild(name, until)
        if as_json:
            emit_json(positions)
            return
        for projection, position in positions.items():
            console.print(f"{projection}: rebuilt to position {position}")


def verify_projections(event_store: EventStore, url: str | None, as_json: bool) -> bool:
    """Bring every projection to the log head, as every reading command brings what it shows, then
    rebuild each into a scratch store and compare digests; True when all match. Without the catch-up
    a projection no command had read yet was compared at position 0, empty with empty, and said to
    match having verified nothing."""
    with _projections(event_store, url) as p, _spinner("rebuilding projections into a scratch store"):
        results = p.verify()
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
