"""Bearer tokens: scopes, golem bindings, and their hashes on disk.

A token is 32 random bytes shown once when it is made (``oneiros token add``); the tokens file keeps
only its SHA-256. A fast hash is enough for a secret of 256 random bits: nothing can be guessed
from it, and checking one costs a microsecond, not a key-stretching pause on every request.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import time
import tomllib
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

import msgspec

from oneiros._errors import ConfigError, Forbidden, InputError, Unauthenticated

__all__ = [
    "LOCAL",
    "SCOPES",
    "TOKEN_ENV",
    "Principal",
    "Scope",
    "TokenRecord",
    "Tokens",
    "add_token",
    "environment_tokens",
    "expiry",
    "hash_token",
    "load_tokens",
    "revoke_token",
]

Scope = Literal["read", "write", "admin"]
SCOPES: tuple[Scope, ...] = ("read", "write", "admin")
_PREFIX = "oneiros_"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# Each scope includes the ones before it: write can read, admin can do everything.
_RANK = {scope: n for n, scope in enumerate(SCOPES)}
TOKEN_ENV = "ONEIROS_SERVER_TOKEN"
"""A token the server accepts besides its tokens file, for a container that gets its secrets only
from the environment (compose.yaml's ``server``)."""
# As long as the tokens `oneiros token add` makes (32 random bytes, 43 characters in URL-safe
# base64); a shorter secret set by hand may be guessable.
_MIN_ENV_TOKEN = 32


class TokenRecord(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One line of the tokens file."""

    name: str
    sha256: str
    scopes: tuple[Scope, ...]
    golems: tuple[str, ...] = ()
    """The golems the token may see; empty for every golem."""
    expires: datetime | None = None
    """When the token stops working (UTC); None for never."""


class _TokensFile(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    tokens: list[TokenRecord] = msgspec.field(default_factory=list)


class Principal(msgspec.Struct, frozen=True, kw_only=True):
    """Who a request acts as: a token's name, scopes and golems."""

    name: str
    scopes: tuple[Scope, ...]
    golems: tuple[str, ...] = ()

    def has(self, scope: Scope) -> bool:
        return any(_RANK[own] >= _RANK[scope] for own in self.scopes)

    def sees(self, golem_id: str) -> bool:
        return not self.golems or golem_id in self.golems

    def require(self, scope: Scope, golem_id: str | None = None) -> None:
        """Raise Forbidden unless this principal has ``scope`` (on ``golem_id`` when given)."""
        if not self.has(scope):
            raise Forbidden(self.name, scope)
        if golem_id is not None and not self.sees(golem_id):
            raise Forbidden(self.name, scope, golem_id)


LOCAL = Principal(name="local", scopes=("admin",))
"""Who a request acts as when the server runs with ``--insecure-local`` and no token is sent, and
who ``oneiros mcp`` over stdio acts as: the user who can read the store anyway."""


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def load_tokens(path: str | Path) -> list[TokenRecord]:
    """The tokens in ``path``; none if the file does not exist."""
    file = Path(path)
    if not file.exists():
        return []
    try:
        data = tomllib.loads(file.read_text())
        records = msgspec.convert(data, _TokensFile).tokens
    except (tomllib.TOMLDecodeError, msgspec.ValidationError) as exc:
        raise ConfigError(f"tokens file {str(file)!r}: {exc}") from None
    # A date-time written without an offset (TOML's local date-time) is read as UTC.
    return [
        msgspec.structs.replace(r, expires=r.expires.replace(tzinfo=UTC))
        if r.expires is not None and r.expires.tzinfo is None
        else r
        for r in records
    ]


_SPAN = re.compile(r"(\d+)([mhdw])")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def expiry(text: str, now: datetime) -> datetime:
    """When a token given ``--expires text`` at ``now`` expires: a span (``90m``, ``12h``, ``30d``,
    ``2w``) from now, or a date or time in ISO 8601 (UTC unless it names its offset)."""
    span = _SPAN.fullmatch(text.strip())
    if span is not None:
        return now + timedelta(**{_UNITS[span.group(2)]: int(span.group(1))})
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise InputError(f"--expires {text!r} is neither a span (90m, 12h, 30d, 2w) nor an ISO date or time") from None
    when = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    if when <= now:
        raise InputError(f"--expires {text!r} is in the past")
    return when.astimezone(UTC)


def _lines(record: TokenRecord) -> list[str]:
    lines = [
        "[[tokens]]",
        f"name = {_toml(record.name)}",
        f'sha256 = "{record.sha256}"',
        f"scopes = [{', '.join(_toml(s) for s in record.scopes)}]",
        f"golems = [{', '.join(_toml(g) for g in record.golems)}]",
    ]
    if record.expires is not None:
        lines.append(f"expires = {record.expires.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}")  # a TOML date-time
    return lines


def add_token(
    path: str | Path,
    name: str,
    scopes: tuple[Scope, ...],
    golems: tuple[str, ...] = (),
    expires: datetime | None = None,
) -> str:
    """Make a token, store its hash under ``name`` in ``path`` (until ``expires``, if given), and
    return the token (shown once)."""
    if not _NAME.fullmatch(name):
        raise InputError(f"token name {name!r} must be 1-64 letters, digits, '.', '_' or '-'")
    if not scopes:
        raise InputError("a token needs at least one scope: read, write or admin")
    existing = load_tokens(path)
    if any(t.name == name for t in existing):
        raise InputError(f"a token named {name!r} already exists in {str(path)!r}")
    token = _PREFIX + secrets.token_urlsafe(32)
    record = TokenRecord(name=name, sha256=hash_token(token), scopes=scopes, golems=golems, expires=expires)
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    with file.open("a") as out:
        out.write(("\n" if existing else "") + "\n".join(_lines(record)) + "\n")
    file.chmod(0o600)
    return token


def revoke_token(path: str | Path, name: str) -> None:
    """Remove the token named ``name`` from ``path``; a running server refuses it within a second.

    The file is written whole beside the old one and moved over it, so a server reading it sees
    the old file or the new one, never half of one."""
    existing = load_tokens(path)
    kept = [t for t in existing if t.name != name]
    if len(kept) == len(existing):
        raise InputError(f"no token named {name!r} in {str(path)!r}")
    file = Path(path)
    fresh = file.with_name(file.name + ".new")
    fresh.write_text("\n".join("\n".join(_lines(t)) + "\n" for t in kept))
    fresh.chmod(0o600)
    os.replace(fresh, file)


def environment_tokens(environ: Mapping[str, str]) -> list[TokenRecord]:
    """The token in ``ONEIROS_SERVER_TOKEN``, if set: named ``environment``, with every scope and
    every golem. Only its hash is kept."""
    token = environ.get(TOKEN_ENV, "").strip()
    if not token:
        return []
    if len(token) < _MIN_ENV_TOKEN:
        raise ConfigError(
            f"{TOKEN_ENV} is {len(token)} characters; use at least {_MIN_ENV_TOKEN} random ones "
            '(python -c "import secrets; print(secrets.token_urlsafe(32))")'
        )
    return [TokenRecord(name="environment", sha256=hash_token(token), scopes=("admin",))]


def _toml(text: str) -> str:
    return msgspec.json.encode(text).decode()  # a JSON string is a valid TOML basic string


class Tokens:
    """The known tokens by hash, checked on every request.

    With a ``path``, its tokens are read again when the file changes (looked at once a
    ``refresh_s`` at most): a token removed from it (``oneiros token revoke``) is refused within
    that, without a restart. A file that cannot be read as tokens keeps the tokens read last."""

    def __init__(self, records: list[TokenRecord], *, path: str | Path | None = None, refresh_s: float = 1.0) -> None:
        self._fixed = records
        self._path = Path(path) if path is not None else None
        self._refresh_s = refresh_s
        self._checked = time.monotonic()
        self._seen = self._stamp()
        self._by_hash = {r.sha256: r for r in [*(load_tokens(self._path) if self._path else []), *records]}

    def __len__(self) -> int:
        return len(self._by_hash)

    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            stat = os.stat(self._path) if self._path is not None else None
        except OSError:
            return None
        return None if stat is None else (stat.st_mtime_ns, stat.st_size, stat.st_ino)

    def _refresh(self) -> None:
        now = time.monotonic()
        if self._path is None or now - self._checked < self._refresh_s:
            return
        self._checked = now
        stamp = self._stamp()
        if stamp == self._seen:
            return
        try:
            records = load_tokens(self._path)
        except ConfigError:
            return  # mid-edit by hand, say: the next look reads it again
        self._seen = stamp
        self._by_hash = {r.sha256: r for r in [*records, *self._fixed]}

    def authenticate(self, authorization: str | None) -> Principal:
        """The principal an ``Authorization: Bearer <token>`` header names; Unauthenticated if none."""
        if not authorization:
            raise Unauthenticated("no bearer token")
        kind, _, token = authorization.partition(" ")
        if kind.lower() != "bearer" or not token.strip():
            raise Unauthenticated("the Authorization header is not 'Bearer <token>'")
        self._refresh()
        record = self._by_hash.get(hash_token(token.strip()))
        if record is None:
            raise Unauthenticated("unknown token")
        if record.expires is not None and datetime.now(UTC) >= record.expires:
            when = f"{record.expires.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
            raise Unauthenticated(f"token {record.name!r} expired at {when}")
        return Principal(name=record.name, scopes=record.scopes, golems=record.golems)
