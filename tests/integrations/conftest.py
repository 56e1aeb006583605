"""An OneirosStore on each backend that keeps its log across processes: SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import postgres_url

pytest.importorskip("langgraph", reason="the langgraph extra is not installed")

from oneiros.integrations.langgraph import OneirosStore


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A store URL of this test's own, on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('store')}/events.db"
    return postgres_url(request.getfixturevalue("pg_schema"))


@pytest.fixture
def lg_store(store_url: str) -> Iterator[OneirosStore]:
    """An OneirosStore over a fresh store, closed afterwards."""
    with OneirosStore(store_url) as opened:
        yield opened
