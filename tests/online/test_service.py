"""The HTTP service, started for real (uvicorn on a free loopback port) and spoken to over HTTP (httpx)."""

from __future__ import annotations

import json
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import uvicorn
from typer.testing import CliRunner

from neardup.config import ConfigError
from neardup.cli.online import standalone_app
from neardup.online.detector import Detector, OnlineConfig
from neardup.online.service import create_app, serve

from .conftest import OTHER, STORY, THIRD

TOKEN = "test-token-123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RunningServer:
    """uvicorn serving an app in a background thread."""

    def __init__(self, app) -> None:
        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.time() + 20
        while not self.server.started:
            if time.time() > deadline or not self.thread.is_alive():
                raise RuntimeError("server did not start")
            time.sleep(0.02)
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)


@pytest.fixture
def server(stores):
    detector = Detector(stores.open(), OnlineConfig.ours())
    running = RunningServer(create_app(detector, token=TOKEN, max_body_bytes=64 * 1024, max_batch=50))
    yield running
    running.stop()


@pytest.fixture
def client(server):
    with httpx.Client(base_url=server.url, headers=AUTH, timeout=30) as c:
        yield c


def test_post_get_cluster_delete_round_trip(client):
    r = client.post("/documents", json={"id": "a", "text": STORY, "source": "wire", "lang": "en"})
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "original" and r.json()["original_id"] == "a"
    r = client.post("/documents", json=[{"id": "b", "text": "REPRINT. " + STORY}, {"id": 3, "text": OTHER}])
    assert r.status_code == 200
    b, c = r.json()
    assert (b["status"], b["original_id"], b["matched_id"]) == ("duplicate", "a", "a")
    assert b["score"] > 0.5 and b["evidence"] and all(isinstance(e, str) for e in b["evidence"])
    assert (c["id"], c["status"]) == ("3", "original")
    doc = client.get("/documents/a").json()
    assert doc["metadata"] == {"source": "wire", "lang": "en"} and doc["text"] == STORY
    assert "text" not in client.get("/documents/a", params={"text": "false"}).json()
    cluster = client.get("/clusters/b").json()
    assert cluster["original_id"] == "a" and [m["id"] for m in cluster["members"]] == ["a", "b"]
    r = client.delete("/documents/a")
    assert r.json() == {"id": "a", "was_original": True, "promoted_id": "b", "repointed": 0}
    assert client.get("/documents/a").status_code == 404
    assert client.get("/clusters/a").status_code == 404
    assert client.delete("/documents/a").status_code == 404
    assert client.get("/documents/b").json()["status"] == "original"
    # ids may hold slashes (e.g. "business/001"), raw or percent-encoded
    client.post("/documents", json={"id": "business/001", "text": THIRD})
    assert client.get("/documents/business/001").json()["id"] == "business/001"
    assert client.get("/clusters/business%2F001").json()["original_id"] == "business/001"
    assert client.delete("/documents/business/001").status_code == 200


def test_resubmission_is_idempotent_and_conflict_is_409(client):
    first = client.post("/documents", json={"id": "a", "text": STORY}).json()
    again = client.post("/documents", json={"id": "a", "text": STORY})
    assert again.status_code == 200 and again.json()["created"] is False
    assert {k: again.json()[k] for k in ("status", "original_id")} == {k: first[k] for k in ("status", "original_id")}
    r = client.post("/documents", json={"id": "a", "text": OTHER})
    assert r.status_code == 409 and r.json()["id"] == "a" and "different text" in r.json()["detail"]
    r = client.post("/documents", json=[{"id": "n", "text": THIRD}, {"id": "a", "text": OTHER}])
    assert r.status_code == 409 and r.json()["index"] == 1
    assert client.get("/documents/n").status_code == 404  # the batch was not stored
    assert client.get("/documents/a").json()["text"] == STORY


def test_auth_is_required_except_for_health_and_schema(server):
    with httpx.Client(base_url=server.url, timeout=30) as anon:
        for method, path in (("POST", "/documents"), ("GET", "/documents/x"), ("GET", "/clusters/x"),
                             ("DELETE", "/documents/x"), ("GET", "/metrics"), ("GET", "/stats")):
            r = anon.request(method, path, json={"id": "x", "text": "t"} if method == "POST" else None)
            assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer", (method, path)
        r = anon.post("/documents", json={"id": "x", "text": "t"}, headers={"Authorization": "Bearer wrong"})
        assert r.status_code == 401
        assert anon.get("/health").json()["status"] == "ok"
        schema = anon.get("/openapi.json").json()
        assert {"/documents", "/documents/{doc_id}", "/clusters/{original_id}", "/health", "/metrics", "/stats"} <= \
            set(schema["paths"])
        body = schema["paths"]["/documents"]["post"]["requestBody"]["content"]["application/json"]["schema"]
        assert body["oneOf"][0]["required"] == ["id", "text"]


def test_clear_errors_for_bad_requests(client, server):
    r = client.post("/documents", content=b'{"id": "x", "text": ', headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not valid JSON" in r.json()["detail"]
    r = client.post("/documents", json=[{"id": "a", "text": "ok"}, {"id": "b"}, {"text": "no id"}])
    assert r.status_code == 422
    locs = [e["loc"] for e in r.json()["detail"]]
    assert ["body", 1, "text"] in locs and ["body", 2, "id"] in locs
    assert all(e["msg"] == "field required" for e in r.json()["detail"])
    r = client.post("/documents", json={"id": "a", "text": 5})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "text"]
    assert client.post("/documents", json="just a string").status_code == 422
    assert client.post("/documents", json=[]).status_code == 422
    assert client.get("/documents/a").status_code == 404  # nothing stored by the failures


def test_size_limits_give_413(client):
    big = {"id": "big", "text": "word " * 20_000}
    r = client.post("/documents", json=big)
    assert r.status_code == 413 and "limit" in r.json()["detail"]

    def chunks():  # no Content-Length: the limit applies while streaming
        yield b'{"id": "big", "text": "'
        for _ in range(100):
            yield b"x" * 1024
        yield b'"}'

    r = client.post("/documents", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413
    r = client.post("/documents", json=[{"id": str(i), "text": "t"} for i in range(51)])
    assert r.status_code == 413 and "max 50" in r.json()["detail"]
    assert client.get("/documents/big").status_code == 404


def test_concurrent_clients(server):
    stories = [STORY, OTHER, THIRD]

    def post(k: int) -> list[dict]:
        with httpx.Client(base_url=server.url, headers=AUTH, timeout=60) as c:
            out = []
            for j, text in enumerate(stories):
                r = c.post("/documents", json={"id": f"{j}-{k}", "text": text if k % 2 else text.upper()})
                assert r.status_code == 200, r.text
                out.append(r.json())
            return out

    with ThreadPoolExecutor(8) as pool:
        results = [a for answers in pool.map(post, range(8)) for a in answers]
    assert len(results) == 24
    for j in range(3):
        group = [a for a in results if a["id"].startswith(f"{j}-")]
        assert len({a["original_id"] for a in group}) == 1
        assert sum(a["status"] == "original" for a in group) == 1
    with httpx.Client(base_url=server.url, headers=AUTH) as c:
        m = c.get("/stats").json()
        assert c.get("/metrics", params={"format": "json"}).json()["documents"] == 24
        text = c.get("/metrics")
    assert text.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert "neardup_documents 24" in text.text.splitlines() and "# TYPE neardup_added_total counter" in text.text
    assert (m["documents"], m["originals"], m["duplicates"]) == (24, 3, 21)
    assert m["decision_latency"]["count"] == 24 and m["decision_latency"]["p99_ms"] > 0
    assert m["requests"]["200"] >= 24


def test_serve_refuses_to_listen_beyond_loopback_without_a_token(tmp_path):
    with pytest.raises(ConfigError, match="without a token"):
        serve(f"sqlite:///{tmp_path / 's.db'}", host="0.0.0.0", port=0)
    res = CliRunner().invoke(standalone_app(), ["serve", "--store", f"sqlite:///{tmp_path / 's.db'}",
                                                "--host", "0.0.0.0"], env={"NEARDUP_TOKEN": ""})
    assert res.exit_code == 2 and "without a token" in res.output


def test_serve_reports_a_corrupt_store_naming_the_file(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"garbage" * 1000)
    res = CliRunner().invoke(standalone_app(), ["serve", "--store", f"sqlite:///{bad}"])
    assert res.exit_code == 2 and "bad.db" in res.output and "Traceback" not in res.output


def test_response_json_is_plain(client):
    r = client.post("/documents", json={"id": "a", "text": STORY})
    assert json.loads(r.text)["latency_ms"] >= 0
