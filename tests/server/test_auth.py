"""Bearer tokens on a real server: no token 401, wrong scope 403, another golem's data never
visible; the server refuses to start unprotected; tokens are stored hashed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from oneiros.server._auth import Principal, Tokens, add_token, hash_token, load_tokens
from tests.server.conftest import Server, read_events, start_server
from tests.server.test_rest import _dreamt, _ok

pytestmark = pytest.mark.timeout(180)


def test_no_token_or_an_unknown_one_is_401(server: Server) -> None:
    """Every /api/v1 route and /mcp want a known bearer token; the answer names why."""
    for path, token in (("/golems", None), ("/dreams", "oneiros_not-a-token"), ("/events", None)):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        answer = httpx.get(server.url + "/api/v1" + path, headers=headers)
        assert 401 == answer.status_code
        assert "Bearer" == answer.headers["www-authenticate"]
        expected = "not authenticated: unknown token" if token else "not authenticated: no bearer token"
        assert ("Unauthenticated", expected) == (answer.json()["error"]["type"], answer.json()["error"]["message"])
    assert 401 == httpx.post(server.url + "/mcp", json={}).status_code
    assert 200 == httpx.get(server.url + "/openapi.json").status_code


def test_a_read_token_cannot_write(server: Server) -> None:
    """A read token reads, and gets 403 naming the scope on every write."""
    _dreamt(server.client("write"))
    reader = server.client("read")
    _ok(reader.get("/dreams", params={"golem": "g1"}))
    dream = _ok(reader.get("/dreams", params={"golem": "g1", "limit": 1}))["items"][0]["entry_id"]
    for answer in (
        reader.post("/golems", json={"golem_id": "g9"}),
        reader.post("/golems/g1/cycles", json={}),
        reader.post(f"/dreams/{dream}/feedback", json={"decision": "reject", "feedback": "no"}),
        reader.post("/golems/g1/outcomes", json={"tick": 1, "verdict": "confirms"}),
    ):
        assert 403 == answer.status_code
        assert {
            "type": "Forbidden",
            "message": "token 'reader' has no access to the 'write' scope",
            "status": 403,
            "attributes": {"token": "reader", "scope": "write", "golem_id": None},
        } == answer.json()["error"]


def test_a_token_bound_to_one_golem_never_sees_another(server: Server) -> None:
    """g1's token lists only g1, gets 403 on g2's routes and 404 on g2's dreams, and its events
    stream carries nothing of g2."""
    admin = server.client("admin")
    _dreamt(admin, "g1")
    _dreamt(admin, "g2")
    g1 = server.client("g1")
    assert ["g1"] == [g["golem_id"] for g in _ok(g1.get("/golems"))["items"]]
    for path in ("/golems/g2", "/golems/g2/journal", "/golems/g2/staging", "/golems/g2/memory"):
        answer = g1.get(path)
        assert (403, "token 'g1-agent' has no access to golem 'g2'") == (
            answer.status_code,
            answer.json()["error"]["message"],
        )
    assert 403 == g1.get("/dreams", params={"golem": "g2"}).status_code
    assert 403 == g1.post("/golems/g2/recall", json={"query": "btc"}).status_code
    theirs = _ok(admin.get("/dreams", params={"golem": "g2", "limit": 1}))["items"][0]["entry_id"]
    hidden = g1.get(f"/dreams/{theirs}")
    assert (404, "EntryNotFound") == (hidden.status_code, hidden.json()["error"]["type"])
    refused = g1.post(f"/dreams/{theirs}/feedback", json={"decision": "reject", "feedback": "not mine"})
    assert 404 == refused.status_code
    assert "proposed" == _ok(admin.get(f"/dreams/{theirs}"))["status"]
    # Unfiltered dreams default to the token's one golem.
    assert {"g1"} == {d["golem_id"] for d in _ok(g1.get("/dreams", params={"limit": 500}))["items"]}
    golems = {row["golem_id"].partition(":")[0] for _name, row in read_events(server, g1.headers, after=0, raw=True)}
    assert {"g1"} == golems
    assert 403 == httpx.get(server.url + "/api/v1/events", params={"golem": "g2"}, headers=g1.headers).status_code


def test_serve_refuses_to_start_without_tokens(tmp_path: Path) -> None:
    """No tokens: refused unless --insecure-local on loopback; --insecure-local on 0.0.0.0 refused too."""

    def serve(*extra: str) -> subprocess.CompletedProcess[str]:
        env = {"ONEIROS_SERVER__TOKENS_FILE": str(tmp_path / "none.toml"), "PATH": "/usr/bin:/bin"}
        command = [sys.executable, "-m", "oneiros", "serve", "--store", f"sqlite:///{tmp_path}/e.db", *extra]
        return subprocess.run(command, check=False, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)

    plain = serve()
    assert 2 == plain.returncode
    assert (
        f"error: no tokens in '{tmp_path / 'none.toml'}': add one with `oneiros token add`, or pass "
        "--insecure-local to serve without authentication on loopback"
    ) == " ".join(plain.stderr.split())
    exposed = serve("--insecure-local", "--host", "0.0.0.0")
    assert 2 == exposed.returncode
    assert "error: --insecure-local serves without authentication on loopback only, not on '0.0.0.0'" == " ".join(
        exposed.stderr.split()
    )


def test_insecure_local_serves_loopback_without_tokens(tmp_path: Path) -> None:
    """With --insecure-local and no tokens, a loopback client needs no token."""
    running = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve", "--insecure-local", tokens=False)
    try:
        created = httpx.post(running.url + "/api/v1/golems", json={"golem_id": "g1"})
        assert (201, "g1") == (created.status_code, created.json()["golem_id"])
    finally:
        running.stop()


def test_tokens_are_stored_hashed_and_checked_by_hash(tmp_path: Path) -> None:
    """The file keeps a SHA-256 per token, never the token; the token command prints it once."""
    path = tmp_path / "tokens.toml"
    token = add_token(path, "agent", ("read", "write"), ("g1",))
    text = path.read_text()
    assert token not in text
    assert hash_token(token) in text
    assert 0o600 == path.stat().st_mode & 0o777
    [record] = load_tokens(path)
    assert (("read", "write"), ("g1",)) == (record.scopes, record.golems)
    assert Principal(name="agent", scopes=("read", "write"), golems=("g1",)) == Tokens([record]).authenticate(
        f"Bearer {token}"
    )
    add_ops = ["token", "add", "ops", "--scope", "admin", "--tokens", str(path), "--json", "--expires", "2099-01-01"]
    made = subprocess.run(
        [sys.executable, "-m", "oneiros", *add_ops],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert 0 == made.returncode, made.stderr
    shown = httpx.Response(200, content=made.stdout).json()
    assert hash_token(shown["token"]) in path.read_text()
    listed = subprocess.run(
        [sys.executable, "-m", "oneiros", "token", "list", "--tokens", str(path), "--json"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert [
        {"name": "agent", "scopes": ["read", "write"], "golems": ["g1"], "expires": None},
        {"name": "ops", "scopes": ["admin"], "golems": [], "expires": "2099-01-01T00:00:00Z"},
    ] == httpx.Response(200, content=listed.stdout).json()
    again = subprocess.run(
        [sys.executable, "-m", "oneiros", "token", "add", "ops", "--scope", "read", "--tokens", str(path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (2, f"error: a token named 'ops' already exists in '{path}'") == (
        again.returncode,
        " ".join(again.stderr.split()),
    )


def test_cors_answers_only_the_configured_origins(tmp_path: Path) -> None:
    """With server.cors_origins set, a preflight from that origin is allowed before any token is
    asked for; another origin gets no CORS header."""
    running = start_server(
        f"sqlite:///{tmp_path}/events.db",
        tmp_path / "serve",
        env={"ONEIROS_SERVER__CORS_ORIGINS": '["https://app.example"]'},
    )
    try:
        preflight = {"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "Authorization"}
        allowed = httpx.options(running.url + "/api/v1/golems", headers={"Origin": "https://app.example", **preflight})
        assert (200, "https://app.example") == (allowed.status_code, allowed.headers["access-control-allow-origin"])
        other = httpx.options(running.url + "/api/v1/golems", headers={"Origin": "https://evil.example", **preflight})
        assert "access-control-allow-origin" not in other.headers
        read = running.client("read").get("/golems", headers={"Origin": "https://app.example"})
        assert (200, "https://app.example") == (read.status_code, read.headers["access-control-allow-origin"])
    finally:
        running.stop()
