"""A tier (and a preset) supplies a cycle's budget defaults; a cap the user set wins everywhere.

``ONEIROS_CYCLE__BUDGET__CYCLE_TOKENS=9000 oneiros dream --tier hardened`` ran with a 60,000-token
cycle cap: the hardened tier's own figure replaced the cap the user had set.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import msgspec
import msgspec.inspect as mi
import pytest
from typer.testing import CliRunner

from oneiros import open_store, replay
from oneiros.cli import app
from oneiros.config._load import env_var, explain_config, load_config
from oneiros.config._presets import PRESETS
from oneiros.events._codec import decode_event, encode_event
from oneiros.events._types import DreamPhase, DreamStart
from oneiros.runtime._budget import phase_budget
from oneiros.settings._cycle import CycleBudget
from oneiros.settings._phases import PHASES as TABLE
from oneiros.store._history import import_history

HISTORIES = Path(__file__).parent / "histories"
NO_FILE = "/dev/null"
PHASES = list(TABLE.names)
runner = CliRunner()


def _budget_keys(struct: Any = CycleBudget, prefix: str = "") -> list[tuple[str, mi.Type]]:
    """Every scalar key under ``cycle.budget`` (prices per model too), read from the Struct so
    that a key added later is covered; the tier is what chooses, not a cap."""
    keys: list[tuple[str, mi.Type]] = []
    info = mi.type_info(struct)
    assert isinstance(info, mi.StructType)
    for field in info.fields:
        key = f"{prefix}{field.encode_name}"
        if key == "tier":
            continue
        if isinstance(field.type, mi.StructType):
            keys += _budget_keys(field.type.cls, f"{key}.")
        elif isinstance(field.type, mi.DictType):
            for model in CycleBudget().prices:
                keys += _budget_keys(field.type.value_type.cls, f"{key}.{model}.")
        else:
            keys.append((key, field.type))
    return keys


def _explicit(kind: mi.Type) -> int | float:
    """A value no tier, preset or default gives."""
    types = kind.types if isinstance(kind, mi.UnionType) else (kind,)
    return 7_777 if any(isinstance(t, mi.IntType) for t in types) else 0.123


def _value(budget: CycleBudget, key: str) -> Any:
    node: Any = budget
    for part in key.split("."):
        node = node[part] if isinstance(node, dict) else getattr(node, part)
    return node


def _toml(values: dict[str, Any]) -> str:
    return "".join(".".join(f'"{p}"' for p in key.split(".")) + f" = {json.dumps(v)}\n" for key, v in values.items())


def _load(  # noqa: PLR0913 - keyword-only: the layers a parametrized test varies
    tmp_path: Path, key: str, value: Any, *, where: str, tier: str, tier_where: str, preset: str | None
) -> CycleBudget:
    """The budget when ``key`` is set in layer ``where`` and the tier in layer ``tier_where``."""
    layers: dict[str, dict[str, Any]] = {"file": {}, "env": {}, "flag": {}}
    layers[tier_where]["cycle.budget.tier"] = tier
    layers[where][f"cycle.budget.{key}"] = value
    path = tmp_path / "oneiros.toml"
    path.write_text(_toml(layers["file"]))
    environ = {env_var(k): json.dumps(v) for k, v in layers["env"].items()}
    flags = {k: (v, "--" + k.rsplit(".", 1)[-1]) for k, v in layers["flag"].items()}
    return load_config(path, preset=preset, environ=environ, flags=flags).cycle.budget


def test_a_cap_set_in_a_file_the_environment_or_a_flag_wins_at_every_tier_and_preset(tmp_path: Path) -> None:
    """Every budget key, set in the file, in ``ONEIROS_*`` or as a flag, keeps its value whichever
    tier (chosen in any of the three layers) and whichever preset (or none) the config has: a tier
    and a preset supply defaults only. The caps a cycle enforces read the same value."""
    keys = _budget_keys()
    assert {"cycle_tokens", "hardened_cycle_tokens", "cycle_usd", "window_usd", "month_usd"} <= {k for k, _ in keys}
    layers = ("file", "env", "flag")
    cases = itertools.product(keys, (None, *PRESETS), ("core", "hardened"), layers)
    lost = []
    for index, ((key, kind), preset, tier, where) in enumerate(cases):
        value = _explicit(kind)
        tier_where = layers[index // 3 % 3]  # each key's layer meets the tier's in each layer, in turn
        got = _load(tmp_path, key, value, where=where, tier=tier, tier_where=tier_where, preset=preset)
        enforced = {"cycle_tokens": got.tokens(), "cycle_usd": got.cycle_usd_cap(), "window_usd": got.window_usd_cap()}
        if (tier, value, value) != (got.tier, _value(got, key), enforced.get(key, value)):
            lost.append((key, where, tier, tier_where, preset, _value(got, key)))
    assert [] == lost


@pytest.mark.parametrize(
    ("tier", "caps"), [("core", (12_000, None, None)), ("hardened", (60_000, 0.50, 2.00))], ids=["core", "hardened"]
)
@pytest.mark.parametrize("preset", [None, *PRESETS])
def test_a_tier_fills_in_the_caps_nobody_set(tier: str, caps: tuple[Any, ...], preset: str | None) -> None:
    """With nothing set, a cycle's caps are its tier's (Bardo: 12k tokens at [CORE]; 60k
    tokens, $0.50 a cycle and $2.00 a window at [HARDENED]), under every preset, and ``config show``
    names the tier as where they came from."""
    flags = {"cycle.budget.tier": (tier, "--tier")}
    config, sources = explain_config(NO_FILE, preset=preset, environ={}, flags=flags)
    budget = config.cycle.budget
    assert caps == (budget.tokens(), budget.cycle_usd_cap(), budget.window_usd_cap())
    assert [f"tier {tier}"] * 3 == [sources[f"cycle.budget.{k}"] for k in ("cycle_tokens", "cycle_usd", "window_usd")]


def test_hardened_cycle_tokens_is_the_hardened_tiers_default_cycle_cap() -> None:
    """``hardened_cycle_tokens`` fills ``cycle_tokens`` at the hardened tier when that is unset, and
    yields to it when it is set; at the core tier it changes nothing."""
    env = {"ONEIROS_CYCLE__BUDGET__HARDENED_CYCLE_TOKENS": "30000"}
    at = {
        (tier, cap): load_config(
            NO_FILE,
            environ={**env, **({"ONEIROS_CYCLE__BUDGET__CYCLE_TOKENS": "9000"} if cap else {})},
            flags={"cycle.budget.tier": (tier, "--tier")},
        ).cycle.budget.tokens()
        for tier in ("core", "hardened")
        for cap in (False, True)
    }
    expected = {("core", False): 12_000, ("core", True): 9_000, ("hardened", False): 30_000, ("hardened", True): 9_000}
    assert expected == at


def test_a_budget_made_in_python_resolves_its_caps_and_records_them() -> None:
    """``CycleBudget(tier="hardened", cycle_tokens=9000)`` caps a cycle at 9,000 tokens with the
    tier's money caps; a DreamStart records the resolved caps, and reads them back the same."""
    budget = CycleBudget(tier="hardened", cycle_tokens=9_000)
    assert (9_000, 0.5, 2.0) == (budget.tokens(), budget.cycle_usd_cap(), budget.window_usd_cap())
    assert int(9_000 * TABLE.share("stable", "rem")) == phase_budget(budget, "stable", "rem")
    recorded = msgspec.to_builtins(budget)
    assert (9_000, 0.5, 2.0) == (recorded["cycle_tokens"], recorded["cycle_usd"], recorded["window_usd"])
    assert budget == msgspec.convert(recorded, CycleBudget)
    core = CycleBudget(cycle_usd=0.01)
    assert (12_000, 0.01, None) == (core.tokens(), core.cycle_usd_cap(), core.window_usd_cap())


def test_dream_with_an_environment_cap_and_the_hardened_tier_runs_under_the_cap(sqlite_url: str) -> None:
    """``ONEIROS_CYCLE__BUDGET__CYCLE_TOKENS=9000 oneiros dream --tier hardened``: the cycle's
    DreamStart records hardened with a 9,000-token cap (and the tier's $0.50), every phase gets its
    share of 9,000, and ``oneiros budget`` shows the cycle against 9,000."""
    env = {"ONEIROS_CYCLE__BUDGET__CYCLE_TOKENS": "9000"}
    dreamt = runner.invoke(app, ["dream", "--sample", "--store", sqlite_url, "--tier", "hardened", "--json"], env=env)
    assert 0 == dreamt.exit_code, dreamt.output
    with open_store(sqlite_url) as store:
        records = store.read_stream("golem")
    (start,) = [r.event for r in records if isinstance(r.event, DreamStart)]
    assert start.settings is not None
    budget = start.settings.budget
    assert ("hardened", 9_000, 0.5) == (budget.tier, budget.cycle_tokens, budget.cycle_usd)
    phases = [r.event.budget_tokens for r in records if isinstance(r.event, DreamPhase)]
    assert [int(9_000 * TABLE.share("stable", p)) for p in PHASES] == phases
    shown = runner.invoke(app, ["budget", "--store", sqlite_url, "--json"])
    assert 0 == shown.exit_code, shown.output
    cycle = json.loads(shown.output)["caps"][0]
    assert ("cycle", 9_000, 0.5) == (cycle["cap"], cycle["token_cap"], cycle["usd_cap"])
    assert cycle["tokens"] <= 9_000


def test_a_v3_dream_start_is_lifted_to_the_caps_its_cycle_ran_under() -> None:
    """budget_v3.jsonl was written by the code before (DreamStart v3, main's commit d453201): a
    hardened cycle with ``cycle_tokens = 9000`` and ``hardened_cycle_tokens = 20000`` (it ran under
    20,000), a core cycle with money caps set (it ran under none). The log replays to the state it
    was recorded with; each DreamStart comes back v4 with the caps its cycle ran under, whose phase
    shares are the budgets the old code recorded in its DreamPhase events."""
    store = open_store("memory://")
    assert 240 == import_history(store, HISTORIES / "budget_v3.jsonl")
    state = replay(store)["golden-v3"]
    assert ("Waking", 2) == (state.mode, state.cycles_completed)
    records = list(store.read_all())
    starts = [r.event for r in records if isinstance(r.event, DreamStart)]
    budgets = [s.settings.budget for s in starts if s.settings is not None]
    caps = [(b.tokens(), b.cycle_usd_cap(), b.window_usd_cap()) for b in budgets]
    assert [(20_000, 0.5, 2.0), (7_000, None, None)] == caps
    for start, budget in zip(starts, budgets, strict=True):
        phases = [r.event for r in records if isinstance(r.event, DreamPhase)]
        recorded = [p.budget_tokens for p in phases if p.cycle_id == start.cycle_id]
        assert [phase_budget(budget, "stable", p) for p in PHASES] == recorded
    line = json.loads((HISTORIES / "budget_v3.jsonl").read_text().splitlines()[9])
    assert "DreamStart.v3" == line["topic"]
    meta, event = decode_event(line["topic"], json.dumps(line["state"]).encode())
    assert "DreamStart.v4" == encode_event(meta, event)[0]
