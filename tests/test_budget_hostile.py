"""Budgets against a lying chat_server: usage over the reservation, completions longer than max_tokens
can make, 2 MB bodies, 500s, no key. No cap is ever passed; overruns and failures are recorded;
caps are validated when loaded; a reservation orphaned by a kill is released."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oneiros import Golems, InProcessExecutor, open_store
from oneiros._errors import InvalidSetting
from oneiros.config._load import load_config
from oneiros.events._content import BudgetOverrun, BudgetReserved, GenerationFailed
from oneiros.events._types import Event, GenerationRecorded
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._openai import OpenAIGenerator
from oneiros.generators._protocol import Generation, GenerationRequest
from oneiros.runtime._budget import Ledger, phase_budget, phase_money
from oneiros.runtime._phase import run_phase
from oneiros.settings._cycle import CycleBudget, CycleSettings, ModelPrice
from oneiros.settings._generator import OpenAISettings
from oneiros.settings._phases import PHASES
from tests.chat_server import ChatServer, sample_golems
from tests.cli_runner import run_cli

BUDGET = CycleBudget(
    tier="hardened",
    hardened_cycle_tokens=9_000,
    cycle_usd=0.05,
    window_usd=None,
    month_usd=1.0,
    prices={"m-core": ModelPrice(2.0, 8.0)},
)
SETTINGS = CycleSettings(budget=BUDGET)
KEY = "sk-secret-0123456789"


def _generator(chat_server: ChatServer, **overrides: object) -> OpenAIGenerator:
    settings = OpenAISettings(
        base_url=chat_server.url,
        models={"core": "m-core", "hardened": "m-core"},
        timeout_s=2.0,
        retries=0,
        max_body_bytes=262_144,
        **overrides,  # type: ignore[arg-type]
    )
    return OpenAIGenerator(settings, env={"OPENAI_API_KEY": KEY})


def _golems() -> Golems:
    return sample_golems(2)


def _events(golems: Golems) -> list[Event]:
    return [r.event for r in golems.history("g")]


def _assert_no_cap_passed(golems: Golems, cycle_id: str) -> None:
    ledger = Ledger.from_records(golems.history("g"))
    spent = ledger.spent(cycle_id=cycle_id)
    assert spent.tokens <= BUDGET.tokens()
    assert spent.usd <= (BUDGET.cycle_usd or 0) + 1e-9
    assert BUDGET.month_usd is not None
    assert ledger.spent().usd <= BUDGET.month_usd + 1e-9
    for phase in PHASES.names:
        spent_in = ledger.spent(cycle_id=cycle_id, phase=phase)
        assert spent_in.tokens <= phase_budget(BUDGET, "stable", phase)
        assert spent_in.usd <= (phase_money(BUDGET, "stable", phase) or 0.0) + 1e-9


BEHAVIOURS = st.lists(st.sampled_from(["ok", "ok", "overreport", "oversize", "huge", "500"]), max_size=30)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=BEHAVIOURS)
def test_no_cap_is_ever_passed_whatever_the_server_claims(chat_server: ChatServer, script: list[str]) -> None:
    """Over any mix of honest answers, over-reported usage, completions longer than max_tokens can
    make, 2 MB bodies and 500s: the cycle, each phase and the month stay under their caps; every
    lying answer that was served is one BudgetOverrun, after which its phase makes no further call;
    every 500 and oversized body is one GenerationFailed; nothing kept is longer than its max_tokens allows."""
    chat_server.reset(script)
    golems = _golems()
    result = InProcessExecutor(golems, _generator(chat_server), settings=SETTINGS).run_cycle("g")
    _assert_no_cap_passed(golems, result.cycle_id)
    events = _events(golems)
    served = chat_server.served
    overruns = [e for e in events if isinstance(e, BudgetOverrun)]
    failed = [e for e in events if isinstance(e, GenerationFailed)]
    assert served.count("overreport") + served.count("oversize") == len(overruns)
    assert served.count("500") + served.count("huge") == len(failed)
    for overrun in overruns:
        later = events[events.index(overrun) + 1 :]
        assert not [e for e in later if isinstance(e, BudgetReserved) and e.phase == overrun.phase]
    for g in (e for e in events if isinstance(e, GenerationRecorded)):
        assert len(g.text.encode()) <= g.max_tokens * BUDGET.response_bytes_per_token


def test_a_completion_longer_than_max_tokens_is_cut_and_the_overrun_stops_the_phase(chat_server: ChatServer) -> None:
    """A 200 whose completion is far longer than max_tokens with small reported usage: the text is
    kept to max_tokens x response_bytes_per_token bytes, the call is charged its whole reservation,
    and a BudgetOverrun names the claim; the phase asks nothing more."""
    chat_server.reset(["oversize"])
    golems = _golems()
    result = InProcessExecutor(golems, _generator(chat_server), settings=SETTINGS).run_cycle("g")
    events = _events(golems)
    overrun = next(e for e in events if isinstance(e, BudgetOverrun))
    recorded = next(e for e in events if isinstance(e, GenerationRecorded) and e.call_key == overrun.call_key)
    reserved = next(e for e in events if isinstance(e, BudgetReserved) and e.call_key == overrun.call_key)
    limit = recorded.max_tokens * 16
    assert (limit, 5) == (overrun.kept_bytes, overrun.reported_tokens_out)
    assert overrun.response_bytes > limit
    assert f"a completion of {overrun.response_bytes} bytes, more than max_tokens allows ({limit})" == overrun.reason
    assert (reserved.tokens, reserved.cost_usd) == (recorded.tokens_in + recorded.tokens_out, recorded.cost_usd)
    assert "hypnagogic_onset" == overrun.phase
    onset = [e for e in events if isinstance(e, BudgetReserved) and e.phase == "hypnagogic_onset"]
    assert 1 == len(onset)
    assert result.complete is not None


def test_a_2mb_completion_is_never_stored(chat_server: ChatServer) -> None:
    """A 2 MB body (small reported usage) is read no further than max_body_bytes: the call fails
    with that reason and nothing of the body reaches the log."""
    chat_server.reset(["huge"])
    golems = _golems()
    InProcessExecutor(golems, _generator(chat_server), settings=SETTINGS).run_cycle("g")
    failed = next(e for e in _events(golems) if isinstance(e, GenerationFailed))
    assert "the response body is over 262144 bytes" in failed.reason
    assert all(len(r.event.text) < 10_000 for r in golems.history("g") if isinstance(r.event, GenerationRecorded))


def test_usage_over_the_reservation_is_clamped_and_recorded(chat_server: ChatServer) -> None:
    """Usage ten times max_tokens: the settlement is the reservation, the claim is in the BudgetOverrun."""
    chat_server.reset(["overreport"])
    golems = _golems()
    InProcessExecutor(golems, _generator(chat_server), settings=SETTINGS).run_cycle("g")
    events = _events(golems)
    overrun = next(e for e in events if isinstance(e, BudgetOverrun))
    recorded = next(e for e in events if isinstance(e, GenerationRecorded) and e.call_key == overrun.call_key)
    assert 10 * recorded.max_tokens == overrun.reported_tokens_out
    assert overrun.reserved_tokens == recorded.tokens_in + recorded.tokens_out
    assert overrun.reason.startswith("reported ")


def test_with_no_api_key_every_call_fails_without_a_request_and_is_recorded(chat_server: ChatServer) -> None:
    """No key in the environment: each call is a GenerationFailed naming the missing variable, no
    request leaves the process, and the phases report their failed calls."""
    chat_server.reset()
    golems = _golems()
    generator = OpenAIGenerator(OpenAISettings(base_url=chat_server.url, models={"hardened": "m-core"}), env={})
    result = InProcessExecutor(golems, generator, settings=SETTINGS).run_cycle("g")
    failed = [e for e in _events(golems) if isinstance(e, GenerationFailed)]
    assert failed
    assert {"no API key: $OPENAI_API_KEY is not set"} == {f.reason.split(": ", 1)[1] for f in failed}
    assert [] == chat_server.requests
    assert len(failed) == sum(p.failed_calls for p in result.phases)
    assert not [e for e in _events(golems) if isinstance(e, GenerationRecorded)]


def test_the_api_key_never_reaches_the_log_even_when_the_server_echoes_it(chat_server: ChatServer) -> None:
    """A 401 whose body repeats the bearer key: the failure names the status only, and no stored
    event anywhere holds the key."""
    chat_server.reset(["401-echo"] * 200)
    golems = _golems()
    InProcessExecutor(golems, _generator(chat_server), settings=SETTINGS).run_cycle("g")
    failed = [e for e in _events(golems) if isinstance(e, GenerationFailed)]
    assert failed
    assert f"HTTP 401 from {chat_server.url}" == failed[0].reason.split(": ", 1)[1]
    assert not [row for row in golems.store.read_stored() if KEY.encode() in bytes(row[4])]


def test_a_nan_cap_is_refused_when_loaded_naming_the_key(tmp_path: Path) -> None:
    """A NaN (or negative, or infinite) cap in the config file is an InvalidSetting naming the key and the file."""
    path = tmp_path / "oneiros.toml"
    path.write_text("[cycle.budget]\nmonth_usd = nan\n")
    with pytest.raises(InvalidSetting) as caught:
        load_config(path, environ={})
    assert (
        f"invalid setting cycle.budget.month_usd = nan (from {path}): expected a finite number >= 0 or none (no cap)"
        == str(caught.value)
    )
    path.write_text("[cycle.budget]\ncycle_tokens = -5\n")
    with pytest.raises(InvalidSetting) as caught:
        load_config(path, environ={})
    assert "cycle.budget.cycle_tokens" == caught.value.key
    path.write_text("[cycle.budget.prices.m-core]\ninput_per_mtok = -1.0\noutput_per_mtok = 2.0\n")
    with pytest.raises(InvalidSetting) as caught:
        load_config(path, environ={})
    assert "cycle.budget.prices.m-core.input_per_mtok" == caught.value.key
    path.write_text("")
    with pytest.raises(InvalidSetting) as caught:
        load_config(path, environ={"ONEIROS_CYCLE__BUDGET__DAY_USD": "inf"})
    assert ("cycle.budget.day_usd", "env ONEIROS_CYCLE__BUDGET__DAY_USD") == (caught.value.key, caught.value.source)


def test_a_nan_cap_in_the_environment_fails_the_cli_in_one_line(tmp_path: Path) -> None:
    """`oneiros rerun` with ONEIROS_CYCLE__BUDGET__CYCLE_USD=nan exits 2 with one line naming the key and variable."""
    env = {**os.environ, "ONEIROS_CYCLE__BUDGET__CYCLE_USD": "nan", "COLUMNS": "400"}
    result = run_cli(["rerun", "--all", "--store", f"sqlite:///{tmp_path}/e.db"], env=env, cwd=tmp_path)
    assert 2 == result.returncode
    assert (
        "error: invalid setting cycle.budget.cycle_usd = nan (from env ONEIROS_CYCLE__BUDGET__CYCLE_USD): "
        "expected a finite number >= 0 or none (no cap)\n" == result.stderr
    )


class _Killed(BaseException):
    """What a SIGKILL looks like to the code after it: nothing runs past the call."""


class _DiesOnce(OfflineGenerator):
    """Killed at its ``at``-th call, once; the offline generator otherwise."""

    def __init__(self, at: int = 1) -> None:
        super().__init__(seed=2)
        self.left = at

    def generate(self, request: GenerationRequest) -> Generation:
        self.left -= 1
        if self.left == 0:
            raise _Killed
        return super().generate(request)


def test_a_reservation_orphaned_by_a_kill_is_released_when_the_phase_resumes() -> None:
    """A worker killed mid-call leaves a BudgetReserved with no settlement; it counts while the
    call may still run, and the resumed phase's new reservation of the same call releases it."""
    golems = _golems()
    cycle = golems.fall_asleep("g", "owner", budget_tokens=phase_budget(BUDGET, "stable", "hypnagogic_onset"))
    dying = _DiesOnce()
    with pytest.raises(_Killed):
        run_phase(golems, "g", cycle, "hypnagogic_onset", dying, CycleSettings())
    orphan = Ledger.from_records(golems.history("g"))
    assert 1 == orphan.held()
    assert orphan.spent(cycle_id=cycle).tokens > 0
    run_phase(golems, "g", cycle, "hypnagogic_onset", dying, CycleSettings())
    resumed = Ledger.from_records(golems.history("g"))
    settled = sum(
        e.tokens_in + e.tokens_out for e in _events(golems) if isinstance(e, GenerationRecorded | GenerationFailed)
    )
    assert 0 == resumed.held()
    assert settled == resumed.spent(cycle_id=cycle).tokens


def test_a_reservation_orphaned_by_a_kill_is_released_when_the_cycle_is_abandoned() -> None:
    """The orphaned reservation of a cycle that is then interrupted (given up) is released."""
    golems = _golems()
    cycle = golems.fall_asleep("g", "owner", budget_tokens=phase_budget(BUDGET, "stable", "hypnagogic_onset"))
    with pytest.raises(_Killed):
        run_phase(golems, "g", cycle, "hypnagogic_onset", _DiesOnce(), CycleSettings())
    golems.interrupt("g", "failure", "worker lost")
    ledger = Ledger.from_records(golems.history("g"))
    assert (0, 0) == (ledger.held(), ledger.spent(cycle_id=cycle).tokens)


def test_a_cli_cycle_against_a_lying_server_records_the_overrun_and_passes_no_cap(
    chat_server: ChatServer, tmp_path: Path
) -> None:
    """The user's path: `oneiros dream --generator openai --base-url` (key from the environment)
    against a server over-reporting usage; the log holds the overrun and the cycle's spend stays
    under its cap."""
    chat_server.reset(["overreport", "ok", "oversize"])
    url = f"sqlite:///{tmp_path}/e.db"
    env = {**os.environ, "OPENAI_API_KEY": KEY, "ONEIROS_SPANS": "off"}
    args = ["dream", "--sample", "--store", url, "--generator", "openai", "--base-url", chat_server.url]
    result = run_cli([*args, "--tier", "hardened", "--json"], env=env, cwd=tmp_path)
    assert 0 == result.returncode, result.stderr
    cycle_id = json.loads(result.stdout)["cycle_id"]
    store = open_store(url)
    events = [r.event for r in store.read_stream("golem")]
    assert 2 == len([e for e in events if isinstance(e, BudgetOverrun)])
    assert KEY not in result.stdout + result.stderr
    ledger = Ledger.from_records(store.read_stream("golem"))
    assert ledger.spent(cycle_id=cycle_id).tokens <= CycleBudget(tier="hardened").tokens()


def test_a_resumed_call_is_not_refused_for_its_own_orphaned_reservation() -> None:
    """Onset's budget is the least that admits its calls in turn; a kill at the call where it binds
    leaves that call's worst case held. The resumed phase makes every call: the orphan is released
    when its call is made again instead of counting twice against the phase cap."""
    probe = _golems()
    cycle = probe.fall_asleep("g", "owner", budget_tokens=100_000)
    run_phase(probe, "g", cycle, "hypnagogic_onset", OfflineGenerator(seed=2), CycleSettings())
    events = _events(probe)
    settled = [e.tokens_in + e.tokens_out for e in events if isinstance(e, GenerationRecorded)]
    reserved = [e.tokens for e in events if isinstance(e, BudgetReserved)]
    # The least budget that admits every call in turn (each call's worst case over what the ones
    # before it cost), and the call where it binds: killed there, its orphan counted twice would refuse it.
    needs = [sum(settled[:i]) + reserved[i] for i in range(len(reserved))]
    budget = max(needs)
    binding = needs.index(budget)
    golems = _golems()
    cycle = golems.fall_asleep("g", "owner", budget_tokens=budget)
    with pytest.raises(_Killed):
        run_phase(golems, "g", cycle, "hypnagogic_onset", _DiesOnce(at=binding + 1), CycleSettings())
    resumed = run_phase(golems, "g", cycle, "hypnagogic_onset", OfflineGenerator(seed=2), CycleSettings())
    assert not resumed.exhausted
    assert len(settled) == len([e for e in _events(golems) if isinstance(e, GenerationRecorded)])
