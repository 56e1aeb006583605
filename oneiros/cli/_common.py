"""What every command shares: opening the store, printing JSON, turning errors into exit codes."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console

from oneiros._errors import OneirosError

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from oneiros.events import EventStore

__all__ = ["JsonOpt", "StoreOpt", "console", "emit_json", "opened"]

console = Console(stderr=False)
err_console = Console(stderr=True)

StoreOpt = Annotated[
    str | None,
    typer.Option("--store", envvar="ONEIROS_STORE", help="Store URL (default sqlite:///.oneiros/events.db)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON only.")]

_F = TypeVar("_F", bound=Callable[..., Any])


def emit_json(obj: object) -> None:
    import msgspec

    sys.stdout.write(msgspec.json.encode(obj).decode() + "\n")


@contextmanager
def opened(url: str | None) -> Iterator[EventStore]:
    """Open the store; any oneiros error becomes a one-line message and exit code 2."""
    from oneiros.events import open_store

    try:
        store = open_store(url)
        try:
            yield store
        finally:
            store.close()
    except OneirosError as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
