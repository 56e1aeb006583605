"""Loading the one config: defaults, then a preset, then ``oneiros.toml``, then ``ONEIROS_*`` variables.

Environment overrides name a key path with double underscores after the prefix:
``ONEIROS_SCHEDULE__SILENCE_SECONDS=60`` sets ``schedule.silence_seconds``, and
``ONEIROS_CYCLE__BUDGET__CYCLE_TOKENS=4000`` sets ``cycle.budget.cycle_tokens``. A value is read as
a TOML value when it parses as one (``60``, ``true``, ``[0, 1, 2]``) and as a plain string otherwise
(``Europe/Paris``). Of the variables without a double underscore only ``ONEIROS_GOLEM`` and
``ONEIROS_STORE`` are config keys (others, such as ``ONEIROS_SOAK``, are left alone);
``ONEIROS_CONFIG`` names the file and ``ONEIROS_PRESET`` the preset.
"""

from __future__ import annotations

import os
import re
import tomllib
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec

from oneiros._errors import InvalidSetting, UnknownPreset
from oneiros.config._presets import PRESETS, preset_layer
from oneiros.settings import (
    CycleSettings,
    DaemonSettings,
    ScheduleSettings,
    ServerSettings,
    SnapshotSettings,
    StagingSettings,
)

__all__ = ["DEFAULT_CONFIG_PATH", "ENV_PREFIX", "OneirosConfig", "env_var", "load_config"]

DEFAULT_CONFIG_PATH = "oneiros.toml"
ENV_PREFIX = "ONEIROS_"
_SEP = "__"
_TOP_LEVEL = ("golem", "store")
_ERROR = re.compile(r"^(?P<what>.*?)(?: - at (?P<inkey>`key` in )?`\$(?P<path>[^`]*)`)?$", re.S)
_QUOTED = re.compile(r"[`'](?P<name>[^`']+)[`']")


class OneirosConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Everything ``oneiros run`` needs. Cycle settings are the workers' own Structs, composed here."""

    preset: str = ""
    """The preset this config starts from ("" for the plain defaults)."""
    store: str = ""
    """Store URL ("" for the CLI's ``--store`` / ``ONEIROS_STORE`` / default)."""
    golem: str = "golem"
    """The golem ``oneiros run`` drives."""
    schedule: ScheduleSettings = ScheduleSettings()
    daemon: DaemonSettings = DaemonSettings()
    cycle: CycleSettings = CycleSettings()
    staging: StagingSettings = StagingSettings()
    """The staging buffer and its validation sweep, for every process that runs the projections."""
    snapshots: SnapshotSettings = SnapshotSettings()
    """How often folds of a golem's stream are snapshotted beside the log."""
    server: ServerSettings = ServerSettings()


def env_var(key: str) -> str:
    """The variable that overrides dotted ``key``.

    ``schedule.silence_seconds`` → ``ONEIROS_SCHEDULE__SILENCE_SECONDS``."""
    return ENV_PREFIX + key.upper().replace(".", _SEP)


def _merge(
    into: dict[str, Any], layer: Mapping[str, Any], sources: dict[str, str], source: str, prefix: str = ""
) -> None:
    for key, value in layer.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _merge(into[key], value, sources, source, path + ".")
        else:
            into[key] = value
            sources[path] = source


def _env_layer(environ: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    layer: dict[str, Any] = {}
    names: dict[str, str] = {}
    for key in _TOP_LEVEL:
        if env_var(key) in environ:
            layer[key] = environ[env_var(key)]
            names[key] = f"env {env_var(key)}"
    for name, raw in sorted(environ.items()):
        if not name.startswith(ENV_PREFIX) or _SEP not in name[len(ENV_PREFIX) :]:
            continue
        parts = [p.lower() for p in name[len(ENV_PREFIX) :].split(_SEP)]
        try:
            value: Any = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw
        node = layer
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
        names[".".join(parts)] = f"env {name}"
    return layer, names


def _struct_fields(tp: Any) -> dict[str, Any] | None:
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return typing.get_type_hints(tp, include_extras=False)
    return None


def _check_keys(data: Mapping[str, Any], tp: Any, sources: Mapping[str, str], prefix: str = "") -> None:
    """Unknown keys are errors everywhere, also inside the composed Structs that do not forbid them."""
    fields = _struct_fields(tp)
    if fields is None:
        return
    for key, value in data.items():
        path = f"{prefix}{key}"
        if key not in fields:
            raise InvalidSetting(path, value, f"one of the keys {', '.join(sorted(fields))}", sources.get(path, ""))
        if isinstance(value, Mapping):
            _check_keys(value, fields[key], sources, path + ".")


def _field_type(path: list[str]) -> Any:
    tp: Any = OneirosConfig
    for part in path:
        if part.isdigit():  # an index into tuple[S, ...]
            tp = _element_struct(tp)
            continue
        fields = _struct_fields(tp)
        if fields is None or part not in fields:
            return None
        tp = fields[part]
    return tp


def _lookup(data: Mapping[str, Any], path: list[str]) -> Any:
    node: Any = data
    for part in path:
        if isinstance(node, Mapping):
            node = node.get(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _expected(what: str, path: list[str]) -> str:
    tp = _field_type(path)
    if typing.get_origin(tp) is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(tp))
    what = what.replace("`", "")
    if "matching regex" in what and "[0-5][0-9]" in what:
        return "a time HH:MM from 00:00 to 23:59"
    if what.startswith("Expected "):
        return what[len("Expected ") :].split(", got ")[0]
    return what[0].lower() + what[1:]


def _element_struct(tp: Any) -> Any:
    """The Struct inside ``tuple[S, ...]`` or ``S | None``, else ``tp``."""
    for arg in typing.get_args(tp):
        if _struct_fields(arg) is not None:
            return arg
    return tp


def _invalid(exc: msgspec.ValidationError, merged: Mapping[str, Any], sources: Mapping[str, str]) -> InvalidSetting:
    match = _ERROR.match(str(exc))
    assert match is not None  # the pattern matches any text
    raw_path = (match.group("path") or "").lstrip(".")
    path = [p for p in re.split(r"\.|\[(\d+)\]", raw_path) if p]
    dotted = ".".join(path)
    source = next((sources[k] for k in (dotted, *_parents(dotted)) if k in sources), "")
    what = match.group("what")
    quoted = _QUOTED.search(what)
    if match.group("inkey") and quoted:  # a mapping key outside its Literal
        keys = typing.get_args(_field_type(path))[:1]
        allowed = ", ".join(repr(a) for a in typing.get_args(keys[0])) if keys else "?"
        return InvalidSetting(raw_path, quoted.group("name"), f"a key among {allowed}", source)
    if what.startswith("Object contains unknown field") and quoted:
        fields = _struct_fields(_element_struct(_field_type(path))) or {}
        name = quoted.group("name")
        value = _lookup(merged, [*path, name])
        return InvalidSetting(f"{raw_path}.{name}", value, f"one of the keys {', '.join(sorted(fields))}", source)
    return InvalidSetting(raw_path or "<root>", _lookup(merged, path), _expected(what, path), source)


def _parents(key: str) -> list[str]:
    parts = key.split(".")
    return [".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]


def _check_zones(config: OneirosConfig, sources: Mapping[str, str]) -> None:
    zones = [("schedule.timezone", config.schedule.timezone)]
    zones += [(f"schedule.windows[{i}].timezone", w.timezone) for i, w in enumerate(config.schedule.windows)]
    for key, zone in zones:
        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            dotted = key.replace("[", ".").replace("]", "")
            source = next((sources[k] for k in (dotted, *_parents(dotted)) if k in sources), "")
            raise InvalidSetting(key, zone, "an IANA timezone such as 'Europe/Paris'", source) from None
    fatigue = config.schedule.fatigue
    if fatigue.warning_actions > fatigue.limit_actions:
        raise InvalidSetting(
            "schedule.fatigue.warning_actions",
            fatigue.warning_actions,
            f"at most schedule.fatigue.limit_actions ({fatigue.limit_actions})",
            sources.get("schedule.fatigue.warning_actions", ""),
        )


def load_config(
    path: str | Path | None = None,
    *,
    preset: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> OneirosConfig:
    """The effective config: defaults < preset < file < environment.

    ``path`` defaults to ``$ONEIROS_CONFIG`` or ``oneiros.toml`` (a missing default file is no
    error; a missing named one is). ``preset`` defaults to the file's ``preset`` key, then
    ``$ONEIROS_PRESET``. Any bad key or value raises :class:`InvalidSetting` naming the key, the
    value, what was expected and where it came from.
    """
    env = os.environ if environ is None else environ
    named = path if path is not None else env.get("ONEIROS_CONFIG")
    file_path = Path(named) if named else Path(DEFAULT_CONFIG_PATH)
    file_layer: dict[str, Any] = {}
    if file_path.exists():
        try:
            file_layer = tomllib.loads(file_path.read_text())
        except tomllib.TOMLDecodeError as exc:
            raise InvalidSetting("<file>", str(file_path), f"valid TOML ({exc})", str(file_path)) from None
    elif named:
        raise InvalidSetting(
            "<file>", str(file_path), "an existing TOML file", "ONEIROS_CONFIG" if path is None else ""
        )
    env_layer, env_sources = _env_layer(env)
    chosen = preset or env_layer.get("preset") or file_layer.get("preset") or env.get("ONEIROS_PRESET") or ""
    if not isinstance(chosen, str):
        raise InvalidSetting("preset", chosen, "a preset name", str(file_path))
    if chosen and chosen not in PRESETS:
        raise UnknownPreset(chosen, tuple(PRESETS))
    merged: dict[str, Any] = msgspec.to_builtins(OneirosConfig())
    sources: dict[str, str] = {}
    if chosen:
        _merge(merged, preset_layer(chosen), sources, f"preset {chosen}")
    _merge(merged, file_layer, sources, str(file_path))
    _merge(merged, env_layer, sources, "env")
    sources.update(env_sources)
    merged["preset"] = chosen
    _check_keys(merged, OneirosConfig, sources)
    try:
        config = msgspec.convert(merged, OneirosConfig)
    except msgspec.ValidationError as exc:
        raise _invalid(exc, merged, sources) from None
    _check_zones(config, sources)
    return config
