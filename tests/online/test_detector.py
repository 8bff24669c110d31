"""The online detector's rules, run against every store (SQLite, PostgreSQL, memory) and both methods."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from neardup.config import ConfigError
from neardup.online.detector import (
    ConflictError,
    Detector,
    DocumentNotFound,
    InvalidDocument,
    OnlineConfig,
)
from neardup.online.store import MemoryStore
from neardup.online.verify import Scored, choose
from neardup.text.normalize import normalize

from .conftest import OTHER, STORY, THIRD

METHODS = [OnlineConfig(), OnlineConfig.ours()]


def _noisy(text: str) -> str:
    """A light character-noise copy: some letters swapped for look-alikes, punctuation changed."""
    return text.replace("e", "c", 3).replace(" the ", " thc ", 2).replace(",", " ;").upper()


@pytest.mark.parametrize("config", METHODS, ids=["sketch", "ours"])
def test_duplicates_link_to_the_first_document_and_others_stay_originals(stores, config):
    d = Detector(stores.open(), config)
    a = d.add("a", STORY)
    b = d.add("b", _noisy(STORY), {"source": "wire"})
    c = d.add("c", OTHER)
    assert (a.status, a.original_id, a.score) == ("original", "a", None)
    assert (b.status, b.original_id, b.matched_id) == ("duplicate", "a", "a")
    assert 0.3 <= b.score <= 1.0 and b.latency_ms > 0
    assert c.status == "original"
    rec = d.get("b")
    assert rec is not None and rec.metadata == {"source": "wire"} and rec.text == _noisy(STORY)
    assert d.counts() == {"documents": 3, "originals": 2, "duplicates": 1}


@pytest.mark.parametrize("config", METHODS, ids=["sketch", "ours"])
def test_evidence_is_text_a_person_finds_in_both_documents(stores, config):
    d = Detector(stores.open(), config)
    d.add("a", STORY)
    ans = d.add("b", "Reprinted: " + STORY)
    assert ans.is_duplicate and ans.evidence
    for snippet in ans.evidence:
        assert len(snippet.split()) >= config.n
        words = snippet.replace(" …", "")
        assert words in normalize(STORY) and words in normalize("Reprinted: " + STORY)


def _sentences(prefix: str, k: int) -> str:
    words = [f"{prefix}{i}" for i in range(12 * k)]
    return " ".join(" ".join(words[j: j + 12]) + "." for j in range(0, len(words), 12))


def test_a_document_matching_a_duplicate_is_linked_to_the_original(stores):
    # A = s1 s2, B = s1 s2 s3 s4 (dup of A), C = s3 s4 s5 (matches B only): C's original is A.
    s12, s34, s5 = _sentences("p", 2), _sentences("q", 2), _sentences("r", 1)
    cfg = OnlineConfig(f=1.0, r_overlap=0.3, t=1)
    d = Detector(stores.open(), cfg)
    assert d.add("A", s12).status == "original"
    b = d.add("B", s12 + " " + s34)
    assert (b.status, b.original_id) == ("duplicate", "A")
    c = d.add("C", s34 + " " + s5)
    assert (c.status, c.matched_id, c.original_id) == ("duplicate", "B", "A")
    cluster = d.cluster("C")  # a duplicate's id resolves to its original's cluster
    assert cluster.original_id == "A" and [m.id for m in cluster.members] == ["A", "B", "C"]


def test_resubmitting_an_id_is_idempotent_and_a_different_text_is_a_conflict(stores):
    d = Detector(stores.open(), OnlineConfig())
    d.add("a", STORY)
    first = d.add("b", _noisy(STORY))
    again = d.add("b", _noisy(STORY))
    assert again.created is False and first.created is True
    assert (again.status, again.original_id, again.score, again.evidence) == \
        (first.status, first.original_id, first.score, first.evidence)
    with pytest.raises(ConflictError, match="'b'"):
        d.add("b", OTHER)
    assert d.get("b").text == _noisy(STORY)  # not overwritten
    assert d.counts()["documents"] == 2


def test_add_many_is_all_or_nothing(stores):
    d = Detector(stores.open(), OnlineConfig())
    d.add("a", STORY)
    with pytest.raises(ConflictError) as err:
        d.add_many([{"id": "x", "text": OTHER}, {"id": "a", "text": THIRD}])
    assert err.value.index == 1
    assert d.get("x") is None and d.counts()["documents"] == 1
    with pytest.raises(InvalidDocument, match="item 1: field 'text'"):
        d.add_many([{"id": "y", "text": OTHER}, {"id": "z"}])
    answers = d.add_many([("x", OTHER), ("y", _noisy(OTHER)), ("z", THIRD, {"k": 1})])
    assert [a.status for a in answers] == ["original", "duplicate", "original"]
    assert answers[1].original_id == "x"  # later items see earlier items of the same batch


def _stream(k: int) -> list[tuple[str, str]]:
    """Stories, noisy and extended copies of them, and boilerplate shared by many documents."""
    base = [STORY, OTHER, THIRD] + [_sentences(f"s{j}x", 3) for j in range(4)]
    boiler = " Reporting by the wire desk; editing by the night staff. Copyright the agency."
    out = []
    for i in range(k):
        text = base[i % len(base)]
        if i % 3 == 1:
            text = _noisy(text)
        elif i % 3 == 2:
            text = text + " " + _sentences(f"n{i}x", 1)
        out.append((f"d{i}", text + boiler if i % 2 else text))
    return out


@pytest.mark.parametrize("config", [OnlineConfig(max_bucket=3), OnlineConfig.ours(max_bucket=2, update_rule=True)],
                         ids=["sketch", "ours"])
def test_a_batch_decides_exactly_as_one_add_at_a_time(stores, config):
    docs = _stream(40)
    one = Detector(MemoryStore(), config)
    singles = [one.add(i, t) for i, t in docs]
    d = Detector(stores.open(), config)
    batched = d.add_many(docs[:7]) + d.add_many(docs[7:8]) + d.add_many(docs[8:])
    fields = ("id", "status", "original_id", "matched_id", "score", "evidence", "update_of")
    assert [[getattr(a, f) for f in fields] for a in batched] == [[getattr(a, f) for f in fields] for a in singles]
    assert sum(a.is_duplicate for a in batched) >= 15  # the stream has duplicates to find
    again = d.add_many([docs[3], docs[3], ("new", STORY), ("new", STORY)])  # re-sent, also within a batch
    assert [a.created for a in again] == [False, False, True, False]
    assert again[3].original_id == again[2].original_id == singles[0].original_id
    with pytest.raises(ConflictError) as err:
        d.add_many([("newer", OTHER), ("newer", THIRD)])
    assert err.value.index == 1 and d.get("newer") is None
    assert d.counts()["documents"] == 41


def test_deleting_a_duplicate_keeps_the_cluster(stores):
    d = Detector(stores.open(), OnlineConfig())
    d.add("a", STORY)
    d.add("b", _noisy(STORY))
    d.add("c", "Update: " + STORY)
    res = d.delete("b")
    assert (res.was_original, res.promoted_id) == (False, None)
    assert d.get("b") is None
    assert [m.id for m in d.cluster("a").members] == ["a", "c"]
    with pytest.raises(DocumentNotFound):
        d.delete("b")


def test_deleting_an_original_promotes_its_earliest_duplicate(stores):
    d = Detector(stores.open(), OnlineConfig())
    d.add("a", STORY)
    d.add("b", _noisy(STORY))
    d.add("c", "Update: " + STORY)
    res = d.delete("a")
    assert (res.was_original, res.promoted_id, res.repointed) == (True, "b", 1)
    b, c = d.get("b"), d.get("c")
    assert (b.status, b.original_id, b.score, b.matched_id) == ("original", "b", None, None)
    assert (c.status, c.original_id) == ("duplicate", "b")
    assert [m.id for m in d.cluster("b").members] == ["b", "c"]
    with pytest.raises(DocumentNotFound):
        d.cluster("a")
    # A new copy now links to the promoted original; the deleted id can be used again.
    assert d.add("d", STORY).original_id == "b"
    again = d.add("a", OTHER)
    assert again.created and again.status == "original"


def test_a_deleted_document_is_no_longer_matched(stores):
    d = Detector(stores.open(), OnlineConfig())
    d.add("a", STORY)
    d.delete("a")
    assert d.add("a2", STORY).status == "original"


def test_update_rule_new_numbers_or_sentences_make_a_new_original(stores):
    changed = STORY.replace("7.5 pct", "8.0 pct").replace("6.2 pct", "6.9 pct")
    added = STORY + (" Later on Tuesday the finance minister welcomed the decision and promised to cut public "
                     "spending by a further two billion crowns next year, officials said.")
    abridged = STORY[: len(STORY) // 2]
    d = Detector(stores.open(), OnlineConfig(update_rule=True))
    d.add("a", STORY)
    for doc_id, text in (("numbers", changed), ("sentences", added)):
        ans = d.add(doc_id, text)
        assert (ans.status, ans.update_of) == ("original", "a"), doc_id
    ab = d.add("abridged", abridged)  # a cut copy adds nothing: still a duplicate
    assert ab.status == "duplicate"
    off = Detector(stores.open(), OnlineConfig(update_rule=False))
    assert off.add("numbers-2", changed).status == "duplicate"


def test_empty_text_is_an_original_and_never_a_candidate(stores):
    d = Detector(stores.open(), OnlineConfig())
    assert d.add("e1", "").status == "original"
    assert d.add("e2", "  ... !!").status == "original"
    assert d.add("e3", "").status == "original"


def test_invalid_documents_name_the_field(stores):
    d = Detector(stores.open(), OnlineConfig())
    with pytest.raises(InvalidDocument, match="field 'text'"):
        d.add("a", None)  # type: ignore[arg-type]
    with pytest.raises(InvalidDocument, match="field 'id'"):
        d.add("", "text")
    assert d.add(7, "seven").id == "7"  # type: ignore[arg-type]


def test_a_store_remembers_the_settings_its_keys_were_built_with(durable_stores):
    d = Detector(durable_stores.open(), OnlineConfig(n=3))
    d.add("a", STORY)
    d.close()
    with pytest.raises(ConfigError, match="n=3.*this config: 4"):
        Detector(durable_stores.open(), OnlineConfig(n=4))
    # Verification settings may change freely; the documents are still there.
    d2 = Detector(durable_stores.open(), OnlineConfig(n=3, r_overlap=0.5, f=0.8))
    assert d2.add("b", STORY).original_id == "a"


def test_concurrent_adds_give_one_original_per_story(stores):
    d = Detector(stores.open(), OnlineConfig.ours())
    errors = []

    def worker(k: int) -> None:
        try:
            for j, text in enumerate((STORY, OTHER, THIRD)):
                d.add(f"{j}-{k}", text if k % 2 else _noisy(text))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for j in range(3):
        recs = [d.get(f"{j}-{k}") for k in range(6)]
        originals = {r.original_id for r in recs}
        assert len(originals) == 1 and sum(r.status == "original" for r in recs) == 1
    assert d.counts() == {"documents": 18, "originals": 3, "duplicates": 15}


def test_choose_verifies_the_top_candidates_and_skips_updates():
    cands = [Scored(1, 9, 0.2), Scored(2, 5, 0.7, "adds 2 sentence(s)"), Scored(3, 4, 0.6)]
    match, updated = choose(cands, 0.5)
    assert match.seq == 3 and updated.seq == 2
    assert choose(cands[:1], 0.5) == (None, None)  # the seed method: only the best-voted is verified


def test_config_errors_name_the_parameter():
    for kwargs, name in (({"method": "x"}, "method"), ({"t": 20}, "t"), ({"r_overlap": 0}, "r_overlap"),
                         ({"bands": 4}, "bands"), ({"top_candidates": 0}, "top_candidates"),
                         ({"k_sample": 0}, "k_sample")):
        with pytest.raises(ConfigError, match=name):
            OnlineConfig(**kwargs)
    with pytest.raises(ConfigError, match="unknown online setting"):
        OnlineConfig.from_dict({"nope": 1})
    assert OnlineConfig.from_dict(OnlineConfig.ours().to_dict()) == OnlineConfig.ours()


def test_sketch_is_the_seed_definition():
    from neardup.online.candidates import SketchStep
    from neardup.online.features import featurize, first_distinct

    step = SketchStep(p=20, k=1600, t=2, seed=1)
    f = featurize(STORY, 3)
    sample = first_distinct(f.seq, 1600)
    expected = [min(int(x) ^ int(r) for x in sample) for r in step.random]
    assert step.sketch(f).tolist() == expected
    assert np.unique(step.probe(f).keys).size == 20
