"""Idempotency keys: a POST that appends, retried with its ``Idempotency-Key``, appends once and
answers as the first did, across a restart of the server and across servers on one store; the
same key with another body is 422. The same through MCP and the Python API."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from oneiros import IdempotencyKeyReused, Oneiros, open_store
from oneiros.config._load import load_config
from oneiros.episodes._fold import episodes_from_dicts
from tests.server.conftest import Server, start_server
from tests.server.test_mcp import _http
from tests.server.test_rest import _dreamt, _ok

pytestmark = pytest.mark.timeout(300)

_EPISODE = {"episodes": [{"tick": 7, "summary": "eth bounced at the range floor"}]}


def _head(server: Server) -> int:
    position: int = httpx.get(server.url + "/healthz").json()["position"]
    return position


def _until_awake(http: httpx.Client, golem: str) -> None:
    deadline = time.monotonic() + 120
    while _ok(http.get(f"/golems/{golem}"))["mode"] != "Waking":
        assert time.monotonic() < deadline, "the cycle did not end"
        time.sleep(0.05)


def _post(http: httpx.Client, path: str, body: dict[str, Any], key: str) -> httpx.Response:
    return http.post(path, json=body, headers={"Idempotency-Key": key})


def test_a_retried_post_appends_once_across_a_restart(tmp_path: Path) -> None:
    """An episode posted with a key, posted again with it, then again after the server restarted:
    one episode in the log, and all three answers the first one, with its status."""
    store = f"sqlite:///{tmp_path}/events.db"
    server = start_server(store, tmp_path / "first")
    try:
        http = server.client("write")
        _ok(http.post("/golems", json={"golem_id": "g1"}), 201)
        first = _post(http, "/golems/g1/episodes", _EPISODE, "retry-1")
        again = _post(http, "/golems/g1/episodes", _EPISODE, "retry-1")
        head = _head(server)
    finally:
        server.stop()
    restarted = start_server(store, tmp_path / "second")
    try:
        http = restarted.client("write")
        after = _post(http, "/golems/g1/episodes", _EPISODE, "retry-1")
        assert head == _head(restarted)
        assert 1 == _ok(http.get("/golems/g1"))["episodes"]
    finally:
        restarted.stop()
    assert [(201, first.json())] * 3 == [(r.status_code, r.json()) for r in (first, again, after)]
    assert 1 == first.json()["appended"]


def test_two_servers_on_one_store_append_a_key_once(pg_schema: str, tmp_path: Path) -> None:
    """The same activity with the same key, sent to two servers on one PostgreSQL store: one
    append, and both answer with it."""
    from tests.conftest import postgres_url
    from tests.server.conftest import drop_schema

    url = postgres_url(pg_schema)
    servers = [start_server(url, tmp_path / name) for name in ("a", "b")]
    try:
        http_a, http_b = (s.client("write") for s in servers)
        _ok(http_a.post("/golems", json={"golem_id": "g1"}), 201)
        head = _head(servers[0])
        answers = [_post(h, "/golems/g1/activity", {"kind": "turn"}, "both") for h in (http_a, http_b, http_a)]
        assert [answers[0].json()] * 3 == [a.json() for a in answers]
        # the activity, its key and the key's answer
        assert head + 3 == _head(servers[1])
    finally:
        for server in servers:
            server.stop()
        drop_schema(f"{pg_schema}_proj")


def test_every_appending_post_takes_a_key_and_refuses_it_with_another_body(tmp_path: Path) -> None:
    """Each POST that appends (create a golem, episodes, activity, an outcome, a decision, a cycle, a
    recorded recall), sent twice with one key, appends only the first time and answers the same; a
    key sent again with another body is 422 IdempotencyKeyReused, and writes nothing."""
    server = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve")
    try:
        http = server.client("admin")
        _dreamt(http)
        entry_id = _ok(http.get("/dreams", params={"golem": "g1", "limit": 1}))["items"][0]["entry_id"]
        posts: list[tuple[str, dict[str, Any]]] = [
            ("/golems", {"golem_id": "g2"}),
            ("/golems/g1/episodes", _EPISODE),
            ("/golems/g1/activity", {"kind": "message"}),
            ("/golems/g1/outcomes", {"tick": 900, "verdict": "confirms", "summary": "eth held"}),
            (f"/dreams/{entry_id}/feedback", {"decision": "reinforce", "feedback": "seen it"}),
            ("/golems/g1/cycles", {"max_outputs": 1, "wait": True}),
            ("/golems/g1/recall", {"query": "eth range floor"}),  # an admin's recall is recorded
        ]
        for n, (path, body) in enumerate(posts):
            first = _post(http, path, body, f"key-{n}")
            assert first.status_code < 300, first.text
            _until_awake(http, "g1")  # a cycle may outlast the answer's wait on a loaded machine
            head = _head(server)
            again = _post(http, path, body, f"key-{n}")
            assert (head, first.status_code, first.json()) == (_head(server), again.status_code, again.json()), path
        reused = _post(http, "/golems/g1/episodes", {"episodes": [{"tick": 8, "summary": "other"}]}, "key-1")
        assert (422, head) == (reused.status_code, _head(server))
        assert {
            "type": "IdempotencyKeyReused",
            "message": "idempotency key 'key-1' was used for another request on golem 'g1'; use a new key",
            "status": 422,
            "attributes": {"key": "key-1", "golem_id": "g1"},
        } == reused.json()["error"]
    finally:
        server.stop()


def test_mcp_and_the_python_api_take_the_key_too(tmp_path: Path) -> None:
    """record_episodes over MCP with an idempotency_key, called twice, appends once; so does
    Oneiros.record_episodes, and another request with its key raises IdempotencyKeyReused."""
    store = f"sqlite:///{tmp_path}/events.db"
    server = start_server(store, tmp_path / "serve")
    texts: list[str] = []
    try:
        _ok(server.client("write").post("/golems", json={"golem_id": "g1"}), 201)

        async def main() -> None:
            async with _http(server, "write")() as client:
                for _ in range(2):
                    arguments = {"golem": "g1", "idempotency_key": "m1", **_EPISODE}
                    result = await client.call_tool("record_episodes", arguments)
                    texts.append(result.content[0].text)

        anyio.run(main)
    finally:
        server.stop()
    assert [json.loads(texts[0])] * 2 == [json.loads(t) for t in texts]
    with open_store(store) as opened:
        app = Oneiros(opened, load_config())
        episodes = episodes_from_dicts(_EPISODE["episodes"])
        assert app.record_episodes("g1", episodes, idempotency_key="m1").positions == json.loads(texts[0])["positions"]
        with pytest.raises(IdempotencyKeyReused):
            app.record_episodes("g1", episodes_from_dicts([{"tick": 9, "summary": "x"}]), idempotency_key="m1")
        recorded = [r for r in opened.read_stream("g1") if r.event.type_name == "EpisodeRecorded"]
        assert 1 == len(recorded)


class _Killed(BaseException):
    """What a SIGKILL leaves behind: the request stops where it is, nothing after runs."""


def test_a_retry_gets_the_answer_its_first_request_died_before_giving(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process records episodes and activity with keys and dies between the write (the key rides
    in its transaction) and storing the answer. Retried through a server on that store: each
    answers 201 at once with the positions the first write took, and nothing is appended again
    (before, a retry waited 10 s for an answer that never came, then got 409). On both stores,
    since the answer is read back from the positions just before the key."""
    store = store_url
    with open_store(store) as opened:
        app = Oneiros(opened, load_config())
        app.create_golem("g1")
        appended = opened.append

        def dies_before_answering(golem_id: str, expected_version: int, items: Any) -> Any:
            if ":idempotency:" in golem_id and expected_version == 1:
                raise _Killed
            return appended(golem_id, expected_version, items)

        monkeypatch.setattr(opened, "append", dies_before_answering)
        episodes = episodes_from_dicts([dict(_EPISODE["episodes"][0], tick=t) for t in (7, 8)])
        with pytest.raises(_Killed):
            app.record_episodes("g1", episodes, idempotency_key="died-1")
        with pytest.raises(_Killed):
            app.record_activity("g1", "message", "hello", idempotency_key="died-2")
        written = [r for r in opened.read_stream("g1") if r.event.type_name in ("EpisodeRecorded", "ActivityRecorded")]
        head = opened.head()
    server = start_server(store, tmp_path / "serve")
    try:
        http = server.client("write")
        body = {"episodes": [dict(_EPISODE["episodes"][0], tick=t) for t in (7, 8)]}
        started = time.monotonic()
        again = _post(http, "/golems/g1/episodes", body, "died-1")
        activity = _post(http, "/golems/g1/activity", {"kind": "message", "detail": "hello"}, "died-2")
        waited = time.monotonic() - started
        assert head == _head(server)
    finally:
        server.stop()
    positions = [r.position for r in written]
    assert (201, {"appended": 2, "positions": positions[:2], "position": positions[1]}) == (
        again.status_code,
        again.json(),
    )
    assert (201, {"appended": 1, "positions": positions[2:], "position": positions[2]}) == (
        activity.status_code,
        activity.json(),
    )
    assert waited < 5, waited
