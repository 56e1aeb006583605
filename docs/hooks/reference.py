"""Writes the reference pages from the code itself (run by mkdocs-gen-files on every build).

- ``reference/cli.md``: every ``oneiros`` command with its options, from the Typer app;
- ``reference/config.md``: every config key with its type, default and docstring (which names the
  source system the default comes from, docs/sources.md), from the settings Structs;
- ``reference/events.md``: every event type and the episode, as JSON Schema from msgspec;
- ``reference/phases.md``: the dream phases, from the phase table the machine, the engines and
  the budget read;
- ``reference/python.md``: every public name, from the packages' ``__all__`` (``python_api.py``);
- ``reference/errors.md`` is written by hand and checked against the classes by a test.

Nothing here is copied by hand, so the reference cannot drift from the code.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import griffe
import mkdocs_gen_files
import msgspec
import typer

from oneiros.cli import app
from oneiros.config._load import OneirosConfig
from oneiros.events._types import Episode, registered_events
from oneiros.settings._phases import PHASES


@functools.cache
def _package(name: str) -> Any:
    return griffe.load(name, resolve_aliases=False, resolve_external=False)


def _doc_of(struct: type, field: str) -> str:
    # Read where each class of the Struct's lineage is defined: most settings are private names.
    for cls in struct.__mro__:
        if not cls.__module__.startswith("oneiros."):
            continue
        top, _, path = f"{cls.__module__}.{cls.__qualname__}".partition(".")
        package, _, rest = path.partition(".")
        try:
            member = _package(f"{top}.{package}")[rest].members[field]
        except KeyError:
            continue
        if member.docstring is not None:
            return " ".join(member.docstring.value.split())
    return ""


def _type_name(info: msgspec.inspect.Type) -> str:
    name = type(info).__name__.removesuffix("Type").lower()
    if isinstance(info, msgspec.inspect.UnionType):
        return " or ".join(_type_name(t) for t in info.types)
    if isinstance(info, msgspec.inspect.LiteralType):
        return " | ".join(repr(v) for v in info.values)
    if isinstance(info, msgspec.inspect.StructType):
        return "table"
    if isinstance(info, msgspec.inspect.DictType):
        return f"table of {_type_name(info.value_type)}"
    if isinstance(info, (msgspec.inspect.ListType, msgspec.inspect.TupleType, msgspec.inspect.VarTupleType)):
        return "array"
    return name


def _default(field: msgspec.inspect.Field) -> str:
    if field.default is not msgspec.NODEFAULT:
        value: Any = field.default
    elif field.default_factory is not msgspec.NODEFAULT:
        value = field.default_factory()
    elif not field.required:  # UNSET: the Struct fills it in (a cap from the cycle's tier)
        return "(by tier)"
    else:
        return "(required)"
    text = json.dumps(msgspec.to_builtins(value))
    return text if len(text) <= 60 else text[:57] + "..."


def _keys(struct: type, prefix: str = "") -> Iterator[tuple[str, str, str, str]]:
    info = msgspec.inspect.type_info(struct)
    assert isinstance(info, msgspec.inspect.StructType)
    for field in info.fields:
        key = f"{prefix}{field.encode_name}"
        inner = field.type.types[0] if isinstance(field.type, msgspec.inspect.UnionType) else field.type
        if isinstance(inner, msgspec.inspect.StructType):
            yield from _keys(inner.cls, f"{key}.")
            continue
        yield key, _type_name(field.type), _default(field), _doc_of(struct, field.name)


def _config_page() -> str:
    lines = [
        "# Configuration keys",
        "",
        "Every key of `oneiros.toml`, generated from the settings Structs. Any key can also be set",
        "with an `ONEIROS_*` variable (`cycle.budget.cycle_tokens` is `ONEIROS_CYCLE__BUDGET__CYCLE_TOKENS`).",
        "Each description names the source system its default comes from ([sources](../sources.md)).",
        "",
        "| key | type | default | what it is |",
        "| --- | --- | --- | --- |",
    ]
    for key, kind, default, doc in _keys(OneirosConfig):
        cell = doc.replace("|", "\\|")
        lines.append(f"| `{key}` | {kind} | `{default}` | {cell} |")
    return "\n".join(lines) + "\n"


_CLI_CONVENTIONS = (
    "What holds for every command:",
    "",
    "- `--golem ID` is the golem the command works on. Without it, the config's `golem` key: "
    "`oneiros.toml`, then `ONEIROS_GOLEM`, else `golem`. On commands that list many golems "
    "(`events`, `journal`, `staging`) the same flag keeps only that golem's rows; without it, every "
    "golem. `token add --golem` and `mcp --golem` (repeatable) restrict a token or a session to those golems.",
    "- The store is `--store`, else `ONEIROS_STORE`, else the config's `store` key, else "
    "`sqlite:///.oneiros/events.db`; the queue is `--queue`, else `ONEIROS_QUEUE`, else the config's "
    "`queue` (for `dream`, `run`, `worker`, `status` and `serve` alike). Every other key is "
    "`ONEIROS_SECTION__KEY` (`oneiros config show` lists them with their source).",
    "- Wherever a cycle id or a staged entry id is typed, a unique prefix is enough, as with git: "
    "`oneiros report --cycle 3d48`, `oneiros review 3d48:2` (entry 2 of cycle 3d48...). A prefix "
    "that matches nothing or several ids is an error naming them (`UnknownId`, `AmbiguousId`). "
    "Tables show ids as such short prefixes; `--json` gives them whole.",
    "- Tables fold long cells onto more lines; nothing is cut to `…`. Lists stop at `--limit` and "
    "say so on stderr: `showing 200 of 1,234 events — use --limit to see more`.",
    "- A user's mistake is one line, `error: ...`, on stderr and exit code 2; commands that only read create nothing.",
)


def _cli_page() -> str:
    # Typer vendors its own click, so commands are told apart by shape rather than by class.
    root: Any = typer.main.get_command(app)
    lines = ["# Command line", "", "Generated from the `oneiros` command itself.", "", *_CLI_CONVENTIONS, ""]

    def walk(group: Any, path: str) -> None:
        # The root loads its commands lazily: asked through the group's own API, each is loaded.
        ctx = group.context_class(group, info_name=path)
        for name in sorted(group.list_commands(ctx)):
            command = group.get_command(ctx, name)
            full = f"{path} {name}"
            if hasattr(command, "commands"):
                walk(command, full)
                continue
            lines.extend([f"## `{full}`", "", (command.help or "").strip(), ""])
            rows = [p for p in command.params if p.name != "help"]
            if rows:
                lines.extend(["| option | default | environment | help |", "| --- | --- | --- | --- |"])
                for p in rows:
                    flag = ", ".join(p.opts) if p.param_type_name == "option" else (p.name or "").upper()
                    env = p.envvar if isinstance(p.envvar, str) else ""
                    help_text = getattr(p, "help", "") or ""
                    default = "" if p.default is None or callable(p.default) else f"`{p.default}`"
                    lines.append(f"| `{flag}` | {default} | {env} | {help_text} |")
                lines.append("")

    walk(root, "oneiros")
    return "\n".join(lines) + "\n"


def _events_page() -> str:
    lines = [
        "# Events and episodes",
        "",
        "The log's vocabulary, as JSON Schema generated by msgspec from the event Structs. A stored",
        "event's topic is `<Type>.v<version>`; see [schema evolution](../schema-evolution.md).",
        "",
        "## Episode",
        "",
        "One line of an episodes file (`--episodes FILE`), and the payload of `EpisodeRecorded`.",
        "",
        "```json",
        json.dumps(msgspec.json.schema(Episode), indent=2, sort_keys=True),
        "```",
        "",
    ]
    for name, cls in sorted(registered_events().items()):
        lines.extend(
            [
                f"## {name} (v{cls.schema_version})",
                "",
                " ".join((cls.__doc__ or "").split()),
                "",
                "```json",
                json.dumps(msgspec.json.schema(cls), indent=2, sort_keys=True),
                "```",
                "",
            ]
        )
    return "\n".join(lines)


def _phases_page() -> str:
    lines = [
        "# Dream phases",
        "",
        "A cycle runs these phases in order, generated from the phase table (`oneiros.settings.PHASES`)",
        "that the machine, the engines, the budget, the CLI and the inspector all read. The first phase",
        "opens the cycle, each `advance`s to the next, the one before the last `complete`s the cycle's",
        "work (DreamComplete) and the last wakes the golem. *machine state* is the phase's state in the",
        "machine and Bardo's name for it (`DreamPhase.bardo_phase`), *stream* its name on the event",
        "stream's `dream_progress`; the last five columns are its share of the cycle's tokens and dollars",
        "by the golem's behavioral phase (Bardo's allocation table). What each phase records is in",
        "[the dream cycle](../dream-cycle.md).",
        "",
        PHASES.reference(),
    ]
    return "\n".join(lines)


def _python_page() -> str:
    spec = importlib.util.spec_from_file_location("python_api", Path(__file__).with_name("python_api.py"))
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page: str = module.python_page()
    return page


_PAGES = (
    ("config", _config_page),
    ("cli", _cli_page),
    ("events", _events_page),
    ("phases", _phases_page),
    ("python", _python_page),
)
for path, page in _PAGES:
    with mkdocs_gen_files.open(f"reference/{path}.md", "w") as handle:
        handle.write(page())
