"""Where the online detector keeps documents and their look-up keys: SQLite, PostgreSQL or memory.

Owns the schema, transactions, durability and clear errors about the database; must not decide
whether a document is a duplicate (see :mod:`neardup.online.detector`).

Every store holds two tables:

* ``documents`` - one row per document: arrival number ``seq``, ``id``, the text (optional) and its
  SHA-256, ``status`` (original | duplicate), ``original_id`` (canonical: always an original),
  ``matched_id`` (the document whose n-grams matched), ``score``, ``update_of``, ``evidence`` and
  ``metadata`` (JSON), ``created_at``, the packed verification data and the look-up keys;
* ``keys`` - (key, seq) pairs, primary key (key, seq): the sketch values or LSH band keys, indexed
  for look-up. Plus ``meta`` (schema version, the settings the keys were built with).

Writes happen inside :meth:`Store.transaction`, which is exclusive across threads and processes
(SQLite ``BEGIN IMMEDIATE``; PostgreSQL an advisory transaction lock), so the look-up and the
insert of one document see one consistent state. SQLite runs in WAL mode with ``synchronous=FULL``
by default: once ``transaction()`` returns, the document survives a crash of the process or the
machine; a crash mid-transaction rolls it back and leaves a readable database. WAL checkpoints run
in a background thread every second (``?checkpoint_interval=0``: SQLite's automatic ones), so no
insert pays for copying the log back into the database. Under back-to-back batch writes (a bulk
load) a background checkpoint never catches up with the writer and the log would grow without
bound (6.6 GB after 100k documents were seen); so when a commit leaves the log over
``?wal_limit_mb=MB`` (default 256) the writer checkpoints it and truncates it at once.

URLs (:func:`open_store`): ``sqlite:///relative.db``, ``sqlite:////absolute/path.db`` (append
``?synchronous=normal`` to trade machine-crash durability for speed; ``?checkpoint_interval=SECONDS``;
``?cache_mb=MB``, the page cache of the connection, default 256: the key table of a million documents
is about 1 GB, and SQLite's own default of 2 MB makes every look-up and insert read its B-tree pages
from the operating system again; ``?wal_limit_mb=MB``),
``postgresql://user@host:port/db``
(append ``?schema=name`` to use a schema other than ``neardup``), ``memory://`` (tests, tuning).

A :class:`StoreError` names the location (the file, or the URL without its password) for logs and the
command line; :meth:`Store.public` gives the message without it, for HTTP clients. :meth:`Store.check`
is the health check: a few index reads that reach the storage itself (SQLite: on a fresh read-only
connection, past the page cache that keeps answering from memory after the file was damaged).
PostgreSQL cannot hold a NUL character (U+0000) in text or JSON: such a PostgreSQL store has
``holds_nul = False``, and the detector refuses those documents naming the field.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sqlite3
import urllib.parse
import threading
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np

from neardup.arrays import distinct

SCHEMA_VERSION = "1"
DEFAULT_SQLITE_CACHE_MB = 256.0
DEFAULT_WAL_LIMIT_MB = 256.0
_PG_LOCK_ID = 0x6E64_6F6E  # advisory lock key: "ndon"
_F = TypeVar("_F", bound=Callable[..., Any])


class StoreError(RuntimeError):
    """The database cannot be used (corrupt, not a neardup store, unreachable); names the location."""


def now_iso() -> str:
    """The current UTC time in ISO 8601 with milliseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclass
class DocRecord:
    """One stored document.

    >>> DocRecord(seq=1, id="a", status="original", original_id="a").is_original
    True
    """

    seq: int
    id: str
    status: str
    original_id: str
    matched_id: str | None = None
    score: float | None = None
    update_of: str | None = None
    evidence: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: str = field(default_factory=now_iso)
    text_hash: str = ""
    text: str | None = None
    features: bytes | None = None
    keys: bytes | None = None

    @property
    def is_original(self) -> bool:
        """True for an original (its own canonical original)."""
        return self.status == "original"

    def public(self, with_text: bool = True) -> dict[str, Any]:
        """The record as JSON-able data for users (no internal blobs).

        >>> sorted(DocRecord(seq=1, id="a", status="original", original_id="a").public())[:3]
        ['created_at', 'evidence', 'id']
        """
        out = {"id": self.id, "status": self.status, "original_id": self.original_id, "matched_id": self.matched_id,
               "score": self.score, "update_of": self.update_of, "evidence": self.evidence,
               "metadata": self.metadata, "created_at": self.created_at, "text_sha256": self.text_hash}
        if with_text:
            out["text"] = self.text
        return out


def keys_to_blob(keys: np.ndarray) -> bytes:
    """Look-up keys (int64) as bytes for the document row (used to delete them again)."""
    return np.ascontiguousarray(keys, dtype="<i8").tobytes()


def blob_to_keys(blob: bytes | None) -> np.ndarray:
    """Inverse of :func:`keys_to_blob`."""
    if not blob:
        return np.empty(0, dtype=np.int64)
    return np.frombuffer(bytes(blob), dtype="<i8").astype(np.int64)


def count_votes(buckets: Iterable[Sequence[int]]) -> dict[int, int]:
    """seq -> in how many of ``buckets`` it appears.

    >>> count_votes([[3, 1], [3], [2]])
    {3: 2, 1: 1, 2: 1}
    """
    votes: dict[int, int] = defaultdict(int)
    for bucket in buckets:
        for seq in bucket:
            votes[seq] += 1
    return dict(votes)


def key_rows(records: Sequence[DocRecord], keys: Sequence[np.ndarray]) -> list[tuple[int, int]]:
    """The ``(key, seq)`` rows of new documents, each document's keys once, sorted by key
    (neighbouring rows land on the same index pages).

    >>> r = [DocRecord(seq=7, id="a", status="original", original_id="a")]
    >>> key_rows(r, [np.array([5, -2, 5], dtype=np.int64)])
    [(-2, 7), (5, 7)]
    """
    rows = [(k, rec.seq) for rec, ks in zip(records, keys, strict=True) for k in set(ks.tolist())]
    rows.sort()
    return rows


class Store(ABC):
    """The interface every store implements (all methods are called under the detector's lock)."""

    kind: str = "abstract"
    location: str = ""
    holds_nul: bool = True  # whether text and JSON columns can hold U+0000 (PostgreSQL's cannot)

    @abstractmethod
    def transaction(self) -> contextlib.AbstractContextManager[None]:
        """An exclusive write transaction: committed (durably) on exit, rolled back on error."""

    @abstractmethod
    def read_meta(self) -> dict[str, str]:
        """Every meta entry (schema version, settings the keys were built with)."""

    @abstractmethod
    def write_meta(self, key: str, value: str) -> None:
        """Set one meta entry (inside a transaction)."""

    @abstractmethod
    def get(self, doc_id: str, payload: bool = False) -> DocRecord | None:
        """The document with this id (``payload``: with text, features and keys), or None."""

    @abstractmethod
    def get_many(self, doc_ids: Sequence[str]) -> dict[str, DocRecord]:
        """The stored documents among ``doc_ids`` (without payload), by id; absent ids are left out."""

    @abstractmethod
    def fetch(self, seqs: Sequence[int]) -> dict[int, DocRecord]:
        """Documents by arrival number, with their verification data (missing ones are left out)."""

    @abstractmethod
    def buckets(self, keys: np.ndarray, per_key_limit: int) -> dict[int, list[int]]:
        """For each of ``keys`` that stored documents have: their seqs, newest first.

        Each key gives at most ``per_key_limit`` documents (the most recent ones), so a key shared
        by thousands of documents (boilerplate) cannot make a look-up slow.
        """

    def lookup(self, keys: np.ndarray, per_key_limit: int) -> dict[int, int]:
        """For each stored document sharing keys with ``keys``: seq -> number of shared keys
        (each key counting at most ``per_key_limit`` documents, as in :meth:`buckets`)."""
        return count_votes(self.buckets(keys, per_key_limit).values())

    @abstractmethod
    def reserve(self, n: int) -> list[int]:
        """``n`` new arrival numbers, ascending and above every number ever used (inside a transaction)."""

    @abstractmethod
    def insert_many(self, records: Sequence[DocRecord], keys: Sequence[np.ndarray]) -> None:
        """Store new documents (their ``seq`` from :meth:`reserve`) and their keys (inside a transaction)."""

    def insert(self, record: DocRecord, keys: np.ndarray) -> int:
        """Store one new document and its keys (inside a transaction); returns its seq."""
        record = replace(record, seq=self.reserve(1)[0])
        self.insert_many([record], [keys])
        return record.seq

    @abstractmethod
    def remove(self, record: DocRecord) -> None:
        """Delete a document and its keys (inside a transaction)."""

    @abstractmethod
    def members(self, original_id: str) -> list[DocRecord]:
        """The duplicates whose canonical original is ``original_id``, in arrival order."""

    @abstractmethod
    def promote(self, doc_id: str) -> None:
        """Make a duplicate an original of its own (inside a transaction)."""

    @abstractmethod
    def repoint(self, old_original_id: str, new_original_id: str) -> int:
        """Point every duplicate of ``old_original_id`` at ``new_original_id``; returns how many."""

    @abstractmethod
    def counts(self) -> dict[str, int]:
        """``documents``, ``originals`` and ``duplicates`` counts."""

    def integrity_check(self) -> str:
        """``"ok"`` or the database's description of what is damaged."""
        return "ok"

    def check(self) -> None:
        """Raise :class:`StoreError` unless the store answers a cheap query (the health check)."""
        self.read_meta()

    def _secrets(self) -> list[str]:
        """Strings an HTTP client must not see in a message (the location, parts of the connection URL)."""
        return [self.location]

    def public(self, message: str) -> str:
        """A message about this store as an HTTP client may see it: its first line, without the location
        (a file path, a connection URL) or any part of the connection settings.

        >>> s = MemoryStore(); s.location = "/srv/data/x.db"
        >>> s.public("/srv/data/x.db: SQLite database error: database disk image is malformed\\nmore")
        'SQLite database error: database disk image is malformed'
        """
        lines = message.strip().splitlines()
        text = lines[0] if lines else ""
        if self.location and text.startswith(self.location + ": "):
            text = text[len(self.location) + 2:]
        for secret in sorted(filter(None, self._secrets()), key=len, reverse=True):
            text = text.replace(secret, "the store")
        return text

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the connection."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ----------------------------------------------------------------------------------------------
# SQLite
# ----------------------------------------------------------------------------------------------

_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    text TEXT,
    text_hash TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('original', 'duplicate')),
    original_id TEXT NOT NULL,
    matched_id TEXT,
    score REAL,
    update_of TEXT,
    evidence TEXT NOT NULL DEFAULT '[]',
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    features BLOB,
    keys BLOB
);
CREATE INDEX IF NOT EXISTS documents_original ON documents (original_id);
CREATE TABLE IF NOT EXISTS keys (key INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (key, seq)) WITHOUT ROWID;
"""
_COLUMNS = ("seq, id, status, original_id, matched_id, score, update_of, evidence, metadata, created_at, "
            "text_hash")
_PAYLOAD = ", text, features, keys"
_SQLITE_MAX_VARS = 900  # bound parameters per statement (SQLite builds before 3.32 allow 999)
_SQLITE_DAMAGED = (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB (primary result codes)
_SQLITE_PROBES = (  # the health check: each reads one path from a B-tree's root to a leaf
    "SELECT value FROM meta WHERE key = 'schema_version'",
    "SELECT seq FROM documents ORDER BY seq DESC LIMIT 1",
    "SELECT id FROM documents ORDER BY id DESC LIMIT 1",
    "SELECT original_id FROM documents ORDER BY original_id DESC LIMIT 1",
    "SELECT key FROM keys ORDER BY key DESC LIMIT 1",
    "SELECT seq FROM sqlite_sequence WHERE name = 'documents'",
)


def _sqlite_errors(method: _F) -> _F:
    """Turn sqlite3 errors into a :class:`StoreError` naming the database file."""

    @functools.wraps(method)
    def wrapper(self: SQLiteStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.IntegrityError:
            raise
        except sqlite3.DatabaseError as exc:  # also ProgrammingError, e.g. a store closed while shutting down
            self._note_damage(exc)
            raise StoreError(f"{self.location}: SQLite database error: {exc}") from None

    return wrapper  # type: ignore[return-value]


class SQLiteStore(Store):
    """One SQLite file in WAL mode (the default store).

    >>> import tempfile, os
    >>> s = SQLiteStore(os.path.join(tempfile.mkdtemp(), "x.db"))
    >>> s.counts()["documents"], s.read_meta()["schema_version"]
    (0, '1')
    """

    kind = "sqlite"

    def __init__(self, path: str | os.PathLike[str], synchronous: str = "full", timeout: float = 30.0,
                 checkpoint_interval: float = 1.0, cache_mb: float = DEFAULT_SQLITE_CACHE_MB,
                 wal_limit_mb: float = DEFAULT_WAL_LIMIT_MB) -> None:
        if synchronous.lower() not in ("full", "normal", "extra"):
            raise StoreError(f"synchronous must be full, normal or extra, got {synchronous!r}")
        if not checkpoint_interval >= 0:
            raise StoreError(f"checkpoint_interval must be >= 0 seconds, got {checkpoint_interval!r}")
        if not cache_mb >= 0:
            raise StoreError(f"cache_mb must be >= 0 megabytes, got {cache_mb!r}")
        if not wal_limit_mb > 0:
            raise StoreError(f"wal_limit_mb must be > 0 megabytes, got {wal_limit_mb!r}")
        self.wal_limit_bytes = int(wal_limit_mb * 1024 * 1024)
        self.synchronous = synchronous.upper()
        self.checkpoint_interval = checkpoint_interval
        self._stop = threading.Event()
        self._checkpointer: threading.Thread | None = None
        self.path = Path(path)
        self.location = str(self.path.resolve()) if self.path.parent.exists() else str(self.path)
        if self.path.is_dir():
            raise StoreError(f"{self.location}: is a folder, not a database file")
        if not self.path.parent.exists():
            raise StoreError(f"{self.location}: folder {self.path.parent} does not exist")
        self._tx_lock = threading.RLock()
        self._reserved = 0  # the largest seq reserve() handed out in the current transaction
        self.damage: str | None = None  # what SQLite said when it first found the file damaged
        try:
            self.conn = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False,
                                        timeout=timeout)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.location}: cannot open the SQLite database ({exc})") from None
        try:
            mode = self.conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"{self.location}: cannot switch the database to WAL mode (got {mode!r})")
            self.conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
            self.conn.execute(f"PRAGMA cache_size={-int(cache_mb * 1024)}")  # negative: KiB, not pages
            self.conn.execute("PRAGMA foreign_keys=OFF")
            tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if tables and "documents" not in tables:
                raise StoreError(f"{self.location}: is a SQLite database but not a neardup store "
                                 f"(tables: {', '.join(sorted(tables))})")
            if "documents" not in tables:
                try:
                    self.conn.executescript("BEGIN IMMEDIATE;" + _SQLITE_SCHEMA + "COMMIT;")
                except BaseException:
                    if self.conn.in_transaction:
                        self.conn.execute("ROLLBACK")
                    raise
            meta = self.read_meta()
            if "schema_version" not in meta:
                with self.transaction():
                    self.write_meta("schema_version", SCHEMA_VERSION)
            elif meta["schema_version"] != SCHEMA_VERSION:
                raise StoreError(f"{self.location}: store schema version {meta['schema_version']} is not supported "
                                 f"(this neardup reads version {SCHEMA_VERSION})")
            # Probe the tables so a damaged file fails here, naming the file, not on first use.
            self.conn.execute("SELECT seq FROM documents ORDER BY seq DESC LIMIT 1").fetchall()
            self.conn.execute("SELECT key FROM keys LIMIT 1").fetchall()
            if checkpoint_interval > 0:
                # Copy the WAL back into the database from a background thread, not inside a commit
                # (an automatic checkpoint would add its writes and fsync to one unlucky insert).
                self.conn.execute("PRAGMA wal_autocheckpoint=0")
                self._checkpointer = threading.Thread(target=self._checkpoint_loop, daemon=True,
                                                      name="neardup-sqlite-checkpoint")
                self._checkpointer.start()
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise StoreError(f"{self.location}: not a readable SQLite database ({exc})") from None
        except StoreError:
            self.conn.close()
            raise

    def _note_damage(self, exc: sqlite3.Error) -> None:
        """Remember that SQLite found the file damaged (corrupt, or not a database any more): the health
        check reports it from then on, even where the page cache still answers."""
        if self.damage is None and getattr(exc, "sqlite_errorcode", 0) & 0xFF in _SQLITE_DAMAGED:
            self.damage = str(exc)

    def _checkpoint_loop(self) -> None:
        try:
            conn = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False, timeout=1.0)
            conn.execute(f"PRAGMA synchronous={self.synchronous}")
        except sqlite3.Error:
            return
        try:
            while not self._stop.wait(self.checkpoint_interval):
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        finally:
            conn.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        with self._tx_lock:
            try:
                nested = self.conn.in_transaction
            except sqlite3.ProgrammingError as exc:  # closed (shutting down, or closed under us)
                raise StoreError(f"{self.location}: cannot start a write transaction ({exc})") from None
            if nested:  # part of the outer transaction
                yield
                return
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except sqlite3.DatabaseError as exc:
                self._note_damage(exc)
                raise StoreError(f"{self.location}: cannot start a write transaction ({exc})") from None
            self._reserved = 0
            try:
                yield
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
            try:
                self.conn.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                self._note_damage(exc)
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise StoreError(f"{self.location}: commit failed ({exc})") from None
            self._bound_wal()

    def _bound_wal(self) -> None:
        """Checkpoint and truncate the log when it has grown past the limit (see the module docstring)."""
        try:
            size = os.stat(f"{self.path}-wal").st_size
        except OSError:
            return
        if size > self.wal_limit_bytes:
            with contextlib.suppress(sqlite3.OperationalError):  # busy: try again after the next commit
                self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    @_sqlite_errors
    def read_meta(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT key, value FROM meta").fetchall())

    @_sqlite_errors
    def write_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT INTO meta (key, value) VALUES (?, ?) "
                          "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))

    def _record(self, row: tuple[Any, ...], payload: bool) -> DocRecord:
        try:
            evidence, metadata = json.loads(row[7]), json.loads(row[8])
        except (TypeError, ValueError) as exc:  # a damaged page can hold anything
            self.damage = self.damage or f"damaged record of document {row[1]!r} ({exc})"
            raise StoreError(f"{self.location}: damaged record of document {row[1]!r} ({exc})") from None
        rec = DocRecord(seq=row[0], id=row[1], status=row[2], original_id=row[3], matched_id=row[4], score=row[5],
                        update_of=row[6], evidence=evidence, metadata=metadata,
                        created_at=row[9], text_hash=row[10])
        if payload:
            rec.text, rec.features, rec.keys = row[11], row[12], row[13]
        return rec

    @_sqlite_errors
    def get(self, doc_id: str, payload: bool = False) -> DocRecord | None:
        cols = _COLUMNS + (_PAYLOAD if payload else "")
        row = self.conn.execute(f"SELECT {cols} FROM documents WHERE id = ?", (doc_id,)).fetchone()
        return None if row is None else self._record(row, payload)

    def _select_in(self, column: str, values: list[Any], payload: bool) -> list[DocRecord]:
        """Documents whose ``column`` is one of ``values`` (in statements of bounded size)."""
        cols = _COLUMNS + (_PAYLOAD if payload else "")
        out: list[DocRecord] = []
        for start in range(0, len(values), _SQLITE_MAX_VARS):
            part = values[start: start + _SQLITE_MAX_VARS]
            rows = self.conn.execute(f"SELECT {cols} FROM documents WHERE {column} IN ({','.join('?' * len(part))})",
                                     part).fetchall()
            out.extend(self._record(row, payload) for row in rows)
        return out

    @_sqlite_errors
    def get_many(self, doc_ids: Sequence[str]) -> dict[str, DocRecord]:
        return {rec.id: rec for rec in self._select_in("id", list(dict.fromkeys(doc_ids)), False)}

    @_sqlite_errors
    def fetch(self, seqs: Sequence[int]) -> dict[int, DocRecord]:
        return {rec.seq: rec for rec in self._select_in("seq", [int(s) for s in dict.fromkeys(seqs)], True)}

    @_sqlite_errors
    def buckets(self, keys: np.ndarray, per_key_limit: int) -> dict[int, list[int]]:
        # One indexed range read per key: in-process, cheaper than any single statement over all keys.
        out: dict[int, list[int]] = {}
        cur = self.conn.cursor()
        for key in distinct(keys).tolist():
            seqs = [seq for (seq,) in cur.execute("SELECT seq FROM keys WHERE key = ? ORDER BY seq DESC LIMIT ?",
                                                  (key, per_key_limit))]
            if seqs:
                out[key] = seqs
        return out

    @_sqlite_errors
    def reserve(self, n: int) -> list[int]:
        # AUTOINCREMENT keeps the largest seq ever used in sqlite_sequence (deleted ones are never reused).
        row = self.conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'documents'").fetchone()
        first = max(int(row[0]) if row else 0, self._reserved) + 1
        self._reserved = first + n - 1
        return list(range(first, first + n))

    @_sqlite_errors
    def insert_many(self, records: Sequence[DocRecord], keys: Sequence[np.ndarray]) -> None:
        self.conn.executemany(
            "INSERT INTO documents (seq, id, text, text_hash, status, original_id, matched_id, score, update_of, "
            "evidence, metadata, created_at, features, keys) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(r.seq, r.id, r.text, r.text_hash, r.status, r.original_id, r.matched_id, r.score, r.update_of,
              json.dumps(r.evidence, ensure_ascii=False), json.dumps(r.metadata, ensure_ascii=False), r.created_at,
              r.features, keys_to_blob(k)) for r, k in zip(records, keys, strict=True)])
        self.conn.executemany("INSERT OR IGNORE INTO keys (key, seq) VALUES (?, ?)", key_rows(records, keys))

    @_sqlite_errors
    def remove(self, record: DocRecord) -> None:
        keys = blob_to_keys(record.keys) if record.keys is not None else blob_to_keys(
            self.conn.execute("SELECT keys FROM documents WHERE seq = ?", (record.seq,)).fetchone()[0])
        self.conn.executemany("DELETE FROM keys WHERE key = ? AND seq = ?",
                              [(k, record.seq) for k in distinct(keys).tolist()])
        self.conn.execute("DELETE FROM documents WHERE seq = ?", (record.seq,))

    @_sqlite_errors
    def members(self, original_id: str) -> list[DocRecord]:
        rows = self.conn.execute(f"SELECT {_COLUMNS} FROM documents WHERE original_id = ? AND id != ? ORDER BY seq",
                                 (original_id, original_id)).fetchall()
        return [self._record(r, False) for r in rows]

    @_sqlite_errors
    def promote(self, doc_id: str) -> None:
        self.conn.execute("UPDATE documents SET status = 'original', original_id = id, matched_id = NULL, "
                          "score = NULL, evidence = '[]' WHERE id = ?", (doc_id,))

    @_sqlite_errors
    def repoint(self, old_original_id: str, new_original_id: str) -> int:
        cur = self.conn.execute("UPDATE documents SET original_id = ? WHERE original_id = ? AND id != ?",
                                (new_original_id, old_original_id, new_original_id))
        return cur.rowcount

    @_sqlite_errors
    def counts(self) -> dict[str, int]:
        rows = dict(self.conn.execute("SELECT status, COUNT(*) FROM documents GROUP BY status").fetchall())
        o, d = int(rows.get("original", 0)), int(rows.get("duplicate", 0))
        return {"documents": o + d, "originals": o, "duplicates": d}

    @_sqlite_errors
    def integrity_check(self) -> str:
        rows = self.conn.execute("PRAGMA integrity_check").fetchall()
        return "; ".join(str(r[0]) for r in rows)

    def check(self) -> None:
        """Damage found earlier, or a root-to-leaf read of every table and index on a new read-only
        connection (its own empty page cache: the file as it is on disk now; about a millisecond)."""
        if self.damage is not None:
            raise StoreError(f"{self.location}: SQLite database error: {self.damage} (found earlier; "
                             "restart the service once the file is repaired)")
        uri = f"file:{urllib.parse.quote(str(Path(self.location).absolute()))}?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=5.0, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.location}: SQLite database error: {exc}") from None
        try:
            for sql in _SQLITE_PROBES:
                conn.execute(sql).fetchall()
        except sqlite3.DatabaseError as exc:
            self._note_damage(exc)
            raise StoreError(f"{self.location}: SQLite database error: {exc}") from None
        finally:
            conn.close()

    def close(self) -> None:
        self._stop.set()
        if self._checkpointer is not None and self._checkpointer is not threading.current_thread():
            self._checkpointer.join(timeout=10)
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()


# ----------------------------------------------------------------------------------------------
# PostgreSQL
# ----------------------------------------------------------------------------------------------

_PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    text TEXT,
    text_hash TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('original', 'duplicate')),
    original_id TEXT NOT NULL,
    matched_id TEXT,
    score DOUBLE PRECISION,
    update_of TEXT,
    evidence JSONB NOT NULL DEFAULT '[]',
    metadata JSONB NOT NULL DEFAULT '{}',
    created_at TIMESTAMPTZ NOT NULL,
    features BYTEA,
    keys BYTEA
);
CREATE INDEX IF NOT EXISTS documents_original ON documents (original_id);
CREATE TABLE IF NOT EXISTS keys (key BIGINT NOT NULL, seq BIGINT NOT NULL, PRIMARY KEY (key, seq));
"""


class PostgresStore(Store):
    """Tables in one schema of a PostgreSQL database (a real server; psycopg 3).

    ``dsn`` is a libpq connection string or URL; ``schema`` (default ``neardup``) is created if absent.
    """

    kind = "postgresql"
    holds_nul = False

    def __init__(self, dsn: str, schema: str = "neardup", connect_timeout: int = 10) -> None:
        try:
            import psycopg
        except ImportError as exc:  # pragma: no cover - the online extra brings it
            raise StoreError(f"PostgreSQL needs psycopg: pip install 'neardup[online]' ({exc})") from None
        if not schema.replace("_", "").isalnum() or schema[0].isdigit():
            raise StoreError(f"schema must be a plain SQL identifier (letters, digits, _), got {schema!r}")
        self._psycopg = psycopg
        self.schema = schema
        self.location = _redact(dsn) + (f" (schema {schema})" if schema != "neardup" else "")
        self._dsn_parts = [dsn, _redact(dsn), *_dsn_secrets(dsn)]
        self._tx_lock = threading.RLock()
        self._in_tx = False
        try:
            self.conn = psycopg.connect(dsn, autocommit=True, connect_timeout=connect_timeout)
        except psycopg.Error as exc:
            raise StoreError(f"{self.location}: cannot connect to PostgreSQL ({str(exc).strip()})") from None
        try:
            with self.conn.transaction():
                self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_LOCK_ID,))
                self.conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
                self.conn.execute(f'SET search_path TO "{schema}"')
                self.conn.execute(_PG_SCHEMA)
                meta = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
                if "schema_version" not in meta:
                    self.conn.execute("INSERT INTO meta VALUES ('schema_version', %s)", (SCHEMA_VERSION,))
                elif meta["schema_version"] != SCHEMA_VERSION:
                    raise StoreError(f"{self.location}: store schema version {meta['schema_version']} is not "
                                     f"supported (this neardup reads version {SCHEMA_VERSION})")
            self.conn.execute(f'SET search_path TO "{schema}"')
        except psycopg.Error as exc:
            self.conn.close()
            raise StoreError(f"{self.location}: cannot prepare the neardup tables ({str(exc).strip()})") from None

    def _q(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        try:
            return self.conn.execute(sql, params)
        except self._psycopg.errors.UniqueViolation:
            raise
        except self._psycopg.Error as exc:
            raise StoreError(f"{self.location}: PostgreSQL error: {str(exc).strip()}") from None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        with self._tx_lock:
            if self._in_tx:
                yield
                return
            self._in_tx = True
            try:
                with self.conn.transaction():
                    self._q("SELECT pg_advisory_xact_lock(%s)", (_PG_LOCK_ID,))
                    yield
            except self._psycopg.Error as exc:
                raise StoreError(f"{self.location}: transaction failed ({str(exc).strip()})") from None
            finally:
                self._in_tx = False

    def read_meta(self) -> dict[str, str]:
        return dict(self._q("SELECT key, value FROM meta").fetchall())

    def check(self) -> None:
        """One round trip reading each table (a lost connection or a dropped schema fails here)."""
        self._q("SELECT (SELECT value FROM meta WHERE key = 'schema_version'), "
                "(SELECT max(seq) FROM documents), (SELECT key FROM keys LIMIT 1)").fetchall()

    def _secrets(self) -> list[str]:
        return [self.location, *self._dsn_parts]

    def write_meta(self, key: str, value: str) -> None:
        self._q("INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value))

    def _record(self, row: tuple[Any, ...], payload: bool) -> DocRecord:
        created = row[9]
        rec = DocRecord(seq=row[0], id=row[1], status=row[2], original_id=row[3], matched_id=row[4], score=row[5],
                        update_of=row[6], evidence=list(row[7] or []), metadata=dict(row[8] or {}),
                        created_at=created.astimezone(timezone.utc).isoformat(timespec="milliseconds")
                        if isinstance(created, datetime) else str(created), text_hash=row[10])
        if payload:
            rec.text = row[11]
            rec.features = bytes(row[12]) if row[12] is not None else None
            rec.keys = bytes(row[13]) if row[13] is not None else None
        return rec

    def get(self, doc_id: str, payload: bool = False) -> DocRecord | None:
        if "\x00" in doc_id:  # no stored id holds one (PostgreSQL text cannot)
            return None
        cols = _COLUMNS + (_PAYLOAD if payload else "")
        row = self._q(f"SELECT {cols} FROM documents WHERE id = %s", (doc_id,)).fetchone()
        return None if row is None else self._record(row, payload)

    def get_many(self, doc_ids: Sequence[str]) -> dict[str, DocRecord]:
        doc_ids = [i for i in doc_ids if "\x00" not in i]
        if not doc_ids:
            return {}
        rows = self._q(f"SELECT {_COLUMNS} FROM documents WHERE id = ANY(%s)", (doc_ids,)).fetchall()
        return {row[1]: self._record(row, False) for row in rows}

    def fetch(self, seqs: Sequence[int]) -> dict[int, DocRecord]:
        if not seqs:
            return {}
        rows = self._q(f"SELECT {_COLUMNS}{_PAYLOAD} FROM documents WHERE seq = ANY(%s)",
                       ([int(s) for s in seqs],)).fetchall()
        return {row[0]: self._record(row, True) for row in rows}

    def buckets(self, keys: np.ndarray, per_key_limit: int) -> dict[int, list[int]]:
        uniq = distinct(keys).tolist()
        if not uniq:
            return {}
        rows = self._q(
            "SELECT q.key, k.seq FROM unnest(%s::bigint[]) AS q(key) CROSS JOIN LATERAL "
            "(SELECT seq FROM keys WHERE keys.key = q.key ORDER BY seq DESC LIMIT %s) AS k",
            (uniq, per_key_limit)).fetchall()
        out: dict[int, list[int]] = defaultdict(list)
        for key, seq in rows:
            out[int(key)].append(int(seq))
        for seqs in out.values():
            seqs.sort(reverse=True)
        return dict(out)

    def reserve(self, n: int) -> list[int]:
        # The serial's sequence only grows; under the write lock one statement's values are the next n.
        rows = self._q("SELECT nextval(pg_get_serial_sequence('documents', 'seq')) FROM generate_series(1, %s)",
                       (n,)).fetchall()
        return sorted(int(r[0]) for r in rows)

    def insert_many(self, records: Sequence[DocRecord], keys: Sequence[np.ndarray]) -> None:
        from psycopg.types.json import Jsonb

        try:  # COPY: one stream per table instead of a statement per row
            with self.conn.cursor() as cur:
                with cur.copy("COPY documents (seq, id, text, text_hash, status, original_id, matched_id, score, "
                              "update_of, evidence, metadata, created_at, features, keys) FROM STDIN") as copy:
                    for r, k in zip(records, keys, strict=True):
                        copy.write_row((r.seq, r.id, r.text, r.text_hash, r.status, r.original_id, r.matched_id,
                                        r.score, r.update_of, Jsonb(r.evidence), Jsonb(r.metadata), r.created_at,
                                        r.features, keys_to_blob(k)))
                with cur.copy("COPY keys (key, seq) FROM STDIN") as copy:
                    copy.write("".join(f"{k}\t{s}\n" for k, s in key_rows(records, keys)))
        except self._psycopg.errors.UniqueViolation:
            raise
        except self._psycopg.Error as exc:
            raise StoreError(f"{self.location}: PostgreSQL error: {str(exc).strip()}") from None

    def remove(self, record: DocRecord) -> None:
        blob = record.keys if record.keys is not None else self._q(
            "SELECT keys FROM documents WHERE seq = %s", (record.seq,)).fetchone()[0]
        uniq = distinct(blob_to_keys(blob)).tolist()
        if uniq:
            self._q("DELETE FROM keys WHERE seq = %s AND key = ANY(%s)", (record.seq, uniq))
        self._q("DELETE FROM documents WHERE seq = %s", (record.seq,))

    def members(self, original_id: str) -> list[DocRecord]:
        if "\x00" in original_id:
            return []
        rows = self._q(f"SELECT {_COLUMNS} FROM documents WHERE original_id = %s AND id <> %s ORDER BY seq",
                       (original_id, original_id)).fetchall()
        return [self._record(r, False) for r in rows]

    def promote(self, doc_id: str) -> None:
        self._q("UPDATE documents SET status = 'original', original_id = id, matched_id = NULL, score = NULL, "
                "evidence = '[]' WHERE id = %s", (doc_id,))

    def repoint(self, old_original_id: str, new_original_id: str) -> int:
        cur = self._q("UPDATE documents SET original_id = %s WHERE original_id = %s AND id <> %s",
                      (new_original_id, old_original_id, new_original_id))
        return int(cur.rowcount)

    def counts(self) -> dict[str, int]:
        rows = dict(self._q("SELECT status, COUNT(*) FROM documents GROUP BY status").fetchall())
        o, d = int(rows.get("original", 0)), int(rows.get("duplicate", 0))
        return {"documents": o + d, "originals": o, "duplicates": d}

    def drop(self) -> None:
        """Delete the schema and everything in it (tests, throwaway stores)."""
        self._q(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()


def _dsn_secrets(dsn: str) -> list[str]:
    """The parts of a DSN that name the server or the login (user@host, host:port, the password), each as
    it may appear in a driver's message.

    >>> _dsn_secrets("postgresql://bob:pw1@db.example:5433/prod")
    ['bob:pw1@db.example:5433', 'bob@db.example:5433', 'db.example:5433', 'pw1', '"db.example", port 5433']
    """
    if "://" not in dsn:
        pairs = dict(p.split("=", 1) for p in dsn.split() if "=" in p)
        host, port, password = pairs.get("host", ""), pairs.get("port", ""), pairs.get("password", "")
        return [s for s in (password, f'"{host}", port {port}' if host and port else "") if s]
    parts = urlsplit(dsn)
    host = parts.netloc.rsplit("@", 1)[-1]
    out = [parts.netloc]
    if "@" in parts.netloc:
        user = parts.netloc.rsplit("@", 1)[0].split(":", 1)[0]
        out.append(f"{user}@{host}")
    out.append(host)
    out += [v for k, v in parse_qsl(parts.query) if k == "password"]
    if parts.password:
        out.append(urllib.parse.unquote(parts.password))
    if parts.hostname and parts.port:
        out.append(f'"{parts.hostname}", port {parts.port}')  # libpq: connection to server at "h", port p failed
    return list(dict.fromkeys(s for s in out if s))


def _redact(dsn: str) -> str:
    """A DSN without its password, for messages."""
    if "://" not in dsn:
        return " ".join(p for p in dsn.split() if not p.startswith("password="))
    parts = urlsplit(dsn)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        netloc = f"{userinfo.split(':', 1)[0]}@{host}"
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k != "password"])
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


# ----------------------------------------------------------------------------------------------
# Memory
# ----------------------------------------------------------------------------------------------


class MemoryStore(Store):
    """Everything in Python dicts: for tests and parameter sweeps, gone when the process ends.

    >>> MemoryStore().counts()
    {'documents': 0, 'originals': 0, 'duplicates': 0}
    """

    kind = "memory"
    location = "memory://"

    def __init__(self) -> None:
        self._meta: dict[str, str] = {"schema_version": SCHEMA_VERSION}
        self._by_id: dict[str, DocRecord] = {}
        self._by_seq: dict[int, DocRecord] = {}
        self._keys: dict[int, list[int]] = defaultdict(list)
        self._next = 1
        self._undo: list[Callable[[], None]] | None = None
        self._tx_lock = threading.RLock()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        with self._tx_lock:
            if self._undo is not None:
                yield
                return
            self._undo = []
            try:
                yield
            except BaseException:
                for fn in reversed(self._undo):
                    fn()
                raise
            finally:
                self._undo = None

    def _log(self, fn: Callable[[], None]) -> None:
        if self._undo is not None:
            self._undo.append(fn)

    def read_meta(self) -> dict[str, str]:
        return dict(self._meta)

    def write_meta(self, key: str, value: str) -> None:
        old = self._meta.get(key)
        self._meta[key] = value
        self._log(lambda: self._meta.pop(key) if old is None else self._meta.__setitem__(key, old))

    def get(self, doc_id: str, payload: bool = False) -> DocRecord | None:
        rec = self._by_id.get(doc_id)
        if rec is None:
            return None
        rec = replace(rec, evidence=list(rec.evidence), metadata=dict(rec.metadata))
        if not payload:
            rec.text = rec.features = rec.keys = None
        return rec

    def get_many(self, doc_ids: Sequence[str]) -> dict[str, DocRecord]:
        return {i: rec for i in doc_ids if (rec := self.get(i)) is not None}

    def fetch(self, seqs: Sequence[int]) -> dict[int, DocRecord]:
        return {s: replace(self._by_seq[s]) for s in seqs if s in self._by_seq}

    def buckets(self, keys: np.ndarray, per_key_limit: int) -> dict[int, list[int]]:
        out = {}
        for key in distinct(keys).tolist():
            bucket = self._keys.get(key)
            if bucket:
                out[key] = bucket[::-1][:per_key_limit]
        return out

    def reserve(self, n: int) -> list[int]:
        first = self._next
        self._next += n
        return list(range(first, first + n))

    def insert_many(self, records: Sequence[DocRecord], keys: Sequence[np.ndarray]) -> None:
        for record, ks in zip(records, keys, strict=True):
            rec = replace(record, keys=keys_to_blob(ks))
            self._by_id[rec.id] = rec
            self._by_seq[rec.seq] = rec
            uniq = distinct(ks).tolist()
            for k in uniq:
                self._keys[k].append(rec.seq)

            def undo(rec: DocRecord = rec, uniq: list[int] = uniq) -> None:
                self._by_id.pop(rec.id, None)
                self._by_seq.pop(rec.seq, None)
                for k in uniq:
                    self._keys[k].remove(rec.seq)

            self._log(undo)

    def remove(self, record: DocRecord) -> None:
        rec = self._by_seq.get(record.seq)
        if rec is None:
            return
        uniq = distinct(blob_to_keys(rec.keys)).tolist()
        del self._by_id[rec.id], self._by_seq[rec.seq]
        for k in uniq:
            self._keys[k].remove(rec.seq)

        def undo() -> None:
            self._by_id[rec.id] = rec
            self._by_seq[rec.seq] = rec
            for k in uniq:
                self._keys[k].append(rec.seq)
                self._keys[k].sort()

        self._log(undo)

    def members(self, original_id: str) -> list[DocRecord]:
        out = [r for r in self._by_seq.values() if r.original_id == original_id and r.id != original_id]
        return [self.get(r.id) for r in sorted(out, key=lambda r: r.seq)]  # type: ignore[misc]

    def _set(self, rec: DocRecord, **changes: Any) -> None:
        old = {k: getattr(rec, k) for k in changes}
        for k, v in changes.items():
            setattr(rec, k, v)
        self._log(lambda: [setattr(rec, k, v) for k, v in old.items()])  # type: ignore[func-returns-value]

    def promote(self, doc_id: str) -> None:
        rec = self._by_id[doc_id]
        self._set(rec, status="original", original_id=doc_id, matched_id=None, score=None, evidence=[])

    def repoint(self, old_original_id: str, new_original_id: str) -> int:
        n = 0
        for rec in self._by_seq.values():
            if rec.original_id == old_original_id and rec.id != new_original_id:
                self._set(rec, original_id=new_original_id)
                n += 1
        return n

    def counts(self) -> dict[str, int]:
        o = sum(1 for r in self._by_seq.values() if r.status == "original")
        return {"documents": len(self._by_seq), "originals": o, "duplicates": len(self._by_seq) - o}


# ----------------------------------------------------------------------------------------------
# URLs
# ----------------------------------------------------------------------------------------------


def open_store(url: str) -> Store:
    """Open (creating if needed) the store a URL names (see the module docstring).

    >>> open_store("memory://").kind
    'memory'
    >>> open_store("mysql://x")
    Traceback (most recent call last):
    ...
    neardup.online.store.StoreError: unsupported store URL 'mysql://x': use sqlite:///PATH, postgresql://... or memory://
    """
    if url in ("memory", "memory://"):
        return MemoryStore()
    if url.startswith("sqlite://"):
        rest = url[len("sqlite://"):]
        if not rest.startswith("/") or len(rest) < 2:
            raise StoreError(f"bad SQLite URL {url!r}: use sqlite:///relative/path.db or sqlite:////absolute/path.db")
        path, _, query = rest[1:].partition("?")
        options = dict(parse_qsl(query))
        unknown = set(options) - {"synchronous", "checkpoint_interval", "cache_mb", "wal_limit_mb"}
        if unknown:
            raise StoreError(f"bad SQLite URL {url!r}: unknown option(s) {', '.join(sorted(unknown))} "
                             "(known: synchronous, checkpoint_interval, cache_mb, wal_limit_mb)")
        numbers = {}
        for name, default, unit in (("checkpoint_interval", 1.0, "seconds"),
                                    ("cache_mb", DEFAULT_SQLITE_CACHE_MB, "megabytes"),
                                    ("wal_limit_mb", DEFAULT_WAL_LIMIT_MB, "megabytes")):
            try:
                numbers[name] = float(options.get(name, default))
            except ValueError:
                raise StoreError(f"bad SQLite URL {url!r}: {name} must be a number of {unit}") from None
        return SQLiteStore(path, synchronous=options.get("synchronous", "full"), **numbers)
    if url.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(url)
        query = parse_qsl(parts.query)
        schema = next((v for k, v in query if k == "schema"), "neardup")
        dsn = urlunsplit((parts.scheme, parts.netloc, parts.path,
                          urlencode([(k, v) for k, v in query if k != "schema"]), ""))
        return PostgresStore(dsn, schema=schema)
    raise StoreError(f"unsupported store URL {url!r}: use sqlite:///PATH, postgresql://... or memory://")
