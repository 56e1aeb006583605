"""A store URL is parsed once into what it names, and the projections' place is derived from that."""

from __future__ import annotations

import pytest

from oneiros._errors import InvalidStoreURL
from oneiros.store._urls import StoreURL


@pytest.mark.parametrize(
    ("url", "kind", "path", "projections"),
    [
        ("memory://", "memory", "", "memory://"),
        ("sqlite:///.oneiros/events.db", "sqlite", ".oneiros/events.db", "sqlite:///.oneiros/events.projections.db"),
        ("sqlite:////abs/e.db", "sqlite", "/abs/e.db", "sqlite:////abs/e.projections.db"),
        ("postgresql://u@h:5433/db", "postgresql", "", "postgresql://u@h:5433/db?schema=oneiros_projections"),
        ("postgresql://u@h/db?schema=ours", "postgresql", "", "postgresql://u@h/db?schema=ours_proj"),
    ],
)
def test_a_url_names_its_kind_its_place_and_its_projections(url: str, kind: str, path: str, projections: str) -> None:
    """Each kind of URL gives its kind, its file (SQLite) and the sibling its projections live in."""
    where = StoreURL.parse(url)
    assert (kind, path, projections) == (where.kind, where.path, where.projections())


def test_a_postgresql_url_carries_its_parts() -> None:
    """The server, database, schema and timeout are read once, with the URL's own values."""
    where = StoreURL.parse("postgresql://me:pw@db.example:6000/app?schema=s1&connect_timeout=2")
    assert where.postgres is not None
    assert ("db.example", 6000, "app", "s1", 2.0) == (
        where.postgres.host,
        where.postgres.port,
        where.postgres.dbname,
        where.postgres.schema,
        where.connect_timeout,
    )


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("events.db", "expected scheme://"),
        ("sqlite://rel.db", "expected sqlite:///relative/path.db"),
        ("mysql://h/db", "unknown scheme 'mysql'"),
        ("postgresql://h", "no database name"),
    ],
)
def test_a_bad_url_is_refused_naming_what_is_wrong(url: str, reason: str) -> None:
    """A URL that names no store is an InvalidStoreURL saying why, before anything is opened."""
    with pytest.raises(InvalidStoreURL, match=reason):
        StoreURL.parse(url)
