"""An exception no route expects, in a real application in this process (httpx's ASGI transport):
the guard answers with the JSON 500 and the security headers, and the traceback goes to the
server's log, never to the client."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import httpx
import pytest

from oneiros.config._load import OneirosConfig
from oneiros.server._app import create_app
from oneiros.server._auth import add_token
from oneiros.settings._server import ServerSettings
from oneiros.store._store import open_store
from tests.server.test_hostile_requests import SECURITY_HEADERS

pytestmark = pytest.mark.timeout(120)


def test_an_unexpected_exception_is_a_json_500_with_the_headers_and_the_traceback_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A route whose application method raises RuntimeError answers 500 with the one JSON error shape
    (InternalError, no detail), nosniff, referrer policy and CSP; the body holds no traceback or
    exception text, and the server log holds both, naming the request."""
    monkeypatch.delenv("ONEIROS_SERVER_TOKEN", raising=False)
    token = add_token(tmp_path / "tokens.toml", "reader", ("read",))
    config = OneirosConfig(server=ServerSettings(tokens_file=str(tmp_path / "tokens.toml"), follow=False))
    with open_store(f"sqlite:///{tmp_path}/events.db") as store:
        app = create_app(store, config)
        service = app.state.service

        def broken(*_args: object, **_kwargs: object) -> object:
            raise RuntimeError("the secret internals of a broken route")

        monkeypatch.setattr(service.app, "golems", broken)

        async def main() -> httpx.Response:
            transport = httpx.ASGITransport(app=app)
            headers = {"Authorization": f"Bearer {token}"}
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", headers=headers) as client:
                return await client.get("/api/v1/golems")

        try:
            with caplog.at_level(logging.ERROR, logger="oneiros.server"):
                answer = anyio.run(main)
        finally:
            service.close()
    assert 500 == answer.status_code
    assert {
        "error": {"type": "InternalError", "message": "internal server error", "status": 500, "attributes": {}}
    } == answer.json()
    assert "application/json" == answer.headers["content-type"]
    assert SECURITY_HEADERS == {name: answer.headers.get(name, "") for name in SECURITY_HEADERS}
    assert "Traceback" not in answer.text
    assert "secret internals" not in answer.text
    [logged] = [r for r in caplog.records if r.name == "oneiros.server"]
    assert "GET '/api/v1/golems' failed" == logged.getMessage()  # the path quoted: a newline in it starts no line
    assert logged.exc_info is not None
    assert (RuntimeError, "the secret internals of a broken route") == (
        logged.exc_info[0],
        str(logged.exc_info[1]),
    )
    assert "Traceback (most recent call last)" in caplog.text
    assert "RuntimeError: the secret internals of a broken route" in caplog.text
