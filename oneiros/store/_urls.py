"""Store URLs: the parts of a ``postgresql://`` URL, for the store and anything else that connects."""

from __future__ import annotations

from urllib.parse import parse_qs, unquote, urlsplit

import msgspec

from oneiros._errors import InvalidStoreURL

__all__ = ["PostgresURL", "parse_postgres_url"]


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
