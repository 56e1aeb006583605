"""Forking a recorded cycle with another model or prompts into a branch store, and diffing cycles:
the model is called only where the request changed, and the live golem is never touched."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import msgspec
import pytest

from oneiros import Golems, InProcessExecutor, open_store
from oneiros._errors import InputError
from oneiros.events._content import BudgetExhausted
from oneiros.events._types import GenerationRecorded
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._openai import OpenAIGenerator
from oneiros.lab._diff import diff_cycles, summarize_cycle
from oneiros.lab._rerun import fork_cycle
from oneiros.runtime._budget import Ledger
from oneiros.settings._cycle import CycleBudget, CycleSettings, EngineSettings, ModelPrice
from oneiros.settings._generator import OpenAISettings
from oneiros.settings._prompts import DEFAULT_PROMPTS, PromptSet
from oneiros.store._history import export_history
from oneiros.store._store import EventStore
from tests.chat_server import HARDENED, ChatServer, sample_golems
from tests.cli_runner import run_cli


def _golems() -> Golems:
    return sample_golems(3)


def _openai(chat_server: ChatServer, models: dict[str, str], phase_models: dict[str, str]) -> OpenAIGenerator:
    settings = OpenAISettings(base_url=chat_server.url, models=models, phase_models=phase_models, retries=0)
    return OpenAIGenerator(settings, env={"OPENAI_API_KEY": "sk-test"})


def _export(store: EventStore, path: Path) -> bytes:
    export_history(store, path)
    return path.read_bytes()


def test_a_fork_with_another_model_calls_it_for_every_call_and_leaves_the_live_log_alone(
    chat_server: ChatServer, tmp_path: Path
) -> None:
    """Every request names another model, so every call of the fork goes to the chat_server, with that
    model; the live log is byte-identical before and after; the diff names the models."""
    chat_server.reset()
    golems = _golems()
    recorded_with = _openai(chat_server, {"core": "m-core", "hardened": "m-hard"}, {"rem": "m-rem"})
    cycle = InProcessExecutor(golems, recorded_with, settings=HARDENED).run_cycle("g").cycle_id
    calls = len(chat_server.requests)
    before = _export(golems.store, tmp_path / "before.jsonl")
    branch = open_store("memory://")
    other = _openai(chat_server, {"core": "m-other", "hardened": "m-other"}, {})
    report = fork_cycle(golems.store, cycle, HARDENED, generator=other, into=branch, seed=3)
    assert report.model_calls == len(chat_server.requests) - calls > 0
    assert {"m-other"} == {r["model"] for r in chat_server.requests[calls:]}
    assert 0 == report.recorded_calls
    assert before == _export(golems.store, tmp_path / "after.jsonl")
    diff = diff_cycles(summarize_cycle(golems.store, cycle), summarize_cycle(branch, cycle))
    assert (("m-hard", "m-rem"), ("m-other",)) == diff.changed["models"]


def test_a_fork_with_one_reworded_prompt_calls_the_model_only_for_what_changed(tmp_path: Path) -> None:
    """Rewording the threat template in a fork: only requests that changed reach the generator,
    every other call is read from the recording."""
    golems = _golems()
    settings = CycleSettings(budget=CycleBudget(tier="hardened"))
    cycle = InProcessExecutor(golems, OfflineGenerator(seed=3), settings=settings).run_cycle("g").cycle_id
    recorded = [r.event for r in golems.history("g") if isinstance(r.event, GenerationRecorded)]
    template = DEFAULT_PROMPTS["threat"].replace("Simulate a threat", "Imagine a threat")
    assert template != DEFAULT_PROMPTS["threat"]
    forked = CycleSettings(
        budget=settings.budget, engines=EngineSettings(prompts=PromptSet(overrides={"threat": template}))
    )
    branch = open_store(f"sqlite:///{tmp_path}/branch.db")
    report = fork_cycle(golems.store, cycle, forked, generator=OfflineGenerator(seed=3), into=branch, seed=3)
    threats = [g for g in recorded if g.task == "threat"]
    assert len(threats) == report.model_calls > 0
    assert len(recorded) - len(threats) == report.recorded_calls
    assert {d.call_key for d in report.divergences if d.kind == "request"} == {g.call_key for g in threats}


def test_a_fork_refuses_the_live_store_or_a_used_branch() -> None:
    """The branch must be a new, empty store: forking into the live store (or any store with
    events) is refused before anything is written."""
    golems = _golems()
    cycle = InProcessExecutor(golems, OfflineGenerator(seed=3)).run_cycle("g").cycle_id
    head = golems.store.head()
    with pytest.raises(InputError) as caught:
        fork_cycle(golems.store, cycle, CycleSettings(), generator=OfflineGenerator(), into=golems.store, seed=3)
    assert "the branch store memory:// must be a new, empty store, not the live one" == str(caught.value)
    assert head == golems.store.head()


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.endswith(("-wal", "-shm"))
    }


def test_fork_and_diff_on_the_command_line(tmp_path: Path) -> None:
    """`oneiros fork CYCLE --into URL --prompts F` then `oneiros diff CYCLE CYCLE --other URL`:
    the live folder (log, projections) is byte-identical before and after, only the threat calls
    reach the generator, the cycle itself still re-runs identical, and the diff lists what the
    reworded prompt changed."""
    live = tmp_path / "live"
    live.mkdir()
    url = f"sqlite:///{live}/events.db"
    env = {**os.environ, "ONEIROS_SPANS": "off", "COLUMNS": "400"}

    def oneiros(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli([*args], env=env, cwd=tmp_path)

    made = oneiros("dream", "--sample", "--store", url, "--tier", "hardened", "--json")
    assert 0 == made.returncode, made.stderr
    cycle = json.loads(made.stdout)["cycle_id"]
    assert 0 == oneiros("staging", "--store", url, "--json").returncode
    before = _digest(live)
    assert {"events.db", "events.projections.db"} <= set(before)
    (tmp_path / "p.toml").write_text(
        '[prompts]\nthreat = "Imagine $kind hitting:\\n$episodes\\nReply with JSON only: '
        '{\\"scenario\\": \\"s\\", \\"response\\": \\"r\\", \\"severity\\": 0.5}"\n'
    )
    branch = f"sqlite:///{tmp_path}/branch.db"
    forked = oneiros(
        "fork",
        cycle,
        "--store",
        url,
        "--into",
        branch,
        "--tier",
        "hardened",
        "--prompts",
        str(tmp_path / "p.toml"),
        "--json",
    )
    assert 0 == forked.returncode, forked.stderr
    report = json.loads(forked.stdout)
    assert report["model_calls"] > 0
    assert report["recorded_calls"] > 0
    assert before == _digest(live)
    same = oneiros("rerun", cycle, "--store", url, "--tier", "hardened", "--json")
    assert (0, True) == (same.returncode, json.loads(same.stdout)[0]["identical"])
    live_store = open_store(url, create=False)
    threats = [r.event for r in live_store.read_all(types=[GenerationRecorded]) if r.event.task == "threat"]
    live_store.close()
    assert len(threats) == report["model_calls"]
    shown = oneiros("diff", cycle, cycle, "--store", url, "--other", branch, "--json")
    assert 0 == shown.returncode, shown.stderr
    diff = json.loads(shown.stdout)
    assert not diff["same"]
    assert diff["only_a"]["staged"] or diff["changed"]
    text = oneiros("diff", cycle, cycle, "--store", url, "--other", branch)
    assert text.stdout.startswith(f"--- {cycle} ({url})\n+++ {cycle} ({branch})\n")


def test_a_fork_spends_only_what_the_live_golem_left_under_its_month_cap(chat_server: ChatServer) -> None:
    """The live golem spent most of its month in the recorded cycle and a later one; a fork asking
    another (priced) model for every call stops at the month cap counting that live spend, so live
    and fork together never pass it."""
    price = {"m-a": ModelPrice(2.0, 8.0), "m-b": ModelPrice(2.0, 8.0)}
    uncapped = CycleBudget(tier="hardened", prices=price, cycle_usd=None, window_usd=None, month_usd=None)
    golems = _golems()
    recorded_with = _openai(chat_server, {"core": "m-a", "hardened": "m-a"}, {})
    executor = InProcessExecutor(golems, recorded_with, settings=CycleSettings(budget=uncapped))
    first = executor.run_cycle("g").cycle_id
    executor.run_cycle("g")
    live_usd = Ledger.from_records(golems.history("g")).spent().usd
    one_cycle = Ledger.from_records(golems.history("g")).spent(cycle_id=first).usd
    month = live_usd + one_cycle / 3  # room for about a third of another cycle
    capped = CycleSettings(budget=msgspec.structs.replace(uncapped, month_usd=month))
    branch = open_store("memory://")
    other = _openai(chat_server, {"core": "m-b", "hardened": "m-b"}, {})
    report = fork_cycle(golems.store, first, capped, generator=other, into=branch, seed=3)
    forked = Ledger.from_records(branch.read_stream("g")).spent(cycle_id=first).usd
    assert 0 < forked <= month - live_usd + 1e-9
    assert [e for e in (r.event for r in branch.read_stream("g")) if isinstance(e, BudgetExhausted)]
    assert report.model_calls > 0
