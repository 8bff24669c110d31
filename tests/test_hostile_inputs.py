"""Hostile documents through every engine and the service (issue 55): huge tokens, empty and whitespace-only
texts, control characters, invisible and bidirectional marks, homoglyphs, mixed scripts, exact and near
copies, odd ids. No engine raises (valid records are no error at all; a lone surrogate is the documented
InputError), each gives one decision per document with every removed one a copy of a kept one, the memory,
local and Ray engines agree, and ``neardup serve`` answers every request below 500, in JSON.

Kept small for a shared 2-core machine: a few dozen hypothesis examples in all, one fixed example on Ray.
"""

from __future__ import annotations

import itertools
import json
import math
import tempfile
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

import neardup
from neardup import EngineConfig, InputError

from .online.test_service_hardening import serving

LOCAL = EngineConfig(name="local", workers=1, progress=False, batch_docs=7)  # shards of 7 documents
# no shrinking: a failure is reported as found (shrinking corpora of huge tokens takes minutes)
SETTINGS = dict(deadline=None, database=None, suppress_health_check=list(HealthCheck),
                phases=[Phase.explicit, Phase.generate])

# -- the pieces hostile texts are made of ------------------------------------------------------------------

CONTROL = [chr(c) for c in range(0x20)] + ["\x7f", "\x85"]
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u034f", "\u180e", "\u2062"]
BIDI = ["\u200e", "\u200f", "\u061c", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067",
        "\u2068", "\u2069"]
SPACES = [" ", "\t", "\n", "\r\n", "\r", "\v", "\f", "\u00a0", "\u2003", "\u3000", "\u2028", "\u2029", "\x1c"]
WORDS = [
    *"stocks rose sharply in tokyo today after the central bank raised rates by half a point".split(),
    *"акции резко выросли в токио сегодня после решения центрального банка".split(),  # Cyrillic
    "股票", "今天", "东京", "大幅", "上涨", "央行", "加息", "日本語のテキスト",  # Han, kana
    "หุ้น", "ขึ้น", "วันนี้", "ในโตเกียว", "ธนาคารกลาง",  # Thai (no spaces between words)
    "الأسهم", "ارتفعت", "اليوم", "في", "طوكيو", "البنك", "المركزي",  # Arabic (right to left)
    "שוק", "המניות",  # Hebrew
    "📈", "🚀", "👨\u200d👩\u200d👧", "🇯🇵", "🏳️\u200d🌈", "1️⃣",  # emoji, ZWJ sequences, flags, keycaps
    "e\u0301", "Z\u0336\u0335\u0334\u0337", "ǅ", "ß", "İ", "ﬁ",  # combining marks, case oddities, ligature
    "раураl", "Рaураl", "ΑΡΡLΕ", "ｓｔｏｃｋｓ", "𝐬𝐭𝐨𝐜𝐤𝐬", "ѕтоскѕ",  # homoglyphs: Cyrillic, Greek, fullwidth
    "7.5", "١٢٣", "๓๔", "½", "-0", "1e999", "NaN", "null", "<script>", "\\u0000", "%00", "{}", '"',
]
TEXT_CHARS = st.characters(blacklist_categories=("Cs",))  # any code point that UTF-8 can hold

token = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from(CONTROL + INVISIBLE + BIDI),
    st.text(TEXT_CHARS, min_size=1, max_size=12),
)
separator = st.sampled_from([" ", " ", " ", "", "\t", "\u200b", "\u00a0", "\n", "\x00", "\u202e"])


@st.composite
def texts(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return ""
    if kind == 1:
        return "".join(draw(st.lists(st.sampled_from(SPACES), min_size=1, max_size=12)))  # whitespace only
    if kind == 2:
        return "".join(draw(st.lists(st.sampled_from(CONTROL + INVISIBLE + BIDI), min_size=1, max_size=12)))
    words = draw(st.lists(token, min_size=1, max_size=60))
    sep = draw(separator)
    return sep.join(words)


def huge_token(draw: st.DrawFn) -> str:
    """One token of 20,000 to 100,000 characters, in a short text."""
    unit = draw(st.sampled_from(["x", "ab", "我", "é", "🚀", "\u200b", "Z\u0336", "a\u0000"]))
    size = draw(st.integers(20_000, 100_000))
    return "stocks rose " + unit * (size // len(unit)) + " in tokyo"


def near_copy(draw: st.DrawFn, text: str) -> str:
    """A near-duplicate of ``text``: an edit a scraper, an OCR engine or a spammer would make."""
    how = draw(st.integers(0, 6))
    pos = draw(st.integers(0, len(text)))
    if how == 0:
        return text.upper()
    if how == 1:
        return text[:pos] + draw(st.sampled_from(INVISIBLE + BIDI + CONTROL)) + text[pos:]
    if how == 2:
        return text[:pos] + draw(st.sampled_from(WORDS)) + text[pos + 1:]
    if how == 3:
        return text + " " + draw(st.sampled_from(WORDS))
    if how == 4:
        return text.strip()
    if how == 5:  # Latin letters swapped for their Cyrillic look-alikes
        return text.translate(str.maketrans("aceopxy", "асеорху"))
    return " ".join(text.split())


ids_of = st.one_of(
    st.text(TEXT_CHARS, min_size=0, max_size=16),
    st.sampled_from(["", " ", "\x00", "\n", "0", "00", "-1", "1e3", "null", "NaN", "true", "a/b", "../etc/passwd",
                     "%2F", "?x=1#y", ".", "..", "\u202eevil", "\u200b", "💥" * 5, "id\r\nX-Header: 1", "x" * 1500]),
)


@st.composite
def corpora(draw: st.DrawFn, max_docs: int = 40, huge: bool = True) -> list[dict[str, str]]:
    """1 to ``max_docs`` records ``{"id", "text"}`` with unique, unusual ids; texts hostile, some of them
    exact or near copies of others, and (in some corpora) one huge token."""
    base = draw(st.lists(texts(), min_size=1, max_size=max(1, max_docs * 2 // 3)))
    if huge and draw(st.integers(0, 5)) == 0:  # a few examples only: they take longer
        base[draw(st.integers(0, len(base) - 1))] = huge_token(draw)
    copies = draw(st.lists(st.tuples(st.integers(0, len(base) - 1), st.booleans()),
                           max_size=max_docs - len(base)))
    docs = base + [base[i] if exact else near_copy(draw, base[i]) for i, exact in copies]
    order = draw(st.permutations(range(len(docs))))
    ids = draw(st.lists(ids_of, min_size=len(docs), max_size=len(docs), unique=True))
    return [{"id": i, "text": docs[k]} for i, k in zip(ids, order)]


FIXED = [  # one of everything, for the explicit examples and the Ray engine
    {"id": "", "text": ""},
    {"id": " ", "text": " \t\n\u3000\u2028 "},
    {"id": "\x00", "text": "".join(CONTROL)},
    {"id": "\u202eevil", "text": "\u200b\u200f\u202e\u2066\ufeff"},
    {"id": "a/b?c#d", "text": "Stocks rose sharply in Tokyo today after the central bank raised rates."},
    {"id": "💥", "text": "stocks rose sharply in tokyo today after the central bank raised rates"},
    {"id": "раураl", "text": "ѕтоскѕ rose sharply in Токуо today after the сеntral bank raised rates"},
    {"id": "0", "text": "股票今天在东京大幅上涨 หุ้นขึ้นวันนี้ الأسهم ارتفعت اليوم 📈🚀👨\u200d👩\u200d👧"},
    {"id": "00", "text": "股票今天在东京大幅上涨 หุ้นขึ้นวันนี้ الأسهم ارتفعت اليوم 📈🚀👨\u200d👩\u200d👧"},
    {"id": "long", "text": "stocks rose " + "x" * 60_000 + " in tokyo"},
    {"id": "long copy", "text": "stocks rose " + "x" * 60_000 + " in tokyo"},
    {"id": "x" * 1500, "text": "a\u0000b\u0001c\x7fd e\u0301 Z\u0336 ﬁ ß İ"},
]


# -- what every result must be -------------------------------------------------------------------------------


def assert_sound(result: neardup.DedupResult, records: list[dict[str, str]]) -> list[dict]:
    """One decision per document, in input order; every removed document a copy of a kept one, linked to it
    by a verified pair; identical texts with words in them in one cluster. Returns the decisions."""
    decisions = result.decisions
    assert [d["id"] for d in decisions] == [r["id"] for r in records]
    kept = {d["id"] for d in decisions if d["kept"]}
    for d in decisions:
        if d["kept"]:
            assert d["copy_of"] is None and d["score"] is None, d
        else:
            assert d["copy_of"] in kept and d["copy_of"] != d["id"], d
            assert d["score"] is not None and math.isfinite(d["score"]), d
    assert result.clusters.unlinked().size == 0
    original = {d["id"]: d["id"] if d["kept"] else d["copy_of"] for d in decisions}  # (an id may be "")
    by_text: dict[str, set[str]] = {}
    for r in records:
        if sum(ch.isalnum() for ch in r["text"]) >= 10:
            by_text.setdefault(r["text"], set()).add(original[r["id"]])
    split = {text: kept_for for text, kept_for in by_text.items() if len(kept_for) > 1}
    assert not split, split
    return decisions


def write_jsonl(records: list[dict[str, str]], path: Path, ensure_ascii: bool) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as fh:  # raw U+2028, U+0085 and all when not ascii
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=ensure_ascii) + "\n")
    return path


# -- 1: the memory and local engines ------------------------------------------------------------------------


@given(records=corpora(), ensure_ascii=st.booleans(), method=st.sampled_from([None, "minhash", "simhash"]))
@example(records=FIXED, ensure_ascii=False, method=None)
@settings(max_examples=40, **SETTINGS)
def test_hostile_corpora_on_the_memory_and_local_engines_agree_without_error(records, ensure_ascii, method):
    memory = neardup.dedup(records, method=method)
    expected = assert_sound(memory, records)
    for group in memory.groups()[:2]:
        str(memory.cluster(group[0]))  # the cluster as shown, evidence and all
    with tempfile.TemporaryDirectory() as tmp:
        path = write_jsonl(records, Path(tmp) / "hostile.jsonl", ensure_ascii)
        assert assert_sound(neardup.dedup(path, method=method), records) == expected  # memory, from the file
        out = Path(tmp) / "out"
        local = neardup.dedup(path, method=method, engine=LOCAL, output=out)
        assert assert_sound(local, records) == expected
        back = neardup.DedupResult.load(out)  # clusters.parquet and the rest, read back
        assert assert_sound(back, records) == expected
        back.evidence()
        n_kept = back.write_kept(Path(tmp) / "kept.jsonl")
        assert n_kept == sum(d["kept"] for d in expected)
        kept = [json.loads(line) for line in (Path(tmp) / "kept.jsonl").read_text("utf-8").split("\n") if line]
        assert [r["id"] for r in kept] == [d["id"] for d in expected if d["kept"]]
        assert_sound(local.rethreshold(local.summary["decision"]["score_ceiling"]), records)  # the highest it takes
    texts_only = neardup.dedup([r["text"] for r in records], method=method)  # a plain list of texts
    assert [d["kept"] for d in texts_only.decisions] == [d["kept"] for d in expected]


@given(records=corpora(max_docs=12, huge=False), where=st.sampled_from(["id", "text"]), data=st.data())
@settings(max_examples=10, **SETTINGS)
def test_a_lone_surrogate_is_the_documented_input_error_or_a_listed_skip(records, where, data):
    # valid JSON ("\ud800"), not valid text: only a Python str (or a JSON escape) can carry one
    bad = data.draw(st.integers(0, len(records) - 1))
    records[bad] = {**records[bad], where: records[bad][where] + "\ud800"}
    good = records[:bad] + records[bad + 1:]
    for engine in ("memory", LOCAL):
        with pytest.raises(InputError, match="lone surrogate"):
            neardup.dedup(records, engine=engine)
        if not good and engine is LOCAL:  # nothing left: the chunked engines' documented error (memory: no decisions)
            with pytest.raises(InputError, match="no documents found"):
                neardup.dedup(records, engine=engine, on_error="skip")
            continue
        result = neardup.dedup(records, engine=engine, on_error="skip")
        assert_sound(result, good)
        [skip] = result.summary["skipped_records"]
        assert skip["field"] == where and "lone surrogate" in skip["error"]


# -- 2: the Ray engine, on one fixed example ------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_cluster():
    """One local 2-CPU Ray cluster (as tests/engine/test_ray.py starts it); the Ray engine re-uses it."""
    pytest.importorskip("ray")
    from neardup.engine.ray import ray_session

    with ray_session(EngineConfig(name="ray", workers=2, progress=False)) as ray:
        yield ray


def test_the_fixed_hostile_corpus_on_the_ray_engine_is_what_memory_decides(ray_cluster):
    expected = assert_sound(neardup.dedup(FIXED), FIXED)
    ray = EngineConfig(name="ray", workers=2, progress=False, batch_docs=5)
    assert assert_sound(neardup.dedup(FIXED, engine=ray), FIXED) == expected


# -- 3: the HTTP service (neardup serve, a process of its own) -------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``neardup serve`` over a fresh SQLite store on a free loopback port (auto: it calibrates on the first
    hostile POST); its log must hold no traceback when it stops."""
    tmp = tmp_path_factory.mktemp("hostile-serve")
    with serving(tmp, "--store", f"sqlite:///{tmp / 'store.db'}") as url:
        with httpx.Client(base_url=url, timeout=120) as client:
            yield client


_fresh = itertools.count()


def send(client: httpx.Client, method: str, path: str, body: bytes | None = None) -> httpx.Response:
    r = client.request(method, path, content=body, headers={"Content-Type": "application/json"} if body else {})
    assert r.status_code < 500, (method, path, (body or b"")[:200], r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/json"), (r.status_code, r.headers)
    assert "Traceback" not in r.text
    r.json()
    return r


def as_json(value: object, ensure_ascii: bool = True) -> bytes:
    return json.dumps(value, ensure_ascii=ensure_ascii, allow_nan=False).encode("utf-8")


json_leaves = st.one_of(st.none(), st.booleans(), st.integers(-(10 ** 40), 10 ** 40),
                        st.floats(allow_nan=False, allow_infinity=False), st.text(TEXT_CHARS, max_size=20),
                        st.sampled_from(WORDS + CONTROL + BIDI))
metadata = st.dictionaries(st.text(TEXT_CHARS, max_size=8).filter(lambda k: k not in ("id", "text")),
                           st.recursive(json_leaves, lambda inner: st.lists(inner, max_size=4)
                                        | st.dictionaries(st.text(TEXT_CHARS, max_size=6), inner, max_size=4),
                                        max_leaves=12),
                           max_size=4)


@given(records=corpora(max_docs=10), meta=st.lists(metadata, min_size=10, max_size=10), batch=st.booleans(),
       ensure_ascii=st.booleans())
@example(records=FIXED, meta=[{}] * 12, batch=False, ensure_ascii=False)
@settings(max_examples=40, **SETTINGS)
def test_hostile_documents_posted_to_the_service_get_no_500(server, records, meta, batch, ensure_ascii):
    prefix = f"{next(_fresh)}-"  # ids unique to this example (a re-sent id with another text is a 409)
    docs = [{**m, "id": prefix + r["id"], "text": r["text"]} for r, m in zip(records, itertools.cycle(meta))]
    answers = []
    if batch:
        r = send(server, "POST", "/documents", as_json(docs, ensure_ascii))
        answers = r.json() if r.status_code == 200 else []
    else:
        for doc in docs:
            r = send(server, "POST", "/documents", as_json(doc, ensure_ascii))
            if r.status_code == 200:
                answers.append(r.json())
            else:  # only an id outside 1 to 1024 characters is refused
                assert r.status_code == 422 and not 1 <= len(doc["id"]) <= 1024, (r.status_code, r.text[:300])
    for answer in answers:
        assert answer["status"] in ("original", "duplicate")
        got = send(server, "GET", "/documents/" + quote(answer["id"], safe=""))  # (prefixed: never "." or "..")
        assert got.status_code == 200 and got.json()["id"] == answer["id"], (answer["id"], got.text[:300])
        assert send(server, "GET", "/clusters/" + quote(answer["original_id"], safe="")).status_code == 200
    send(server, "GET", "/stats")  # the counters as JSON (/metrics: the same in Prometheus' text format)
    metrics = server.get("/metrics")
    assert metrics.status_code == 200 and metrics.text.startswith("# HELP"), metrics.text[:200]
    assert send(server, "GET", "/health").status_code == 200


def nested(depth: int, leaf: object = "bottom") -> object:
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


@pytest.mark.parametrize("body, status", [
    (as_json({"id": "huge", "text": "stocks rose " + "x" * 100_000 + " in tokyo"}), 200),
    (as_json({"id": "huge-emoji", "text": "🚀" * 100_000}, ensure_ascii=False), 200),
    (as_json({"id": "ctl", "text": "".join(CONTROL) + " stocks rose \x00 in tokyo"}), 200),
    (as_json({"id": "\x00\x01\u202e", "text": "an id of control characters"}), 200),
    (as_json({"id": "empty-text", "text": ""}), 200),
    (as_json({"id": "blank", "text": " \t\u3000\u2028"}), 200),
    (as_json({"id": "deep", "text": "deep but legal metadata", "m": nested(60)}), 200),
    (as_json({"id": "deep-big", "text": "a big integer in it", "m": nested(30, 10 ** 4000)}), 200),
    (b'{"id": "nan", "text": "some words here", "score": NaN}', 422),
    (b'{"id": "inf", "text": "some words here", "m": [1, -Infinity]}', 422),
    (b'{"id": "sur", "text": "a lone \\ud800 surrogate"}', 422),
    (b'{"id": "raw-ctl", "text": "a raw \x01 control character"}', None),  # strict JSON says no
    (b'{"id": "bad-utf8", "text": "\xff\xfe"}', None),
    (b'{"id": "", "text": "an empty id"}', 422),
    (b'{"id": "t", "text": null}', 422),
    (b'{"id": "t", "text": ["a", "list"]}', 422),
    (b"[]", None),
    (b"", None),
    (as_json([{"id": "dup", "text": "one"}, {"id": "dup", "text": "two"}]), None),
])
def test_hostile_bodies_get_a_json_answer_below_500(server, body, status):
    r = send(server, "POST", "/documents", body)
    assert status is None or r.status_code == status, (r.status_code, r.text[:300])
    if status == 200:
        doc_id = json.loads(body)["id"]
        assert send(server, "GET", "/documents/" + quote(doc_id, safe="")).json()["id"] == doc_id


def test_an_id_with_a_newline_is_its_own_document_in_every_route(server):
    # was: Starlette's path parameter stops at a newline, so "x\n" reached "x" (DELETE deleted it) and "x\ny"
    # no route at all (fixed in neardup.online.service: _IdConvertor)
    ids = ["nl", "nl\n", "nl\ny", "\nnl", "nl\r\n", "nl\n\n"]
    stories = ["violin makers of cremona sold seven instruments", "heavy rain flooded northern valley villages",
               "maritime museum opened inside an old warehouse", "glaciers retreated four metres last summer",
               "farmers feared late potato harvests would fail", "chess olympiad pairings were published yesterday"]
    for doc_id, story in zip(ids, stories):
        assert send(server, "POST", "/documents", as_json({"id": doc_id, "text": story})).json()["status"] == "original"
    for doc_id in ids:
        path = quote(doc_id, safe="")
        assert send(server, "GET", "/documents/" + path).json()["id"] == doc_id
        assert send(server, "GET", "/clusters/" + path).json()["original_id"] == doc_id
    assert send(server, "DELETE", "/documents/" + quote("nl\n", safe="")).status_code == 200
    assert send(server, "GET", "/documents/nl").status_code == 200
    assert send(server, "GET", "/documents/" + quote("nl\n", safe="")).status_code == 404
