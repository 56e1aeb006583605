"""Requests a client can get wrong, or a web page can forge, against a running ``oneiros serve``:
each is a 4xx naming what was wrong, carries the security headers, and writes nothing."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.server.conftest import Server, start_server

pytestmark = pytest.mark.timeout(240)

SECURITY_HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "content-security-policy": (
        "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
    ),
}


def _secured(response: httpx.Response) -> dict[str, str]:
    return {name: response.headers.get(name, "") for name in SECURITY_HEADERS}


def _error(response: httpx.Response) -> tuple[int, str, str]:
    error = response.json()["error"]
    return response.status_code, error["type"], error["message"]


@pytest.fixture
def served(store_url: str, tmp_path: Path) -> Iterator[Server]:
    """A server with tokens over each backend, and golem g1 with one episode."""
    running = start_server(store_url, tmp_path / "serve")
    http = running.client("write")
    assert 201 == http.post("/golems", json={"golem_id": "g1"}).status_code
    episode = {"tick": 1, "summary": "eth bounced at the range floor"}
    assert 201 == http.post("/golems/g1/episodes", json={"episodes": [episode]}).status_code
    yield running
    running.stop()


def test_unknown_golems_are_404_on_every_route_that_lists_their_rows(served: Server) -> None:
    """A golem never created is 404 GolemNotFound on the routes that list its rows, as on its own
    route; before, these answered 200 with an empty page."""
    http = served.client("read")
    paths = [
        "/golems/nope",
        "/dreams?golem=nope",
        "/dreaming/runs?golem=nope",
        *(f"/golems/nope/{what}" for what in ("journal", "staging", "beliefs", "noise", "observations", "memory")),
        "/golems/nope/memory/versions",
        "/golems/nope/journal?format=markdown",
    ]
    expected = [(404, "GolemNotFound", "golem 'nope' does not exist")] * len(paths)
    assert expected == [_error(http.get(path)) for path in paths]


def test_query_numbers_and_statuses_out_of_range_are_400_naming_them(served: Server) -> None:
    """Numbers a store cannot hold, numbers below zero, text for a number and an unknown status each
    name the parameter; the SSE stream refuses its resume point the same way."""
    http = served.client("read")
    cycle = "/golems/g1/cycles/c1/events"
    statuses = "proposed, reinforced, stale, rejected, promoted, refuted, displaced, expired, revoked"
    unknown = f"query parameter status='bogus' is not a status; use one of {statuses}"
    cases = {
        f"/golems/g1?at={2**63}": f"query parameter at={2**63} must be 0-{2**63 - 1}",
        f"{cycle}?cursor=abc": "query parameter cursor='abc' must be an integer",
        f"{cycle}?cursor={2**64}": f"query parameter cursor={2**64} must be 0-{2**63 - 1}",
        "/events?after=-5": f"query parameter after=-5 must be 0-{2**63 - 1}",
        f"/events?after={2**64}": f"query parameter after={2**64} must be 0-{2**63 - 1}",
        "/golems/g1/staging?status=bogus": unknown,
        "/dreams?golem=g1&status=proposed,bogus": unknown,
    }
    expected = [(400, "InputError", message) for message in cases.values()]
    assert expected == [_error(http.get(path)) for path in cases]


def test_memory_versions_that_do_not_exist_are_404(served: Server) -> None:
    """A MEMORY.md version the golem does not have, alone or in a diff, is 404 MemoryVersionNotFound
    saying which versions there are."""
    http = served.client("read")
    missing = "MEMORY.md of golem 'g1' has no versions yet (nothing has been promoted); there is no version"
    assert [
        (404, "MemoryVersionNotFound", f"{missing} 8"),
        (404, "MemoryVersionNotFound", f"{missing} 1"),
    ] == [_error(http.get("/golems/g1/memory/versions/8")), _error(http.get("/golems/g1/memory/diff?from=1&to=99"))]


def test_ids_with_a_nul_are_400_on_either_backend(served: Server) -> None:
    """A NUL in a golem, dream or cycle id (PostgreSQL cannot even compare one) is the caller's
    mistake, named; before, PostgreSQL made it a 500 or a 503."""
    http = served.client("write")
    cases = [
        ("GET", "/golems/a%00b", None, "golem_id 'a\\x00b'"),
        ("GET", "/golems/a%00b/journal", None, "golem_id 'a\\x00b'"),
        ("GET", "/dreams?golem=a%00b", None, "golem 'a\\x00b'"),
        ("GET", "/dreams/a%00b", None, "entry_id 'a\\x00b'"),
        ("GET", "/golems/g1/cycles/a%00b/events", None, "cycle_id 'a\\x00b'"),
        ("POST", "/golems/a%00b/episodes", {"episodes": [{"tick": 2, "summary": "x"}]}, "golem_id 'a\\x00b'"),
        ("POST", "/golems/a%00b/recall", {"query": "eth"}, "golem_id 'a\\x00b'"),
    ]
    expected = [(400, "InputError", f"{name} holds a control character; no id has one") for *_, name in cases]
    assert expected == [_error(http.request(method, path, json=body)) for method, path, body, _ in cases]
    assert 1 == http.get("/golems/g1").json()["episodes"]


def test_every_answer_carries_the_security_headers(served: Server) -> None:
    """401, 404, 405 and 413 answers carry the same security headers as a 200; GET /mcp is 405
    (stateless MCP sends nothing unasked) rather than a stream that never ends."""
    anonymous = served.client(None)
    reader = served.client("read")
    answers = {
        "ok": reader.get("/whoami"),
        "unauthenticated": anonymous.get("/golems"),
        "not found": reader.get("/golems/nope"),
        "too large": reader.post("/golems/g1/recall", content=b"x" * 2_000_000),
        "mcp get": httpx.get(served.url + "/mcp", headers=reader.headers, timeout=10),
    }
    assert {name: SECURITY_HEADERS for name in answers} == {name: _secured(r) for name, r in answers.items()}
    assert [200, 401, 404, 413, 405] == [r.status_code for r in answers.values()]
    assert "POST" == answers["mcp get"].headers["allow"]


def _raw_request(url: str, head: bytes) -> bytes:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(head)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    return answer


def test_a_header_byte_that_is_not_utf8_is_no_server_error(served: Server) -> None:
    """A header with a byte that is not UTF-8 (HTTP allows any byte) is read as HTTP reads it: an
    unknown token is 401, a public path is 200; before, every path was a 500."""
    for path, status in ((b"/api/v1/golems", b"401"), (b"/healthz", b"200")):
        head = b"GET " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \xff\xfe\r\n"
        answer = _raw_request(served.url, head + b"X-Note: caf\xe9\r\nConnection: close\r\n\r\n")
        assert status == answer.split(b" ", 2)[1]


@pytest.fixture
def local(tmp_path: Path) -> Iterator[Server]:
    """``oneiros serve --insecure-local``: no tokens, loopback only."""
    running = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve", "--insecure-local", tokens=False)
    yield running
    running.stop()


def test_without_tokens_rest_refuses_what_a_web_page_could_forge(local: Server) -> None:
    """Without tokens, REST refuses a foreign Host (DNS rebinding), a foreign Origin, and a body that
    is not JSON (a form post, which a page sends without asking), as /mcp does; a JSON request from
    loopback goes through. Nothing refused is written."""
    http = httpx.Client(base_url=local.url + "/api/v1", timeout=30)
    form = {"content-type": "application/x-www-form-urlencoded"}
    refused = [
        http.post("/golems", json={"golem_id": "g1"}, headers={"host": "evil.example"}),
        http.post("/golems", json={"golem_id": "g1"}, headers={"origin": "http://evil.example"}),
        http.post("/golems", content=b'{"golem_id": "g1"}', headers=form),
        http.post("/golems", content=b'{"golem_id": "g1"}'),
    ]
    assert [
        (
            421,
            "InputError",
            "Host 'evil.example' is not a loopback name; a server without tokens answers loopback only",
        ),
        (
            403,
            "InputError",
            "Origin 'http://evil.example' is not a loopback page; a server without tokens answers loopback only",
        ),
        (415, "InputError", "a request body must be application/json, not 'application/x-www-form-urlencoded'"),
        (415, "InputError", "a request body must be application/json, not 'unnamed'"),
    ] == [_error(r) for r in refused]
    assert 404 == http.get("/golems/g1").status_code
    origin = {"origin": local.url, "host": local.url.removeprefix("http://")}
    assert 201 == http.post("/golems", json={"golem_id": "g1"}, headers=origin).status_code


def test_mcp_tools_keep_the_rest_limits(served: Server) -> None:
    """An MCP recall query over 2 000 characters, feedback over 10 000 and a NUL in a golem id are
    refused with the REST route's error, not run."""
    import anyio

    from tests.server.test_mcp import _http

    answers: list[str] = []

    async def main() -> None:
        async with _http(served, "write")() as client:
            for tool, arguments in (
                ("recall_memory", {"golem": "g1", "query": "q" * 2001}),
                ("resolve_dream_feedback", {"entry_id": "d", "decision": "reinforce", "feedback": "f" * 10_001}),
                ("recall_memory", {"golem": "a\x00b", "query": "eth"}),
            ):
                result = await client.call_tool(tool, arguments)
                assert result.is_error
                answers.append(json.loads(result.content[0].text)["error"]["message"])

    anyio.run(main)
    assert [
        "arguments: Expected `str` of length <= 2000 - at `$.query`",
        "arguments: Expected `str` of length <= 10000 - at `$.feedback`",
        "golem 'a\\x00b' holds a control character; no id has one",
    ] == answers


def test_every_mcp_tool_reports_its_own_errors_in_the_typed_json_body(served: Server) -> None:
    """An argument a tool refuses itself is the typed JSON error body (class, message, status,
    attributes) on every tool, as REST answers it: record_episodes' bad episodes, list_dreams'
    unknown status (before, an empty list), wake_up on a golem that never dreamt and wake_up with a
    control character in cycle_id (before, plain text)."""
    import anyio

    from tests.server.test_mcp import _http

    errors: list[dict[str, object]] = []

    async def main() -> None:
        async with _http(served, "write")() as client:
            for tool, arguments in (
                ("record_episodes", {"golem": "g1", "episodes": []}),
                ("list_dreams", {"golem": "g1", "status": "proposed,bogus"}),
                ("wake_up", {"golem": "g1"}),
                ("wake_up", {"golem": "g1", "cycle_id": "a\x00b"}),
            ):
                result = await client.call_tool(tool, arguments)
                assert result.is_error
                errors.append(json.loads(result.content[0].text)["error"])

    anyio.run(main)
    statuses = "proposed, reinforced, stale, rejected, promoted, refuted, displaced, expired, revoked"
    assert [
        {
            "type": "InputError",
            "message": "arguments: Expected `array` of length >= 1 - at `$.episodes`",
            "status": 400,
            "attributes": {},
        },
        {
            "type": "InputError",
            "message": f"status='bogus' is not a status; use one of {statuses}",
            "status": 400,
            "attributes": {},
        },
        {
            "type": "CycleNotFound",
            "message": "golem 'g1' has not dreamt yet: it has no cycle",
            "status": 404,
            "attributes": {"cycle_id": None, "golem_id": "g1"},
        },
        {
            "type": "InputError",
            "message": "cycle_id 'a\\x00b' holds a control character; no id has one",
            "status": 400,
            "attributes": {},
        },
    ] == errors
    assert 1 == served.client().get("/golems/g1").json()["episodes"]
