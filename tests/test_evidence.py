"""Evidence per verified pair: every pair carries it, its spans are real shared text at the stated offsets
(compared after normalization), its views name what matched, it is the documented file, and it can be
turned off. Every engine's evidence is the same: tests/engine/test_conformance.py."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import neardup
from neardup.cli import app
from neardup.config import DedupConfig, EngineConfig
from neardup.evidence import EVIDENCE_SCHEMA, PASSAGE_TEXT_CHARS
from neardup.text.normalize import normalize
from tests.conftest import shared_file

NEURAL = all(importlib.util.find_spec(m) for m in ("onnxruntime", "faiss", "unisim"))


def _texts(path) -> dict[str, str]:
    return {str(r["id"]): r["text"] for r in map(json.loads, open(path, encoding="utf-8"))}


def _check_evidence(result: neardup.DedupResult, texts: dict[str, str], view: str) -> int:
    """Every pair has its row; views name the representation and carry the pair score; every span is the
    same passage in both texts (after normalization) at the stated raw offsets. Returns the spans checked."""
    rows = result.evidence()
    assert [(r["left"], r["right"], r["score"]) for r in rows] == result.pairs_by_id()
    spans = 0
    for r in rows:
        assert r["views"] == [{"view": view, "score": r["score"]}]
        a, b = texts[r["left"]], texts[r["right"]]
        assert 1 <= len(r["spans"]) <= 3
        for s in r["spans"]:
            left, right = a[s["left_start"] : s["left_end"]], b[s["right_start"] : s["right_end"]]
            assert normalize(left) == normalize(right) != ""
            assert s["text"] == left[:PASSAGE_TEXT_CHARS] and s["words"] == len(normalize(left).split())
            spans += 1
        assert [s["words"] for s in r["spans"]] == sorted((s["words"] for s in r["spans"]), reverse=True)
    return spans


@pytest.mark.parametrize("engine", ["memory", "local"])
def test_every_pair_on_the_example_carries_real_shared_spans(example_path, tmp_path, engine):
    eng = EngineConfig(name=engine, workers=2, progress=False)
    result = neardup.dedup(example_path, engine=eng, output=tmp_path / "out")
    assert result.summary["n_pairs"] > 50
    assert _check_evidence(result, _texts(example_path), "word 4-grams") >= result.summary["n_pairs"]


@pytest.mark.shared_data
def test_every_pair_on_a_reuters_day_carries_real_shared_spans(tmp_path):
    path = shared_file("reuters_days/docs.jsonl")
    result = neardup.dedup(path, engine=EngineConfig(name="local", workers=2, progress=False), output=tmp_path / "o")
    assert result.summary["n_pairs"] > 10
    _check_evidence(result, _texts(path), "word 4-grams")
    loaded = neardup.DedupResult.load(tmp_path / "o")
    assert loaded.evidence() == result.evidence()


def test_the_evidence_file_has_the_documented_columns_in_pair_order(example_path, tmp_path):
    res = CliRunner().invoke(app, ["dedup", str(example_path), "-o", str(tmp_path / "out"), "--silent"])
    assert res.exit_code == 0, res.output
    evidence = pq.read_table(tmp_path / "out" / "evidence.parquet")
    pairs = pq.read_table(tmp_path / "out" / "pairs.parquet")
    assert evidence.schema.equals(EVIDENCE_SCHEMA)
    assert evidence.select(["left", "right", "score"]).to_pylist() == pairs.to_pylist()
    assert pairs.column_names == ["left", "right", "score"]  # pairs.parquet itself is unchanged


@pytest.mark.parametrize("config, view", [(DedupConfig().replace(shingle__char=True), "char 5-grams"),
                                          (DedupConfig(method="simhash"), "char 4-grams"),
                                          (DedupConfig(method="ngram"), "word 4-grams")])
def test_views_name_the_method_s_representation(example_path, config, view):
    result = neardup.dedup(example_path, config=config)
    _check_evidence(result, _texts(example_path), view)


@pytest.mark.neural
@pytest.mark.skipif(not NEURAL, reason="needs the neural extra")
def test_a_hybrid_pair_shows_both_views_with_each_view_s_score(example_path):
    result = neardup.dedup(example_path, method="hybrid")
    rows = result.evidence()
    assert rows and all([v["view"] for v in r["views"]] == ["word 4-grams", "retsim"] for r in rows)
    w = result.summary["params"]["hybrid_weight"]
    for r in rows:  # the linear rule: the pair score is made of the two views' scores
        overlap, cosine = (v["score"] for v in r["views"])
        assert r["score"] == pytest.approx(w * overlap + (1 - w) * cosine)
    retsim = neardup.dedup(example_path, method="retsim").evidence()
    assert retsim and all(r["views"] == [{"view": "retsim", "score": r["score"]}] for r in retsim)


def test_evidence_can_be_turned_off(example_path, tmp_path):
    res = CliRunner().invoke(app, ["dedup", str(example_path), "-o", str(tmp_path / "o"), "--no-evidence", "-q"])
    assert res.exit_code == 0, res.output
    assert not (tmp_path / "o" / "evidence.parquet").exists()
    with pytest.raises(ValueError, match="no evidence"):
        neardup.DedupResult.load(tmp_path / "o").evidence()
    off = neardup.dedup(example_path, evidence=False, output=tmp_path / "m")
    assert not off.has_evidence and not (tmp_path / "m" / "evidence.parquet").exists()
    local = neardup.dedup(example_path, engine=EngineConfig(name="local", workers=1, progress=False, evidence=False),
                          output=tmp_path / "l")
    assert not local.has_evidence and local.pairs_by_id() == off.pairs_by_id()


def test_a_result_reads_back_from_its_folder_with_its_texts(example_path, tmp_path):
    ref = neardup.dedup(example_path, output=tmp_path / "out")
    got = neardup.DedupResult.load(tmp_path / "out")
    assert got.groups() == ref.groups() and got.representatives == ref.representatives
    assert np.array_equal(got.scores, ref.scores) and got.evidence() == ref.evidence()
    texts = _texts(example_path)
    some = ref.groups()[0]
    assert got.texts(some) == {i: texts[i] for i in some} == ref.texts(some)
    assert got.summary["read"] == {"id_field": "id", "text_field": "text"}


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_chunked_run_reads_the_texts_again_from_any_format(example_path, tmp_path, fmt):
    import pyarrow as pa
    import pyarrow.csv as pacsv

    records = [{"id": r["id"], "text": r["text"]} for r in map(json.loads, open(example_path, encoding="utf-8"))]
    path = tmp_path / f"docs.{fmt}"
    table = pa.Table.from_pylist(records)
    pq.write_table(table, path) if fmt == "parquet" else pacsv.write_csv(table, path)
    ref = neardup.dedup(path)
    got = neardup.dedup(path, engine=EngineConfig(name="local", workers=1, progress=False, batch_docs=50),
                        output=tmp_path / "o")
    assert got.evidence() == ref.evidence() and len(ref.evidence()) == ref.summary["n_pairs_written"] > 50


def test_the_text_store_reads_each_text_back_without_mapping_the_store(tmp_path, monkeypatch):
    """A chunked run's evidence workers read paired texts at random: one positioned read each, no memory map
    (a map keeps every touched folio of the store resident in the worker)."""
    import mmap

    from neardup.engine.evidence import TextStore
    from neardup.engine.workdir import save_array

    texts = ["first story", "", "zweite Geschichte: Größe", "\u4e2d\u6587\u65b0\u95fb", "x" * 5000]
    docs = np.array([2, 5, 9, 11, 40])
    data = [t.encode("utf-8") for t in texts]
    (tmp_path / "texts.bin").write_bytes(b"".join(data))
    save_array(tmp_path / "text_offsets.npy", np.concatenate([[0], np.cumsum([len(d) for d in data])]).astype(np.int64))
    save_array(tmp_path / "text_docs.npy", docs)
    monkeypatch.setattr(mmap, "mmap", lambda *a, **k: pytest.fail("the text store was memory-mapped"))
    store = TextStore(tmp_path)
    try:
        assert [store(int(d)) for d in docs[::-1]] == texts[::-1]
        assert store.texts(docs) == texts and store.texts(docs[[1, 3]]) == [texts[1], texts[3]]
        assert store.texts(np.array([], dtype=np.int64)) == []
        for absent in ([3], [2, 41], [50]):  # not in the store: an error, not another document's text
            with pytest.raises(KeyError, match="no text of documents"):
                store.texts(np.array(absent))
    finally:
        store.close()
    (tmp_path / "texts.bin").write_bytes(b"".join(data)[:-10])
    store = TextStore(tmp_path)
    with pytest.raises(RuntimeError, match="truncated"):
        store(40)
    store.close()


def test_a_block_of_long_texts_is_halved_from_the_texts_already_read(monkeypatch):
    """Pairs whose texts pass CHARS_PER_BLOCK are aligned in halves, and each text is asked for once (a
    chunked run reads it from disk), with the same rows as blocks that fit."""
    from neardup import evidence

    base = "the quick brown fox jumps over the lazy dog near the river bank at noon "
    texts = [f"{base * 3}story {i} " + base for i in range(12)]
    left, right = np.arange(0, 12, 2), np.arange(1, 12, 2)
    asked: list[int] = []

    def texts_of(docs: np.ndarray) -> list[str]:
        assert docs.tolist() == sorted(set(docs.tolist())), "documents asked for ascending and distinct"
        asked.extend(docs.tolist())
        return [texts[d] for d in docs.tolist()]

    def table():
        return evidence.evidence_table([str(d) for d in left], [str(d) for d in right], left, right,
                                       np.ones(left.size), [("word 4-grams", np.ones(left.size))], texts_of)

    whole = table()
    assert sorted(asked) == list(range(12))
    asked.clear()
    monkeypatch.setattr(evidence, "CHARS_PER_BLOCK", 2 * len(texts[0]))  # one pair a block
    halved = table()
    assert sorted(asked) == list(range(12))  # asked once each, though the block was halved three times
    assert halved.equals(whole) and all(len(row) >= 1 for row in halved.column("spans").to_pylist())
