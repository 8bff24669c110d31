"""Reliability: SIGKILL the service in the middle of an ingest; every acknowledged document survives."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from .conftest import OTHER, STORY, THIRD
from .test_service import free_port

TOKEN = "crash-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def start_server(db: Path, port: int, log: Path) -> subprocess.Popen:
    env = {**os.environ, "NEARDUP_TOKEN": TOKEN, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "neardup.online", "serve", "--store", f"sqlite:///{db}", "--port", str(port),
         "--method", "minhash", "--log-level", "warning"],
        stdout=open(log, "ab"), stderr=subprocess.STDOUT, env=env)
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early: {log.read_text()}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


@pytest.mark.slow
def test_sigkill_mid_ingest_loses_no_acknowledged_document(tmp_path):
    db, log = tmp_path / "crash.db", tmp_path / "server.log"
    port = free_port()
    proc = start_server(db, port, log)
    acknowledged: dict[str, str] = {}
    lock = threading.Lock()
    stop = threading.Event()
    bases = [STORY, OTHER, THIRD]

    def client(k: int) -> None:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=AUTH, timeout=10) as c:
            i = 0
            while not stop.is_set():
                doc_id = f"c{k}-{i}"
                text = f"{bases[i % 3]} Item {k} {i}." if i % 4 else f"Unrelated note {k} {i}: " + "x" * (i % 50)
                try:
                    r = c.post("/documents", json={"id": doc_id, "text": text})
                except httpx.HTTPError:
                    return  # the server died mid-request: this one was not acknowledged
                if r.status_code == 200:
                    with lock:
                        acknowledged[doc_id] = r.json()["status"]
                i += 1

    threads = [threading.Thread(target=client, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    deadline = time.time() + 30
    while len(acknowledged) < 100 and time.time() < deadline:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)  # in the middle of the ingest: clients are still sending
    proc.wait(timeout=10)
    stop.set()
    for t in threads:
        t.join(timeout=20)
    assert len(acknowledged) >= 100

    # The database is readable and whole right after the crash (WAL recovery on open).
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()

    proc = start_server(db, port, log)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=AUTH, timeout=10) as c:
            for doc_id, status in acknowledged.items():
                r = c.get(f"/documents/{doc_id}", params={"text": "false"})
                assert r.status_code == 200, doc_id
                assert r.json()["status"] == status
            stored = c.get("/health").json()["documents"]
            assert stored >= len(acknowledged)  # plus at most the requests cut off before their answer
            assert stored <= len(acknowledged) + len(threads)
            # The service works again after the crash.
            assert c.post("/documents", json={"id": "after", "text": STORY}).json()["status"] == "duplicate"
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
