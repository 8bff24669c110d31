"""Stores: persistence, SQLite durability settings, and clear errors for bad or damaged databases."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from neardup.online.detector import Detector, OnlineConfig
from neardup.online.store import DocRecord, SQLiteStore, StoreError, open_store

from .conftest import OTHER, STORY


def test_documents_and_keys_survive_reopening(durable_stores):
    d = Detector(durable_stores.open(), OnlineConfig())
    d.add("a", STORY, {"lang": "en"})
    d.close()
    d2 = Detector(durable_stores.open(), OnlineConfig())
    rec = d2.get("a")
    assert rec.metadata == {"lang": "en"} and rec.text == STORY and rec.created_at.endswith("+00:00")
    assert d2.add("b", STORY.upper()).original_id == "a"  # keys were stored and are looked up


def test_lookup_counts_shared_keys_and_caps_each_key(stores):
    store = stores.open()
    with store.transaction():
        for i in range(5):
            store.insert(DocRecord(seq=0, id=f"d{i}", status="original", original_id=f"d{i}", text_hash="h"),
                         np.array([1, 2, 100 + i], dtype=np.int64))
    votes = store.lookup(np.array([1, 2, 102], dtype=np.int64), per_key_limit=10)
    assert votes == {1: 2, 2: 2, 3: 3, 4: 2, 5: 2}
    capped = store.lookup(np.array([1], dtype=np.int64), per_key_limit=2)
    assert sorted(capped) == [4, 5]  # the most recent documents of a crowded key


def test_a_failed_transaction_leaves_nothing(stores):
    store = stores.open()
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.insert(DocRecord(seq=0, id="x", status="original", original_id="x", text_hash="h"),
                         np.array([5], dtype=np.int64))
            raise RuntimeError("boom")
    assert store.get("x") is None and store.lookup(np.array([5], dtype=np.int64), 10) == {}


def test_sqlite_runs_in_wal_mode_with_full_sync(tmp_path):
    store = SQLiteStore(tmp_path / "s.db")
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert store.integrity_check() == "ok"
    normal = open_store(f"sqlite:///{tmp_path / 'n.db'}?synchronous=normal")
    assert normal.conn.execute("PRAGMA synchronous").fetchone()[0] == 1


def test_a_corrupt_database_file_is_a_clear_error_naming_the_file(tmp_path):
    bad = tmp_path / "corrupt.db"
    bad.write_bytes(b"this is not a database at all" * 200)
    with pytest.raises(StoreError, match=r"corrupt\.db.*not a readable SQLite database"):
        open_store(f"sqlite:///{bad}")


def test_a_damaged_page_is_reported_naming_the_file(tmp_path):
    path = tmp_path / "damaged.db"
    d = Detector(SQLiteStore(path), OnlineConfig())
    for i in range(300):
        d.add(str(i), f"{STORY} {i} {OTHER} {i * 7}")
    d.close()
    raw = bytearray(path.read_bytes())
    assert len(raw) > 40_000
    for off in range(8192, len(raw) - 4096, 4096):  # scribble over every page after the first two
        raw[off: off + 200] = b"\xff" * 200
    path.write_bytes(bytes(raw))
    with pytest.raises(StoreError, match="damaged.db"):
        store = SQLiteStore(path)
        Detector(store, OnlineConfig()).add("new", STORY)
        assert store.integrity_check() == "ok"


def test_another_sqlite_database_is_not_taken_for_a_store(tmp_path):
    path = tmp_path / "other.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE users (name TEXT)")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="other.db.*not a neardup store"):
        open_store(f"sqlite:///{path}")


def test_bad_store_urls_and_paths(tmp_path):
    with pytest.raises(StoreError, match="unsupported store URL"):
        open_store("mysql://x")
    with pytest.raises(StoreError, match="does not exist"):
        open_store(f"sqlite:///{tmp_path / 'missing' / 'x.db'}")
    with pytest.raises(StoreError, match="is a folder"):
        open_store(f"sqlite:///{tmp_path}")
    with pytest.raises(StoreError, match="unknown option"):
        open_store(f"sqlite:///{tmp_path / 'x.db'}?journal=off")
    with pytest.raises(StoreError, match="cache_mb must be a number of megabytes"):
        open_store(f"sqlite:///{tmp_path / 'x.db'}?cache_mb=lots")
    with pytest.raises(StoreError, match="cache_mb must be >= 0"):
        open_store(f"sqlite:///{tmp_path / 'x.db'}?cache_mb=-1")


def test_sqlite_page_cache_is_set_from_the_url(tmp_path):
    default = open_store(f"sqlite:///{tmp_path / 'a.db'}")
    small = open_store(f"sqlite:///{tmp_path / 'b.db'}?cache_mb=2")
    try:
        # PRAGMA cache_size < 0 is a size in KiB.
        assert default.conn.execute("PRAGMA cache_size").fetchone()[0] == -256 * 1024
        assert small.conn.execute("PRAGMA cache_size").fetchone()[0] == -2 * 1024
    finally:
        default.close()
        small.close()


@pytest.mark.postgres
def test_an_unreachable_postgres_server_is_a_clear_error_without_the_password():
    with pytest.raises(StoreError, match="cannot connect") as err:
        open_store("postgresql://someone:s3cret@127.0.0.1:1/db?connect_timeout=2")
    assert "s3cret" not in str(err.value)


def test_wal_is_checkpointed_in_the_background(tmp_path):
    import time

    store = open_store(f"sqlite:///{tmp_path / 'c.db'}?checkpoint_interval=0.05")
    assert store.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    d = Detector(store, OnlineConfig())
    for i in range(30):
        d.add(str(i), f"{STORY} {i}")
    db = tmp_path / "c.db"
    deadline = time.time() + 10
    while db.stat().st_size < 100_000 and time.time() < deadline:  # the log is copied into the database file
        time.sleep(0.05)
    assert db.stat().st_size >= 100_000
    d.close()
    assert not store._checkpointer.is_alive()
    with pytest.raises(StoreError, match="checkpoint_interval"):
        open_store(f"sqlite:///{tmp_path / 'd.db'}?checkpoint_interval=soon")


def test_a_log_past_its_limit_is_truncated_by_the_writer(tmp_path):
    # Checkpoints every 100 s never run here: without the limit the log only grows.
    url = f"sqlite:///{tmp_path / 'w.db'}?checkpoint_interval=100&wal_limit_mb=0.2"
    d = Detector(open_store(url), OnlineConfig())
    wal = tmp_path / "w.db-wal"
    sizes = []
    for b in range(6):
        d.add_many([(f"{b}-{i}", f"{STORY} {b} {i}") for i in range(40)])
        sizes.append(wal.stat().st_size)
    assert max(sizes) <= 0.2 * 1024 * 1024 and min(sizes) == 0  # truncated after a commit passed the limit
    assert d.counts()["documents"] == 240 and d.store.integrity_check() == "ok"
    unbounded = Detector(open_store(f"sqlite:///{tmp_path / 'u.db'}?checkpoint_interval=100"), OnlineConfig())
    for b in range(6):
        unbounded.add_many([(f"{b}-{i}", f"{STORY} {b} {i}") for i in range(40)])
    assert (tmp_path / "u.db-wal").stat().st_size > 0.2 * 1024 * 1024
    with pytest.raises(StoreError, match="wal_limit_mb"):
        open_store(f"sqlite:///{tmp_path / 'x.db'}?wal_limit_mb=0")
