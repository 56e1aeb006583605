"""What the deployment tests share: compose.yaml read as data, a local stand-in for an
OpenAI-compatible server, and oneiros processes started with their output kept."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

from tests.workers.support import ROOT

COMPOSE = ROOT / "compose.yaml"
OURS = "oneiros:local"
_DEFAULTED = re.compile(r"\$\{(?P<name>[A-Z_][A-Z0-9_]*)(?::-(?P<default>[^}]*))?\}")
_ANSWER = {
    "pattern": "Entries at range floors bounced within a day",
    "scores": [0.9, 0.8, 0.7, 0.6],
    "hypothesis": "Range floors hold when volume dries up",
    "test": "Watch the next three floors",
    "outcome": "the trade would have stopped out",
    "lesson": "Size down when volatility spikes",
    "scenario": "A flash crash through the floor",
    "response": "Cut exposure and wait",
    "severity": 0.4,
    "happened": "A sharp drawdown",
    "felt": "tense",
    "insight": "Floors matter more than trends in quiet markets",
}
_DREAM = "FRAGMENTS:\n- a tide that ebbs upward\n- a floor made of glass\nTHREAD: what holds is what is tested"


def compose_services() -> dict[str, dict[str, Any]]:
    """compose.yaml's services, YAML anchors and merge keys resolved as compose resolves them."""
    services: dict[str, dict[str, Any]] = yaml.safe_load(COMPOSE.read_text())["services"]
    return services


def interpolate(value: str, environ: Mapping[str, str]) -> str:
    """Compose's ``${NAME:-default}``."""
    return _DEFAULTED.sub(lambda m: environ.get(m["name"]) or (m["default"] or ""), value)


def local_command(service: Mapping[str, Any], volumes: Mapping[str, Path]) -> tuple[list[str], dict[str, str]]:
    """A service's command and environment as a local process: ``oneiros`` is this interpreter's,
    and container paths of its volumes (bind mounts and named ones) become the local paths."""
    mounts: dict[str, Path] = {}
    for volume in service.get("volumes", []):
        source, target = volume.split(":")[:2]
        mounts[target] = (ROOT / source).resolve() if source.startswith(".") else volumes[source]

    def local(text: str) -> str:
        for target, path in mounts.items():
            if text == target or text.startswith(target + "/"):
                return str(path) + text[len(target) :]
        return text

    command = list(service["command"])
    assert "oneiros" == command[0]
    argv = [sys.executable, "-m", "oneiros", *(local(arg) for arg in command[1:])]
    env = {name: local(interpolate(str(value), os.environ)) for name, value in service.get("environment", {}).items()}
    return argv, env


class ChatServer:
    """An OpenAI-compatible chat-completions endpoint on 127.0.0.1 that answers every task with
    text the phase parsers accept and notes each request's model, temperature and credentials."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.authorizations: set[str] = set()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                outer.authorizations.add(self.headers.get("Authorization", ""))
                prompt = " ".join(m["content"] for m in body["messages"])
                text = _DREAM if "FRAGMENTS" in prompt else json.dumps(_ANSWER)
                answer = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "model": body["model"],
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                    ],
                    "usage": {"prompt_tokens": 40, "completion_tokens": 30, "total_tokens": 70},
                }
                raw = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def seen(self) -> dict[str, set[float]]:
        """Temperatures by model, as the requests carried them."""
        out: dict[str, set[float]] = {}
        for request in self.requests:
            out.setdefault(request["model"], set()).add(request["temperature"])
        return out


@contextmanager
def chat_server() -> Iterator[ChatServer]:
    server = ChatServer()
    server.thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()


class Processes:
    """oneiros processes, each with its output in a file of its own, stopped with SIGTERM at the end."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, argv: list[str], env: Mapping[str, str]) -> subprocess.Popen[bytes]:
        log = open(self.log_dir / f"{name}.log", "wb")  # noqa: SIM115 - lives as long as the process
        proc = subprocess.Popen(argv, cwd=self.log_dir, env=dict(env), stdout=log, stderr=log, start_new_session=True)
        self.procs[name] = proc
        return proc

    def output(self, name: str) -> str:
        return (self.log_dir / f"{name}.log").read_text(errors="replace")

    def stop(self) -> dict[str, int]:
        """SIGTERM to each, a clean exit expected within 30 s; returns the exit codes."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        codes = {}
        for name, proc in self.procs.items():
            try:
                codes[name] = proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                codes[name] = proc.wait()
        return codes


def wait_for(check: Callable[[], bool], timeout: float, what: str, procs: Processes | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            logs = "" if procs is None else "\n".join(f"--- {n}\n{procs.output(n)[-3000:]}" for n in procs.procs)
            raise AssertionError(f"{what} not within {timeout} s\n{logs}")
        time.sleep(0.3)


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without any ONEIROS_* or OTEL_* variable, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ONEIROS_", "OTEL_"))}
    return {**env, "PYTHONPATH": str(ROOT), **extra}
