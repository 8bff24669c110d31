"""Tests for neardup.eval.benchsets (labelled benchmark sets) and neardup.eval.loaders (NEWS-COPY, load_any)."""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from neardup.eval.benchsets import (
    ClusterSizeDistribution,
    SourceDoc,
    cluster_size_stats,
    dedup_sources,
    distribution_for,
    list_sets,
    load_source,
    make_sets,
    plan_split,
    read_manifest,
)
from neardup.eval.loaders import detect_layout, load_any, load_newscopy
from neardup.io.read import InputError
from tests.conftest import SHARED_DATA, shared_file

TOPICS = ("business", "sport", "politics")
WORDS = ("market council river engine harvest ballot stadium tariff budget vaccine orbit harbour festival "
         "pension merger drought striker senate factory ferry museum rainfall coalition refinery").split()
NAMES = ("Alder Brook", "Cora Vance", "Dmitri Hale", "Esme Quill", "Farah Noor", "Gus Temple", "Hana Ito")


def _article(rng: random.Random, i: int) -> str:
    sents = []
    for _ in range(rng.randint(6, 10)):
        words = rng.sample(WORDS, 7)
        sents.append(f"{rng.choice(NAMES)} said the {words[0]} {words[1]} rose {rng.randint(2, 99)}% as "
                     f"{words[2]} {words[3]} and {words[4]} {words[5]} met in {words[6]} district {i}.")
    return f"Story {i} headline\n\n" + " ".join(sents)


def synthetic_docs(n: int = 400, seed: int = 7) -> tuple[list[SourceDoc], list[tuple[str, str]], list[tuple[str, str]]]:
    """``n`` articles, with 5 flagged exact-duplicate pairs and 5 unflagged near-duplicate pairs planted."""
    rng = random.Random(seed)
    docs = [SourceDoc(f"d{i}", _article(rng, i), TOPICS[i % 3]) for i in range(n)]
    exact, near = [], []
    for k in range(5):
        src = docs[k]
        docs.append(SourceDoc(f"x{k}", src.text, src.topic, f"g{k}"))
        docs[k] = SourceDoc(src.id, src.text, src.topic, f"g{k}")
        exact.append((src.id, f"x{k}"))
    for k in range(10, 15):
        src = docs[k]
        docs.append(SourceDoc(f"n{k}", src.text.replace("headline", "update") + " Extra closing line.", src.topic))
        near.append((src.id, f"n{k}"))
    return docs, exact, near


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, list[tuple[str, str]], list[tuple[str, str]]]:
    docs, exact, near = synthetic_docs()
    out = tmp_path_factory.mktemp("bench")
    manifest = make_sets(out, sources=["syn"], presets=["ocr-1930s", "web-aggregator"], seed=3, size=250,
                         source_docs={"syn": docs})
    return out, manifest, exact, near


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# ------------------------------------------------------------------ cluster sizes


def test_distribution_mean_and_support() -> None:
    d = ClusterSizeDistribution.for_mean(6.0)
    assert (d.kmin, d.kmax) == (2, 200)
    assert d.mean_duplicate_size() == pytest.approx(6.0, abs=0.01)
    draw = d.sampler(random.Random(1))
    sizes = [draw() for _ in range(20000)]
    singles = sum(s == 1 for s in sizes) / len(sizes)
    dup = [s for s in sizes if s > 1]
    assert singles == pytest.approx(0.8, abs=0.02)  # mostly singletons
    assert min(dup) == 2 and max(dup) <= 200
    assert sum(dup) / len(dup) == pytest.approx(6.0, rel=0.1)  # stratified: close to the target mean
    assert Counter(dup)[2] > Counter(dup)[3] > Counter(dup)[5]  # power law: small clusters dominate
    assert distribution_for(200).kmax == 40


def test_plan_split_fills_budget_exactly() -> None:
    docs = [SourceDoc(str(i), "x", "t") for i in range(2000)]
    plan = plan_split(docs, 1000, seed=0, tag="v")
    assert sum(p.size + (p.hard_negative is not None) for p in plan) == 1000
    assert len({p.doc.id for p in plan}) == len(plan)
    kinds = Counter(p.hard_negative for p in plan if p.hard_negative)
    assert set(kinds) == {"update", "same_event_rewrite", "template_sibling"}
    assert plan == plan_split(docs, 1000, seed=0, tag="v")
    assert plan != plan_split(docs, 1000, seed=1, tag="v")


def test_cluster_size_stats() -> None:
    st = cluster_size_stats(["a", "a", "a", None, "b", "b", None])
    assert st["n_clusters"] == 4 and st["n_singletons"] == 2 and st["true_pairs"] == 4
    assert st["size_histogram"] == {"2": 1, "3": 1}


# ------------------------------------------------------------------ real duplicates among sources


def test_dedup_sources_drops_exact_and_near_duplicates() -> None:
    docs, exact, near = synthetic_docs(200)
    kept, info = dedup_sources(docs)
    ids = {d.id for d in kept}
    for a, b in exact + near:
        assert not (a in ids and b in ids)
    assert info["exact_groups"] == 5 and info["exact_dropped"] == 5
    assert info["near_dropped"] >= 5 and info["dropped"] == len(docs) - len(kept)
    _, only_exact = dedup_sources(docs, None)
    assert only_exact["near_dropped"] == 0 and only_exact["exact_dropped"] == 5


# ------------------------------------------------------------------ built sets


def test_set_files_and_manifest(built) -> None:
    out, manifest, _, _ = built
    assert set(manifest["sets"]) == {"syn-ocr-1930s", "syn-web-aggregator"}
    for name, entry in manifest["sets"].items():
        for split in ("validation", "test"):
            rows = _read(out / name / f"{split}.jsonl")
            assert len(rows) == entry["splits"][split]["n_docs"] == 250
            assert all({"id", "text", "cluster", "source_id", "ops", "role"} <= r.keys() for r in rows)
            assert len({r["id"] for r in rows}) == len(rows)
    dist = manifest["cluster_size_distribution"]
    assert dist["kmax"] == 50 and dist["expected_mean_duplicate_size"] == pytest.approx(6.0, abs=0.01)
    assert manifest["sources"]["syn"]["exact_dropped"] == 5
    assert [s.name for s in list_sets(out)] == ["syn-ocr-1930s", "syn-web-aggregator"]
    assert [s.name for s in list_sets(out, ["*-web-*"])] == ["syn-web-aggregator"]
    with pytest.raises(ValueError, match="no benchmark set matches"):
        list_sets(out, ["nope-*"])


def test_splits_disjoint_by_source(built) -> None:
    out, manifest, _, _ = built
    for name in manifest["sets"]:
        val = {r["source_id"] for r in _read(out / name / "validation.jsonl")}
        test = {r["source_id"] for r in _read(out / name / "test.jsonl")}
        assert val and test and not (val & test)
    # the same sources and cluster sizes at every preset: only the noise differs
    a = sorted((r["source_id"], r["cluster"] or "", r["role"]) for r in _read(out / "syn-ocr-1930s" / "test.jsonl"))
    b = sorted((r["source_id"], r["cluster"] or "", r["role"]) for r in _read(out / "syn-web-aggregator" / "test.jsonl"))
    assert a == b


def test_clusters_and_hard_negatives(built) -> None:
    out, _, _, _ = built
    rows = _read(out / "syn-ocr-1930s" / "validation.jsonl")
    by_cluster = defaultdict(list)
    for r in rows:
        if r["cluster"] is not None:
            by_cluster[r["cluster"]].append(r)
    for members in by_cluster.values():
        assert len(members) >= 2
        assert len({m["source_id"] for m in members}) == 1
        assert sum(m["role"] == "original" for m in members) == 1
        assert all(m["role"] == "copy" and m["ops"] for m in members if m["role"] != "original")
    hards = [r for r in rows if r["role"] == "hard_negative"]
    assert hards
    for h in hards:
        assert h["cluster"] is None  # never in its source's cluster
        assert h["ops"][0].startswith("hard_negative:")
        assert all(m["role"] != "hard_negative" for m in by_cluster.get(f"syn:{h['source_id']}", []))
    kinds = {h["ops"][0].split(":")[1].split("+")[0] for h in hards}
    assert kinds <= {"update", "same_event_rewrite", "template_sibling"}


def test_real_duplicates_never_both_sources(built) -> None:
    out, _, exact, near = built
    used = {r["source_id"] for split in ("validation", "test") for r in _read(out / "syn-ocr-1930s" / f"{split}.jsonl")}
    for a, b in exact + near:
        assert not (a in used and b in used)


def test_deterministic_by_seed(built, tmp_path: Path) -> None:
    out, _, _, _ = built
    docs, _, _ = synthetic_docs()
    make_sets(tmp_path / "same", sources=["syn"], presets=["ocr-1930s"], seed=3, size=250, source_docs={"syn": docs})
    make_sets(tmp_path / "other", sources=["syn"], presets=["ocr-1930s"], seed=4, size=250, source_docs={"syn": docs})
    ref = (out / "syn-ocr-1930s" / "test.jsonl").read_bytes()
    assert (tmp_path / "same" / "syn-ocr-1930s" / "test.jsonl").read_bytes() == ref
    assert (tmp_path / "other" / "syn-ocr-1930s" / "test.jsonl").read_bytes() != ref
    # a second make into the same folder keeps the other sets in the manifest
    make_sets(tmp_path / "same", sources=["syn"], presets=["typos"], seed=3, size=250, source_docs={"syn": docs})
    assert set(read_manifest(tmp_path / "same")["sets"]) == {"syn-ocr-1930s", "syn-typos"}


def test_split_loads_as_labelled_data(built) -> None:
    out, _, _, _ = built
    bset = list_sets(out)[0]
    data = bset.load("test")
    assert len(data.corpus) == 250 and data.corpus.labels is not None
    assert data.name == f"{bset.name}/test"


# ------------------------------------------------------------------ loaders


def _newscopy(tmp: Path, as_list: bool = False) -> Path:
    arts = {
        "a1": {"headline": "H", "byline": "By Wire", "article": "The river flooded the town on Monday."},
        "a2": {"byline": "", "article": "The river flooded the tovvn on Monday ."},
        "a3": {"article": "The rivcr flooded the town on Monday."},
        "b1": {"article": "Council votes on budget."},
        "b2": {"article": "Council vote on the budget."},
        "c1": {"article": "A lone story."},
    }
    edges = [["a1", "a2"], ["a3", "a2"], ["b1", "b2"]]
    data: object = [{"id": k, **v} for k, v in arts.items()] if as_list else arts
    (tmp / "1955_inf_data.json").write_text(json.dumps(data), encoding="utf-8")
    (tmp / "1955_gt.json").write_text(json.dumps(edges), encoding="utf-8")
    return tmp / "1955_inf_data.json"


@pytest.mark.parametrize("as_list", [False, True])
def test_newscopy_loader(tmp_path: Path, as_list: bool) -> None:
    path = _newscopy(tmp_path, as_list)
    assert detect_layout(path) == "newscopy"
    data = load_any(path)
    c = data.corpus
    labels = dict(zip(c.ids, c.labels))
    assert labels["a1"] == labels["a2"] == labels["a3"] is not None  # connected components of the edges
    assert labels["b1"] == labels["b2"] != labels["a1"]
    assert labels["c1"] is None
    assert dict(zip(c.ids, c.texts))["a1"] == "By Wire The river flooded the town on Monday."
    assert load_any(tmp_path).corpus.ids == c.ids  # the folder works too


def test_newscopy_combined_file_and_errors(tmp_path: Path) -> None:
    p = tmp_path / "split.json"
    p.write_text(json.dumps({"articles": {"x": {"article": "t"}, "y": {"article": "u"}}, "edges": [["x", "y"]]}))
    assert load_any(p).corpus.labels == ["x", "x"]
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "d_inf_data.json").write_text(json.dumps({"x": {"article": "t"}}))
    (bad / "d_gt.json").write_text(json.dumps([["x", "zz"]]))
    with pytest.raises(InputError, match="'zz'"):
        load_newscopy(bad / "d_inf_data.json")
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    (lonely / "d_inf_data.json").write_text(json.dumps({"x": {"article": "t"}}))
    with pytest.raises(InputError, match="ground-truth edges"):
        load_any(lonely / "d_inf_data.json")


def test_load_any_our_formats(tmp_path: Path) -> None:
    docs = tmp_path / "docs.jsonl"
    docs.write_text("\n".join(json.dumps(r) for r in [
        {"id": "a", "text": "x y z", "cluster": "c"}, {"id": "b", "text": "x y z!", "cluster": "c"},
        {"id": "c", "text": "other", "cluster": None}]) + "\n")
    assert detect_layout(docs) == "clusters"
    assert load_any(docs).corpus.labels == ["c", "c", None]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"a": "a", "b": "b", "label": 1}) + "\n")
    assert detect_layout(pairs) == "pairs"
    assert load_any(pairs).pairs == [("a", "b", 1)]
    jsonl_named_json = tmp_path / "docs2.json"
    jsonl_named_json.write_text(docs.read_text())
    assert detect_layout(jsonl_named_json) == "clusters"


# ------------------------------------------------------------------ real data


@pytest.mark.shared_data
def test_tiny_set_from_real_bbc(tmp_path: Path) -> None:
    shared_file("bbc_news/docs.jsonl")
    docs, counts = load_source("bbc", SHARED_DATA)
    assert counts["n_records"] == 2225
    flagged = [d for d in docs[:400] if d.exact_group]
    manifest = make_sets(tmp_path, sources=["bbc"], presets=["ocr-1930s"], seed=0, size=120,
                         root=SHARED_DATA, source_docs={"bbc": docs[:400]})
    info = manifest["sources"]["bbc"]
    assert info["exact_dropped"] == len(flagged) - len({d.exact_group for d in flagged})
    entry = manifest["sets"]["bbc-ocr-1930s"]
    assert entry["splits"]["validation"]["n_docs"] == entry["splits"]["test"]["n_docs"] == 120
    sim = entry["splits"]["validation"]["similarity"]
    assert sim["mean_j3_original_copy"] is not None and sim["mean_j3_original_copy"] < 0.6  # heavy OCR
