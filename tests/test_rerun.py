"""Re-running past cycles with every response read from the log: identical with no model call, or
the exact call, phase and reason of a divergence; recorded responses keyed by request hash."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, SequentialIds, open_store
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.events._types import DreamStart, GenerationRecorded
from oneiros.generators._factory import make_generator
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._openai import OpenAIGenerator
from oneiros.generators._protocol import Generation, GenerationRequest, RequestShape, request_hash
from oneiros.lab._rerun import rerun_cycle
from oneiros.runtime._budget import phase_budget
from oneiros.runtime._metered import matches
from oneiros.runtime._phase import run_phase
from oneiros.settings._cycle import CycleBudget, CycleSettings, EngineSettings, NremSettings
from oneiros.settings._generator import GeneratorSettings, OpenAISettings
from oneiros.settings._prompts import DEFAULT_PROMPTS, PromptSet
from oneiros.store._history import export_history, import_history
from oneiros.store._store import EventStore
from tests.chat_server import HARDENED, ChatServer, sample_golems
from tests.cli_runner import run_cli

HISTORIES = Path(__file__).parent / "histories"


def _golems(seed: int = 3) -> Golems:
    return sample_golems(seed)


def _cycles(store: EventStore) -> list[str]:
    return [r.event.cycle_id for r in store.read_all(types=[DreamStart]) if isinstance(r.event, DreamStart)]


def _snapshot(store: EventStore, path: Path) -> bytes:
    export_history(store, path)
    return path.read_bytes()


def _openai(chat_server: ChatServer, **overrides: object) -> OpenAIGenerator:
    fields: dict[str, object] = {"models": {"core": "m-core", "hardened": "m-hard"}, "phase_models": {"rem": "m-rem"}}
    settings = OpenAISettings(base_url=chat_server.url, retries=0, **{**fields, **overrides})  # type: ignore[arg-type]
    return OpenAIGenerator(settings, env={"OPENAI_API_KEY": "sk-test"})


def test_every_offline_cycle_reruns_identical_without_touching_the_store(tmp_path: Path) -> None:
    """Three offline cycles (the later ones read the earlier ones' staging): each re-runs identical,
    every call read from the log, and the store is byte-identical before and after."""
    golems = _golems()
    executor = InProcessExecutor(golems, OfflineGenerator(seed=3))
    for _ in range(3):
        executor.run_cycle("g")
    before = _snapshot(golems.store, tmp_path / "before.jsonl")
    reports = [rerun_cycle(golems.store, c, shape_of=OfflineGenerator(seed=3), seed=3) for c in _cycles(golems.store)]
    assert [(True, "complete", 0)] * 3 == [(r.identical, r.ended, r.model_calls) for r in reports]
    assert all(r.recorded_calls > 10 for r in reports)
    assert before == _snapshot(golems.store, tmp_path / "after.jsonl")


def test_a_golden_v1_log_is_lifted_and_its_rerun_names_the_prompt_change() -> None:
    """generations_v1.jsonl holds GenerationRecorded v1 (no request hash), written before the
    episode-line prompt format changed. Lifted by the upcaster, a v1 record answers a request
    whose prompt, temperature and max_tokens are the recorded ones, and nothing else; re-run by
    today's engines, the cycle diverges at its first call, naming the prompt change, with no model call."""
    store = open_store("memory://")
    import_history(store, HISTORIES / "generations_v1.jsonl")
    recorded = [r.event for r in store.read_all() if isinstance(r.event, GenerationRecorded)]
    assert 14 == len(recorded)
    assert {""} == {g.request_hash for g in recorded}
    old = recorded[0]
    same = RequestShape(
        model="offline-core",
        task="partial",
        system="",
        prompt=old.prompt,
        fragments=(),
        temperature=old.temperature,
        max_tokens=old.max_tokens,
    )
    assert matches(old, same, request_hash(same))
    changed = msgspec.structs.replace(same, prompt=old.prompt + " ")
    assert not matches(old, changed, request_hash(changed))
    report = rerun_cycle(store, "cycle-v1", CycleSettings(), shape_of=OfflineGenerator(seed=5), seed=5)
    assert report.first is not None
    assert ("request", "hypnagogic_onset", old.call_key, 0) == (
        report.first.kind,
        report.first.phase,
        report.first.call_key,
        report.model_calls,
    )
    assert report.first.reason.startswith("request hash changed: prompt changed at character ")


def test_a_cycle_recorded_over_http_reruns_with_zero_requests(chat_server: ChatServer) -> None:
    """Cycles recorded with the OpenAI-compatible generator re-run identical while the live server
    sees not one request."""
    chat_server.reset()
    golems = _golems()
    executor = InProcessExecutor(golems, _openai(chat_server), settings=HARDENED)
    executor.run_cycle("g")
    executor.run_cycle("g")
    made = len(chat_server.requests)
    assert made > 20
    for cycle in _cycles(golems.store):
        report = rerun_cycle(golems.store, cycle, HARDENED, shape_of=_openai(chat_server), seed=3)
        assert (True, 0) == (report.identical, report.model_calls), report.divergences
    assert made == len(chat_server.requests)


def test_a_changed_prompt_template_diverges_at_its_first_call() -> None:
    """Rewording the counterfactual template: the re-run reports a request divergence at the first
    counterfactual call of the recording, in REM, naming the prompt change; the calls before it
    were all read from the log."""
    golems = _golems()
    cycle = InProcessExecutor(golems, OfflineGenerator(seed=3)).run_cycle("g").cycle_id
    template = DEFAULT_PROMPTS["counterfactual"].replace("Key decision:", "The decision:")
    changed = CycleSettings(engines=EngineSettings(prompts=PromptSet(overrides={"counterfactual": template})))
    report = rerun_cycle(golems.store, cycle, changed, shape_of=OfflineGenerator(seed=3), seed=3)
    first_counterfactual = next(
        r.event.call_key
        for r in golems.history("g")
        if isinstance(r.event, GenerationRecorded) and r.event.task == "counterfactual"
    )
    assert report.first is not None
    assert ("request", "rem", first_counterfactual) == (report.first.kind, report.first.phase, report.first.call_key)
    assert report.first.reason.startswith("request hash changed: prompt changed at character 0: 'Key decision: ")
    assert 0 == report.model_calls
    assert not report.identical


def test_a_changed_model_or_temperature_setting_is_named(chat_server: ChatServer) -> None:
    """Another model for REM, or a temperature override: the divergence says which setting changed."""
    chat_server.reset()
    golems = _golems()
    cycle = InProcessExecutor(golems, _openai(chat_server), settings=HARDENED).run_cycle("g").cycle_id
    made = len(chat_server.requests)
    other_model = rerun_cycle(golems.store, cycle, HARDENED, shape_of=_openai(chat_server, phase_models={}), seed=3)
    assert other_model.first is not None
    assert "rem" == other_model.first.phase
    assert "request hash changed: model changed from 'm-rem' to 'm-hard'" == other_model.first.reason
    hotter = rerun_cycle(golems.store, cycle, HARDENED, shape_of=_openai(chat_server, temperature=1.9), seed=3)
    assert hotter.first is not None
    assert "hypnagogic_onset" == hotter.first.phase
    assert hotter.first.reason.startswith("request hash changed: temperature changed from 1.2 to 1.9")
    assert made == len(chat_server.requests)


class _Killed(BaseException):
    """A worker killed mid-call: nothing after the call runs."""


class _DiesAt(OfflineGenerator):
    def __init__(self, call: int) -> None:
        super().__init__(seed=3)
        self.left = call

    def generate(self, request: GenerationRequest) -> Generation:
        self.left -= 1
        if self.left == 0:
            raise _Killed
        return super().generate(request)


@pytest.mark.parametrize("reworded", [False, True])
def test_a_resumed_phase_asks_again_only_when_its_request_changed(reworded: bool) -> None:
    """Onset killed at its third call, then resumed: with the same prompts its two recorded
    partials are read back; with the partial template reworded they are asked again and the new
    answers recorded, never the old text reused."""
    golems = _golems()
    budget = phase_budget(CycleBudget(), "stable", "hypnagogic_onset")
    cycle = golems.fall_asleep("g", "owner", budget_tokens=budget)
    with pytest.raises(_Killed):
        run_phase(golems, "g", cycle, "hypnagogic_onset", _DiesAt(3), CycleSettings())
    partial = DEFAULT_PROMPTS["partial"].replace("Drifting toward sleep", "Falling asleep")
    settings = (
        CycleSettings(engines=EngineSettings(prompts=PromptSet(overrides={"partial": partial})))
        if reworded
        else CycleSettings()
    )
    resumed = run_phase(golems, "g", cycle, "hypnagogic_onset", OfflineGenerator(seed=3), settings)
    assert (0 if reworded else 2) == resumed.reused_generations
    records = [r.event for r in golems.history("g") if isinstance(r.event, GenerationRecorded)]
    first_two = {g.call_key for g in records[:2]}
    kept = [g for g in records if g.call_key in first_two]
    assert (4 if reworded else 2) == len(kept)
    if reworded:
        assert all(g.prompt.startswith("Falling asleep") for g in kept[2:])


def test_an_interrupted_cycle_reruns_up_to_its_interrupt() -> None:
    """A cycle woken by its owner in REM re-runs onset and NREM, then the same interrupt: identical."""
    golems = _golems()
    settings = CycleSettings()
    generator = OfflineGenerator(seed=3)
    cycle = golems.fall_asleep("g", "owner", budget_tokens=phase_budget(settings.budget, "stable", "hypnagogic_onset"))
    run_phase(golems, "g", cycle, "hypnagogic_onset", generator, settings)
    run_phase(golems, "g", cycle, "nrem", generator, settings)
    golems.interrupt("g", "owner", "woken for a trade")
    report = rerun_cycle(golems.store, cycle, settings, shape_of=generator, seed=3)
    assert (True, "interrupted", ("hypnagogic_onset", "nrem")) == (report.identical, report.ended, report.phases)


def test_rerun_on_the_command_line(tmp_path: Path) -> None:
    """`oneiros rerun --all` after two `oneiros dream`: exit 0 and identical; with a prompts file
    that rewords the pattern template, exit 1 and the first divergence at the first NREM call."""
    url = f"sqlite:///{tmp_path}/e.db"
    env = {**os.environ, "ONEIROS_SPANS": "off", "COLUMNS": "400"}

    def oneiros(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli([*args, "--store", url], env=env, cwd=tmp_path)

    for _ in range(2):
        assert 0 == oneiros("dream", "--sample", "--json").returncode
    same = oneiros("rerun", "--all", "--json")
    assert 0 == same.returncode, same.stderr
    reports = json.loads(same.stdout)
    assert [(True, 0)] * 2 == [(r["identical"], r["model_calls"]) for r in reports]
    (tmp_path / "p.toml").write_text(
        '[prompts]\npattern = "Which pattern?\\n$episodes\\nReply with JSON only: {\\"pattern\\": \\"x\\"}"\n'
    )
    first_cycle = reports[0]["cycle_id"]
    changed = oneiros("rerun", first_cycle, "--prompts", str(tmp_path / "p.toml"))
    assert 1 == changed.returncode, changed.stderr
    line = changed.stdout.splitlines()[0]
    assert line.startswith(
        f"cycle {first_cycle} of golem: diverges at call {first_cycle}:nrem:0:forward in nrem: "
        "request hash changed: prompt changed at character 0: 'You are reviewing"
    )
    missing = oneiros("rerun", "nope")
    assert (2, f"error: no cycle matches 'nope' in the log at {url}\n") == (missing.returncode, missing.stderr)


def test_generator_settings_choose_the_generator() -> None:
    """cycle.generator names the generator: offline by default, openai with its settings."""

    assert isinstance(make_generator(GeneratorSettings(), seed=4), OfflineGenerator)
    chosen = make_generator(GeneratorSettings(kind="openai", openai=OpenAISettings(base_url="http://127.0.0.1:9/v1")))
    assert isinstance(chosen, OpenAIGenerator)
    assert "http://127.0.0.1:9/v1" == chosen.settings.base_url


def test_host_facts_recorded_mid_cycle_are_replayed_where_they_fell() -> None:
    """Episodes recorded while the golem dreams (between onset and NREM) reach the re-run at the
    same point, so NREM sees them again and the cycle re-runs identical."""
    golems = _golems()
    settings = CycleSettings()
    generator = OfflineGenerator(seed=3)
    cycle = golems.fall_asleep("g", "owner", budget_tokens=phase_budget(settings.budget, "stable", "hypnagogic_onset"))
    run_phase(golems, "g", cycle, "hypnagogic_onset", generator, settings)
    late = [
        msgspec.structs.replace(e, tick=e.tick + 10_000, summary=f"late: {e.summary}")
        for e in load_episodes(sample_episodes_path())[:5]
    ]
    golems.record_episodes("g", late)
    for phase in ("nrem", "rem", "integration", "hypnopompic_return"):
        run_phase(golems, "g", cycle, phase, generator, settings)
    report = rerun_cycle(golems.store, cycle, settings, shape_of=generator, seed=3)
    assert (True, "complete", ()) == (report.identical, report.ended, report.divergences)


def test_a_changed_engine_setting_diverges_at_the_first_event_it_changes() -> None:
    """A larger replay strength step asks the same questions but writes other strengths: the first
    divergence is NREM's first ReplayStrengthened (a setting or engine change, not a request),
    and it comes before anything it causes later in the cycle."""
    golems = _golems()
    cycle = InProcessExecutor(golems, OfflineGenerator(seed=3)).run_cycle("g").cycle_id
    strict = CycleSettings(engines=EngineSettings(nrem=NremSettings(strength_delta=0.75)))
    report = rerun_cycle(golems.store, cycle, strict, shape_of=OfflineGenerator(seed=3), seed=3)
    assert report.first is not None
    assert ("event", "nrem", "ReplayStrengthened differs in delta, strength") == (
        report.first.kind,
        report.first.phase,
        report.first.reason,
    )
    indexes = [d.index for d in report.divergences if d.index is not None]
    assert sorted(indexes) == indexes


def test_rerun_reads_every_backend(store: EventStore) -> None:
    """Cycles recorded in a memory, SQLite or PostgreSQL store re-run identical from it."""
    deps = Deps(clock=FixedClock(datetime(2026, 11, 3, tzinfo=UTC)), ids=SequentialIds(), seed=3)
    golems = Golems(store, deps=deps)
    golems.create("g")
    golems.record_episodes("g", load_episodes(sample_episodes_path())[:20])
    executor = InProcessExecutor(golems, OfflineGenerator(seed=3))
    executor.run_cycle("g")
    executor.run_cycle("g")
    offline = OfflineGenerator(seed=3)
    reports = [rerun_cycle(store, c, CycleSettings(), shape_of=offline, seed=3) for c in _cycles(store)]
    assert [True, True] == [r.identical for r in reports]


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), episodes=st.integers(3, 40), tier=st.sampled_from(["core", "hardened"]))
def test_any_offline_cycle_reruns_identical(seed: int, episodes: int, tier: str) -> None:
    """Whatever the seed, the number of episodes and the tier, a recorded offline cycle re-runs
    identical with every call read from the log: the cycle is a function of its log and settings."""
    store = open_store("memory://")
    deps = Deps(clock=FixedClock(datetime(2026, 11, 3, tzinfo=UTC)), ids=SequentialIds(), seed=seed)
    golems = Golems(store, deps=deps)
    golems.create("g")
    golems.record_episodes("g", load_episodes(sample_episodes_path())[:episodes])
    chosen = CycleSettings(budget=CycleBudget(tier=tier))  # type: ignore[arg-type]
    cycle = InProcessExecutor(golems, OfflineGenerator(seed=seed), settings=chosen).run_cycle("g").cycle_id
    report = rerun_cycle(store, cycle, chosen, shape_of=OfflineGenerator(seed=seed), seed=seed)
    assert (True, (), 0) == (report.identical, report.divergences, report.model_calls)


def test_rerun_says_how_far_a_cycle_that_did_not_complete_was_compared(tmp_path: Path) -> None:
    """``oneiros rerun`` of an interrupted cycle says it is identical up to its interrupt, and of a
    cycle still under way identical so far: both said only "identical", as a complete cycle does."""
    from typer.testing import CliRunner

    from oneiros.cli import app

    url = f"sqlite:///{tmp_path}/events.db"
    with open_store(url, create=True) as store:
        golems = Golems(store)
        for golem in ("cut", "on"):
            golems.create(golem)
            golems.record_episodes(golem, load_episodes(sample_episodes_path())[:5])
        cut = golems.fall_asleep("cut", "owner", budget_tokens=1000)
        golems.interrupt("cut", "owner", "woken")
        on = golems.fall_asleep("on", "owner", budget_tokens=1000)
    said = CliRunner().invoke(app, ["rerun", cut, on, "--store", url])
    assert 0 == said.exit_code, said.output
    expected = [
        f"cycle {cut} of cut: identical up to its interrupt (3 events, 0 calls read from the log, 0 model calls)",
        f"cycle {on} of on: identical so far (still under way) (2 events, 0 calls read from the log, 0 model calls)",
    ]
    assert expected == said.output.splitlines()
