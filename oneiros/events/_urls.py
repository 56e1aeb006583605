"""Store URLs: the parts of a ``postgresql://`` URL, for the store and anything else that connects."""

from __future__ import annotations

from urllib.parse import parse_qs, unquote, urlsplit

import msgspec

from oneiros._errors import InvalidStoreURL

__all__ = ["PostgresURL", "parse_postgres_url"]


class PostgresURL(msgspec.Struct, frozen=True, kw_only=True):
    """What ``postgresql://user:password@host:port/dbname?schema=name`` names."""

    dbname: str
    host: str = "127.0.0.1"
    port: int = 5432
    user: str = "postgres"
    password: str = ""
    schema: str = "public"

    @property
    def conninfo(self) -> str:
        """A libpq connection string (without the schema, which is not a connection setting)."""
        info = f"host={self.host} port={self.port} dbname={self.dbname} user={self.user}"
        return info + (f" password={self.password}" if self.password else "")


def parse_postgres_url(url: str) -> PostgresURL:
    """The parts of a PostgreSQL store URL; :class:`InvalidStoreURL` names what is wrong with it."""
    split = urlsplit(url)
    if split.scheme not in ("postgresql", "postgres"):
        raise InvalidStoreURL(url, "expected postgresql://user@host:port/dbname?schema=name")
    dbname = unquote(split.path.lstrip("/"))
    if not dbname:
        raise InvalidStoreURL(url, "no database name after the host, as in postgresql://host/dbname")
    try:
        port = split.port or 5432
    except ValueError:
        raise InvalidStoreURL(url, "the port is not a number") from None
    schema = parse_qs(split.query).get("schema", ["public"])[0]
    if not schema.replace("_", "").isalnum():
        raise InvalidStoreURL(url, f"schema {schema!r} must be letters, digits and underscores")
    return PostgresURL(
        dbname=dbname,
        host=split.hostname or "127.0.0.1",
        port=port,
        user=unquote(split.username or "postgres"),
        password=unquote(split.password or ""),
        schema=schema,
    )
