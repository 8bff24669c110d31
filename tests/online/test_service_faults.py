"""The service under a damaged store and text that is not Unicode (issue 20, cases 6 and 7): /health
answers 503 with a reason (never 500) and readable documents stay readable; a lone surrogate anywhere
in a posted document is a 422 naming the field."""

import random

import pytest
from fastapi.testclient import TestClient

from neardup.online.detector import Detector, InvalidDocument, OnlineConfig
from neardup.online.service import create_app
from neardup.online.store import MemoryStore, open_store

PAGE = 4096


def _texts(n, words=200, seed=0):
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(2000)]
    return [" ".join(rng.choice(vocab) for _ in range(words)) for _ in range(n)]


@pytest.fixture
def filled_store(tmp_path):
    """A SQLite store of 300 documents, closed (checkpointed into the database file)."""
    path = tmp_path / "store.db"
    detector = Detector(open_store(f"sqlite:///{path}"), OnlineConfig.ours())
    detector.add_many([{"id": f"d{i}", "text": t, "metadata": {}} for i, t in enumerate(_texts(300))])
    detector.close()
    return path


@pytest.mark.parametrize("damage", ["overwrite", "truncate"])
def test_health_answers_503_with_a_reason_when_the_store_is_damaged(filled_store, damage):
    detector = Detector(open_store(f"sqlite:///{filled_store}"), OnlineConfig.ours())
    client = TestClient(create_app(detector), raise_server_exceptions=False)
    size = filled_store.stat().st_size
    with open(filled_store, "r+b") as fh:  # the last pages of the file, under the running service
        if damage == "truncate":
            fh.truncate(size - 40 * PAGE)
        else:
            fh.seek(size - 40 * PAGE)
            fh.write(random.Random(1).randbytes(40 * PAGE))
    r = client.get("/health")
    assert r.status_code == 503, r.text
    body = r.json()
    assert body["status"] == "unavailable" and "malformed" in body["detail"]
    assert str(filled_store) not in r.text and filled_store.name not in r.text  # the location is for the log only
    codes = {client.get(f"/documents/d{i}").status_code for i in range(0, 300, 7)}
    assert codes <= {200, 503}
    if damage == "overwrite":  # the first documents live in the first pages: still readable
        r = client.get("/documents/d0")
        assert r.status_code == 200 and r.json()["id"] == "d0"
    for path in ("/metrics", "/clusters/d0", "/documents/d299"):
        assert client.get(path).status_code in (200, 503)
    assert client.post("/documents", json={"id": "new", "text": "a new text " * 20}).status_code in (200, 503)
    detector.close()


@pytest.fixture
def client():
    return TestClient(create_app(Detector(MemoryStore(), OnlineConfig.ours())), raise_server_exceptions=False)


@pytest.mark.parametrize("body, loc", [
    (b'{"id": "a", "text": "x \\ud800 y"}', ["body", "text"]),
    (b'{"id": "a\\udfff", "text": "x y"}', ["body", "id"]),
    (b'{"id": "a", "text": "x y", "source": "\\ud800"}', ["body", "source"]),
    (b'{"id": "a", "text": "x y", "meta": {"k": ["\\ud800"]}}', ["body", "meta"]),
    (b'{"id": "a", "text": "x y", "\\udc00": 1}', ["body", "\\udc00"]),
    (b'{"id": "a", "text": "x \xed\xa0\x80 y"}', ["body", "text"]),  # an encoded surrogate (CESU-8)
    (b'[{"id": "a", "text": "x y"}, {"id": "b", "text": "\\ud800"}]', ["body", 1, "text"]),
])
def test_a_lone_surrogate_in_a_posted_document_is_a_422_naming_the_field(client, body, loc):
    r = client.post("/documents", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    [error] = r.json()["detail"]
    assert error["loc"] == loc and "surrogate" in error["msg"]
    assert client.get("/documents/a").status_code == 404  # nothing stored


def test_the_detector_refuses_a_lone_surrogate_naming_the_field():
    detector = Detector(MemoryStore(), OnlineConfig.ours())
    for doc, field in (({"id": "a", "text": "x\ud800"}, "text"), ({"id": "\ud800", "text": "x"}, "id"),
                       ({"id": "a", "text": "x", "metadata": {"m": "\udfff"}}, "m")):
        with pytest.raises(InvalidDocument) as err:
            detector.add_many([doc])
        assert err.value.field == field and "surrogate" in err.value.reason


def test_online_load_names_file_line_and_field_of_a_surrogate_and_skips_it(tmp_path):
    from neardup.io.read import InputError
    from neardup.online.load import load

    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "a", "text": "one two three"}\n{"id": "b", "text": "x", "m": "\\ud800"}\n'
                    '{"id": "c", "text": "four five six"}\n')
    with pytest.raises(InputError, match=rf"^{path}, line 2, field 'm': .*surrogate"):
        load(Detector(MemoryStore(), OnlineConfig.ours()), path, progress=False)
    out = load(Detector(MemoryStore(), OnlineConfig.ours()), path, progress=False, on_error="skip")
    assert (out["added"], out["skipped"]) == (2, 1) and out["skipped_records"][0]["line"] == 2
