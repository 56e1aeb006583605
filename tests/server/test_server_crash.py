"""A server killed mid-cycle strands nothing: the cycle it ran held the golem's lease, and the
reconciler of the server started again (at start and every ``recovery.interval_seconds``) resumes it
with the generator it recorded, so it completes without anyone running ``oneiros recover``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from oneiros import Golems, open_store
from oneiros.events._liveness import PhaseResumed
from tests.chat_server import ChatServer
from tests.server.conftest import ROOT, Server, start_server
from tests.server.test_rest import _episodes, _ok

pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    """A chat server whose first call waits for ``release``; honest after it."""
    made = ChatServer()
    made.reset(["hold"])
    try:
        yield made
    finally:
        made.release.set()
        made.close()


def test_a_cycle_whose_server_was_killed_is_resumed_by_the_restarted_server(chat: ChatServer, tmp_path: Path) -> None:
    """SIGKILL ``oneiros serve`` while the model holds the first call of the cycle it runs; the
    golem is left Dreaming. The server started again on the same store resumes the cycle (one
    PhaseResumed) and the cycle completes, the golem awake, within 60 s of the restart."""
    env = {
        "PYTHONPATH": str(ROOT),
        "CHAT_URL_FOR_TESTS": chat.url,
        "ONEIROS_SERVER__GENERATOR": "tests.server.held:generator",
    }
    store_url = f"sqlite:///{tmp_path}/events.db"
    servers: list[Server] = [start_server(store_url, tmp_path / "first", env=env)]
    try:
        http = servers[0].client("write")
        _ok(http.post("/golems", json={"golem_id": "g1"}), 201)
        _ok(http.post("/golems/g1/episodes", json={"episodes": _episodes()}), 201)
        cycle_id = _ok(http.post("/golems/g1/cycles", json={"max_outputs": 2}), 202)["cycle_id"]
        deadline = time.monotonic() + 30
        while "hold" not in chat.served:
            assert time.monotonic() < deadline, "the cycle's first call never reached the model"
            time.sleep(0.05)
        servers[0].proc.kill()
        servers[0].proc.wait()
        store = open_store(store_url)
        try:
            assert "Dreaming" == Golems(store).state("g1").mode
            chat.release.set()  # the killed server's call is answered to nobody; the next ones at once
            restarted = time.monotonic()
            servers.append(start_server(store_url, tmp_path / "second", env=env))
            while Golems(store).state("g1").mode != "Waking":
                assert time.monotonic() - restarted < 60, (servers[1].log.read_text())[-3000:]
                time.sleep(0.2)
            cycle = [r.event for r in store.read_stream("g1") if getattr(r.event, "cycle_id", None) == cycle_id]
        finally:
            store.close()
        ends = [type(e).__name__ for e in cycle if type(e).__name__ in ("DreamComplete", "DreamInterrupted")]
        assert (["DreamComplete"], 1) == (ends, sum(isinstance(e, PhaseResumed) for e in cycle))
    finally:
        for server in servers:
            server.stop()
