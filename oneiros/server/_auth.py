"""Bearer tokens: scopes, golem bindings, and their hashes on disk.

A token is 32 random bytes shown once when it is made (``oneiros token add``); the tokens file keeps
only its SHA-256. A fast hash is enough for a secret of 256 random bits: nothing can be guessed
from it, and checking one costs a microsecond, not a key-stretching pause on every request.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import tomllib
from collections.abc import Mapping
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
    "hash_token",
    "load_tokens",
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
        return msgspec.convert(data, _TokensFile).tokens
    except (tomllib.TOMLDecodeError, msgspec.ValidationError) as exc:
        raise ConfigError(f"tokens file {str(file)!r}: {exc}") from None


def add_token(path: str | Path, name: str, scopes: tuple[Scope, ...], golems: tuple[str, ...] = ()) -> str:
    """Make a token, store its hash under ``name`` in ``path``, and return the token (shown once)."""
    if not _NAME.fullmatch(name):
        raise InputError(f"token name {name!r} must be 1-64 letters, digits, '.', '_' or '-'")
    if not scopes:
        raise InputError("a token needs at least one scope: read, write or admin")
    existing = load_tokens(path)
    if any(t.name == name for t in existing):
        raise InputError(f"a token named {name!r} already exists in {str(path)!r}")
    token = _PREFIX + secrets.token_urlsafe(32)
    record = TokenRecord(name=name, sha256=hash_token(token), scopes=scopes, golems=golems)
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        "[[tokens]]",
        f"name = {_toml(name)}",
        f'sha256 = "{record.sha256}"',
        f"scopes = [{', '.join(_toml(s) for s in scopes)}]",
        f"golems = [{', '.join(_toml(g) for g in golems)}]",
    ]
    with file.open("a") as out:
        out.write(("\n" if existing else "") + "\n".join(lines) + "\n")
    file.chmod(0o600)
    return token


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
    """The known tokens by hash, checked on every request."""

    def __init__(self, records: list[TokenRecord]) -> None:
        self._by_hash = {r.sha256: r for r in records}

    def __len__(self) -> int:
        return len(self._by_hash)

    def authenticate(self, authorization: str | None) -> Principal:
        """The principal an ``Authorization: Bearer <token>`` header names; Unauthenticated if none."""
        if not authorization:
            raise Unauthenticated("no bearer token")
        kind, _, token = authorization.partition(" ")
        if kind.lower() != "bearer" or not token.strip():
            raise Unauthenticated("the Authorization header is not 'Bearer <token>'")
        record = self._by_hash.get(hash_token(token.strip()))
        if record is None:
            raise Unauthenticated("unknown token")
        return Principal(name=record.name, scopes=record.scopes, golems=record.golems)
