"""Fixtures of the online tests: one store factory per backend (SQLite, PostgreSQL, memory), texts.

PostgreSQL cases are marked ``postgres`` and skipped unless NEARDUP_TEST_POSTGRES_DSN names a
server (``.ci/run`` starts a throwaway one); each test gets its own schema, dropped afterwards.
"""

from __future__ import annotations

import os
import uuid

import pytest

from neardup.online.store import MemoryStore, PostgresStore, open_store

PG_DSN = os.environ.get("NEARDUP_TEST_POSTGRES_DSN")


def pg_url(schema: str) -> str:
    assert PG_DSN
    return f"{PG_DSN}{'&' if '?' in PG_DSN else '?'}schema={schema}"


class StoreFactory:
    """Opens the test's store (again) by URL; memory stores are reused so they can be 'reopened'."""

    def __init__(self, kind: str, url: str) -> None:
        self.kind, self.url = kind, url
        self._memory: MemoryStore | None = None
        self.opened: list = []

    def open(self):
        if self.kind == "memory":
            self._memory = self._memory or MemoryStore()
            return self._memory
        store = open_store(self.url)
        self.opened.append(store)
        return store

    def cleanup(self) -> None:
        for store in self.opened:
            store.close()
        if self.kind == "postgres":
            store = open_store(self.url)
            assert isinstance(store, PostgresStore)
            store.drop()
            store.close()


def _factory(kind: str, tmp_path) -> StoreFactory:
    if kind == "sqlite":
        return StoreFactory(kind, f"sqlite:///{tmp_path / 'store.db'}")
    if kind == "postgres":
        if not PG_DSN:
            pytest.skip("NEARDUP_TEST_POSTGRES_DSN is not set")
        return StoreFactory(kind, pg_url(f"t_{uuid.uuid4().hex[:16]}"))
    return StoreFactory(kind, "memory://")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres), "memory"])
def stores(request, tmp_path):
    """A :class:`StoreFactory` for each backend."""
    factory = _factory(request.param, tmp_path)
    yield factory
    factory.cleanup()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def durable_stores(request, tmp_path):
    """Like ``stores`` but only the backends that persist (SQLite, PostgreSQL)."""
    factory = _factory(request.param, tmp_path)
    yield factory
    factory.cleanup()


STORY = ("The central bank of Freedonia raised its main interest rate by half a point to 7.5 pct on Tuesday, "
         "citing inflation that reached 6.2 pct in March. Governor Anna Berg said the board voted 5 to 2 for "
         "the increase and would watch wages closely. Analysts had expected a smaller move of a quarter point. "
         "The currency rose 1.3 pct against the dollar after the announcement, while bond yields climbed. "
         "Exporters warned that a stronger currency would hurt sales abroad in the second half of the year. "
         "The bank will publish its next inflation report in June, when it will also review its forecasts.")

OTHER = ("Heavy rain flooded parts of the northern valley overnight, closing two bridges and the main railway "
         "line. Emergency crews evacuated about 300 residents from low-lying villages, and schools stayed shut. "
         "Forecasters expect more storms over the weekend before drier weather arrives next week. Farmers said "
         "the harvest of late potatoes was now at risk in the worst-hit districts along the river banks.")

THIRD = ("A new museum of maritime history opened its doors in the old harbour warehouse on Saturday, showing "
         "ship models, maps and the logbooks of whaling captains. The city spent four years restoring the "
         "brick building, which had stood empty since the docks closed. Entry will be free for children "
         "during the first summer season, the director told reporters at the opening ceremony.")


@pytest.fixture
def texts():
    """Three unrelated stories."""
    return {"story": STORY, "other": OTHER, "third": THIRD}
