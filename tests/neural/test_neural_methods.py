"""The neural methods through the same pipeline: RETSim, RETSim partial, hybrid, bi-encoder; embed and match."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

pytest.importorskip("onnxruntime")
pytest.importorskip("faiss")
pytest.importorskip("unisim")

from neardup.cli import app  # noqa: E402
from neardup.config import DedupConfig  # noqa: E402
from neardup.eval.evaluate import evaluate, load_labelled  # noqa: E402
from neardup.eval.tune import tune  # noqa: E402

pytestmark = pytest.mark.neural
runner = CliRunner()


@pytest.fixture(scope="module")
def example():
    from tests.conftest import EXAMPLE

    return load_labelled(EXAMPLE)


@pytest.mark.parametrize("method", ["retsim", "retsim-partial", "hybrid"])
def test_neural_methods_find_the_planted_copies(example, method):
    out = evaluate(example, DedupConfig(method=method))
    assert out["precision"] >= 0.9 and out["recall"] >= 0.6, out


def test_hybrid_is_at_least_as_good_as_its_parts_on_the_example(example):
    ari = {m: evaluate(example, DedupConfig(method=m))["ari"] for m in ("minhash", "retsim", "hybrid")}
    assert ari["hybrid"] >= max(ari["minhash"], ari["retsim"]) - 0.02, ari


def test_tune_fits_the_hybrid_model_and_its_params_reproduce_the_result(example):
    from neardup.eval.tune import config_for

    out = tune(example, None, DedupConfig(method="hybrid"), thresholds=[0.1, 0.3, 0.5, 0.7])
    params = out["params"]
    assert params["hybrid_rule"] == "logistic" and len(params["hybrid_coef"]) == 5
    assert params["hybrid_coef"][0] > 0  # the IDF-weighted overlap counts towards "duplicate"
    assert out["validation"]["ari"] == pytest.approx(max(t["ari"] for t in out["trials"]))
    assert out["validation"]["ari"] >= 0.9
    again = evaluate(example, config_for(DedupConfig(method="hybrid"), params))
    assert again["ari"] == pytest.approx(out["validation"]["ari"])


def test_hybrid_logistic_rule_end_to_end_on_a_tiny_corpus():
    from neardup.io.read import Corpus
    from neardup.pipeline import run

    story = ("The central bank raised its main interest rate by a quarter point on Tuesday, citing stubborn "
             "inflation in services and a tight labour market, and signalled that further increases were possible.")
    other = ("Heavy rain flooded the lower town overnight; the river rose two metres above its usual level and "
             "the fire brigade evacuated forty households from the streets nearest the old bridge.")
    noisy = story.replace("e", "c", 6).replace("rn", "m").replace("l", "1", 3)
    corpus = Corpus.from_texts([story, other, noisy, story + " More follows."])
    # coefficients as fitted on a heavy-OCR validation split: the chunk and document cosines carry the noisy copy
    ocr = DedupConfig(method="hybrid", threshold=0.5).replace(embed__hybrid_rule="logistic",
                                                              embed__hybrid_coef=(1.2, 7.3, 13.6, 5.0, -20.5))
    r = run(corpus, ocr)
    assert r.groups() == [["0", "2", "3"]]
    assert r.summary["params"]["hybrid_rule"] == "logistic" and len(r.summary["params"]["hybrid_coef"]) == 5
    assert ((r.scores >= 0.5) & (r.scores <= 1.0)).all()
    # the default (wire-data) model trusts n-gram overlap: the exact re-send is kept, the OCR copy is not
    wire = run(corpus, ocr.replace(embed__hybrid_coef=None))
    assert wire.groups() == [["0", "3"]]


def test_hnsw_index_gives_the_same_clusters_as_flat_here(example):
    flat = evaluate(example, DedupConfig(method="retsim"))
    hnsw = evaluate(example, DedupConfig(method="retsim").replace(embed__index="hnsw"))
    assert hnsw["ari"] == pytest.approx(flat["ari"], abs=0.02)


def test_embed_command_writes_normalised_rows_in_input_order(example_path, tmp_path):
    res = runner.invoke(app, ["embed", str(example_path), "-o", str(tmp_path / "v.npy"), "-q"])
    assert res.exit_code == 0, res.output
    v = np.load(tmp_path / "v.npy")
    assert v.shape == (300, 256) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    texts = [json.loads(line)["text"] for line in open(example_path)]
    from neardup.represent.retsim import RETSimEncoder

    assert np.allclose(RETSimEncoder().encode(texts[:3]), v[:3], atol=1e-5)


def test_embed_bad_model_path_is_a_clear_error(example_path, tmp_path):
    res = runner.invoke(app, ["embed", str(example_path), "-o", str(tmp_path / "v.npy"), "--model", "/no/such/model"])
    assert res.exit_code == 2 and "no such file or folder" in res.stderr


def test_match_with_retsim_finds_noisy_copies(example_path, tmp_path):
    rows = [json.loads(line) for line in open(example_path)][:30]
    q = tmp_path / "q.jsonl"
    q.write_text("".join(json.dumps({"id": f"q{r['id']}", "text": "PARIS (Wire) - " + r["text"] + " More follows."})
                         + "\n" for r in rows))
    res = runner.invoke(app, ["match", str(q), str(example_path), "-o", str(tmp_path / "m"), "--method", "retsim",
                              "-t", "0.9", "-f", "json", "-q"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["leaked_fraction"] == 1.0


def test_tune_falls_back_to_one_signal_when_the_fitted_model_clusters_worse(example, example_path, monkeypatch):
    """A model that cannot separate anything (a constant score) loses on validation to the signals alone; the
    chosen linear rule reproduces from its params and from the command line (--hybrid-weight)."""
    from neardup.eval import tune as tune_module
    from neardup.eval.tune import config_for

    monkeypatch.setattr("neardup.verify.hybrid.fit_logistic", lambda *a, **k: (0.0, 0.0, 0.0, 0.0, 0.0))
    out = tune_module.tune(example, None, DedupConfig(method="hybrid"), thresholds=[0.3, 0.5, 0.7, 0.9])
    params = out["params"]
    assert params["hybrid_rule"] == "linear" and params["hybrid_weight"] in (0.0, 1.0), params
    rules = {(t["hybrid_rule"], t.get("hybrid_weight")) for t in out["trials"]}
    assert rules == {("logistic", None), ("linear", 1.0), ("linear", 0.0)}
    assert out["validation"]["ari"] == pytest.approx(max(t["ari"] for t in out["trials"]))
    assert out["validation"]["ari"] >= 0.85  # the broken model scores ~0
    again = evaluate(example, config_for(DedupConfig(method="hybrid"), params))
    assert again["ari"] == pytest.approx(out["validation"]["ari"])
    res = runner.invoke(app, ["eval", str(example_path), "--method", "hybrid", "--hybrid-weight",
                              str(params["hybrid_weight"]), "--threshold", str(params["threshold"]), "-f", "json", "-q"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["ari"] == pytest.approx(out["validation"]["ari"])
    both = runner.invoke(app, ["eval", str(example_path), "--method", "hybrid", "--hybrid-weight", "1",
                               "--hybrid-coef", "1,2,3,4,5"])
    assert both.exit_code == 2 and "exclude each other" in both.output


def test_tuned_hybrid_coefficients_are_applied_from_the_command_line(example, example_path):
    from neardup.eval.tune import config_for

    out = tune(example, None, DedupConfig(method="hybrid"), thresholds=[0.1, 0.3, 0.5, 0.7])
    coef = ",".join(str(c) for c in out["params"]["hybrid_coef"])
    res = runner.invoke(app, ["eval", str(example_path), "--method", "hybrid", "--hybrid-coef", coef,
                              "--threshold", str(out["params"]["threshold"]), "--format", "json", "-q"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    assert got["ari"] == pytest.approx(evaluate(example, config_for(DedupConfig(method="hybrid"), out["params"]))["ari"])
    bad = runner.invoke(app, ["eval", str(example_path), "--method", "hybrid", "--hybrid-coef", "1,2,3"])
    assert bad.exit_code == 2 and "hybrid_coef must be 5 numbers" in bad.output


def test_vector_match_finds_exactly_what_brute_force_finds(example_path, tmp_path):
    """With k at least the number of queries, each corpus document meets every query: the matches are
    every pair with cosine >= the threshold."""
    from neardup.config import EmbedConfig
    from neardup.matching import match
    from neardup.represent.embeddings import embed_texts

    corpus = [json.loads(line) for line in open(example_path)]
    queries = [{"id": f"q{i}", "text": "LONDON (Wire) - " + r["text"]} for i, r in enumerate(corpus[::10])]
    qpath = tmp_path / "q.jsonl"
    qpath.write_text("".join(json.dumps(q) + "\n" for q in queries))
    cfg = DedupConfig(method="retsim", threshold=0.8, embed=EmbedConfig(k=len(queries)))
    result = match(qpath, example_path, None, cfg, batch_docs=64)
    q = embed_texts([x["text"] for x in queries], "retsim", cfg.embed, 10**9).docs
    c = embed_texts([x["text"] for x in corpus], "retsim", cfg.embed, 10**9).docs
    sims = c @ q.T
    want = {(queries[i]["id"], corpus[j]["id"]) for j, i in zip(*np.nonzero(sims >= 0.8 - 1e-6))}
    assert len(want) >= len(queries)
    assert {(a, b) for a, b, _ in result.matches()} == want
    by_pair = {(a, b): s for a, b, s in result.matches()}
    assert all(abs(by_pair[(queries[i]["id"], corpus[j]["id"])] - sims[j, i]) < 1e-5 for j, i in zip(*np.nonzero(sims >= 0.8)))


def test_in_memory_preparation_is_the_batched_map_step_joined(example):
    """``prepare`` runs the method's map step batch by batch, as the chunked engines do: small batches give
    the representation one batch gives (document vectors, chunk vectors and their shifted offsets)."""
    from neardup.pipeline import prepare

    cfg = DedupConfig(method="retsim-partial")
    whole = prepare(example.corpus, cfg).rep
    batched = prepare(example.corpus, cfg, batch_size=7).rep
    assert whole.vectors.chunks is not None and whole.vectors.offsets[-1] == len(whole.vectors.chunks)
    np.testing.assert_allclose(batched.vectors.docs, whole.vectors.docs, atol=1e-5)
    np.testing.assert_allclose(batched.vectors.chunks, whole.vectors.chunks, atol=1e-5)
    np.testing.assert_array_equal(batched.vectors.offsets, whole.vectors.offsets)
    np.testing.assert_array_equal(batched.sets.offsets, whole.sets.offsets)
