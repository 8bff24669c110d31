"""The Ray engine: exactly the local engine's output (clusters, representatives, pairs, scores, summary fields)."""

import json
import random
import sys

import numpy as np
import pyarrow.parquet as pq
import pytest

pytest.importorskip("ray")

from neardup.candidates.lsh import band_keys  # noqa: E402
from neardup.config import DedupConfig  # noqa: E402
from neardup.candidates.lsh import lsh_plan  # noqa: E402
from neardup.config import EngineConfig  # noqa: E402
from neardup.engine.local import run_chunked  # noqa: E402
from neardup.engine.ray import ray_session, run_ray  # noqa: E402
from neardup.io.read import InputError, read_corpus  # noqa: E402
from neardup.pipeline import prepare  # noqa: E402

ENGINE = EngineConfig(workers=2, batch_docs=37, memory_limit=2**30, progress=False)
# Fields that describe how a run executed rather than what it found.
RUN_FIELDS = {"engine", "timings", "docs_per_second", "input"}


@pytest.fixture(scope="module")
def ray_cluster():
    """One local 2-CPU Ray cluster for the module; run_ray re-uses it (and leaves it running)."""
    with ray_session(ENGINE) as ray:
        yield ray


def _outputs(outdir):
    clusters = pq.read_table(outdir / "clusters.parquet").to_pylist()
    pairs = pq.read_table(outdir / "pairs.parquet").to_pylist()
    return clusters, [(p["left"], p["right"], p["score"]) for p in pairs]


def _assert_same_as_local(path, tmp_path, cfg):
    local = run_chunked(path, tmp_path / "local", cfg, ENGINE)
    ray = run_ray(path, tmp_path / "ray", cfg, ENGINE)
    clusters, pairs = _outputs(tmp_path / "ray")
    ref_clusters, ref_pairs = _outputs(tmp_path / "local")
    assert clusters == ref_clusters  # ids, cluster ids (= representatives), sizes, flags, in input order
    assert pairs == ref_pairs  # same pairs, same order, scores equal to the bit
    assert {k: v for k, v in ray.items() if k not in RUN_FIELDS} == \
        {k: v for k, v in local.items() if k not in RUN_FIELDS}
    assert ray.keys() == local.keys()
    assert ray["engine"]["name"] == "ray" and ray["engine"]["ray"]["num_cpus"] == 2
    assert json.loads((tmp_path / "ray" / "summary.json").read_text())["n_pairs"] == ray["n_pairs"]
    assert not (tmp_path / "ray" / ".neardup-work").exists()
    return ray


@pytest.mark.parametrize("cfg", [DedupConfig(method="minhash"), DedupConfig(method="simhash")],
                         ids=lambda c: c.method)
def test_ray_equals_local_on_the_example(ray_cluster, example_path, tmp_path, cfg):
    summary = _assert_same_as_local(example_path, tmp_path, cfg)
    assert summary["n_docs"] == 300 and summary["n_pairs"] > 0 and summary["n_duplicate_clusters"] > 0


def _star_corpus(path, n_template=260, n_other=240):
    """A template repeated with one changed word (one LSH bucket over max_bucket), plus noisy pairs."""
    rng = random.Random(7)
    words = [f"w{i}" for i in range(4000)]
    template = [rng.choice(words) for _ in range(120)]
    others = [" ".join(rng.choice(words) for _ in range(60)) for _ in range(n_other // 2)]
    docs = []
    for i in range(n_template):
        t = list(template)
        t[-1] = f"v{i}"
        docs.append(" ".join(t + ["tail"] * (i % 3)))  # lengths differ: representatives are not just the first
    for i, text in enumerate(others):
        docs.append(text)
        w = text.split()
        w[rng.randrange(len(w))] = f"x{i}"
        docs.append(" ".join(w))
    order = list(range(len(docs)))
    rng.shuffle(order)
    with open(path, "w") as fh:
        for k, i in enumerate(order):
            fh.write(json.dumps({"id": f"d{k}", "text": docs[i]}) + "\n")


def test_ray_equals_local_with_a_bucket_over_max_bucket(ray_cluster, tmp_path):
    src = tmp_path / "star.jsonl"
    _star_corpus(src)
    cfg = DedupConfig(method="minhash").replace(cluster__algorithm="components")  # chains through the star
    # The corpus does exercise the star rule: some band bucket holds more than max_bucket documents.
    prep = prepare(read_corpus(src), cfg)
    keys = band_keys(prep.signatures, *lsh_plan(cfg.minhash, cfg.threshold))
    biggest = max(np.unique(keys[:, b], return_counts=True)[1].max() for b in range(keys.shape[1]))
    assert biggest > cfg.minhash.max_bucket
    summary = _assert_same_as_local(src, tmp_path, cfg)
    assert summary["largest_clusters"][0]["size"] >= 250


def test_ray_without_any_candidate_pair(ray_cluster, tmp_path):
    src = tmp_path / "distinct.jsonl"
    src.write_text("".join(json.dumps({"id": str(i), "text": f"entirely different words number {i} " * (i + 1)})
                           + "\n" for i in range(5)) + json.dumps({"id": "e", "text": ""}) + "\n")
    summary = _assert_same_as_local(src, tmp_path, DedupConfig(method="ngram"))
    assert summary["n_pairs"] == 0 and summary["n_empty_docs"] == 1


def test_ray_reports_bad_input_from_the_driver(ray_cluster, tmp_path):
    src = tmp_path / "bad.jsonl"
    src.write_text('{"id": "a", "text": "fine"}\n{"id": "b", "txt": "no text"}\n')
    with pytest.raises(InputError, match="bad.jsonl"):
        run_ray(src, tmp_path / "o", DedupConfig(), ENGINE)
    assert not (tmp_path / "o").exists()


def test_missing_ray_names_the_extra(monkeypatch, tmp_path, example_path):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"neardup\[ray\]"):
        run_ray(example_path, tmp_path / "o", DedupConfig(), ENGINE)


def test_ray_simhash_groups_make_only_the_pairs_within_the_distance(example_path, tmp_path):
    """A Ray candidates group of a method that screens its pairs (SimHash) makes them from the joined
    representation: only the bucket pairs within the distance, not every pair of its buckets."""
    from neardup import methods
    from neardup.engine.ray import _bucket_pairs
    from neardup.engine.workdir import joined
    from neardup.represent.simhash import hamming

    cfg = DedupConfig(method="simhash", threshold=0.7)
    run_chunked(example_path, tmp_path / "out", cfg, ENGINE.replace(keep_work=True))
    root = tmp_path / "out" / ".neardup-work"
    method, rep = methods.get(cfg), joined(root)
    assert method.reads_representation
    docs = np.flatnonzero(~rep.empty).astype(np.int64)
    n = len(rep)
    spec = {"root": str(root), "config": cfg, "n": n, "tiles": np.array([0, n]), "pair_parts": 1}
    made = bucketed = 0
    for t in range(method.n_tables()):
        keys = method.table_keys(rep, docs, range(t, t + 1))[:, 0]
        a, b = method.bucket_pairs(keys, docs)
        near = hamming(rep.sketch[a], rep.sketch[b]) <= method.max_distance
        codes = _bucket_pairs({"key": keys, "doc": docs}, spec)["code"]
        assert sorted(codes.tolist()) == sorted((a[near] * n + b[near]).tolist())
        made, bucketed = made + codes.size, bucketed + a.size
    assert 0 < made < bucketed
