"""Every status the server answers is in ``/openapi.json`` for the route that answered it, with the
error schema: each route's error paths are walked against a running server (with tokens, and
without them on loopback), and each answer checked against the document the server serves."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.conftest import Server, start_server
from tests.server.test_rest import _dreamt, _ok

pytestmark = pytest.mark.timeout(300)

_MAX_BODY = 65_536
_PARAM = re.compile(r"\{(\w+)\}")
_ERROR_REF = {"$ref": "#/components/schemas/ErrorBody"}


class _Walk:
    """The answers a walk saw, as (method, path template, status), and the document they are checked against."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.seen: set[tuple[str, str, int]] = set()

    def send(self, http: httpx.Client, method: str, template: str, path: str, **kwargs: Any) -> httpx.Response:
        answer = http.request(method, path, **kwargs)
        self.seen.add((method, template, answer.status_code))
        return answer

    def undocumented(self) -> list[tuple[str, str, int]]:
        """What was answered but not documented: a 405 on a path, in each of its operations; any other
        status in the operation, with the error schema for an error."""
        missing = []
        for method, template, status in sorted(self.seen):
            operations = self.document["paths"][template]
            chosen = operations.values() if status == 405 else [operations[method.lower()]]
            for operation in chosen:
                response = operation["responses"].get(str(status))
                schema = (response or {}).get("content", {}).get("application/json", {}).get("schema")
                if response is None or (status >= 400 and schema != _ERROR_REF):
                    missing.append((method, template, status))
        return missing


def _fill(template: str, values: dict[str, str]) -> str:
    return "/api/v1" + _PARAM.sub(lambda m: values[m.group(1)], template.removeprefix("/api/v1"))


@pytest.fixture
def dreamt(tmp_path: Path) -> Iterator[tuple[Server, dict[str, str]]]:
    """A server with tokens and a small body cap, golem g1 dreamt once; the ids its routes take."""
    server = start_server(
        f"sqlite:///{tmp_path}/events.db", tmp_path / "serve", env={"ONEIROS_SERVER__MAX_BODY_BYTES": str(_MAX_BODY)}
    )
    try:
        http = server.client("admin")
        cycle_id = _dreamt(http)["cycle_id"]
        entry_id = _ok(http.get("/dreams", params={"golem": "g1", "limit": 1}))["items"][0]["entry_id"]
        yield server, {"golem_id": "g1", "entry_id": entry_id, "cycle_id": cycle_id, "version": "1"}
    finally:
        server.stop()


def _client(server: Server, token: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {server.tokens[token]}"} if token else {}
    return httpx.Client(base_url=server.url, headers=headers, timeout=60)


def test_every_status_a_route_answers_is_documented_for_it(dreamt: tuple[Server, dict[str, str]]) -> None:
    """Each route, as no token, a read token, a token bound to g2, with unknown ids, ids holding a
    NUL, a body it cannot take, a body over server.max_body_bytes and a method it does not take;
    then a golem created twice and a decision repeated: every status answered (400, 401, 403, 404,
    405, 409, 413) is documented for its route with the error schema."""
    server, values = dreamt
    document = httpx.get(server.url + "/openapi.json").json()
    walk = _Walk(document)
    anonymous, reader, bound, admin = (_client(server, t) for t in (None, "read", "g2", "admin"))
    for template, operations in document["paths"].items():
        path = _fill(template, values)
        unknown = _fill(template, {k: "nope" for k in values} | {"version": "99"})
        nul = _fill(template, {k: "a%00b" for k in values} | {"version": "1"})
        for method in operations:
            verb = method.upper()
            body: dict[str, Any] = {"json": {"bogus": 1}} if verb == "POST" else {}
            if template.endswith("/events"):
                path, unknown, nul = path + "?after=-1", path + "?golem=nope", path + "?after=x"
            for http, target in ((anonymous, path), (reader, path), (bound, path), (admin, unknown), (admin, nul)):
                if template.endswith("/events") and http is admin:
                    continue  # a stream that opens never ends: only its refusals are walked
                walk.send(http, verb, template, target, **body)
            walk.send(admin, verb, template, path, content=b"x" * (_MAX_BODY + 1))
            walk.send(admin, "PUT", template, path)
    walk.send(admin, "POST", "/api/v1/golems", "/api/v1/golems", json={"golem_id": "g1"})
    feedback = "/api/v1/dreams/{entry_id}/feedback"
    for _ in range(2):
        walk.send(admin, "POST", feedback, _fill(feedback, values), json={"decision": "reject", "feedback": "no"})
    assert [] == walk.undocumented()
    assert {400, 401, 403, 404, 405, 409, 413} <= {status for *_, status in walk.seen}


def test_without_tokens_the_loopback_refusals_are_documented(tmp_path: Path) -> None:
    """On a server without tokens (--insecure-local), every route answers a foreign Host with 421,
    a foreign Origin with 403, and a POST without a JSON body with 415: each documented for its route."""
    server = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve", "--insecure-local", tokens=False)
    try:
        document = httpx.get(server.url + "/openapi.json").json()
        walk = _Walk(document)
        http = httpx.Client(base_url=server.url, timeout=60)
        for template, operations in document["paths"].items():
            path = _fill(template, {"golem_id": "g1", "entry_id": "e", "cycle_id": "c", "version": "1"})
            for method in operations:
                verb = method.upper()
                walk.send(http, verb, template, path, headers={"host": "evil.example"})
                walk.send(http, verb, template, path, headers={"origin": "http://evil.example"})
                if verb == "POST":
                    walk.send(http, verb, template, path, content=b"{}", headers={"content-type": "text/plain"})
        assert [] == walk.undocumented()
        assert {403, 415, 421} <= {status for *_, status in walk.seen}
    finally:
        server.stop()


def test_the_cycle_route_documents_the_503_of_max_cycles() -> None:
    """POST .../cycles documents its 503 as the one server.max_cycles answers too (the refusal
    itself: tests/server/test_background_cycles.py)."""
    from oneiros.server._openapi import openapi

    cycles = openapi("0")["paths"]["/api/v1/golems/{golem_id}/cycles"]["post"]["responses"]["503"]
    assert (
        "The store is unavailable (StoreError), or the server runs server.max_cycles cycles already (WorkerError): "
        "retry when one has ended."
    ) == cycles["description"]


def test_a_token_bound_to_g1_gets_403_on_g2_routes_whatever_the_body(
    dreamt: tuple[Server, dict[str, str]],
) -> None:
    """A token bound to g2 posting a body each route refuses, to g1's write routes, gets 403 for the
    golem (before, 400 for the body: it was parsed before the token was checked), and on g1's
    dream 404 as if it were absent."""
    server, values = dreamt
    http = server.client("g2")
    paths = [f"/golems/g1/{what}" for what in ("episodes", "activity", "outcomes", "cycles", "recall")]
    json = {"content-type": "application/json"}
    answers = [http.post(path, content=b"\xff not json", headers=json) for path in paths]
    assert [(403, "token 'g2-agent' has no access to golem 'g1'")] * len(paths) == [
        (a.status_code, a.json()["error"]["message"]) for a in answers
    ]
    dream = http.post(f"/dreams/{values['entry_id']}/feedback", json={"decision": 7})
    assert (404, "EntryNotFound") == (dream.status_code, dream.json()["error"]["type"])
