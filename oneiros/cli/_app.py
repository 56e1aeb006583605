"""The Typer app: every module of this package that defines ``register(app)`` adds its commands.

A new command module needs no edit anywhere else: it is found by walking the package (in the order
of module names), so it cannot be forgotten. The top-level help is rendered by
:func:`oneiros.cli._help.render`, the same function ``oneiros --help`` uses before the app is built,
so the two cannot drift apart in form; ``tests/test_cli_startup.py`` keeps them equal in content.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from oneiros.cli._common import GOLEM_RULE
from oneiros.cli._help import (
    INDEX_PATH,
    HelpIndex,
    index_source,
    one_line,
    owner_of,
    render,
    sources_digest,
    terminal_width,
    version_text,
)

__all__ = ["app", "app_for", "command_modules", "command_owners", "full_app", "help_index"]

if TYPE_CHECKING:
    app: typer.Typer

_NOT_COMMANDS = frozenset({"_app", "_help", "_help_index", "_help_shape"})


class _Root(TyperGroup):
    """The root group, whose own help is the light one (a command's help stays Typer's)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        formatter.write(render(_index_of(self, ctx), terminal_width()))

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        # Typer prints the help of a bare `oneiros` from inside its Rich formatter and then stays
        # silent about the error; with the light formatter the help must be printed here.
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            typer.echo(ctx.get_help())
            ctx.exit(2)
        return list(super().parse_args(ctx, args))


def _index_of(group: TyperGroup, ctx: Any) -> HelpIndex:
    # Typer's click objects, read by attribute: some Typer versions vendor click, others use it.
    options = tuple(
        (", ".join([*param.opts, *param.secondary_opts]), getattr(param, "help", None) or "")
        for param in group.get_params(ctx)
        if param.param_type_name == "option" and not getattr(param, "hidden", False)
    )
    commands = tuple(
        (name, one_line(command.short_help or command.help))
        for name in group.list_commands(ctx)
        if (command := group.get_command(ctx, name)) is not None and not command.hidden
    )
    usage = " ".join([ctx.command_path, *group.collect_usage_pieces(ctx)])
    return HelpIndex(sources_digest(), usage, one_line(group.help), options, commands)


def _new_app() -> typer.Typer:
    """The root of the command line, with no command yet."""
    made = typer.Typer(
        name="oneiros",
        cls=_Root,
        help=f"An event-sourced dream state for autonomous agents. {GOLEM_RULE}",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    made.callback()(_root)
    return made


def _version(value: bool) -> None:
    if value:
        typer.echo(version_text())
        raise typer.Exit


def _root(
    show_version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """An event-sourced dream state for autonomous agents."""


def command_modules(package: str = "oneiros.cli") -> list[ModuleType]:
    """Every module of ``package`` that registers commands (defines ``register``), by module name."""
    path = importlib.import_module(package).__path__
    names = sorted(m.name for m in pkgutil.iter_modules(path) if m.name not in _NOT_COMMANDS)
    modules = [importlib.import_module(f"{package}.{name}") for name in names]
    return [module for module in modules if callable(getattr(module, "register", None))]


_FULL: list[typer.Typer] = []


def full_app() -> typer.Typer:
    """The whole command line: every command module registered, in module-name order."""
    if not _FULL:
        made = _new_app()
        for module in command_modules():
            module.register(made)
        _FULL.append(made)
    return _FULL[0]


def app_for(argv: Sequence[str]) -> typer.Typer:
    """The command line that answers ``argv``: for a known command, a root holding only the module
    that registers it (importing and building every other module's commands took most of a
    command's time), else the whole app (the top-level help, an unknown command's error)."""
    owner = owner_of(argv[0]) if argv else None
    if owner is None:
        return full_app()
    made = _new_app()
    importlib.import_module(owner).register(made)
    return made


def command_owners() -> dict[str, str]:
    """Each top-level command's name and the module that registers it, for the lazy path."""
    owners: dict[str, str] = {}
    for module in command_modules():
        probe = _new_app()
        module.register(probe)
        group = typer.main.get_command(probe)
        with typer.Context(group) as ctx:
            owners |= dict.fromkeys(group.list_commands(ctx), module.__name__)  # type: ignore[attr-defined]
    return owners


def __getattr__(name: str) -> typer.Typer:
    if name == "app":  # built on first use: `oneiros COMMAND` builds only the command's module
        return full_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def help_index() -> HelpIndex:
    """The top-level help of the app as built, for ``oneiros/cli/_help_index.py``."""
    group = typer.main.get_command(full_app())
    assert isinstance(group, _Root)
    with typer.Context(group, info_name="oneiros") as ctx:
        return _index_of(group, ctx)


def write_help_index() -> Path:
    """Write ``_help_index.py``, the copy of the top-level help the fast path answers from."""
    INDEX_PATH.write_text(index_source(help_index(), command_owners()), encoding="utf-8")
    return INDEX_PATH


if __name__ == "__main__":
    print(f"wrote {write_help_index()}")
