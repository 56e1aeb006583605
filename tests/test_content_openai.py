"""The OpenAI-compatible generator against a local server that speaks the protocol: success, a 500,
a timeout, malformed output; and replay of its cycle makes no request."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, SequentialIds, open_store, replay
from oneiros._errors import GeneratorUnavailable
from oneiros.episodes import load_episodes, sample_episodes_path
from oneiros.events import DreamStaged, GenerationFailed, GenerationRecorded, ReplayBatch, StepFailed
from oneiros.generators import GenerationRequest, OfflineGenerator, OpenAIConfig, OpenAIGenerator, Task
from oneiros.settings import CycleBudget, CycleSettings
from oneiros.workers import run_phase

_MARKERS: list[tuple[str, Task]] = [
    ('{"scores"', "novelty"),
    ('"outcome"', "counterfactual"),
    ('"severity"', "threat"),
    ('"happened"', "depotentiate"),
    ('"test"', "hypothesis"),
    ('{"insight"', "insight"),
    ("FRAGMENTS:", "dream"),
    ('{"pattern"', "pattern"),
]


class _Server:
    """A chat-completions endpoint answering like the offline generator, unless told to misbehave."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.script: list[str] = []  # "500", "slow", "garbage", "not-json", consumed one per request
        self.malformed_when: str | None = None  # reply with prose to prompts containing this text
        self.offline = OfflineGenerator(seed=11)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                server.headers.append(dict(self.headers))
                action = server.script.pop(0) if server.script else "ok"
                if action == "500":
                    self.send_response(500)
                    self.end_headers()
                    return
                if action == "slow":
                    time.sleep(0.6)
                prompt = body["messages"][-1]["content"]
                if action == "not-json":
                    self._reply(b"<html>gateway</html>")
                    return
                text = server.answer(prompt) if action != "garbage" else "I would rather not answer in JSON."
                if server.malformed_when and server.malformed_when in prompt:
                    text = "Here is my thought, without any braces."
                payload = {
                    "model": body["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": max(1, len(text) // 4)},
                }
                with contextlib.suppress(BrokenPipeError):
                    self._reply(json.dumps(payload).encode())

            def _reply(self, raw: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def answer(self, prompt: str) -> str:
        task: Task = next((t for marker, t in _MARKERS if marker in prompt), "partial")
        request = GenerationRequest(
            call_key=str(len(self.requests)),
            phase="rem",
            task=task,
            prompt=prompt,
            fragments=tuple(line for line in prompt.splitlines() if line.startswith("- ")),
        )
        return self.offline.generate(request).text

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[_Server]:
    s = _Server()
    yield s
    s.close()


def _generator(server: _Server, **overrides: Any) -> OpenAIGenerator:
    config = OpenAIConfig(
        base_url=server.url,
        models={"core": "m-core", "hardened": "m-hard"},
        phase_models={"rem": "m-rem"},
        timeout_s=0.3,
        retries=1,
        backoff_s=0.0,
        **overrides,
    )
    return OpenAIGenerator(config, env={"OPENAI_API_KEY": "sk-test"}, sleep=lambda _s: None)


def _request(task: Task = "pattern") -> GenerationRequest:
    return GenerationRequest(
        call_key="c:nrem:0",
        phase="nrem",
        task=task,
        prompt='Episodes:\n- a\n- b\nReply with JSON only: {"pattern": "x"}',
    )


def test_a_completion_is_parsed_with_usage_and_the_key_from_the_environment(server: _Server) -> None:
    """One request: the tier's model, the bearer key from the environment, the server's token usage."""
    generation = _generator(server).generate(_request())
    assert "m-core" == server.requests[0]["model"]
    assert "m-core" == generation.model
    assert "Bearer sk-test" == server.headers[0]["Authorization"]
    assert json.loads(generation.text)["pattern"]
    assert len(server.requests[0]["messages"][-1]["content"]) // 4 == generation.tokens_in


def test_a_500_is_retried_with_backoff(server: _Server) -> None:
    """A server error is retried after a backoff; the second answer is used."""
    waits: list[float] = []
    generator = OpenAIGenerator(
        OpenAIConfig(base_url=server.url, retries=2, backoff_s=0.25), env={}, sleep=waits.append
    )
    server.script = ["500"]
    generator.generate(_request())
    assert 2 == len(server.requests)
    assert [0.25] == waits


def test_a_timeout_after_every_retry_raises_generator_unavailable(server: _Server) -> None:
    """A server slower than the timeout on every attempt ends in GeneratorUnavailable naming the call and model."""
    server.script = ["slow", "slow"]
    with pytest.raises(GeneratorUnavailable) as info:
        _generator(server).generate(_request())
    assert "model 'm-core' gave no answer to 'c:nrem:0' after 2 attempts: timed out after 0.3s" == str(info.value)


def test_a_response_that_is_not_json_is_retried_then_reported(server: _Server) -> None:
    """A body that is not JSON counts as a failed attempt, like a 5xx."""
    server.script = ["not-json", "not-json"]
    with pytest.raises(GeneratorUnavailable) as info:
        _generator(server).generate(_request())
    assert "model 'm-core' gave no answer to 'c:nrem:0' after 2 attempts: the response is not JSON" == str(info.value)


def _golems() -> Golems:
    golems = Golems(
        open_store("memory://"),
        deps=Deps(clock=FixedClock(datetime(2026, 11, 3, tzinfo=UTC)), ids=SequentialIds(), seed=2),
    )
    golems.create("g")
    golems.record_episodes("g", load_episodes(sample_episodes_path()))
    return golems


HARDENED = CycleSettings(
    budget=CycleBudget(tier="hardened", prices={}, cycle_usd=None, window_usd=None, month_usd=None)
)


def test_a_cycle_over_http_records_every_call_and_replay_makes_no_request(server: _Server) -> None:
    """Each successful request becomes one GenerationRecorded with the phase's model; rebuilding the
    state and re-running a finished phase make no request at all."""
    golems = _golems()
    generator = _generator(server)
    result = InProcessExecutor(golems, generator, settings=HARDENED).run_cycle("g")
    assert result.complete is not None
    assert result.interrupted is None
    recorded = [r.event for r in golems.history("g") if isinstance(r.event, GenerationRecorded)]
    assert len(server.requests) == len(recorded) > 10
    assert {"m-rem"} == {g.model for g in recorded if g.phase == "rem"}
    assert {"m-hard"} == {g.model for g in recorded if g.phase != "rem"}
    before = len(server.requests)
    replay(golems.store)
    assert not run_phase(golems, "g", result.cycle_id, "rem", generator, HARDENED).ran
    assert before == len(server.requests)


def test_timeouts_in_a_cycle_are_recorded_as_failed_calls_and_the_cycle_goes_on(server: _Server) -> None:
    """A call that times out through its retries is a GenerationFailed event; the cycle still completes."""
    golems = _golems()
    server.script = ["slow", "slow"]
    result = InProcessExecutor(golems, _generator(server), settings=HARDENED).run_cycle("g")
    failed = [r.event for r in golems.history("g") if isinstance(r.event, GenerationFailed)]
    assert 1 == len(failed)
    assert "timed out after 0.3s" in failed[0].reason
    assert result.complete is not None


def test_malformed_output_is_retried_then_recorded_as_a_failed_step_and_never_staged(server: _Server) -> None:
    """Replay-batch answers without JSON are asked again within budget, then recorded as StepFailed;
    no pattern from them is replayed or staged."""
    golems = _golems()
    server.malformed_when = "what pattern connects these episodes"
    result = InProcessExecutor(golems, _generator(server), settings=HARDENED).run_cycle("g")
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
