"""A cycle that produced nothing is never a success: every call failed (a server of 500s, no API
key) or nothing was staged. The cycle ends flagged with DreamEmpty and the reason; CycleResult,
observers, the CLI (exit 1, one line), the server's cycle and runs routes and the journal say so."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, cast

import msgspec
import pytest

from oneiros import Golems, InProcessExecutor, open_store
from oneiros.app._shapes import Run
from oneiros.config._load import load_config
from oneiros.events._content import DreamStaged, DreamSuppressed, GenerationFailed
from oneiros.events._outcome import DreamEmpty
from oneiros.events._types import EpisodeRecorded, ModeChanged
from oneiros.fsm._service import replay
from oneiros.generators._openai import OpenAIGenerator
from oneiros.projections._journal import journal_markdown
from oneiros.server._auth import LOCAL
from oneiros.server._models import CycleIn
from oneiros.server._service import Service
from oneiros.settings._generator import OpenAISettings
from tests.chat_server import HARDENED, ChatServer, sample_golems
from tests.cli_runner import run_cli
from tests.projections_support import World

SAMPLE = Path(__file__).resolve().parent.parent / "oneiros" / "data" / "sample_episodes.jsonl"
# A dream on the sample episodes against the test chat server (its URL follows).
_OPENAI_DREAM = ("--golem", "g", "--episodes", str(SAMPLE), "--generator", "openai", "--base-url")


def keyless() -> OpenAIGenerator:
    """The openai generator whose key is missing when it is called (as on a worker without it):
    ``dream`` and the server refuse ``openai`` without a key up front, so the tests of a cycle that
    lost every call to it name this factory (``module:factory``) instead."""
    return OpenAIGenerator(OpenAISettings(), env={})


def _openai(server: ChatServer, key: str | None = "sk-test") -> OpenAIGenerator:
    settings = OpenAISettings(base_url=server.url, timeout_s=2.0, retries=0)
    return OpenAIGenerator(settings, env={"OPENAI_API_KEY": key} if key else {})


def _of(golems: Golems, cls: type) -> list[Any]:
    return [r.event for r in golems.history("g") if isinstance(r.event, cls)]


def test_a_server_of_500s_ends_the_cycle_flagged_all_calls_failed(chat_server: ChatServer) -> None:
    """Every call answered 500: DreamEmpty(all_calls_failed) counts the calls the log holds, comes
    right before the wake, observers see it, and CycleResult reports it."""
    chat_server.reset(["500"] * 1_000)
    golems = sample_golems(2)
    seen: list[DreamEmpty] = []
    golems.observers.on_event(DreamEmpty, lambda record: seen.append(cast(DreamEmpty, record.event)))
    result = InProcessExecutor(golems, _openai(chat_server), HARDENED).run_cycle("g", cycle_id="c1")
    failed = _of(golems, GenerationFailed)
    (empty,) = _of(golems, DreamEmpty)
    assert failed
    assert ("all_calls_failed", len(failed), len(failed), 0) == (
        empty.reason,
        empty.generator_calls,
        empty.failed_calls,
        empty.staged,
    )
    assert empty.detail.startswith(f"every generator call failed: {len(failed)} of {len(failed)} (last: ")
    assert [empty] == seen
    assert (empty.detail, None) == (result.empty, result.interrupted)
    tail = [type(r.event) for r in golems.history("g")[-2:]]
    assert [DreamEmpty, ModeChanged] == tail
    assert empty == golems.state("g").last_empty == replay(golems.store)["g"].last_empty


def test_a_healthy_cycle_carries_no_flag(chat_server: ChatServer) -> None:
    """An honest server: outputs are staged, no DreamEmpty, CycleResult.empty is None."""
    chat_server.reset([])
    golems = sample_golems(2)
    result = InProcessExecutor(golems, _openai(chat_server), HARDENED).run_cycle("g")
    assert ([], None) == (_of(golems, DreamEmpty), result.empty)
    assert _of(golems, DreamStaged)


def test_answers_that_stage_nothing_flag_nothing_staged(chat_server: ChatServer) -> None:
    """Every call answered, in prose no engine can use: nothing staged, flagged nothing_staged."""
    chat_server.reset(["garbage"] * 1_000)
    golems = sample_golems(2)
    result = InProcessExecutor(golems, _openai(chat_server), HARDENED).run_cycle("g")
    (empty,) = _of(golems, DreamEmpty)
    assert ([], "nothing_staged", 0) == (_of(golems, DreamStaged), empty.reason, empty.failed_calls)
    assert empty.generator_calls > 0
    assert result.empty == f"nothing was staged ({empty.generator_calls} generator calls, 0 failed)"


def _dream_cli(tmp_path: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_cli(["dream", "--store", f"sqlite:///{tmp_path}/events.db", *args], cwd=tmp_path, env=env)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY" and not k.startswith("ONEIROS_")}
    env["ONEIROS_SPANS"] = os.environ.get("ONEIROS_SPANS", "")
    return env


def test_dream_whose_generator_lost_its_key_exits_1_with_one_line(tmp_path: Path) -> None:
    """`oneiros dream` whose generator has no key when it is called: exit 1, one error line naming
    the cycle and why, no traceback; the store holds the flagged cycle. (`--generator openai` with
    no key is refused before the cycle: tests/test_cli_mistakes.py.)"""
    env = _env() | {"PYTHONPATH": str(SAMPLE.parents[2])}
    done = _dream_cli(
        tmp_path, "--golem", "g", "--episodes", str(SAMPLE), "--generator", f"{__name__}:keyless", env=env
    )
    assert 1 == done.returncode, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert 1 == len(lines), done.stderr
    assert lines[0].startswith("error: cycle ")
    assert " of g produced nothing: every generator call failed: " in lines[0]
    assert "$OPENAI_API_KEY is not set" in lines[0]
    assert "Traceback" not in done.stderr + done.stdout
    store = open_store(f"sqlite:///{tmp_path}/events.db")
    assert "all_calls_failed" == replay(store)["g"].last_empty.reason  # type: ignore[union-attr]
    store.close()


def test_dream_against_500s_says_so_in_json_too(tmp_path: Path, chat_server: ChatServer) -> None:
    """With --json the payload carries ``empty`` and the exit code is still 1."""
    chat_server.reset(["500"] * 1_000)
    env = _env() | {"OPENAI_API_KEY": "sk-test", "ONEIROS_CYCLE__GENERATOR__OPENAI__RETRIES": "0"}
    done = _dream_cli(tmp_path, *_OPENAI_DREAM, chat_server.url, "--json", env=env)
    assert 1 == done.returncode, done.stderr
    payload = json.loads(done.stdout)
    assert payload["empty"].startswith("every generator call failed: ")
    assert payload["interrupted"] is None
    assert set(chat_server.served) == {"500"}


def test_server_cycle_route_and_journal_report_an_empty_cycle(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server runs a cycle whose generator has no API key when called: its answer (to a caller
    that waits for the end) says ``empty`` with the reason; the journal entry, the runs row and the
    Markdown journal carry it."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    world = World(open_store("memory://"), golem="g")
    world.golems.record_episodes("g", [e.episode for e in _of(sample_golems(0), EpisodeRecorded)])
    config = load_config(path="/dev/null", environ={})
    config = msgspec.structs.replace(
        config, server=msgspec.structs.replace(config.server, generator=f"{__name__}:keyless")
    )
    service = Service(world.store, config, deps=world.deps)
    try:
        answer = service.dream(LOCAL, "g", CycleIn(reevaluate_enabled=False, wait=True))
    finally:
        service.close()
    assert "empty" == answer.status
    assert answer.empty is not None
    assert answer.empty.startswith("every generator call failed: ")
    world.update()
    (entry,) = world.projections.journal()
    assert answer.empty == entry.empty
    assert answer.empty == Run.of(entry).empty
    assert f"EMPTY: {answer.empty}" in journal_markdown([entry])


def test_a_suppressed_cycle_is_not_flagged() -> None:
    """A dream suppressed on purpose (credit under the floor) makes nothing by design: no flag."""
    golems = sample_golems(1)
    settings = msgspec.structs.replace(HARDENED, credit_fraction=0.01)
    result = InProcessExecutor(golems, None, settings).run_cycle("g")
    assert 1 == len(_of(golems, DreamSuppressed))  # it was suppressed, and that is why it made nothing
    assert ([], None) == (_of(golems, DreamEmpty), result.empty)
