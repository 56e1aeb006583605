"""What every command shares: opening the store, printing JSON, turning errors into exit codes."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import typer
from rich.console import Console

from oneiros._errors import OneirosError

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from oneiros.events import EventStore

__all__ = ["JsonOpt", "StoreOpt", "console", "emit_json", "one_line_errors", "opened", "shown_url"]

console = Console(stderr=False)
err_console = Console(stderr=True, soft_wrap=True)  # an error stays one line, however long

StoreOpt = Annotated[
    str | None,
    typer.Option("--store", envvar="ONEIROS_STORE", help="Store URL (default sqlite:///.oneiros/events.db)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON only.")]

_F = TypeVar("_F", bound=Callable[..., Any])


def shown_url(url: str) -> str:
    """``url`` with any password masked, for output and logs (a store or queue URL may carry one)."""
    split = urlsplit(url)
    if not split.password:
        return url
    netloc = split.netloc.replace(f":{split.password}@", ":***@", 1)
    return urlunsplit(split._replace(netloc=netloc))


def emit_json(obj: object) -> None:
    import msgspec

    sys.stdout.write(msgspec.json.encode(obj).decode() + "\n")


@contextmanager
def one_line_errors() -> Iterator[None]:
    """Any oneiros error inside becomes a one-line message and exit code 2, never a traceback."""
    try:
        yield
    except OneirosError as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None


@contextmanager
def opened(url: str | None, *, create: bool = False) -> Iterator[EventStore]:
    """Open the store; any oneiros error becomes a one-line message and exit code 2.

    Only commands that write pass ``create=True``: one that reads says there is no store at the
    URL instead of leaving an empty one behind.
    """
    from oneiros.events import open_store

    with one_line_errors():
        store = open_store(url, create=create)
        try:
            yield store
        finally:
            store.close()
