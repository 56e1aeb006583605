"""Store URLs, parsed once into what they name: :class:`StoreURL` says which kind of store a URL
opens and where (a SQLite file, a PostgreSQL schema, memory), and where its projections live beside
it; every part that opens a store or its projections reads that value rather than the text again."""

from __future__ import annotations

from pathlib import Path
from typing import Literal
from urllib.parse import parse_qs, unquote, urlsplit

import msgspec

from oneiros._errors import InvalidStoreURL

__all__ = ["PostgresURL", "StoreURL", "parse_postgres_url"]


class PostgresURL(msgspec.Struct, frozen=True, kw_only=True):
    """What ``postgresql://user:password@host:port/dbname?schema=name&connect_timeout=5`` names."""

    dbname: str
    host: str = "127.0.0.1"
    port: int = 5432
    user: str = "postgres"
    password: str = ""
    schema: str = "public"
    connect_timeout: float = 5.0
    """Seconds to wait for the server before giving up (``?connect_timeout=``; not from the source documents)."""

    @property
    def conninfo(self) -> str:
        """A libpq connection string (the schema is not a connection setting, so it is left out)."""
        parts = {"host": self.host, "port": str(self.port), "dbname": self.dbname, "user": self.user}
        if self.password:
            parts["password"] = self.password
        return " ".join(f"{key}={_quoted(value)}" for key, value in parts.items())


def _quoted(value: str) -> str:
    # libpq's quoting: single quotes, with backslash and quote escaped, so any password survives.
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def parse_postgres_url(url: str) -> PostgresURL:
    """The parts of a PostgreSQL store URL; :class:`InvalidStoreURL` names what is wrong with it."""
    try:
        split = urlsplit(url)
    except ValueError as exc:  # an unclosed "[" of an IPv6 host
        raise InvalidStoreURL(url, str(exc)) from None
    if split.scheme not in ("postgresql", "postgres"):
        raise InvalidStoreURL(url, "expected postgresql://user@host:port/dbname?schema=name")
    dbname = unquote(split.path.lstrip("/"))
    if not dbname:
        raise InvalidStoreURL(url, "no database name after the host, as in postgresql://host/dbname")
    try:
        port = split.port or 5432
    except ValueError:
        raise InvalidStoreURL(url, "the port is not a number") from None
    query = parse_qs(split.query)
    schema = query.get("schema", ["public"])[0]
    if not schema.replace("_", "").isalnum():
        raise InvalidStoreURL(url, f"schema {schema!r} must be letters, digits and underscores")
    try:
        connect_timeout = float(query.get("connect_timeout", ["5"])[0])
    except ValueError:
        raise InvalidStoreURL(url, "connect_timeout must be a number of seconds") from None
    if not 0 < connect_timeout <= 3600:
        raise InvalidStoreURL(url, "connect_timeout must be between 0 and 3600 seconds")
    return PostgresURL(
        dbname=dbname,
        host=split.hostname or "127.0.0.1",
        port=port,
        user=unquote(split.username or "postgres"),
        password=unquote(split.password or ""),
        schema=schema,
        connect_timeout=connect_timeout,
    )


StoreKind = Literal["memory", "sqlite", "postgresql"]


class StoreURL(msgspec.Struct, frozen=True, kw_only=True):
    """What a store URL names, checked once: ``memory://``, ``sqlite:///relative.db``,
    ``sqlite:////absolute.db`` or ``postgresql://user:password@host:port/dbname?schema=name``."""

    url: str
    kind: StoreKind
    path: str = ""
    """The SQLite file (``kind == "sqlite"``)."""
    postgres: PostgresURL | None = None
    """The PostgreSQL server, database and schema (``kind == "postgresql"``)."""

    @classmethod
    def parse(cls, url: str) -> StoreURL:
        """``url`` as a value; :class:`InvalidStoreURL` names what is wrong with it."""
        scheme, sep, rest = url.partition("://")
        if not sep:
            raise InvalidStoreURL(url, "expected scheme://..., one of memory://, sqlite:///PATH, postgresql://...")
        if scheme == "memory":
            return cls(url=url, kind="memory")
        if scheme == "sqlite":
            if not rest.startswith("/") or rest == "/":
                raise InvalidStoreURL(url, "expected sqlite:///relative/path.db or sqlite:////absolute/path.db")
            return cls(url=url, kind="sqlite", path=rest[1:])
        if scheme in ("postgresql", "postgres"):
            parts = parse_postgres_url(url)
            try:
                import psycopg  # noqa: F401, PLC0415 - the optional extra, loaded only for PostgreSQL URLs
            except ImportError:  # pragma: no cover - depends on the install
                raise InvalidStoreURL(url, "PostgreSQL needs the extra: pip install 'oneiros[postgres]'") from None
            return cls(url=url, kind="postgresql", postgres=parts)
        raise InvalidStoreURL(url, f"unknown scheme {scheme!r}; expected memory, sqlite or postgresql")

    @property
    def connect_timeout(self) -> float:
        """Seconds to wait for the store's server (a file or memory answers at once)."""
        return self.postgres.connect_timeout if self.postgres is not None else 5.0

    def projections(self) -> str:
        """Where this store's projections live unless told otherwise: a sibling SQLite file, a sibling
        PostgreSQL schema (``<schema>_proj``, or ``oneiros_projections`` beside ``public``), or memory."""
        if self.kind == "sqlite":
            path = Path(self.path)
            return f"sqlite:///{path.with_name(path.stem + '.projections.db')}"
        if self.postgres is not None:
            base, _, query = self.url.partition("?")
            params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
            schema = self.postgres.schema
            params["schema"] = "oneiros_projections" if schema == "public" else f"{schema}_proj"
            return base + "?" + "&".join(f"{k}={v}" for k, v in params.items())
        return "memory://"
