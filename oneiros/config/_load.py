"""Loading the one config: defaults, then a preset, then ``oneiros.toml``, then ``ONEIROS_*``
variables, then command-line flags. Every process (``dream``, ``run``, ``worker``, the server)
reads it this way.

Environment overrides name a key path with double underscores after the prefix:
``ONEIROS_SCHEDULE__SILENCE_SECONDS=60`` sets ``schedule.silence_seconds``, and
``ONEIROS_CYCLE__BUDGET__CYCLE_TOKENS=4000`` sets ``cycle.budget.cycle_tokens``. A value is read as
a TOML value when it parses as one (``60``, ``true``, ``[0, 1, 2]``) and as a plain string otherwise
(``Europe/Paris``). Of the variables without a double underscore only ``ONEIROS_GOLEM``,
``ONEIROS_STORE`` and ``ONEIROS_QUEUE`` are config keys, plus two older spellings:
``ONEIROS_SPANS`` (``tracing.spans_path``) and ``ONEIROS_RQ_SETTINGS`` (a JSON object of ``rq``
keys). Others, such as ``ONEIROS_SOAK``, are left alone; ``ONEIROS_CONFIG`` names the file and
``ONEIROS_PRESET`` the preset. Secrets are never config keys: an API key stays in the variable
``cycle.generator.openai.api_key_env`` names.

A bad value is reported from the settings' own types (``msgspec.inspect``), checked key by key, so
the error names the key, the value, what the type accepts and which layer the value came from.
"""

from __future__ import annotations

import functools
import os
import tomllib
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec
import msgspec.inspect as mi

from oneiros._errors import InvalidSetting, UnknownPreset
from oneiros.config._presets import PRESETS, preset_layer
from oneiros.settings._cycle import TIER_CAPS, CycleSettings
from oneiros.settings._files import read_toml
from oneiros.settings._health import HealthSettings
from oneiros.settings._memory_block import MemoryBlockSettings
from oneiros.settings._races import RaceSettings
from oneiros.settings._recall import RecallSettings
from oneiros.settings._recovery import RecoverySettings
from oneiros.settings._runtime import LogSettings, RqSettings, SnapshotSettings, TracingSettings
from oneiros.settings._scheduling import DaemonSettings, ScheduleSettings
from oneiros.settings._server import ServerSettings
from oneiros.settings._staging import StagingSettings

__all__ = [
    "DEFAULT_CONFIG_PATH",
    "DEFAULT_STORE_URL",
    "ENV_PREFIX",
    "Flags",
    "OneirosConfig",
    "env_var",
    "explain_config",
    "load_config",
]

DEFAULT_CONFIG_PATH = "oneiros.toml"
DEFAULT_STORE_URL = "sqlite:///.oneiros/events.db"
ENV_PREFIX = "ONEIROS_"
_SEP = "__"
_TOP_LEVEL = ("golem", "store", "queue")
_TIER_KEYS = tuple(TIER_CAPS["core"])
"""The ``cycle.budget`` keys whose defaults come from the tier."""
Flags = Mapping[str, tuple[Any, str]]
"""Command-line overrides: dotted key -> (value, the flag that set it, as ``--tier``)."""


class OneirosConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Everything any oneiros process reads: where the log and the queue are, how cycles run,
    when to dream, how to trace and log."""

    preset: str = ""
    """The preset this config starts from ("" for the plain defaults)."""
    store: str = ""
    """Store URL ("" for ``sqlite:///.oneiros/events.db``)."""
    queue: str = ""
    """Redis URL of the phase-job queue (``redis://host:6379/0``); "" runs cycles in-process."""
    golem: str = "golem"
    """The golem ``oneiros run`` drives and ``dream`` defaults to."""
    schedule: ScheduleSettings = ScheduleSettings()
    daemon: DaemonSettings = DaemonSettings()
    cycle: CycleSettings = CycleSettings()
    """What a cycle started here runs with; recorded in its DreamStart for every worker."""
    staging: StagingSettings = StagingSettings()
    """The staging buffer and its validation sweep, for every process that runs the projections."""
    health: HealthSettings = HealthSettings()
    """The dreaming-health alarms' thresholds, for every process that runs the validation layer."""
    snapshots: SnapshotSettings = SnapshotSettings()
    """How often folds of a golem's stream are snapshotted beside the log."""
    races: RaceSettings = RaceSettings()
    """How a command that lost its version race to another writer tries again."""
    rq: RqSettings = RqSettings()
    recovery: RecoverySettings = RecoverySettings()
    """Phase leases and the reconciler that resumes stranded cycles (``docs/deployment.md``)."""
    tracing: TracingSettings = TracingSettings()
    log: LogSettings = LogSettings()
    server: ServerSettings = ServerSettings()
    memory_block: MemoryBlockSettings = MemoryBlockSettings()
    """How ``memory_block`` (recall as a prompt section) counts tokens, and its default budget."""
    recall: RecallSettings = RecallSettings()
    """How recall ranks, wherever it is asked (the eval's arms too)."""

    @property
    def store_url(self) -> str:
        return self.store or DEFAULT_STORE_URL


def env_var(key: str) -> str:
    """The variable that overrides dotted ``key``.

    ``schedule.silence_seconds`` → ``ONEIROS_SCHEDULE__SILENCE_SECONDS``."""
    return ENV_PREFIX + key.upper().replace(".", _SEP)


class _Origin(NamedTuple):
    """The layer values come from, ``name``, and ``sources``: where it is noted by dotted key."""

    sources: dict[str, str]
    name: str


def _merge(
    into: dict[str, Any],
    layer: Mapping[str, Any],
    origin: _Origin,
    prefix: str = "",
    given: dict[str, Any] | None = None,
) -> None:
    """Lay ``layer`` over ``into``; ``given`` (if any) gathers what the layers set, and only that."""
    for key, value in layer.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            inner = None if given is None else given.setdefault(key, {})
            _merge(into[key], value, origin, path + ".", inner if isinstance(inner, dict) else None)
        else:
            into[key] = value
            origin.sources[path] = origin.name
            if given is not None:
                given[key] = value


def _toml_value(raw: str) -> Any:
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def _env_layer(environ: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    layer: dict[str, Any] = {}
    names: dict[str, str] = {}
    for key in _TOP_LEVEL:
        if env_var(key) in environ:
            layer[key] = environ[env_var(key)]
            names[key] = f"env {env_var(key)}"
    if "ONEIROS_SPANS" in environ:
        layer["tracing"] = {"spans_path": environ["ONEIROS_SPANS"]}
        names["tracing.spans_path"] = "env ONEIROS_SPANS"
    if environ.get("ONEIROS_RQ_SETTINGS"):
        raw = environ["ONEIROS_RQ_SETTINGS"]
        try:
            rq = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            raise InvalidSetting("rq", raw, "a JSON object of rq keys", "env ONEIROS_RQ_SETTINGS") from None
        if not isinstance(rq, dict):
            raise InvalidSetting("rq", rq, "a JSON object of rq keys", "env ONEIROS_RQ_SETTINGS")
        layer["rq"] = rq
        names.update({f"rq.{k}": "env ONEIROS_RQ_SETTINGS" for k in rq})
    for name, raw in sorted(environ.items()):
        if not name.startswith(ENV_PREFIX) or _SEP not in name[len(ENV_PREFIX) :]:
            continue
        parts = [p.lower() for p in name[len(ENV_PREFIX) :].split(_SEP)]
        node = layer
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = _toml_value(raw)
        names[".".join(parts)] = f"env {name}"
    return layer, names


def _flag_layer(flags: Flags) -> tuple[dict[str, Any], dict[str, str]]:
    layer: dict[str, Any] = {}
    names: dict[str, str] = {}
    for key, (value, flag) in flags.items():
        parts = key.split(".")
        node = layer
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
        names[key] = f"flag {flag}"
    return layer, names


# -- checking values against the settings' types ---------------------------------------------


@functools.cache
def _info(tp: Any) -> mi.Type:
    return mi.type_info(tp)


@functools.cache
def _hints(struct: type[msgspec.Struct]) -> dict[str, Any]:
    # Two thirds of a load evaluated these annotations again for every table of the config.
    return typing.get_type_hints(struct, include_extras=True)


def _strip(tp: Any) -> Any:
    """The type inside ``Annotated[...]``."""
    return typing.get_args(tp)[0] if typing.get_origin(tp) is typing.Annotated else tp


def _struct_in(tp: Any) -> type[msgspec.Struct] | None:
    """The Struct ``tp`` is, or the one inside ``S | None``. From the annotation itself: msgspec's
    type_info of the config would translate every Struct under it first."""
    bare = _strip(tp)
    members = typing.get_args(bare) if typing.get_origin(bare) in (typing.Union, types.UnionType) else (bare,)
    structs = [m for m in map(_strip, members) if isinstance(m, type) and issubclass(m, msgspec.Struct)]
    return structs[0] if len(structs) == 1 else None


def _bounds(info: Any, value: Any) -> str:
    """The bounds ``value`` breaks, as ``>= 0.0``; all of them when it is no number."""
    checks = (
        ("ge", ">=", float.__ge__),
        ("gt", ">", float.__gt__),
        ("le", "<=", float.__le__),
        ("lt", "<", float.__lt__),
    )
    number = isinstance(value, int | float) and not isinstance(value, bool)
    out = []
    for attr, sign, holds in checks:
        bound = getattr(info, attr, None)
        if bound is not None and (not number or not holds(float(value), float(bound))):
            out.append(f"{sign} {bound}")
    return " and ".join(out)


def _describe(info: mi.Type, value: Any) -> str:  # noqa: PLR0911 - one answer per kind of type
    """What a value of ``info`` looks like, in the words of the TOML a person writes."""
    if isinstance(info, mi.LiteralType):
        return "one of " + ", ".join(repr(v) for v in info.values)
    if isinstance(info, mi.StrType) and info.pattern is not None and "[0-5][0-9]" in info.pattern:
        return "a time HH:MM from 00:00 to 23:59"
    if isinstance(info, mi.UnionType):
        return " or ".join(_describe(t, value) for t in info.types if not isinstance(t, mi.NoneType))
    if isinstance(info, mi.StructType):
        return "a table with the keys " + ", ".join(sorted(f.encode_name for f in info.fields))
    if isinstance(info, mi.ListType | mi.VarTupleType | mi.SetType | mi.FrozenSetType):
        return f"an array of {_describe(info.item_type, None)}"
    if isinstance(info, mi.DictType):
        return f"a table of {_describe(info.value_type, None)}"
    names = {mi.IntType: "int", mi.FloatType: "float", mi.BoolType: "bool", mi.StrType: "str"}
    name = names.get(type(info), type(info).__name__.removesuffix("Type").lower())
    right_kind = isinstance(value, int | float) and not isinstance(value, bool)
    bounds = _bounds(info, value) if right_kind and isinstance(info, mi.IntType | mi.FloatType) else ""
    return f"{name} {bounds}".strip()


class _Checker:
    """Checks a merged config key by key against the settings Structs, naming each value's source."""

    def __init__(self, sources: Mapping[str, str]) -> None:
        self.sources = sources

    def source(self, parts: list[str]) -> str:
        named = [p for p in parts if not p.isdigit()]
        for end in range(len(named), 0, -1):
            found = self.sources.get(".".join(named[:end]))
            if found is not None:
                return found
        return ""

    @staticmethod
    def dotted(parts: list[str]) -> str:
        return "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in parts).lstrip(".")

    def fail(self, parts: list[str], value: Any, expected: str) -> InvalidSetting:
        return InvalidSetting(self.dotted(parts) or "<root>", value, expected, self.source(parts))

    def check(self, value: Any, tp: Any, parts: list[str]) -> None:
        struct = _struct_in(tp)
        if struct is not None and isinstance(value, Mapping):
            hints = _hints(struct)
            fields = {f.encode_name: f.name for f in _struct_fields(struct)}
            for key, inner in value.items():
                if key not in fields:
                    raise self.fail([*parts, key], inner, f"one of the keys {', '.join(sorted(fields))}")
                self.check(inner, hints[fields[key]], [*parts, key])
            return
        bare = _strip(tp)
        args = typing.get_args(bare)
        info = _info(tp)
        if isinstance(info, mi.VarTupleType | mi.ListType) and isinstance(value, list) and args:
            for index, item in enumerate(value):
                self.check(item, args[0], [*parts, str(index)])
            return
        if isinstance(info, mi.DictType) and isinstance(value, Mapping) and len(args) == 2:
            for key, inner in value.items():
                try:
                    msgspec.convert(key, args[0])
                except msgspec.ValidationError:
                    raise self.fail(parts, key, f"a key among {_describe(info.key_type, key)}") from None
                self.check(inner, args[1], [*parts, str(key)])
            return
        try:
            msgspec.convert(value, tp, strict=True)
        except msgspec.ValidationError:
            if typing.get_origin(bare) is typing.Literal:  # in the order the type declares them
                raise self.fail(parts, value, "one of " + ", ".join(repr(a) for a in args)) from None
            raise self.fail(parts, value, _describe(info, value)) from None


def _struct_fields(struct: type[msgspec.Struct]) -> tuple[msgspec.structs.FieldInfo, ...]:
    return msgspec.structs.fields(struct)


def _check_zones(config: OneirosConfig, checker: _Checker) -> None:
    zones = [(["schedule", "timezone"], config.schedule.timezone)]
    zones += [(["schedule", "windows", str(i), "timezone"], w.timezone) for i, w in enumerate(config.schedule.windows)]
    for parts, zone in zones:
        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise checker.fail(parts, zone, "an IANA timezone such as 'Europe/Paris'") from None
    fatigue = config.schedule.fatigue
    if fatigue.warning_actions > fatigue.limit_actions:
        raise checker.fail(
            ["schedule", "fatigue", "warning_actions"],
            fatigue.warning_actions,
            f"at most schedule.fatigue.limit_actions ({fatigue.limit_actions})",
        )


def _read_file(path: str | Path | None, env: Mapping[str, str]) -> tuple[Path, dict[str, Any]]:
    named = path if path is not None else env.get("ONEIROS_CONFIG")
    file_path = Path(named) if named else Path(DEFAULT_CONFIG_PATH)
    if not named and not file_path.exists():
        return file_path, {}

    def fail(expected: str) -> InvalidSetting:
        if expected == "an existing TOML file":  # no file to name as the source: the name came from here
            return InvalidSetting("<file>", str(file_path), expected, "ONEIROS_CONFIG" if path is None else "")
        return InvalidSetting("<file>", str(file_path), expected, str(file_path))

    return file_path, read_toml(file_path, fail)


def explain_config(
    path: str | Path | None = None,
    *,
    preset: str | None = None,
    environ: Mapping[str, str] | None = None,
    flags: Flags | None = None,
) -> tuple[OneirosConfig, dict[str, str]]:
    """The effective config and, for each key a layer set, where it came from
    (``preset NAME``, the file's path, ``env NAME``, ``flag --NAME``, ``tier NAME`` for a cap the
    cycle's tier filled in because no layer set it); unnamed keys are defaults."""
    env = os.environ if environ is None else environ
    file_path, file_layer = _read_file(path, env)
    env_layer, env_sources = _env_layer(env)
    flag_layer, flag_sources = _flag_layer(flags or {})
    # A flag beats the environment, which beats the file, as for every key.
    chosen = preset or env_layer.get("preset") or env.get("ONEIROS_PRESET") or file_layer.get("preset") or ""
    if not isinstance(chosen, str):
        raise InvalidSetting("preset", chosen, "a preset name", str(file_path))
    if chosen and chosen not in PRESETS:
        raise UnknownPreset(chosen, tuple(PRESETS))
    merged: dict[str, Any] = msgspec.to_builtins(OneirosConfig())
    # The caps a tier supplies are left unset unless a layer sets them, so the tier a later layer
    # chooses fills them in and a cap set anywhere wins over it (CycleBudget resolves them).
    for key in _TIER_KEYS:
        del merged["cycle"]["budget"][key]
    sources: dict[str, str] = {}
    # What the layers set, checked key by key below; the defaults are valid as they are (checking
    # every key of the whole config took half of a command's time).
    given: dict[str, Any] = {}
    if chosen:
        _merge(merged, preset_layer(chosen), _Origin(sources, f"preset {chosen}"), given=given)
    _merge(merged, file_layer, _Origin(sources, str(file_path)), given=given)
    _merge(merged, env_layer, _Origin(sources, "env"), given=given)
    sources.update(env_sources)
    _merge(merged, flag_layer, _Origin(sources, "flag"), given=given)
    sources.update(flag_sources)
    merged["preset"] = chosen
    if preset:
        sources["preset"] = "flag --preset"
    elif not env_layer.get("preset") and env.get("ONEIROS_PRESET"):
        sources["preset"] = "env ONEIROS_PRESET"
    checker = _Checker(sources)
    checker.check(given, OneirosConfig, [])
    try:
        config = msgspec.convert(merged, OneirosConfig)
    except msgspec.ValidationError as exc:  # a cross-field check in a Struct's __post_init__
        raise InvalidSetting("<config>", None, str(exc)) from None
    except InvalidSetting as exc:  # a Struct's own check (finite caps...) names its key, not its source
        source = next((v for k, v in sources.items() if exc.key == k or exc.key.startswith(k + ".")), "")
        raise InvalidSetting(exc.key, exc.value, exc.expected, exc.source or source) from None
    _check_zones(config, checker)
    for key in _TIER_KEYS:
        sources.setdefault(f"cycle.budget.{key}", f"tier {config.cycle.budget.tier}")
    return config, sources


def load_config(
    path: str | Path | None = None,
    *,
    preset: str | None = None,
    environ: Mapping[str, str] | None = None,
    flags: Flags | None = None,
) -> OneirosConfig:
    """The effective config: defaults < preset < file < environment < flags. The tier's caps
    (``cycle.budget.cycle_tokens``, ``cycle_usd``, ``window_usd``) are defaults too: they fill
    only what no layer set, so ``cycle_tokens = 9000`` holds at the hardened tier.

    ``path`` defaults to ``$ONEIROS_CONFIG`` or ``oneiros.toml`` (a missing default file is no
    error; a missing named one is). ``preset`` defaults to ``$ONEIROS_PRESET``, then the file's
    ``preset`` key. Any bad key or value raises :class:`InvalidSetting` naming the key, the
    value, what was expected and where it came from.
    """
    return explain_config(path, preset=preset, environ=environ, flags=flags)[0]
