"""A cycle the server runs itself (no queue) runs off the request thread: the request answers 202
with the cycle id while the model still holds the cycle's first call, the status routes show it
dreaming and then complete; a cycle past ``server.max_cycles`` is refused; stopping the server
mid-cycle records the cycle as interrupted instead of stranding the golem."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from oneiros import Golems, open_store
from oneiros.events._types import DreamStart
from tests.chat_server import ChatServer
from tests.server.conftest import ROOT, Server, start_server
from tests.server.test_rest import _cycle, _episodes, _ok

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def held(tmp_path: Path) -> Iterator[tuple[ChatServer, Server]]:
    """A chat server whose first call waits for ``release``, and a server dreaming over it, one
    cycle at a time, with a grace period of one second on shutdown."""
    chat = ChatServer()
    chat.reset(["hold"])
    env = {
        "PYTHONPATH": str(ROOT),
        "CHAT_URL_FOR_TESTS": chat.url,
        "ONEIROS_SERVER__GENERATOR": "tests.server.held:generator",
        "ONEIROS_SERVER__MAX_CYCLES": "1",
        "ONEIROS_SERVER__SHUTDOWN_GRACE_SECONDS": "1",
    }
    server = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve", env=env)
    try:
        yield chat, server
    finally:
        chat.release.set()
        server.stop()
        chat.close()


def _wait(check: object, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_the_request_returns_before_the_cycle_ends_and_the_cycle_completes(
    held: tuple[ChatServer, Server],
) -> None:
    """While the model holds the first call, the POST has already answered 202 with the cycle id;
    the cycle's entry says dreaming, the golem is Dreaming, and a second cycle (another golem) is
    refused with 503 naming server.max_cycles. Released, the cycle completes and stages."""
    chat, server = held
    http = server.client("write")
    for golem in ("g1", "g2"):
        _ok(http.post("/golems", json={"golem_id": golem}), 201)
        _ok(http.post(f"/golems/{golem}/episodes", json={"episodes": _episodes()}), 201)
    started = _ok(http.post("/golems/g1/cycles", json={"max_outputs": 3}), 202)
    assert not chat.release.is_set()
    assert ("g1", "dreaming") == (started["golem_id"], started["status"])
    cycle_id = started["cycle_id"]
    _wait(lambda: "hold" in chat.served, "the cycle's first call to reach the model")
    assert "dreaming" == _ok(http.get(f"/golems/g1/cycles/{cycle_id}"))["status"]
    assert "Dreaming" == _ok(http.get("/golems/g1"))["mode"]
    refused = http.post("/golems/g2/cycles", json={})
    assert 503 == refused.status_code
    assert (
        "1 cycles already running in this server (server.max_cycles = 1); "
        "retry when one has ended, or run cycles on workers (server.queue)"
    ) == refused.json()["error"]["message"]

    chat.release.set()
    _wait(lambda: _ok(http.get(f"/golems/g1/cycles/{cycle_id}"))["status"] != "dreaming", "the cycle to end", 90)
    # The sweep stages the cycle's outputs after the cycle's end is in the log, as the follower
    # reaches it: the entry's count follows within moments.
    _wait(lambda: _ok(http.get(f"/golems/g1/cycles/{cycle_id}"))["staged"] > 0, "the sweep to stage", 30)
    entry = _ok(http.get(f"/golems/g1/cycles/{cycle_id}"))
    assert ("complete", 3) == (entry["status"], entry["staged"])
    assert "complete" == _cycle(http, "g2", {"max_outputs": 2})["status"]  # the slot is free again


def test_stopping_the_server_mid_cycle_records_the_cycle_interrupted(held: tuple[ChatServer, Server]) -> None:
    """SIGTERM while the model holds the cycle's call: past the one-second grace the cycle ends
    interrupted by its owner ("server stopped"), the golem is awake, and the server exits."""
    chat, server = held
    http = server.client("write")
    _ok(http.post("/golems", json={"golem_id": "g1"}), 201)
    _ok(http.post("/golems/g1/episodes", json={"episodes": _episodes()}), 201)
    cycle_id = _ok(http.post("/golems/g1/cycles", json={}), 202)["cycle_id"]
    _wait(lambda: "hold" in chat.served, "the cycle's first call to reach the model")
    began = time.monotonic()
    server.stop()
    assert server.proc.returncode is not None
    assert time.monotonic() - began < 10
    store = open_store(server.store)
    ends = [r.event for r in store.read_stream("g1") if r.event.type_name in ("DreamComplete", "DreamInterrupted")]
    assert [("DreamInterrupted", cycle_id, "owner", "server stopped")] == [
        (type(e).__name__, e.cycle_id, getattr(e, "source", None), getattr(e, "reason", None)) for e in ends
    ]
    assert "Waking" == Golems(store).state("g1").mode


@pytest.mark.parametrize("variable", ["ONEIROS_SERVER__GENERATOR", "ONEIROS_CYCLE__GENERATOR__KIND"])
def test_a_cycle_with_the_openai_generator_and_no_key_is_refused_before_anything_is_written(
    tmp_path: Path, variable: str
) -> None:
    """``server.generator = "openai"``, or ``cycle.generator.kind = "openai"`` with no
    ``server.generator`` (before, the server ran such cycles offline), with no API key:
    ``POST .../cycles`` is a 400 ConfigError in the words ``oneiros fork`` and ``dream`` use, and
    the log is as it was (before, the cycle ran and recorded an empty cycle of fallbacks)."""
    url = f"sqlite:///{tmp_path}/events.db"
    env = {variable: "openai", "OPENAI_API_KEY": ""}
    server = start_server(url, tmp_path / "serve", env=env)
    try:
        http = server.client("write")
        _ok(http.post("/golems", json={"golem_id": "g1"}), 201)
        _ok(http.post("/golems/g1/episodes", json={"episodes": _episodes()}), 201)
        with open_store(url) as store:
            head = store.head()
        answer = http.post("/golems/g1/cycles", json={"wait": True})
        assert (
            400,
            "ConfigError",
            "cannot dream with the openai generator: no API key, $OPENAI_API_KEY is not set",
        ) == (
            answer.status_code,
            answer.json()["error"]["type"],
            answer.json()["error"]["message"],
        )
        with open_store(url) as store:
            assert head == store.head()
    finally:
        server.stop()


def test_the_servers_openai_cycles_reach_the_configured_openai_server(tmp_path: Path) -> None:
    """``server.generator = "openai"`` names only the kind: the cycle calls the base URL, with the
    key from the variable, that the config's ``cycle.generator.openai`` gives (before, the server
    took the built-in defaults: api.openai.com and $OPENAI_API_KEY, so this was refused as keyless),
    and the cycle's DreamStart records the generator that wrote it."""
    chat = ChatServer()
    env = {
        "ONEIROS_SERVER__GENERATOR": "openai",
        "ONEIROS_CYCLE__GENERATOR__OPENAI__BASE_URL": chat.url,
        "ONEIROS_CYCLE__GENERATOR__OPENAI__API_KEY_ENV": "LOCAL_CHAT_KEY",
        "LOCAL_CHAT_KEY": "local-secret",
        "OPENAI_API_KEY": "",
    }
    server = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve", env=env)
    try:
        http = server.client("write")
        _ok(http.post("/golems", json={"golem_id": "g1"}), 201)
        _ok(http.post("/golems/g1/episodes", json={"episodes": _episodes()}), 201)
        answer = _ok(http.post("/golems/g1/cycles", json={"wait": True}), 202)
        with open_store(server.store) as store:
            (start,) = [r.event for r in store.read_stream("g1") if isinstance(r.event, DreamStart)]
        assert ("complete", True, {"Bearer local-secret"}, "openai", chat.url) == (
            answer["status"],
            len(chat.requests) > 0,
            {h["authorization"] for h in chat.headers},
            start.settings.generator.kind if start.settings else None,
            start.settings.generator.openai.base_url if start.settings else None,
        )
    finally:
        server.stop()
        chat.close()
