"""Tokens that stop working: revoked (``oneiros token revoke``, or the entry deleted by hand) they
are refused by a running server within seconds, without a restart; given ``--expires`` they are
refused once it has passed, with a 401 that says so."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from oneiros import InputError, Unauthenticated
from oneiros.server._auth import Tokens, add_token, expiry, load_tokens, revoke_token
from tests.server.conftest import start_server

pytestmark = pytest.mark.timeout(120)

NOW = datetime(2026, 11, 28, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90m", datetime(2026, 11, 28, 11, 30, tzinfo=UTC)),
        ("12h", datetime(2026, 11, 28, 22, 0, tzinfo=UTC)),
        ("30d", datetime(2026, 12, 28, 10, 0, tzinfo=UTC)),
        ("2w", datetime(2026, 12, 12, 10, 0, tzinfo=UTC)),
        ("2027-01-01", datetime(2027, 1, 1, tzinfo=UTC)),
        ("2027-01-01T09:00+02:00", datetime(2027, 1, 1, 7, 0, tzinfo=UTC)),
    ],
)
def test_expires_takes_a_span_or_an_iso_time(text: str, expected: datetime) -> None:
    """--expires is a span from now (minutes, hours, days, weeks) or an ISO date or time, UTC
    unless it names its offset."""
    assert expected == expiry(text, NOW)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("soon", "--expires 'soon' is neither a span (90m, 12h, 30d, 2w) nor an ISO date or time"),
        ("2020-01-01", "--expires '2020-01-01' is in the past"),
    ],
)
def test_an_expiry_that_is_no_time_or_past_is_refused(text: str, message: str) -> None:
    """A word that is no span or date, and a date already past, are each one InputError."""
    with pytest.raises(InputError) as caught:
        expiry(text, NOW)
    assert message == str(caught.value)


def test_an_expired_token_is_401_saying_when_it_expired(tmp_path: Path) -> None:
    """A token past its expiry is Unauthenticated naming it and the time; before, it worked."""
    path = tmp_path / "tokens.toml"
    token = add_token(path, "brief", ("read",), expires=datetime(2026, 1, 2, 3, 4, tzinfo=UTC))
    with pytest.raises(Unauthenticated) as caught:
        Tokens([], path=path).authenticate(f"Bearer {token}")
    assert "not authenticated: token 'brief' expired at 2026-01-02 03:04 UTC" == str(caught.value)


def test_an_expiry_written_by_hand_without_an_offset_is_utc(tmp_path: Path) -> None:
    """A TOML local date-time (no offset) is read as UTC, not compared naive with an aware time."""
    path = tmp_path / "tokens.toml"
    add_token(path, "a", ("read",))
    path.write_text(path.read_text() + "expires = 2030-05-06T07:08:09\n")
    assert [datetime(2030, 5, 6, 7, 8, 9, tzinfo=UTC)] == [t.expires for t in load_tokens(path)]


def test_a_revoked_token_is_refused_at_the_next_look_at_the_file(tmp_path: Path) -> None:
    """Tokens re-read the file when it changed: a revoked token is unknown at once (with no wait
    between looks), the others still known."""
    path = tmp_path / "tokens.toml"
    kept, gone = add_token(path, "kept", ("read",)), add_token(path, "gone", ("write",), ("g1",))
    tokens = Tokens([], path=path, refresh_s=0)
    assert "gone" == tokens.authenticate(f"Bearer {gone}").name
    revoke_token(path, "gone")
    with pytest.raises(Unauthenticated) as caught:
        tokens.authenticate(f"Bearer {gone}")
    assert ("not authenticated: unknown token", "kept") == (
        str(caught.value),
        tokens.authenticate(f"Bearer {kept}").name,
    )
    with pytest.raises(InputError) as missing:
        revoke_token(path, "gone")
    assert f"no token named 'gone' in {str(path)!r}" == str(missing.value)


def _status_within(url: str, token: str, status: int, seconds: float = 15) -> int:
    """The status of GET /whoami, asked until it is ``status`` or ``seconds`` passed."""
    deadline = time.monotonic() + seconds
    while True:
        answer = httpx.get(url + "/api/v1/whoami", headers={"Authorization": f"Bearer {token}"}, timeout=10)
        if answer.status_code == status or time.monotonic() > deadline:
            return answer.status_code
        time.sleep(0.1)


def test_a_running_server_refuses_revoked_and_expired_tokens_without_a_restart(tmp_path: Path) -> None:
    """`oneiros token revoke` while the server runs: the token is 401 within seconds, others work;
    an entry given a past expiry by hand is 401 saying so; with every token gone the server
    refuses all (it does not fall back to serving without tokens)."""
    server = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve")
    try:
        path = tmp_path / "serve" / "tokens.toml"
        assert 200 == _status_within(server.url, server.tokens["read"], 200)
        revoked = subprocess.run(
            [sys.executable, "-m", "oneiros", "token", "revoke", "reader", "--tokens", str(path)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert (0, f"token 'reader' removed from {path}") == (revoked.returncode, revoked.stdout.strip())
        assert 401 == _status_within(server.url, server.tokens["read"], 401)
        assert 200 == _status_within(server.url, server.tokens["write"], 200)
        lines = path.read_text().replace('name = "writer"', 'name = "writer"\nexpires = 2020-01-01T00:00:00Z')
        path.write_text(lines)
        assert 401 == _status_within(server.url, server.tokens["write"], 401)
        answer = httpx.get(server.url + "/api/v1/whoami", headers={"Authorization": f"Bearer {server.tokens['write']}"})
        assert "not authenticated: token 'writer' expired at 2020-01-01 00:00 UTC" == answer.json()["error"]["message"]
        path.write_text("")
        assert 401 == _status_within(server.url, server.tokens["admin"], 401)
        assert 401 == httpx.get(server.url + "/api/v1/whoami").status_code
    finally:
        server.stop()


def test_token_add_with_expires_writes_it(tmp_path: Path) -> None:
    """`oneiros token add NAME --scope read --expires 30d` stores the expiry with the token."""
    path = tmp_path / "tokens.toml"
    made = subprocess.run(
        [sys.executable, "-m", "oneiros", "token", "add", "t", "--scope", "read", "--expires", "30d",
         "--tokens", str(path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert 0 == made.returncode, made.stderr
    [record] = load_tokens(path)
    assert record.expires is not None
    assert 29 < (record.expires - datetime.now(UTC)).total_seconds() / 86_400 <= 30
