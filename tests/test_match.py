"""Cross-corpus matching: queries against a streamed corpus."""

import json

import numpy as np
import pytest

import pyarrow.parquet as pq
from typer.testing import CliRunner

from neardup.cli import app
from neardup.config import DedupConfig
from neardup.matching import match


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_finds_leaked_queries_and_reports_per_set(example_path, tmp_path):
    corpus = [json.loads(line) for line in open(example_path)]
    originals = [r for r in corpus if r["cluster"] is None][:20]
    queries = [{"id": f"q{i}", "text": r["text"].upper() + " (reprinted)", "task": "A", "source": r["id"]}
               for i, r in enumerate(originals[:10])]
    queries += [{"id": f"u{i}", "text": f"an unrelated question number {i} about the sea and the sky and stars",
                 "task": "B", "source": None} for i in range(5)]
    qpath = _write(tmp_path / "q.jsonl", queries)
    summary = match(qpath, example_path, tmp_path / "out", DedupConfig(), group_field="task", batch_docs=64).summary
    rows = pq.read_table(tmp_path / "out" / "matches.parquet").to_pylist()
    source = {q["id"]: q["source"] for q in queries}
    assert {r["query_id"] for r in rows} == {f"q{i}" for i in range(10)}
    assert all(r["corpus_id"] == source[r["query_id"]] for r in rows)
    assert summary["per_set"]["A"] == {"n_queries": 10, "n_leaked": 10, "leaked_fraction": 1.0}
    assert summary["per_set"]["B"]["n_leaked"] == 0
    assert summary["n_corpus_docs"] == 300 and summary["leaked_fraction"] == 10 / 15


def test_batch_size_does_not_change_matches(example_path, tmp_path):
    queries = [json.loads(line) for line in open(example_path)][:40]
    qpath = _write(tmp_path / "q.jsonl", [{"id": q["id"], "text": q["text"]} for q in queries])
    match(qpath, example_path, tmp_path / "a", batch_docs=7)
    match(qpath, example_path, tmp_path / "b", batch_docs=1000)
    a = pq.read_table(tmp_path / "a" / "matches.parquet").to_pylist()
    b = pq.read_table(tmp_path / "b" / "matches.parquet").to_pylist()
    assert a == b and len(a) >= 40  # every query at least matches itself


def test_cli_match_prints_json(example_path, tmp_path):
    res = CliRunner().invoke(app, ["match", str(example_path), str(example_path), "-o", str(tmp_path / "o"),
                                   "-f", "json", "-q"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["leaked_fraction"] == 1.0 and out["n_queries"] == 300


def test_cli_match_reads_both_collections_from_urls(example_path, tmp_path):
    """The corpus side is usually in object storage: fsspec URLs give the local paths' matches."""
    queries = [json.loads(line) for line in open(example_path)][:30]
    qpath = _write(tmp_path / "q.jsonl", [{"id": q["id"], "text": q["text"]} for q in queries])
    runner = CliRunner()
    by_path = runner.invoke(app, ["match", str(qpath), str(example_path), "-o", str(tmp_path / "p"), "-q"])
    by_url = runner.invoke(app, ["match", f"file://{qpath}", f"file://{example_path}", "-o", str(tmp_path / "u"),
                                 "-q"])
    assert by_path.exit_code == 0 and by_url.exit_code == 0, by_url.output
    a = pq.read_table(tmp_path / "p" / "matches.parquet").to_pylist()
    b = pq.read_table(tmp_path / "u" / "matches.parquet").to_pylist()
    assert a == b and len(a) >= 30


def _brute_force(queries, corpus, cfg):
    """Every (query, corpus document) pair, decided one by one with plain sets and the method's rule as
    documented: the answer ``match`` must give with its indexes and batches."""
    import math

    from neardup import methods
    from neardup.candidates.lsh import band_keys
    from neardup.represent import minhash, simhash

    method = methods.get(cfg)
    qsets, csets = method.shingle([q["text"] for q in queries], 10**9), method.shingle([c["text"] for c in corpus], 10**9)
    qs = [set(qsets[i].tolist()) for i in range(len(queries))]
    cs = [set(csets[i].tolist()) for i in range(len(corpus))]
    df = {}
    for s in qs:
        for v in s:
            df[v] = df.get(v, 0) + 1
    idf = lambda v: math.log((len(qs) + 1) / df.get(v, 1)) ** cfg.verify.idf_power  # noqa: E731
    if cfg.method == "minhash":
        qsig, csig = minhash.signatures(qsets, cfg.minhash.num_perm, cfg.minhash.seed), \
            minhash.signatures(csets, cfg.minhash.num_perm, cfg.minhash.seed)
        if cfg.minhash.rule == "lsh":
            qk, ck = band_keys(qsig, method.bands, method.rows), band_keys(csig, method.bands, method.rows)
    if cfg.method == "simhash":
        qfp, cfp = simhash.fingerprints(qsets), simhash.fingerprints(csets)
    out = set()
    for i, a in enumerate(qs):
        for j, b in enumerate(cs):
            if not a or not b:
                continue
            if cfg.method == "ngram":
                candidate = any(df[v] <= cfg.ngram.max_df for v in a & b)
            elif cfg.method == "simhash":
                candidate = int(simhash.hamming(qfp[i : i + 1], cfp[j : j + 1])[0]) <= method.max_distance
            elif cfg.minhash.rule == "lsh":
                candidate = bool((qk[i] == ck[j]).any())
            else:
                candidate = int((qsig[i] == csig[j]).sum()) >= method.min_shared
            if not candidate:
                continue
            if cfg.method == "simhash":
                score = float(simhash.similarity(qfp[i : i + 1], cfp[j : j + 1])[0])
            elif cfg.verify.score == "none":
                score = float(np.mean(qsig[i] == csig[j]))
            else:
                shared = sum(idf(v) for v in a & b)
                score = shared / min(sum(idf(v) for v in a), sum(idf(v) for v in b))
            if score >= cfg.threshold - 1e-12:
                out.add((queries[i]["id"], corpus[j]["id"], round(score, 9)))
    return out


@pytest.mark.parametrize("cfg", [
    DedupConfig(), DedupConfig(threshold=0.3).replace(minhash__rule="collisions", minhash__min_collisions=20),
    DedupConfig(threshold=0.5).replace(verify__score="none"), DedupConfig(method="ngram", threshold=0.3),
    DedupConfig(method="simhash", threshold=0.8)], ids=["lsh", "collisions", "sketch-score", "ngram", "simhash"])
def test_match_finds_exactly_what_brute_force_finds(example_path, tmp_path, cfg):
    corpus = [json.loads(line) for line in open(example_path)]
    queries = [{"id": f"q{i}", "text": (r["text"].upper() if i % 2 else r["text"][: len(r["text"]) * 2 // 3])}
               for i, r in enumerate(corpus[::7])]
    qpath = _write(tmp_path / "q.jsonl", queries)
    result = match(qpath, example_path, None, cfg, batch_docs=41)
    got = {(q, c, round(s, 9)) for q, c, s in result.matches()}
    want = _brute_force(queries, corpus, cfg)
    assert len(want) >= 40
    assert got == want
    assert result.summary["n_leaked_queries"] == len({q for q, _, _ in want})


def test_the_compiled_weights_and_the_screen_in_blocks_match_what_numpy_at_once_finds(example_path, tmp_path,
                                                                                       monkeypatch):
    """The query weights counted in a hash table (where compiled loops run) and the candidates screened a few
    pairs at a time give the same matches, scores to the bit, as NumPy's binary search and one screen of the
    batch (character shingles: the estimate floor screens)."""
    from neardup import matching

    corpus = [json.loads(line) for line in open(example_path)]
    queries = [{"id": f"q{i}", "text": r["text"][: len(r["text"]) * 3 // 4]} for i, r in enumerate(corpus[::5])]
    qpath = _write(tmp_path / "q.jsonl", queries)
    cfg = DedupConfig(method="minhash", threshold=0.5).replace(shingle__char=True)
    monkeypatch.setenv("NEARDUP_JIT", "0")
    plain = match(qpath, example_path, None, cfg, batch_docs=50).matches()
    monkeypatch.setenv("NEARDUP_JIT", "1")
    monkeypatch.setattr(matching, "SCREEN_PAIRS", 3)
    blocks = match(qpath, example_path, None, cfg, batch_docs=50).matches()
    assert len(plain) >= 60 and blocks == plain


def test_each_query_is_decided_once_against_the_corpus(example_path, tmp_path):
    """One decision per query, in input order: kept where the corpus holds no duplicate of it, else a copy of
    its best-scoring corpus match (issue 56: match decides per document too)."""
    records = [json.loads(line) for line in open(example_path, encoding="utf-8")]
    queries = tmp_path / "q.jsonl"
    unrelated = {"id": "fresh", "text": "A text about glaciers and the birds that nest on them every spring."}
    with open(queries, "w", encoding="utf-8") as fh:
        for r in [unrelated, *records[:40]]:
            fh.write(json.dumps({"id": r["id"], "text": r["text"]}) + "\n")
    found = match(queries, example_path)
    decisions = found.decisions
    assert [d["id"] for d in decisions] == ["fresh"] + [r["id"] for r in records[:40]]
    assert decisions[0] == {"id": "fresh", "kept": True, "copy_of": None, "score": None}
    best = {}
    for q, c, s in found.matches():
        best[q] = max(best.get(q, (-1.0, "")), (s, c), key=lambda x: x[0])
    for d in decisions[1:]:
        assert not d["kept"] and (d["score"], d["copy_of"]) == best[d["id"]]
