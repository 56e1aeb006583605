"""What every command shares: opening the store, the golem a command works on, ids typed as unique
prefixes, tables that fold instead of truncating, lists that say where they stopped, printing JSON,
turning errors into exit codes. New commands use these (docs/contributing.md, "The command line")."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console

from oneiros._errors import AmbiguousId, OneirosError, UnknownId
from oneiros.cli._listing import GOLEM_RULE

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from rich.table import Table

    from oneiros._deps import Deps
    from oneiros.app._oneiros import Oneiros
    from oneiros.config._load import OneirosConfig
    from oneiros.store._store import EventStore

__all__ = [
    "GOLEM_RULE",
    "MAX_POSITION",
    "GolemFilter",
    "GolemOpt",
    "JsonOpt",
    "StoreOpt",
    "application",
    "catch_up_progress",
    "console",
    "cycle_ids",
    "emit_json",
    "entry_ids",
    "golem_of",
    "limited",
    "one_line_errors",
    "opened",
    "resolve_id",
    "short_ids",
    "table",
]

console = Console(stderr=False)
err_console = Console(stderr=True, soft_wrap=True)  # an error stays one line, however long

StoreOpt = Annotated[
    str | None,
    typer.Option("--store", envvar="ONEIROS_STORE", help="Store URL (default sqlite:///.oneiros/events.db)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON only.")]
GolemOpt = Annotated[
    str | None,
    typer.Option("--golem", help="The golem to work on (default: the config's golem, $ONEIROS_GOLEM, else 'golem')."),
]
GolemFilter = Annotated[
    str | None, typer.Option("--golem", help="Only this golem (default: every golem, each row naming its own).")
]

_F = TypeVar("_F", bound=Callable[..., Any])

MAX_POSITION = 2**63 - 1
"""The largest global position, count or limit an option takes: a signed 64-bit integer, what
SQLite and PostgreSQL store (a larger number failed in the database driver with a traceback)."""


def emit_json(obj: object) -> None:
    import msgspec

    sys.stdout.write(msgspec.json.encode(obj).decode() + "\n")


def print_error(message: object) -> None:
    """``error: <message>`` on stderr. The message is escaped: rich would take a bracketed part of
    it (``oneiros[postgres]``, an IPv6 host, a user's text) for markup and drop it."""
    from rich.markup import escape

    err_console.print("[red]error:[/red] " + escape(str(message)))


@contextmanager
def one_line_errors() -> Iterator[None]:
    """Any oneiros error inside becomes a one-line message and exit code 2, never a traceback."""
    try:
        yield
    except OneirosError as exc:
        print_error(exc)
        raise typer.Exit(2) from None


def golem_of(golem: str | None, config: Path | None = None) -> str:
    """The golem a command works on: ``--golem``, else the config's ``golem`` key (``oneiros.toml``,
    ``$ONEIROS_GOLEM``), else ``golem``. One meaning for every command."""
    if golem:
        return golem
    from oneiros.config._load import load_config

    with one_line_errors():
        return load_config(config).golem


@contextmanager
def opened(url: str | None, *, create: bool = False, config: OneirosConfig | None = None) -> Iterator[EventStore]:
    """Open the store (``--store``, ``$ONEIROS_STORE``, else the ``store`` key of ``config``, the
    command's config, loaded here if not given, else the embedded default); any oneiros error
    becomes a one-line message and exit code 2.

    Only commands that write pass ``create=True``: one that reads says there is no store at the
    URL instead of leaving an empty one behind.
    """
    from oneiros.store._store import open_store

    with one_line_errors():
        if not url:
            from oneiros.config._load import load_config

            url = (config if config is not None else load_config()).store or None
        store = open_store(url, create=create)
        try:
            yield store
        finally:
            store.close()


@contextmanager
def application(
    url: str | None,
    *,
    config: OneirosConfig | None = None,
    create: bool = False,
    projections: str | None = None,
    deps: Deps | None = None,
) -> Iterator[Oneiros]:
    """The application over the store (opened as :func:`opened` opens it), with ``config`` (default:
    ``oneiros.toml`` and ``ONEIROS_*``): each read brings up what it reads first, with a progress
    bar on a terminal. Any oneiros error inside becomes a one-line message and exit code 2."""
    from oneiros.app._oneiros import Oneiros
    from oneiros.config._load import load_config

    if config is None:
        with one_line_errors():
            config = load_config()
    with opened(url, create=create, config=config) as store:
        app = Oneiros(
            store,
            config,
            deps=deps,
            projections=projections,
            progress=lambda: catch_up_progress(store),
        )
        try:
            yield app
        finally:
            app.close()


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


# -- ids typed as unique prefixes, as git takes them -----------------------------------------


def _matches(typed: str, candidate: str) -> bool:
    if candidate.startswith(typed):
        return True
    # An entry id is CYCLE:NNN; CYCLEPREFIX:N names it too (3d48:2 for 3d48b0...:002).
    head, sep, tail = typed.partition(":")
    c_head, c_sep, c_tail = candidate.partition(":")
    if not (sep and c_sep and c_head.startswith(head)):
        return False
    return c_tail.startswith(tail) or (tail.isdigit() and c_tail.isdigit() and int(tail) == int(c_tail))


def resolve_id(typed: str, candidates: Iterable[str], kind: str, where: str = "") -> str:
    """The one id among ``candidates`` that ``typed`` names: itself, or the only one it is a prefix
    of. Raises :class:`UnknownId` when none matches and :class:`AmbiguousId` (listing them) when
    several do. ``kind`` names the ids in messages (``cycle``, ``entry``), ``where`` where they
    were looked for."""
    pool = list(dict.fromkeys(candidates))
    if typed in pool:
        return typed
    found = tuple(c for c in pool if typed and _matches(typed, c))
    if not found:
        raise UnknownId(kind, typed, where)
    if len(found) > 1:
        raise AmbiguousId(kind, typed, found)
    return found[0]


def cycle_ids(store: EventStore, golem: str | None = None) -> list[str]:
    """Every cycle id in the log (or in ``golem``'s stream), oldest first."""
    from oneiros.events._types import DreamStart

    records = store.read_stream(golem, types=[DreamStart]) if golem else store.read_all(types=[DreamStart])
    return [r.event.cycle_id for r in records if isinstance(r.event, DreamStart)]


def entry_ids(store: EventStore, golem: str | None = None) -> list[str]:
    """Every staged entry id in the log (or in ``golem``'s stream), in staging order."""
    from oneiros.events._content import DreamStaged

    records = store.read_stream(golem, types=[DreamStaged]) if golem else store.read_all(types=[DreamStaged])
    return [r.event.entry_id for r in records if isinstance(r.event, DreamStaged)]


def short_ids(ids: Iterable[str], least: int = 8) -> dict[str, str]:
    """Each id shortened to the shortest prefix of at least ``least`` characters that no other of
    ``ids`` shares (an entry id keeps its ``:NNN``), as tables show them; each resolves back."""
    ids = list(ids)
    heads = sorted({i.partition(":")[0] for i in ids})
    length = least
    while len({h[:length] for h in heads}) < len(heads):
        length += 1
    return {i: i.partition(":")[0][:length] + "".join(i.partition(":")[1:]) for i in ids}


# -- tables and lists ------------------------------------------------------------------------


def table(title: str, *columns: str, whole: tuple[str, ...] = ()) -> Table:
    """A table whose columns fold onto more lines rather than truncating to ``…``; the columns in
    ``whole`` (ids, states) are never broken at all."""
    from rich import box
    from rich.table import Table

    # No vertical rules: seven more characters for the cells at 80 columns.
    made = Table(title=title, box=box.SIMPLE_HEAD)
    for column in columns:
        # A heading wraps between its words but never inside one. A whole heading as the minimum
        # made a narrow terminal's columns add up to more than its width, and the table was cut.
        made.add_column(
            column, overflow="fold", no_wrap=column in whole, min_width=max(map(len, column.split()), default=0)
        )
    return made


@contextmanager
def limited(shown: int, total: int, what: str) -> Iterator[None]:
    """Around a list's output: say on stderr, after it, when the list stopped at its limit, so a cut
    list never passes for a whole one (stdout keeps only the list, or only JSON)."""
    yield
    if total > shown:
        err_console.print(f"showing {shown:,} of {total:,} {what} — use --limit to see more", highlight=False)
