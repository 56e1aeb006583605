"""A local HTTP server speaking the chat-completions protocol, honest or lying on demand, and a
golem with the sample episodes to dream over it.

The server answers like the offline generator (so a cycle over it parses and stages), unless a
scripted action, consumed one per request, tells it to misbehave.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from oneiros import Deps, FixedClock, Golems, SequentialIds, open_store
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._protocol import GenerationRequest, Task
from oneiros.settings._cycle import CycleBudget, CycleSettings
from tests.prompt_reader import inputs_of

__all__ = ["ACTIONS", "HARDENED", "ChatServer", "sample_golems"]

HARDENED = CycleSettings(
    budget=CycleBudget(tier="hardened", prices={}, cycle_usd=None, window_usd=None, month_usd=None)
)
"""The hardened tier with no money caps: every call the engines ask for reaches the server."""

ACTIONS = ("ok", "500", "slow", "stall", "not-json", "garbage", "overreport", "oversize", "huge", "401-echo", "hold")
"""ok: an honest answer; 500: a server error; slow: late by 0.6 s; hold: an honest answer once
``release`` is set (60 s at most); stall: the status line at once,
the body 0.6 s later; not-json: an HTML body;
garbage: prose instead of JSON; overreport: usage ten times max_tokens; oversize: a completion far
longer than max_tokens with small usage; huge: a 2 MB completion with small usage; 401-echo: an
auth error whose body echoes the bearer key back."""

_MARKERS: list[tuple[str, Task]] = [
    ('{"observations"', "observe"),
    ('{"thread"', "thread"),
    ('{"summary"', "summary"),
    ('{"profile"', "profile"),
    ('{"timeline"', "timeline"),
    ('{"contradictions"', "contradiction"),
    ('{"scores"', "novelty"),
    ('"outcome"', "counterfactual"),
    ('"severity"', "threat"),
    ('"happened"', "depotentiate"),
    ('"test"', "hypothesis"),
    ('{"insight"', "insight"),
    ("FRAGMENTS:", "dream"),
    ('{"pattern"', "pattern"),
]


class ChatServer:
    """``url`` is the ``/v1`` base; ``requests``, ``headers`` and ``served`` (the action each
    request got) are what it saw."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.served: list[str] = []
        self.script: list[str] = []
        self.malformed_when: str | None = None  # reply with prose to prompts containing this text
        self.replies: dict[str, str] = {}  # reply this text to prompts containing the key
        self.offline = OfflineGenerator(seed=11)
        self.lock = threading.Lock()
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append(body)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    action = server.script.pop(0) if server.script else "ok"
                    server.served.append(action)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._answer(action, body)

            def _answer(self, action: str, body: dict[str, Any]) -> None:
                if action == "500":
                    self._reply(b'{"error": {"message": "boom"}}', 500)
                    return
                if action == "401-echo":
                    key = self.headers.get("Authorization", "")
                    self._reply(json.dumps({"error": {"message": f"Incorrect API key provided: {key}"}}).encode(), 401)
                    return
                if action == "slow":
                    time.sleep(0.6)
                if action == "hold":
                    server.release.wait(60)
                if action == "not-json":
                    self._reply(b"<html>gateway</html>")
                    return
                prompt = body["messages"][-1]["content"]
                max_tokens = int(body.get("max_tokens") or 256)
                text = server.answer(prompt) if action != "garbage" else "I would rather not answer in JSON."
                if server.malformed_when and server.malformed_when in prompt:
                    text = "Here is my thought, without any braces."
                text = next((reply for key, reply in server.replies.items() if key in prompt), text)
                usage = {"prompt_tokens": len(prompt) // 4, "completion_tokens": max(1, len(text) // 4)}
                if action == "overreport":
                    usage = {"prompt_tokens": 10 * len(prompt), "completion_tokens": 10 * max_tokens}
                elif action == "oversize":
                    text = text + " " + "lorem ipsum " * (max_tokens * 8)
                    usage = {"prompt_tokens": 3, "completion_tokens": 5}
                elif action == "huge":
                    text = "x" * 2_000_000
                    usage = {"prompt_tokens": 3, "completion_tokens": 5}
                payload = {
                    "model": body["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                    "usage": usage,
                }
                self._reply(json.dumps(payload).encode(), stall=action == "stall")

            def _reply(self, raw: bytes, status: int = 200, stall: bool = False) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                if stall:
                    self.wfile.flush()
                    time.sleep(0.6)
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
            given=inputs_of(prompt),
        )
        return self.offline.generate(request).text

    def reset(self, script: list[str] | None = None) -> None:
        with self.lock:
            self.requests.clear()
            self.headers.clear()
            self.served.clear()
            self.script = list(script or [])

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def sample_golems(seed: int) -> Golems:
    """Golem ``g`` with the bundled sample episodes, in memory, on a fixed clock and id source."""
    golems = Golems(
        open_store("memory://"),
        deps=Deps(clock=FixedClock(datetime(2026, 11, 3, tzinfo=UTC)), ids=SequentialIds(), seed=seed),
    )
    golems.create("g")
    golems.record_episodes("g", load_episodes(sample_episodes_path()))
    return golems
