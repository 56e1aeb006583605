"""The OpenAI-compatible generator against a local server that speaks the protocol: success, a 500,
a timeout, malformed output; and replay of its cycle makes no request."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from oneiros import Golems, InProcessExecutor, replay
from oneiros._errors import GeneratorUnavailable
from oneiros.events._content import DreamStaged, GenerationFailed, StepFailed
from oneiros.events._observations import DreamObservation
from oneiros.events._types import GenerationRecorded, ReplayBatch
from oneiros.generators._openai import OpenAIGenerator
from oneiros.generators._protocol import GenerationRequest, Task
from oneiros.runtime._phase import run_phase
from oneiros.settings._generator import OpenAISettings
from tests.chat_server import HARDENED, ChatServer, sample_golems


def _generator(chat_server: ChatServer, **overrides: Any) -> OpenAIGenerator:
    settings = OpenAISettings(
        base_url=chat_server.url,
        models={"core": "m-core", "hardened": "m-hard"},
        phase_models={"rem": "m-rem"},
        timeout_s=0.3,
        retries=1,
        **overrides,
    )
    return OpenAIGenerator(settings, env={"OPENAI_API_KEY": "sk-test"})


def _request(task: Task = "pattern") -> GenerationRequest:
    return GenerationRequest(
        call_key="c:nrem:0",
        phase="nrem",
        task=task,
        prompt='Episodes:\n- a\n- b\nReply with JSON only: {"pattern": "x"}',
    )


def test_a_completion_is_parsed_with_usage_and_the_key_from_the_environment(chat_server: ChatServer) -> None:
    """One request: the tier's model, the bearer key from the environment, the server's token usage."""
    generation = _generator(chat_server).generate(_request())
    assert "m-core" == chat_server.requests[0]["model"]
    assert "m-core" == generation.model
    assert "Bearer sk-test" == chat_server.headers[0]["authorization"]
    assert json.loads(generation.text)["pattern"]
    assert len(chat_server.requests[0]["messages"][-1]["content"]) // 4 == generation.tokens_in


def test_a_500_is_retried_by_the_sdk(chat_server: ChatServer) -> None:
    """A server error is retried (the SDK's backoff); the second answer is used."""
    chat_server.script = ["500"]
    generation = _generator(chat_server).generate(_request())
    assert 2 == len(chat_server.requests)
    assert json.loads(generation.text)["pattern"]


def test_a_timeout_after_every_retry_raises_generator_unavailable(chat_server: ChatServer) -> None:
    """A server slower than the timeout on every attempt ends in GeneratorUnavailable naming the call and model."""
    chat_server.script = ["slow", "slow"]
    with pytest.raises(GeneratorUnavailable) as info:
        _generator(chat_server).generate(_request())
    assert "model 'm-core' gave no answer to 'c:nrem:0' after 2 attempts: timed out after 0.3s" == str(info.value)


def test_a_body_that_stalls_after_the_status_line_fails_the_call(chat_server: ChatServer) -> None:
    """Headers at once, the body after the read timeout: a failed call naming the read, not a crash."""
    chat_server.script = ["stall"]
    with pytest.raises(GeneratorUnavailable) as info:
        _generator(chat_server).generate(_request())
    expected = "model 'm-core' gave no answer to 'c:nrem:0' after 1 attempts: reading the response failed (ReadTimeout)"
    assert expected == str(info.value)


def test_a_response_that_is_not_a_completion_is_reported(chat_server: ChatServer) -> None:
    """A 200 whose body is not a chat completion fails the call at once (a retry would be billed again)."""
    chat_server.script = ["not-json"]
    with pytest.raises(GeneratorUnavailable) as info:
        _generator(chat_server).generate(_request())
    assert "model 'm-core' gave no answer to 'c:nrem:0' after 1 attempts: the response is not a chat completion" == (
        str(info.value)
    )
    assert 1 == len(chat_server.requests)


def _golems() -> Golems:
    return sample_golems(2)


def test_a_cycle_over_http_records_every_call_and_replay_makes_no_request(chat_server: ChatServer) -> None:
    """Each successful request becomes one GenerationRecorded with the phase's model; rebuilding the
    state and re-running a finished phase make no request at all."""
    golems = _golems()
    generator = _generator(chat_server)
    result = InProcessExecutor(golems, generator, settings=HARDENED).run_cycle("g")
    assert result.complete is not None
    assert result.interrupted is None
    recorded = [r.event for r in golems.history("g") if isinstance(r.event, GenerationRecorded)]
    assert len(chat_server.requests) == len(recorded) > 10
    assert {"m-rem"} == {g.model for g in recorded if g.phase == "rem"}
    assert {"m-hard"} == {g.model for g in recorded if g.phase != "rem"}
    before = len(chat_server.requests)
    replay(golems.store)
    assert not run_phase(golems, "g", result.cycle_id, "rem", generator, HARDENED).ran
    assert before == len(chat_server.requests)


def test_timeouts_in_a_cycle_are_recorded_as_failed_calls_and_the_cycle_goes_on(chat_server: ChatServer) -> None:
    """A call that times out through its retries is a GenerationFailed event; the cycle still completes."""
    golems = _golems()
    chat_server.script = ["slow", "slow"]
    result = InProcessExecutor(golems, _generator(chat_server), settings=HARDENED).run_cycle("g")
    failed = [r.event for r in golems.history("g") if isinstance(r.event, GenerationFailed)]
    assert 1 == len(failed)
    assert "timed out after 0.3s" in failed[0].reason
    assert result.complete is not None


def test_malformed_output_is_retried_then_recorded_as_a_failed_step_and_never_staged(chat_server: ChatServer) -> None:
    """Replay-batch answers without JSON are asked again within budget, then recorded as StepFailed;
    no pattern from them is replayed or staged."""
    golems = _golems()
    chat_server.malformed_when = "what pattern connects these episodes"
    result = InProcessExecutor(golems, _generator(chat_server), settings=HARDENED).run_cycle("g")
    events = [r.event for r in golems.history("g")]
    failures = [e for e in events if isinstance(e, StepFailed)]
    assert failures
    assert {"pattern"} == {f.task for f in failures}
    assert all(2 == len(f.call_keys) and f.call_keys[1].endswith("/retry1") for f in failures)
    assert "no JSON object in the output" == failures[0].reason
    assert not [e for e in events if isinstance(e, ReplayBatch)]
    assert not [e for e in events if isinstance(e, DreamStaged) and e.source == "ReplayBatch"]
    assert result.complete is not None
    assert 0 == result.complete.episodes_replayed


def test_credentials_in_the_base_url_never_reach_a_failure_message(chat_server: ChatServer) -> None:
    """A base URL carrying user:password: the failure names the server without them."""
    chat_server.script = ["500"]
    port = chat_server.url.split(":")[2].split("/")[0]
    generator = OpenAIGenerator(
        OpenAISettings(base_url=f"http://user:s3cret@127.0.0.1:{port}/v1", retries=0), env={"OPENAI_API_KEY": "k"}
    )
    with pytest.raises(GeneratorUnavailable) as info:
        generator.generate(_request())
    assert f"HTTP 500 from http://127.0.0.1:{port}/v1" == info.value.reason


def test_a_models_observations_become_dream_observations_naming_only_their_batch(chat_server: ChatServer) -> None:
    """With a model, observations come from the versioned observe prompt (the night's episodes as
    lines with tick, time and who); what the model answers becomes DreamObservation outputs, each
    naming only ticks of its batch and at most ``max_sources`` of them, its level and its day."""
    golems = _golems()
    invented = {
        "text": "2 October 2026: the breakout held",
        "ticks": [174, 999_999, 100, 137],
        "priority": "YLW",
        "subject": None,
        "about": "2026-10-02",
    }
    chat_server.replies = {"Momentum entry on BTC breakout": json.dumps({"observations": [invented]})}
    InProcessExecutor(golems, _generator(chat_server), settings=HARDENED).run_cycle("g")
    observe = [r for r in chat_server.requests if '{"observations"' in r["messages"][-1]["content"]]
    assert observe
    assert (
        "[tick 174 · 2026-10-03 03:00 · self · significance 1.00 · outcome +0.0600 · surprise 0.77] "
        in (observe[0]["messages"][-1]["content"])
    )
    made = [
        r.event for r in golems.store.read_stream("g", types=(DreamObservation,)) if "breakout held" in r.event.text
    ]
    assert [("2 October 2026: the breakout held", (174, 100), "YLW", datetime(2026, 10, 2, tzinfo=UTC))] == [
        (o.text, o.source_episode_ticks, o.priority, o.about) for o in made
    ]
