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


def test_tune_sweeps_the_hybrid_weight(example):
    out = tune(example, None, DedupConfig(method="hybrid"), thresholds=[0.5, 0.6, 0.7])
    assert out["params"]["hybrid_weight"] in (0.0, 0.25, 0.5, 0.75, 1.0)
    assert out["validation"]["ari"] == pytest.approx(max(t["ari"] for t in out["trials"]))


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
