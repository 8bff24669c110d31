"""The service against hostile or unlucky requests (issue 55), each over a real HTTP server (uvicorn on a
loopback port, or ``neardup serve`` itself): deep JSON, huge integers, NaN, NUL in PostgreSQL, the first
posts racing to calibrate a fresh store, cross-site requests and DNS rebinding without a token, a
damaged store under ``/health``, non-ASCII tokens and guessed tokens. No answer is a 500 or a traceback,
and every error is a JSON object with ``detail``."""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from neardup.cli.online import standalone_app
from neardup.config import ConfigError
from neardup.online.detector import Detector, OnlineConfig
from neardup.online.service import FailedTokens, create_app
from neardup.online.store import PostgresStore, open_store

from .conftest import OTHER, PG_DSN, STORY, THIRD, pg_url
from .test_service import RunningServer, free_port
from .test_service_faults import _texts

JSON = {"content-type": "application/json"}
TOKEN = "test-token-55"


@pytest.fixture
def local(stores):
    """A server without a token (loopback only), over each store."""
    running = RunningServer(create_app(Detector(stores.open(), OnlineConfig.ours())))
    yield running
    running.stop()


def post(url: str, body: bytes, headers: dict | None = None, **kw) -> httpx.Response:
    """One request on a connection of its own (a failed request must not spoil the next)."""
    with httpx.Client(base_url=url, timeout=60, **kw) as c:
        return c.post("/documents", content=body, headers={**JSON, **(headers or {})})


def get(url: str, path: str, **kw) -> httpx.Response:
    with httpx.Client(base_url=url, timeout=60) as c:
        return c.get(path, **kw)


def assert_json_error(r: httpx.Response, status: int | tuple[int, ...]) -> dict:
    assert r.status_code in ((status,) if isinstance(status, int) else status), (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/json"), r.headers
    assert "Traceback" not in r.text
    body = r.json()
    assert isinstance(body, dict) and body["detail"]
    return body


@contextlib.contextmanager
def serving(tmp_path: Path, *args: str) -> Iterator[str]:
    """``neardup serve ARGS`` without a token in a process of its own, on a free port; yields its URL."""
    port = free_port()
    log = tmp_path / f"server-{port}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "neardup.online", "serve", "--port", str(port),
                                 "--log-level", "warning", *args],
                                stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "NEARDUP_TOKEN": ""})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                get(url, "/health")
                break
            except httpx.HTTPError:
                assert proc.poll() is None and time.time() < deadline, log.read_text()
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "Traceback" not in log.read_text(), log.read_text()


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


# 1 --------------------------------------------------------------------------------------------------


def test_json_nested_thousands_deep_is_a_400_and_deep_metadata_a_422_naming_the_field(local):
    deep = b'{"id": "x", "text": "some words here", "m": ' + nested(2000) + b"}"
    body = assert_json_error(post(local.url, deep), 400)
    assert "nested too deeply" in body["detail"]
    assert_json_error(post(local.url, nested(100_000)), 400)  # a whole body of brackets
    within = b'{"id": "x", "text": "some words here", "m": ' + nested(200) + b"}"  # readable, still too deep
    [error] = assert_json_error(post(local.url, within), 422)["detail"]
    assert error["loc"] == ["body", "m"] and "nested more than 64 levels" in error["msg"]
    ok = b'{"id": "x", "text": "some words here", "m": ' + nested(60) + b"}"
    assert post(local.url, ok).status_code == 200
    assert get(local.url, "/documents/x").json()["metadata"]["m"] == json.loads(nested(60))


# 2 --------------------------------------------------------------------------------------------------


def test_a_5000_digit_integer_is_a_422_naming_the_field_and_a_long_integer_id_is_its_digits(local):
    huge = b"9" * 5000
    [error] = assert_json_error(post(local.url, b'{"id": ' + huge + b', "text": "some words"}'), 422)["detail"]
    assert error["loc"] == ["body", "id"] and "1 to 1024 characters" in error["msg"]
    [error] = assert_json_error(post(local.url, b'{"id": "a", "text": "some words", "n": -' + huge + b"}"),
                                422)["detail"]
    assert error["loc"] == ["body", "n"] and "4300 digits" in error["msg"]
    batch = b'[{"id": "b", "text": "some words"}, {"id": "c", "text": "more words", "n": [' + huge + b"]}]"
    [error] = assert_json_error(post(local.url, batch), 422)["detail"]
    assert error["loc"] == ["body", 1, "n"]
    assert get(local.url, "/documents/a").status_code == 404 and get(local.url, "/documents/b").status_code == 404
    # the documented id semantics: an integer is its decimal string, up to 1024 characters
    digits = "12345678901234567890" * 10
    r = post(local.url, f'{{"id": {digits}, "text": "some words"}}'.encode())
    assert r.status_code == 200 and r.json()["id"] == digits
    assert get(local.url, f"/documents/{digits}").json()["id"] == digits
    assert post(local.url, f'{{"id": "{digits}", "text": "some words"}}'.encode()).json()["created"] is False


# 3 --------------------------------------------------------------------------------------------------


def test_eight_concurrent_first_posts_to_a_fresh_auto_store_all_succeed_and_agree(stores, tmp_path):
    # a fresh process: its first calibration builds the candidate step from cold (imports and all, about
    # 40 ms), the window in which posts arriving meanwhile once saw a resolved config without its preparer
    # (5-7 of 8 failed); the posts are spread over that window, 5 ms apart
    with serving(tmp_path, "--store", stores.url) as url:
        clients = [httpx.Client(base_url=url, timeout=120) for _ in range(8)]
        try:
            for c in clients:  # connected before the start, so the posts arrive together
                assert c.get("/health").json()["method"] == "auto"
            barrier = threading.Barrier(8)

            def first_post(k: int) -> httpx.Response:
                text = STORY if k == 0 else f"Reprinted from the wire, copy {k}. " + STORY
                barrier.wait()
                time.sleep(0.005 * k)
                return clients[k].post("/documents", json={"id": f"c{k}", "text": text})

            with ThreadPoolExecutor(8) as pool:
                answers = list(pool.map(first_post, range(8)))
            assert [r.status_code for r in answers] == [200] * 8, [r.text[:200] for r in answers]
            decided = [r.json() for r in answers]
            assert sum(a["status"] == "original" for a in decided) == 1
            assert len({a["original_id"] for a in decided}) == 1
            health = clients[0].get("/health").json()
            assert health["method"] in ("minhash", "sketch") and health["documents"] == 8
            assert clients[0].post("/documents", json={"id": "o", "text": OTHER}).json()["status"] == "original"
        finally:
            for c in clients:
                c.close()


# 4 --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value, where", [
    (b"NaN", ["body", "score"]),
    (b"Infinity", ["body", "score"]),
    (b"-Infinity", ["body", "score"]),
    (b"1e999", ["body", "score"]),  # valid JSON, but no double holds it: read as Infinity
    (b'{"inner": [1, NaN]}', ["body", "score"]),
])
def test_nan_and_infinity_in_metadata_are_a_422_naming_the_field(local, value, where):
    r = post(local.url, b'{"id": "a", "text": "some words here", "score": ' + value + b"}")
    [error] = assert_json_error(r, 422)["detail"]
    assert error["loc"] == where and "finite number" in error["msg"]
    assert get(local.url, "/documents/a").status_code == 404  # nothing stored


def test_a_finite_float_in_metadata_reads_back_as_it_came(local):
    assert post(local.url, b'{"id": "a", "text": "some words here", "score": 0.1, "small": -2.5e-3}').status_code == 200
    assert get(local.url, "/documents/a").json()["metadata"] == {"score": 0.1, "small": -0.0025}


# 5 --------------------------------------------------------------------------------------------------


def test_without_a_token_cross_site_bodies_are_a_415(local):
    doc = b'{"id": "a", "text": "some words here"}'
    for content_type in ("text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
                         "multipart/form-data; boundary=x"):
        body = assert_json_error(post(local.url, doc, {"content-type": content_type}), 415)
        assert "application/json" in body["detail"]
    with httpx.Client(base_url=local.url, timeout=30) as c:
        assert_json_error(c.post("/documents", content=doc), 415)  # no Content-Type at all
        assert_json_error(c.post("/documents", data={"id": "a", "text": "some words here"}), 415)
        assert c.get("/documents/a").status_code == 404  # none of them was stored
        assert c.post("/documents", content=doc, headers={"content-type": "Application/JSON; charset=utf-8"}
                      ).status_code == 200
        assert_json_error(c.request("DELETE", "/documents/a", headers={"content-type": "text/plain"}), 415)
        assert c.delete("/documents/a").status_code == 200  # a DELETE has no body: no type needed


def test_without_a_token_a_foreign_host_is_a_421_and_the_server_names_work(local):
    with httpx.Client(base_url=local.url, timeout=30) as c:
        for host in ("evil.example", f"evil.example:{local.port}", "127.0.0.1.nip.io", "localhost.evil.example"):
            for method, path in (("GET", "/health"), ("GET", "/documents/a"), ("GET", "/openapi.json"),
                                 ("POST", "/documents"), ("DELETE", "/documents/a")):
                r = c.request(method, path, headers={"host": host, **JSON},
                              content=b'{"id": "a", "text": "some words here"}' if method == "POST" else None)
                assert "not a name of this server" in assert_json_error(r, 421)["detail"], (host, method, path)
        assert c.get("/documents/a").status_code == 404
        for host in ("localhost", f"localhost:{local.port}", "LOCALHOST.", f"127.0.0.1:{local.port}",
                     f"[::1]:{local.port}", "127.0.0.2"):
            assert c.get("/health", headers={"host": host}).status_code == 200, host


def test_serve_allowed_host_option_adds_a_name(tmp_path):
    with serving(tmp_path, "--store", f"sqlite:///{tmp_path / 's.db'}", "--allowed-host", "dedup.internal",
                 "--allowed-host", "Other.Name") as url:
        port = url.rsplit(":", 1)[1]
        for host in ("dedup.internal", f"dedup.internal:{port}", "other.name", "localhost"):
            assert get(url, "/health", headers={"host": host}).status_code == 200, host
        assert_json_error(get(url, "/health", headers={"host": "evil.example"}), 421)
        assert_json_error(post(url, b'{"id": "a", "text": "t"}', {"content-type": "text/plain"}), 415)


def test_with_a_token_any_host_and_type_may_reach_it_and_allowed_hosts_restrict_it(tmp_path):
    auth = {"Authorization": f"Bearer {TOKEN}"}
    open_app = RunningServer(create_app(Detector(open_store("memory://"), OnlineConfig.ours()), token=TOKEN))
    strict = RunningServer(create_app(Detector(open_store("memory://"), OnlineConfig.ours()), token=TOKEN,
                                      host="0.0.0.0", allowed_hosts=["dedup.example.com"]))
    try:
        r = post(open_app.url, b'{"id": "a", "text": "some words here"}', {**auth, "content-type": "text/plain",
                                                                           "host": "dedup.example.org"})
        assert r.status_code == 200  # the token protects it: no browser can send it cross-site
        assert get(strict.url, "/health", headers={"host": "dedup.example.com"}).status_code == 200
        assert_json_error(get(strict.url, "/health", headers={"host": "dedup.example.org"}), 421)
    finally:
        open_app.stop()
        strict.stop()


# 6 --------------------------------------------------------------------------------------------------


@pytest.fixture
def damaged_server(tmp_path):
    """A server over a SQLite store of 300 documents (checkpointed), its pages warm in the cache."""
    path = tmp_path / "store.db"
    detector = Detector(open_store(f"sqlite:///{path}"), OnlineConfig.ours())
    detector.add_many([{"id": f"d{i}", "text": t, "metadata": {}} for i, t in enumerate(_texts(300))])
    detector.close()
    running = RunningServer(create_app(Detector(open_store(f"sqlite:///{path}"), OnlineConfig.ours())))
    for i in range(0, 300, 3):
        assert get(running.url, f"/documents/d{i}").status_code == 200
    assert get(running.url, "/clusters/d0").status_code == 200
    assert get(running.url, "/health").json()["status"] == "ok"
    yield running, path
    running.stop()


@pytest.mark.parametrize("damage", ["overwrite", "delete"])
def test_health_reads_the_store_itself_not_its_cache(damaged_server, damage):
    running, path = damaged_server
    if damage == "delete":
        os.remove(path)  # the process still writes to the unlinked file: every write would be lost
    else:
        size = path.stat().st_size
        with open(path, "r+b") as fh:  # all but the 100-byte header
            fh.seek(100)
            fh.write(random.Random(7).randbytes(size - 100))
    assert get(running.url, "/documents/d0").status_code == 200  # the page cache still answers
    body = assert_json_error(get(running.url, "/health"), 503)
    assert body["status"] == "unavailable"
    assert ("malformed" if damage == "overwrite" else "unable to open") in body["detail"]
    assert str(path) not in body["detail"] and path.name not in body["detail"]


def test_health_stays_503_once_a_route_found_the_store_damaged(damaged_server):
    running, path = damaged_server
    size = path.stat().st_size
    with open(path, "r+b") as fh:  # the last pages only: the health check's reads may miss them
        fh.seek(size - 40 * 4096)
        fh.write(random.Random(1).randbytes(40 * 4096))
    r = post(running.url, b'{"id": "new", "text": "a new text that needs the damaged pages of the keys"}')
    if r.status_code == 200:
        pytest.skip("this damage did not reach the pages a post reads")
    assert "malformed" in assert_json_error(r, 503)["detail"]
    body = assert_json_error(get(running.url, "/health"), 503)
    assert "malformed" in body["detail"] and body["status"] == "unavailable"


# 7 --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("token", ["clé-sécrète-55", "ключ-доступа-55", "秘密のトークン", "emoji-🔑-55"])
def test_a_non_ascii_token_works_sent_as_utf8_and_as_latin1_where_it_fits(token):
    running = RunningServer(create_app(Detector(open_store("memory://"), OnlineConfig.ours()), token=token))
    try:
        sent = [token.encode("utf-8")]
        try:
            sent.append(token.encode("latin-1"))  # what Python's http.client and requests send
        except UnicodeEncodeError:
            pass
        for raw in sent:
            with httpx.Client(base_url=running.url, timeout=30) as c:
                r = c.post("/documents", json={"id": "a", "text": "some words here"},
                           headers={"Authorization": b"Bearer " + raw})
                assert r.status_code == 200, r.text
                assert c.get("/metrics", headers={"Authorization": b"Bearer " + raw}).status_code == 200
        with httpx.Client(base_url=running.url, timeout=30) as c:
            for wrong in (token[:-1].encode(), (token + "x").encode(), b"Bearer", ("x" + token).encode()):
                r = c.get("/metrics", headers={"Authorization": b"Bearer " + wrong})
                assert_json_error(r, 401)
    finally:
        running.stop()


def test_a_token_no_client_could_send_is_refused_at_startup(tmp_path):
    for token in (" padded", "padded ", "tab\tinside", "nul\x00", "line\nbreak"):
        with pytest.raises(ConfigError, match="control characters"):
            create_app(Detector(open_store("memory://"), OnlineConfig.ours()), token=token)
    res = CliRunner().invoke(standalone_app(), ["serve", "--store", f"sqlite:///{tmp_path / 's.db'}",
                                                "--token", "trailing "])
    assert res.exit_code == 2 and "token" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "s.db").exists()  # refused before the store was opened


# 8 --------------------------------------------------------------------------------------------------


@pytest.mark.postgres
def test_postgres_nul_is_a_422_naming_the_field_and_no_error_shows_the_connection_url():
    if not PG_DSN:
        pytest.skip("NEARDUP_TEST_POSTGRES_DSN is not set")
    import psycopg
    from urllib.parse import urlsplit

    parts = urlsplit(PG_DSN)
    password = "pw-Secret-55"  # a trust-authenticated test server ignores it; the URL still holds it
    dsn = PG_DSN.replace(f"{parts.username}@", f"{parts.username}:{password}@", 1)
    url = f"{pg_url('t_nul55')}".replace(PG_DSN, dsn)
    secrets = [password, dsn, f"{parts.hostname}:{parts.port}", f"{parts.username}@", str(parts.port),
               parts.path.strip("/")]
    store = open_store(url)
    running = RunningServer(create_app(Detector(store, OnlineConfig.ours())))
    seen: list[httpx.Response] = []
    try:
        for body, loc in (
            ({"id": "a", "text": "some\x00words here"}, ["body", "text"]),
            ({"id": "a\x00b", "text": "some words here"}, ["body", "id"]),
            ({"id": "a", "text": "some words here", "m": "x\x00"}, ["body", "m"]),
            ({"id": "a", "text": "some words here", "m": {"k": ["\x00"]}}, ["body", "m"]),
            ({"id": "a", "text": "some words here", "m\x00": 1}, ["body", "m\x00"]),
        ):
            with httpx.Client(base_url=running.url, timeout=30) as c:
                r = c.post("/documents", json=body)
                seen.append(r)
                [error] = assert_json_error(r, 422)["detail"]
                assert error["loc"] == loc and "NUL" in error["msg"], error
        with httpx.Client(base_url=running.url, timeout=30) as c:
            assert c.post("/documents", json={"id": "a", "text": STORY}).status_code == 200
            for path in ("/documents/a%00b", "/clusters/a%00b"):
                seen.append(c.get(path))
                assert_json_error(seen[-1], 404)
            seen.append(c.delete("/documents/a%00b"))
            assert_json_error(seen[-1], 404)
            with psycopg.connect(PG_DSN, autocommit=True) as admin:  # the store's connection dies under it
                admin.execute("SELECT pg_terminate_backend(%s)", (store.conn.info.backend_pid,))
            for method, path in (("GET", "/health"), ("GET", "/documents/a"), ("GET", "/clusters/a"),
                                 ("GET", "/metrics"), ("DELETE", "/documents/a"), ("POST", "/documents")):
                r = c.request(method, path, json={"id": "b", "text": THIRD} if method == "POST" else None)
                seen.append(r)
                assert_json_error(r, 503)
    finally:
        running.stop()
        cleanup = open_store(pg_url("t_nul55"))
        assert isinstance(cleanup, PostgresStore)
        cleanup.drop()
        cleanup.close()
    for r in seen:
        for secret in secrets:
            assert secret not in r.text, (secret, r.text)


def test_store_errors_never_show_the_location(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'where.db'}")
    detector = Detector(store, OnlineConfig.ours())
    running = RunningServer(create_app(detector))
    try:
        store.conn.close()  # every later statement fails: "Cannot operate on a closed database."
        for path in ("/documents/a", "/clusters/a", "/metrics"):
            body = assert_json_error(get(running.url, path), 503)
            assert "where.db" not in body["detail"] and str(tmp_path) not in body["detail"]
        body = assert_json_error(post(running.url, b'{"id": "a", "text": "some words here"}'), 503)
        assert "where.db" not in body["detail"]
    finally:
        running.stop()


# 9 --------------------------------------------------------------------------------------------------


def _client(url: str, address: str = "127.0.0.1", token: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=url, timeout=30, headers=headers,
                        transport=httpx.HTTPTransport(local_address=address))


def test_wrong_tokens_are_limited_per_client_address():
    running = RunningServer(create_app(Detector(open_store("memory://"), OnlineConfig.ours()), token=TOKEN))
    try:
        with _client(running.url, token="guess") as guesser:
            codes = [guesser.get("/metrics").status_code for _ in range(10)]
            assert codes == [401] * 10
            t0 = time.perf_counter()
            for _ in range(190):
                r = guesser.get("/metrics")
                body = assert_json_error(r, 429)
                assert 1 <= int(r.headers["retry-after"]) <= 60 and "too many wrong tokens" in body["detail"]
            assert time.perf_counter() - t0 < 30
            r = guesser.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
            assert_json_error(r, 429)  # the right token too, from this address, until the window passes
            assert guesser.get("/health").status_code == 200  # no token needed there
        with _client(running.url, "127.0.0.2", TOKEN) as other:  # another client address is not affected
            assert other.get("/metrics").status_code == 200
            assert other.get("/metrics", headers={"Authorization": "Bearer guess"}).status_code == 401
            assert other.get("/metrics").status_code == 200
    finally:
        running.stop()


def test_the_wrong_token_limit_passes_with_its_window():
    limit = FailedTokens(limit=3, window_s=1.5)
    running = RunningServer(create_app(Detector(open_store("memory://"), OnlineConfig.ours()), token=TOKEN,
                                       failed_tokens=limit))
    try:
        with _client(running.url) as c:
            bad, good = {"Authorization": "Bearer nope"}, {"Authorization": f"Bearer {TOKEN}"}
            assert [c.get("/metrics", headers=bad).status_code for _ in range(4)] == [401, 401, 401, 429]
            assert c.get("/metrics").status_code == 429  # no token at all: refused too while blocked
            time.sleep(1.7)
            assert c.get("/metrics", headers=good).status_code == 200
            assert c.get("/metrics").status_code == 401  # a missing token is not counted as a guess
            assert c.get("/metrics", headers=good).status_code == 200
    finally:
        running.stop()


# every error ------------------------------------------------------------------------------------------


def test_every_error_is_a_json_object_with_the_right_status():
    running = RunningServer(create_app(Detector(open_store("memory://"), OnlineConfig.ours()), token=TOKEN,
                                       max_body_bytes=4096, max_batch=3))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        with httpx.Client(base_url=running.url, timeout=30, headers=auth) as c:
            assert c.post("/documents", json={"id": "a", "text": STORY}).status_code == 200
            cases = [
                (c.post("/documents", content=b"{", headers=JSON), 400),
                (c.get("/metrics", headers={"Authorization": "Bearer wrong"}), 401),
                (c.get("/documents/nope"), 404),
                (c.get("/no/such/route"), 404),
                (c.put("/documents/a", json={}), 405),
                (c.post("/documents", json={"id": "a", "text": OTHER}), 409),
                (c.post("/documents", json={"id": "b", "text": "x" * 5000}), 413),
                (c.post("/documents", json=[{"id": str(i), "text": "t"} for i in range(4)]), 413),
                (c.get("/documents/a", params={"text": "maybe"}), 422),
                (c.post("/documents", content=b'{"id": "b", "text": "t", "x": NaN}', headers=JSON), 422),
            ]
            for r, status in cases:
                assert_json_error(r, status)
    finally:
        running.stop()
