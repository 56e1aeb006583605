"""``oneiros.toml``: defaults from the source documents, presets, layering, env overrides, errors."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from oneiros import InvalidSetting, UnknownPreset
from oneiros.cli import app
from oneiros.config._load import OneirosConfig, env_var, load_config
from oneiros.config._presets import PRESETS
from oneiros.settings._cycle import CycleBudget, CycleSettings, EngineSettings

NO_FILE = "/dev/null"


def test_defaults_are_the_source_documents_numbers() -> None:
    """Every default named in the issue is the figure of its document."""
    s = load_config(path=NO_FILE, environ={}).schedule
    d = load_config(path=NO_FILE, environ={}).daemon
    got = {
        "enabled": s.enabled,
        "silence": s.silence_seconds,
        "cooldown": s.cooldown_seconds,
        "hours": s.dream_hours,
        "per_day": s.max_per_day,
        "threshold": s.urgency.threshold,
        "adapting": s.urgency.adapting_threshold,
        "decay": s.urgency.decay_per_tick,
        "credit": s.preconditions.min_credit,
        "interval": s.interval.every_ticks,
        "fatigue": (s.fatigue.warning_actions, s.fatigue.limit_actions),
        "voluntary": (s.voluntary.min_seconds, s.voluntary.min_since_last_dream_seconds),
        "deep": s.deep_sleep_every,
        "daily": s.daily.start_time,
        "tick": d.tick_seconds,
        "pause": d.deep_sleep_pause_seconds,
        "market": (d.wake_interrupts.market_change_percent, d.wake_interrupts.market_window_seconds),
    }
    expected = {
        "enabled": False,
        "silence": 3600.0,
        "cooldown": 14400.0,
        "hours": (0, 1, 2, 3, 4, 5),
        "per_day": 2,
        "threshold": 0.8,
        "adapting": 0.6,
        "decay": 0.1,
        "credit": 0.15,
        "interval": 50,
        "fatigue": (60, 80),
        "voluntary": (30.0, 600.0),
        "deep": 10,
        "daily": "03:00",
        "tick": 60.0,
        "pause": 300.0,
        "market": (10.0, 300.0),
    }
    assert expected == got


@pytest.mark.parametrize(
    ("preset", "expected"),
    [
        (
            "bumblebee",
            {
                "silence": 3600.0,
                "cooldown": 14400.0,
                "hours": (0, 1, 2, 3, 4, 5),
                "per_day": 2,
                "mode": "owner",
                "idle": True,
            },
        ),
        (
            "ethos",
            {
                "silence": 7200.0,
                "cooldown": 0.0,
                "hours": tuple(range(24)),
                "per_day": 3,
                "mode": "owner",
                "idle": True,
            },
        ),
        (
            "bardo",
            {"silence": 0.0, "cooldown": 0.0, "hours": tuple(range(24)), "per_day": 0, "mode": "hybrid", "idle": False},
        ),
        (
            "dense-mem",
            {"silence": 0.0, "cooldown": 0.0, "hours": tuple(range(24)), "per_day": 1, "mode": "owner", "idle": False},
        ),
        (
            "openseed",
            {"silence": 0.0, "cooldown": 0.0, "hours": tuple(range(24)), "per_day": 0, "mode": "owner", "idle": False},
        ),
    ],
)
def test_each_preset_reproduces_its_system(preset: str, expected: dict[str, Any]) -> None:
    """Each preset sets the gates its document describes and turns dreaming on."""
    s = load_config(preset=preset, path=NO_FILE, environ={}).schedule
    got = {
        "silence": s.silence_seconds,
        "cooldown": s.cooldown_seconds,
        "hours": s.dream_hours,
        "per_day": s.max_per_day,
        "mode": s.mode,
        "idle": s.idle_trigger,
    }
    assert (True, expected) == (s.enabled, got)


def test_presets_switch_on_their_own_triggers_only() -> None:
    """Bardo: windows and the interval; Dense-Mem: the daily start; OpenSeed: fatigue and voluntary sleep."""
    on = {
        name: tuple(
            t
            for t, flag in (
                ("windows", bool(c.schedule.windows)),
                ("interval", c.schedule.interval.enabled),
                ("daily", c.schedule.daily.enabled),
                ("fatigue", c.schedule.fatigue.enabled),
                ("voluntary", c.schedule.voluntary.enabled),
                ("idle", c.schedule.idle_trigger),
            )
            if flag
        )
        for name in PRESETS
        for c in [load_config(preset=name, path=NO_FILE, environ={})]
    }
    expected = {
        "bumblebee": ("idle",),
        "bardo": ("windows", "interval"),
        "dense-mem": ("daily",),
        "ethos": ("idle",),
        "openseed": ("fatigue", "voluntary"),
        "openclaw": ("daily",),
    }
    assert expected == on


def test_config_composes_the_workers_settings() -> None:
    """The cycle section is the workers' own CycleSettings, and presets reach the engines through it."""
    config = load_config(preset="bumblebee", path=NO_FILE, environ={})
    assert isinstance(config.cycle, CycleSettings)
    assert (1.15, 0.35) == (config.cycle.engines.exploration_temperature, config.cycle.engines.insight_confidence)
    assert CycleSettings(budget=CycleBudget(), engines=EngineSettings()) == OneirosConfig().cycle


def test_layers_file_over_preset_env_over_file(tmp_path: Path) -> None:
    """defaults < preset < oneiros.toml < ONEIROS_*: each layer only changes what it names."""
    path = tmp_path / "oneiros.toml"
    path.write_text('preset = "ethos"\ngolem = "ada"\n[schedule]\nsilence_seconds = 600\nmax_per_day = 5\n')
    config = load_config(path, environ={"ONEIROS_SCHEDULE__MAX_PER_DAY": "7", "ONEIROS_GOLEM": "bob"})
    got = (
        config.preset,
        config.golem,
        config.schedule.silence_seconds,
        config.schedule.max_per_day,
        config.schedule.dream_hours,
    )
    assert ("ethos", "bob", 600.0, 7, tuple(range(24))) == got


@pytest.mark.parametrize(
    ("name", "raw", "attr", "value"),
    [
        ("ONEIROS_SCHEDULE__SILENCE_SECONDS", "60", "silence_seconds", 60.0),
        ("ONEIROS_SCHEDULE__ENABLED", "true", "enabled", True),
        ("ONEIROS_SCHEDULE__DREAM_HOURS", "[22, 23]", "dream_hours", (22, 23)),
        ("ONEIROS_SCHEDULE__TIMEZONE", "Europe/Paris", "timezone", "Europe/Paris"),
        ("ONEIROS_SCHEDULE__MODE", '"owner"', "mode", "owner"),
    ],
)
def test_env_values_read_as_toml_else_as_strings(name: str, raw: str, attr: str, value: Any) -> None:
    """ONEIROS_SCHEDULE__X=... reads TOML values (numbers, booleans, arrays) and bare strings."""
    config = load_config(path=NO_FILE, environ={name: raw})
    assert value == getattr(config.schedule, attr)


def test_env_reaches_nested_and_composed_settings() -> None:
    """Double underscores walk down: into sub-sections and into the composed worker Structs."""
    env = {"ONEIROS_SCHEDULE__URGENCY__THRESHOLD": "0.7", "ONEIROS_CYCLE__BUDGET__CYCLE_TOKENS": "4000"}
    config = load_config(path=NO_FILE, environ=env)
    assert (0.7, 4000) == (config.schedule.urgency.threshold, config.cycle.budget.cycle_tokens)


def test_unrelated_oneiros_variables_are_ignored() -> None:
    """ONEIROS_SOAK and other single-word variables are not config keys."""
    assert OneirosConfig() == load_config(path=NO_FILE, environ={"ONEIROS_SOAK": "1", "ONEIROS_CONFIG_X": "y"})


def test_env_var_names_the_override() -> None:
    """The documented scheme, as code."""
    assert "ONEIROS_SCHEDULE__SILENCE_SECONDS" == env_var("schedule.silence_seconds")


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"ONEIROS_SCHEDULE__SILENCE_SECONDS": "soon"},
            "invalid setting schedule.silence_seconds = 'soon' (from env ONEIROS_SCHEDULE__SILENCE_SECONDS): "
            "expected float",
        ),
        (
            {"ONEIROS_SCHEDULE__SILENCE_SECONDS": "-1"},
            "invalid setting schedule.silence_seconds = -1 (from env ONEIROS_SCHEDULE__SILENCE_SECONDS): "
            "expected float >= 0.0",
        ),
        (
            {"ONEIROS_SCHEDULE__MODE": "sometimes"},
            "invalid setting schedule.mode = 'sometimes' (from env ONEIROS_SCHEDULE__MODE): "
            "expected one of 'owner', 'autonomous', 'hybrid'",
        ),
        (
            {"ONEIROS_SCHEDULE__DREAM_HOURS": "[0, 24]"},
            "invalid setting schedule.dream_hours[1] = 24 (from env ONEIROS_SCHEDULE__DREAM_HOURS): expected int <= 23",
        ),
        (
            {"ONEIROS_SCHEDULE__TIMEZONE": "Mars/Olympus"},
            "invalid setting schedule.timezone = 'Mars/Olympus' (from env ONEIROS_SCHEDULE__TIMEZONE): "
            "expected an IANA timezone such as 'Europe/Paris'",
        ),
        (
            {"ONEIROS_SCHEDULE__DAILY__START_TIME": "3am"},
            "invalid setting schedule.daily.start_time = '3am' (from env ONEIROS_SCHEDULE__DAILY__START_TIME): "
            "expected a time HH:MM from 00:00 to 23:59",
        ),
        (
            {"ONEIROS_SCHEDULE__DAILY__START": "03:00"},
            "invalid setting schedule.daily.start = '03:00' (from env ONEIROS_SCHEDULE__DAILY__START): "
            "expected one of the keys enabled, start_time",
        ),
        (
            {"ONEIROS_SCHEDULE__FATIGUE__WARNING_ACTIONS": "90"},
            "invalid setting schedule.fatigue.warning_actions = 90 "
            "(from env ONEIROS_SCHEDULE__FATIGUE__WARNING_ACTIONS): "
            "expected at most schedule.fatigue.limit_actions (80)",
        ),
    ],
)
def test_bad_values_name_key_value_expectation_and_source(env: dict[str, str], message: str) -> None:
    """A bad config names the key, the value, what was expected and where it came from."""
    with pytest.raises(InvalidSetting) as info:
        load_config(path=NO_FILE, environ=env)
    assert message == str(info.value)


def test_unknown_key_inside_a_composed_worker_struct_is_refused() -> None:
    """CycleSettings does not forbid unknown fields itself; the loader still refuses a misspelt one."""
    with pytest.raises(InvalidSetting) as info:
        load_config(path=NO_FILE, environ={"ONEIROS_CYCLE__ENGINES__TEMPERATURE": "1.2"})
    assert ("cycle.engines.temperature", 1.2) == (info.value.key, info.value.value)
    assert "exploration_temperature" in info.value.expected


def test_bad_file_value_names_the_file(tmp_path: Path) -> None:
    """Values from oneiros.toml are traced to the file, with typed attributes on the error."""
    path = tmp_path / "oneiros.toml"
    path.write_text('[schedule]\nmax_per_day = "two"\n')
    with pytest.raises(InvalidSetting) as info:
        load_config(path, environ={})
    assert f"invalid setting schedule.max_per_day = 'two' (from {path}): expected int" == str(info.value)
    assert ("schedule.max_per_day", "two", "int") == (info.value.key, info.value.value, info.value.expected)


def test_unknown_key_in_a_window_names_the_known_ones(tmp_path: Path) -> None:
    """A misspelt field inside an array of tables is named with its index."""
    path = tmp_path / "oneiros.toml"
    path.write_text('[[schedule.windows]]\nstart = "02:00"\nend = "06:00"\ntz = "UTC"\n')
    with pytest.raises(InvalidSetting) as info:
        load_config(path, environ={})
    expected = (
        f"invalid setting schedule.windows[0].tz = 'UTC' (from {path}): expected one of the keys end, start, timezone"
    )
    assert expected == str(info.value)


def test_malformed_toml_and_missing_named_file(tmp_path: Path) -> None:
    """Unparseable TOML and a named file that is not there are both config errors."""
    path = tmp_path / "oneiros.toml"
    path.write_text("[schedule\n")
    with pytest.raises(InvalidSetting) as info:
        load_config(path, environ={})
    assert str(info.value).startswith(f"invalid setting <file> = '{path}' (from {path}): expected valid TOML (")
    missing = tmp_path / "nope.toml"
    with pytest.raises(InvalidSetting) as info:
        load_config(environ={"ONEIROS_CONFIG": str(missing)})
    assert f"invalid setting <file> = '{missing}' (from ONEIROS_CONFIG): expected an existing TOML file" == str(
        info.value
    )


def test_unknown_preset() -> None:
    """A preset name none of the presets carries lists the ones that exist."""
    with pytest.raises(UnknownPreset) as info:
        load_config(preset="hermes", path=NO_FILE, environ={})
    expected = "unknown preset 'hermes': expected one of bumblebee, bardo, dense-mem, ethos, openseed, openclaw"
    assert expected == str(info.value)


def test_missing_default_file_is_fine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No oneiros.toml in the working directory: the defaults."""
    monkeypatch.chdir(tmp_path)
    assert OneirosConfig() == load_config(environ={})


def test_public_surface_of_config_and_daemon() -> None:
    """Everything oneiros.config and oneiros.daemon export imports."""
    for name in ("oneiros.config", "oneiros.daemon"):
        module = importlib.import_module(name)
        assert [] == [n for n in module.__all__ if not hasattr(module, n)]


# -- CLI ------------------------------------------------------------------------------------------

runner = CliRunner()


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_config_show_json_is_the_effective_config(preset: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``oneiros config show --preset NAME --json`` prints exactly what load_config builds."""
    import msgspec

    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["config", "show", "--preset", preset, "--json"])
    assert 0 == result.exit_code, result.output
    expected = msgspec.to_builtins(load_config(preset=preset))
    assert json.loads(json.dumps(expected)) == json.loads(result.output)


def test_config_show_table_names_the_override_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The table lists each key with its value, the layer it came from and the variable that overrides it."""
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["config", "show", "--preset", "ethos"], env={"COLUMNS": "200"})
    assert 0 == result.exit_code
    line = next(line for line in result.output.splitlines() if "schedule.silence_seconds" in line)
    assert ["schedule.silence_seconds", "7200.0", "preset ethos", "ONEIROS_SCHEDULE__SILENCE_SECONDS"] == [
        cell.strip() for cell in line.strip("│ ").split("│")
    ]


def test_config_show_bad_env_exits_two_with_the_message(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A bad override is a one-line error and exit code 2."""
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["config", "show"], env={"ONEIROS_SCHEDULE__MAX_PER_DAY": "many", "COLUMNS": "300"})
    assert 2 == result.exit_code
    expected = (
        "error: invalid setting schedule.max_per_day = 'many' (from env ONEIROS_SCHEDULE__MAX_PER_DAY): expected int"
    )
    assert expected == result.output.strip()


def test_should_dream_explains_the_decision(tmp_path: Path) -> None:
    """``oneiros should-dream --json`` gives the verdict and every check with its values."""
    from datetime import UTC, datetime

    from oneiros import Deps, FixedClock, Golems, open_store

    url = f"sqlite:///{tmp_path}/events.db"
    store = open_store(url)
    Golems(store, deps=Deps(clock=FixedClock(datetime(2026, 3, 1, 23, 0, tzinfo=UTC)))).create("g")
    store.close()
    base = ["should-dream", "--store", url, "--golem", "g", "--preset", "bumblebee", "--json"]
    late = json.loads(runner.invoke(app, [*base, "--at", "2026-03-01T23:59:59+00:00"]).output)
    dawn = json.loads(runner.invoke(app, [*base, "--at", "2026-03-02T00:00:00+00:00"]).output)
    assert (False, ["silence", "circadian"]) == (late["dream"], late["blocked_by"])
    assert (True, "idle") == (dawn["dream"], dawn["trigger"])
    silence = next(c for c in late["checks"] if c["name"] == "silence")
    assert "59m59s < 1h00m00s idle" == silence["detail"]


# -- one configuration for every process -------------------------------------------------------


def _numeric_keys() -> list[str]:
    """Every config key whose default is a number (not a flag), in dotted form."""
    import msgspec

    def walk(value: Any, prefix: str) -> list[str]:
        if isinstance(value, dict):
            return [k for key, inner in value.items() for k in walk(inner, f"{prefix}{key}.")]
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        return [prefix[:-1]] if numeric and "prices." not in prefix else []

    return walk(msgspec.to_builtins(OneirosConfig()), "")


@settings(max_examples=60, deadline=None)
@given(key=st.sampled_from(_numeric_keys()), word=st.sampled_from(["soon", "many", "x1"]))
def test_a_word_where_a_number_belongs_is_named_by_its_own_key_and_variable(key: str, word: str) -> None:
    """For any numeric key, a word in its ONEIROS_* variable is refused with that exact key, that
    value and that variable as the source: the error comes from the key's type, not from text."""
    with pytest.raises(InvalidSetting) as info:
        load_config(path=NO_FILE, environ={env_var(key): word})
    assert (key, word, f"env {env_var(key)}") == (info.value.key, info.value.value, info.value.source)
    assert info.value.expected.split()[0] in ("int", "float")


def test_flags_beat_environment_beat_file_and_every_source_is_named(tmp_path: Path) -> None:
    """defaults < file < ONEIROS_* < flags, for the keys every process reads (store, queue, rq,
    cycle, tracing); explain_config names where each value came from."""
    from oneiros.config._load import explain_config

    path = tmp_path / "oneiros.toml"
    path.write_text('queue = "redis://file:6379/0"\n[rq]\nqueue = "dreams"\n[cycle.budget]\ntier = "hardened"\n')
    env = {"ONEIROS_QUEUE": "redis://env:6379/0", "ONEIROS_RQ_SETTINGS": '{"retries": 5}', "ONEIROS_SPANS": "off"}
    flags = {
        "cycle.budget.tier": ("core", "--tier"),
        "cycle.generator.openai.base_url": ("http://llm:8000/v1", "--base-url"),
    }
    config, sources = explain_config(path, environ=env, flags=flags)
    got = (config.queue, config.rq.queue, config.rq.retries, config.cycle.budget.tier, config.tracing.spans_path)
    assert ("redis://env:6379/0", "dreams", 5, "core", None) == got
    assert "http://llm:8000/v1" == config.cycle.generator.openai.base_url
    expected = {
        "queue": "env ONEIROS_QUEUE",
        "rq.queue": str(path),
        "rq.retries": "env ONEIROS_RQ_SETTINGS",
        "cycle.budget.tier": "flag --tier",
        "tracing.spans_path": "env ONEIROS_SPANS",
        "cycle.generator.openai.base_url": "flag --base-url",
    }
    assert expected == {k: sources[k] for k in expected}


def test_config_show_names_each_source_and_never_a_password(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`config show --json --sources` gives every key's value and source; a password in the store
    URL is masked in the table."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ONEIROS_STORE", "postgresql://oneiros:hunter2@db:5432/oneiros")
    monkeypatch.setenv("ONEIROS_CYCLE__GENERATOR__KIND", "openai")
    rows = json.loads(runner.invoke(app, ["config", "show", "--json", "--sources"]).output)
    by_key = {r["key"]: r for r in rows}
    assert ("openai", "env ONEIROS_CYCLE__GENERATOR__KIND") == (
        by_key["cycle.generator.kind"]["value"],
        by_key["cycle.generator.kind"]["source"],
    )
    assert "default" == by_key["cycle.budget.tier"]["source"]
    table = runner.invoke(app, ["config", "show"], env={"COLUMNS": "250"}).output
    assert "hunter2" not in table
    assert "postgresql://oneiros:***@db:5432/oneiros" in table


def _deployment_table_keys() -> list[str]:
    """The keys docs/deployment.md's configuration table names: a row's own key, and for a
    ``prefix.*`` row each backticked key in its description outside parentheses (a ``sub.*`` there
    makes the following ones ``prefix.sub.key``)."""
    import re

    text = (Path(__file__).resolve().parent.parent / "docs" / "deployment.md").read_text()
    table = text.split("| key | what |", 1)[1].split("\n\n", 1)[0]
    keys: list[str] = []
    for row in table.splitlines()[2:]:
        key_cell, what = row.strip("| ").split(" | ", 1)
        for key in (k.strip() for k in key_cell.replace("`", "").split(",")):
            if not key.endswith(".*"):
                keys.append(key)
                continue
            prefix = sub = key[:-2]
            for token in re.findall(r"`([a-z_]+(?:\.\*)?)`", re.sub(r"\([^)]*\)", "", what)):
                if token.endswith(".*"):
                    sub = f"{prefix}.{token[:-2]}"
                else:
                    keys.append(f"{sub}.{token}")
    return keys


def test_every_key_of_the_deployment_table_is_a_setting() -> None:
    """Each key docs/deployment.md's configuration table names is a key of the effective config (the
    generator's were `name`, `base_url`, `api_key_env`... where the settings have `kind` and
    `openai.base_url`, `openai.api_key_env`...)."""
    import msgspec

    config = msgspec.to_builtins(load_config(NO_FILE))
    keys = _deployment_table_keys()
    missing = []
    for key in keys:
        node: Any = config
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                missing.append(key)
                break
            node = node[part]
    assert [] == missing
    assert {"cycle.generator.kind", "cycle.generator.openai.api_key_env", "recovery.lease_seconds"} <= set(keys)


def test_oneiros_preset_overrides_the_files_preset_and_each_source_is_named(tmp_path: Path) -> None:
    """Environment beats file for the preset as for every key: ONEIROS_PRESET=bardo with
    `preset = "ethos"` in oneiros.toml is bardo (it stayed ethos), named `env ONEIROS_PRESET`;
    --preset beats both and is named `flag --preset` (it was named after the file)."""
    from oneiros.config._load import explain_config

    path = tmp_path / "oneiros.toml"
    path.write_text('preset = "ethos"\n')
    env = {"ONEIROS_PRESET": "bardo"}
    config, sources = explain_config(path, environ=env)
    assert ("bardo", "env ONEIROS_PRESET") == (config.preset, sources["preset"])
    assert load_config(NO_FILE, preset="bardo").schedule == config.schedule
    config, sources = explain_config(path, preset="bumblebee", environ=env)
    assert ("bumblebee", "flag --preset") == (config.preset, sources["preset"])
    config, sources = explain_config(path, environ={})
    assert ("ethos", str(path)) == (config.preset, sources["preset"])
