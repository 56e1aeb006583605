"""The one configuration as every command reads it: ``--config``/``--preset``, then the flags each
command offers, laid over the file and ``ONEIROS_*`` (see :mod:`oneiros.config`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from oneiros._errors import InvalidSetting, OneirosError
from oneiros.cli._common import print_error

if TYPE_CHECKING:  # annotations only: commands load the config on first use
    from oneiros.config._load import OneirosConfig

__all__ = ["ConfigOpt", "PresetOpt", "QueueOpt", "RqSettingsOpt", "SpansOpt", "fail", "flag", "load", "rq_flag"]

ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="Config file (default $ONEIROS_CONFIG or ./oneiros.toml).")
]
PresetOpt = Annotated[
    str | None, typer.Option("--preset", help="bumblebee, bardo, dense-mem, ethos, openseed or openclaw.")
]
QueueOpt = Annotated[
    str | None,
    typer.Option("--queue", help="Redis URL of the job queue, as in redis://host:6379/0 (config key: queue)."),
]
RqSettingsOpt = Annotated[
    str | None,
    typer.Option("--rq-settings", help='rq keys as a JSON object, e.g. \'{"queue": "dreams", "retries": 5}\'.'),
]
SpansOpt = Annotated[
    str | None,
    typer.Option("--spans", help="Span file (config key tracing.spans_path; 'off' for none)."),
]


def fail(exc: Exception) -> typer.Exit:
    """A user's mistake as one line on stderr and exit code 2."""
    print_error(exc)
    return typer.Exit(2)


def flag(flags: dict[str, tuple[Any, str]], key: str, value: Any, name: str) -> None:
    """Note flag ``name``'s ``value`` for config ``key`` when it was given."""
    if value is not None:
        flags[key] = (value, name)


def load(path: Path | None, preset: str | None, flags: dict[str, tuple[Any, str]] | None = None) -> OneirosConfig:
    """The effective config of this command; a bad one ends it with the message and exit code 2."""
    from oneiros.config._load import load_config

    try:
        return load_config(path, preset=preset, flags=flags)
    except OneirosError as exc:
        raise fail(exc) from None


def rq_flag(flags: dict[str, tuple[Any, str]], text: str | None) -> None:
    """``--rq-settings '{...}'``: each key of the JSON object as a flag of its own."""
    import msgspec

    if not text:
        return
    try:
        data = msgspec.json.decode(text)
    except msgspec.DecodeError:
        raise fail(InvalidSetting("rq", text, "a JSON object of rq keys", "flag --rq-settings")) from None
    if not isinstance(data, dict):
        raise fail(InvalidSetting("rq", data, "a JSON object of rq keys", "flag --rq-settings"))
    for key, value in data.items():
        flags[f"rq.{key}"] = (value, "--rq-settings")
