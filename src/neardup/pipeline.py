"""Compose the stages into one run: read -> normalize -> represent -> candidates -> verify -> cluster -> write.

Owns the order of stages, progress, timings and the result object; must not implement a stage itself.
A method is a choice of stage implementations (see :data:`neardup.config.METHODS`); the representation
is computed once (:func:`prepare`) and can be re-used for many thresholds (:func:`run_prepared`), which is
what threshold tuning does.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from neardup.candidates.allpairs import shared_shingle_pairs
from neardup.candidates.hamming import hamming_pairs
from neardup.candidates.lsh import collision_pairs, lsh_pairs, optimal_bands_rows
from neardup.cluster import Clusters, cluster_pairs
from neardup.config import NEURAL_METHODS, DedupConfig, config_to_dict
from neardup.io.read import Corpus
from neardup.represent import minhash, simhash
from neardup.represent.embeddings import Embeddings, embed_texts
from neardup.text.normalize import normalize, normalize_words, only_words_and_spaces
from neardup.text.shingle import ShingleConfig, ShingleSets, shingle_many, shingle_words
from neardup.verify.overlap import doc_weight_totals, idf_weights, score_pairs


@dataclass
class Prepared:
    """The threshold-independent part of a run: shingle sets and the method's sketch."""

    corpus: Corpus
    config: DedupConfig
    sets: ShingleSets
    lengths: np.ndarray
    signatures: np.ndarray | None = None
    fingerprints: np.ndarray | None = None
    embeddings: Embeddings | None = None
    timings: dict[str, float] = field(default_factory=dict)
    _weights: dict[float, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)

    def weights(self, idf_power: float) -> tuple[np.ndarray, np.ndarray]:
        """IDF weights of the shingles and their per-document totals (once per power, for weighted scores)."""
        if idf_power not in self._weights:
            w = idf_weights(self.sets, idf_power)
            self._weights[idf_power] = (w, doc_weight_totals(self.sets, w))
        return self._weights[idf_power]

    def compatible_with(self, config: DedupConfig) -> bool:
        """True when ``config`` would compute the same representation."""
        a, b = self.config, config
        same = a.method == b.method and a.normalize == b.normalize and shingle_config_for(a) == shingle_config_for(b)
        if a.method in ("minhash", "hybrid"):
            same = same and (a.minhash.num_perm, a.minhash.seed) == (b.minhash.num_perm, b.minhash.seed)
        if a.method in NEURAL_METHODS:
            same = same and (a.embed.model, a.embed.batch_size) == (b.embed.model, b.embed.batch_size)
        return same


@dataclass
class DedupResult:
    """What a run found: a cluster per document, the verified pairs, and a summary.

    ``pairs`` holds document indices; :meth:`pairs_by_id` gives ids.
    """

    ids: list[str]
    clusters: Clusters
    left: np.ndarray
    right: np.ndarray
    scores: np.ndarray
    summary: dict[str, Any]

    @property
    def cluster_ids(self) -> list[str]:
        """For each document, the id of its cluster's representative (the cluster id)."""
        return [self.ids[i] for i in self.clusters.labels]

    @property
    def representatives(self) -> list[str]:
        """Ids of the documents kept: one per cluster, longest then first seen."""
        return [self.ids[i] for i in np.flatnonzero(self.clusters.is_representative)]

    def pairs_by_id(self) -> list[tuple[str, str, float]]:
        """Verified duplicate pairs as (left id, right id, score)."""
        return [(self.ids[a], self.ids[b], float(s)) for a, b, s in zip(self.left, self.right, self.scores)]

    def groups(self) -> list[list[str]]:
        """Clusters with more than one document, as lists of ids (largest first)."""
        out: dict[int, list[str]] = {}
        for i, label in enumerate(self.clusters.labels):
            if self.clusters.sizes[i] > 1:
                out.setdefault(int(label), []).append(self.ids[i])
        return sorted(out.values(), key=lambda g: (-len(g), g[0]))

    def write(self, outdir: str | os.PathLike[str]) -> None:
        """Write clusters.parquet, pairs.parquet and summary.json into ``outdir`` (atomically)."""
        from neardup.io.write import write_json, write_table

        out = Path(outdir)
        out.mkdir(parents=True, exist_ok=True)
        write_table(out / "clusters.parquet", {
            "id": self.ids,
            "cluster": self.cluster_ids,
            "cluster_size": self.clusters.sizes.astype(np.int64),
            "is_representative": self.clusters.is_representative,
            "oversized": self.clusters.oversized,
        })
        write_table(out / "pairs.parquet", {
            "left": [self.ids[i] for i in self.left],
            "right": [self.ids[i] for i in self.right],
            "score": self.scores.astype(np.float64),
        })
        write_json(out / "summary.json", self.summary)


def shingle_config_for(config: DedupConfig) -> ShingleConfig:
    """The shingling a method uses (SimHash always uses character shingles)."""
    if config.method == "simhash":
        return ShingleConfig(n=config.simhash.n, char=True)
    return config.shingle


def represent_batch(texts: list[str], config: DedupConfig, max_chars: int) -> tuple[ShingleSets, np.ndarray | None]:
    """Normalize, shingle and sketch one batch of texts: the map step every executor runs.

    Returns the shingle sets and the sketch (MinHash signatures, SimHash fingerprints, or None).
    """
    shingling = shingle_config_for(config)
    if not shingling.char and only_words_and_spaces(config.normalize):
        sets = shingle_words([normalize_words(t[:max_chars], config.normalize) for t in texts], shingling.n)
    else:
        normalized = [normalize(t[:max_chars], config.normalize) for t in texts]
        sets = shingle_many(normalized, shingling, batch_size=max(len(normalized), 1))
    if config.method in ("minhash", "hybrid"):
        return sets, minhash.signatures(sets, config.minhash.num_perm, config.minhash.seed)
    if config.method == "simhash":
        return sets, simhash.fingerprints(sets)
    return sets, None


def prepare(corpus: Corpus, config: DedupConfig, progress: bool = False, batch_size: int = 4096,
            max_chars: int | None = None) -> Prepared:
    """Normalize, shingle and sketch every document (the threshold-independent stages).

    >>> from neardup.io.read import Corpus
    >>> prep = prepare(Corpus.from_texts(["a b c d", "a b c d e"]), DedupConfig())
    >>> prep.signatures.shape
    (2, 128)
    """
    from neardup.io.read import DEFAULT_MAX_CHARS

    limit = max_chars or DEFAULT_MAX_CHARS
    timings: dict[str, float] = {"represent": 0.0}
    parts: list[ShingleSets] = []
    sketches: list[np.ndarray] = []
    n = len(corpus)
    bar = tqdm(total=n, desc="shingling", unit="doc", disable=not progress, leave=False)
    for start in range(0, n, batch_size):
        t0 = time.perf_counter()
        sets, sketch = represent_batch(corpus.texts[start : start + batch_size], config, limit)
        parts.append(sets)
        if sketch is not None:
            sketches.append(sketch)
        timings["represent"] += time.perf_counter() - t0
        bar.update(len(sets))
    bar.close()
    lengths = np.fromiter((len(t) for t in corpus.texts), dtype=np.int64, count=n)
    prep = Prepared(corpus=corpus, config=config, sets=ShingleSets.concat(parts), lengths=lengths, timings=timings)
    if config.method in ("minhash", "hybrid"):
        prep.signatures = np.concatenate(sketches) if sketches else np.empty((0, config.minhash.num_perm), np.uint32)
    if config.method in NEURAL_METHODS:
        t0 = time.perf_counter()
        # rerank embeds with its bi-encoder (--model); the cross-encoder only scores candidate pairs
        embed_cfg = config.replace(method="biencoder") if config.method == "rerank" else config
        prep.embeddings = embed_texts(corpus.texts, embed_cfg, limit, progress=progress)
        timings["embed"] = time.perf_counter() - t0
    elif config.method == "simhash":
        prep.fingerprints = np.concatenate(sketches) if sketches else np.empty(0, np.uint64)
    return prep


def candidate_pairs(prep: Prepared, config: DedupConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """Candidates and their verified scores ``(left, right, score, info)``, before the threshold cut.

    For ``minhash`` the candidates depend on the LSH/collision settings (and on the threshold only
    when bands are derived from it); for ``simhash`` on the Hamming distance the threshold allows.
    """
    info: dict[str, Any] = {}
    t0 = time.perf_counter()
    empty = prep.sets.sizes == 0
    threshold = float(config.threshold)  # validated non-None by DedupConfig
    estimate: np.ndarray | None = None
    if config.method in NEURAL_METHODS:
        return _neural_candidates(prep, config, empty, t0)
    if config.method == "minhash":
        assert prep.signatures is not None
        mh = config.minhash
        if mh.rule == "lsh":
            left, right, lsh_info = _lsh_candidates(prep, config, empty)
            info.update(lsh_info)
        else:
            c = mh.min_collisions or default_min_collisions(threshold, mh.num_perm)
            left, right, _ = collision_pairs(prep.signatures, c, exclude=empty, max_bucket=mh.max_bucket)
            info.update(min_collisions=c)
        if config.verify.score == "none":
            estimate = np.mean(prep.signatures[left] == prep.signatures[right], axis=1) if left.size else np.empty(0)
    elif config.method == "ngram":
        left, right, _ = shared_shingle_pairs(prep.sets, max_df=config.ngram.max_df)
    else:
        assert prep.fingerprints is not None
        max_distance = int(math.floor((1.0 - threshold) * simhash.BITS + 1e-9))
        left, right, dist = hamming_pairs(prep.fingerprints, max_distance, exclude=empty,
                                          max_tables=config.simhash.max_tables)
        estimate = 1.0 - dist / simhash.BITS
        info.update(max_hamming=max_distance)
    t1 = time.perf_counter()
    if estimate is None:
        weighted = config.verify.score.startswith("weighted-")
        weights, totals = prep.weights(config.verify.idf_power) if weighted else (None, None)
        scores = score_pairs(prep.sets, left, right, config.verify.score, weights=weights, totals=totals)
    else:
        scores = estimate
    t2 = time.perf_counter()
    info.update(n_candidates=int(left.size), seconds_candidates=t1 - t0, seconds_verify=t2 - t1)
    return left, right, scores, info


def _lsh_candidates(prep: Prepared, config: DedupConfig, empty: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    assert prep.signatures is not None
    mh = config.minhash
    if mh.bands is not None and mh.rows is not None:
        bands, rows = mh.bands, mh.rows
    else:
        bands, rows = optimal_bands_rows(mh.lsh_threshold or float(config.threshold), mh.num_perm)
    left, right = lsh_pairs(prep.signatures, bands, rows, exclude=empty, max_bucket=mh.max_bucket)
    return left, right, {"bands": bands, "rows": rows}


def _neural_candidates(prep: Prepared, config: DedupConfig, empty: np.ndarray, t0: float
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """Neighbours in embedding space (plus MinHash-LSH pairs for ``hybrid``), scored by the method's rule."""
    from neardup.candidates.buckets import unique_pairs
    from neardup.candidates.vectors import knn_pairs
    from neardup.verify.cosine import cosine_scores, hybrid_scores, partial_scores

    assert prep.embeddings is not None
    emb, ecfg, threshold = prep.embeddings, config.embed, float(config.threshold)
    info: dict[str, Any] = {"k": ecfg.k, "index": ecfg.index}
    ok = np.flatnonzero(~empty)
    if config.method == "hybrid":
        floor = ecfg.hybrid_min_cosine
    elif config.method == "retsim-partial":
        floor = threshold - 0.1  # a chunk-level match may show before the document-level one
    elif config.method == "rerank":
        floor = ecfg.rerank_floor  # loose first stage; the threshold applies to the cross-encoder probability
    else:
        floor = threshold
    vl, vr, _ = knn_pairs(emb.docs[ok], k=ecfg.k, threshold=floor, index=ecfg.index)
    left, right = ok[vl], ok[vr]
    if config.method == "retsim-partial":
        assert emb.chunks is not None and emb.offsets is not None
        from neardup.candidates.vectors import partial_pairs

        pl, pr, _ = partial_pairs(emb.chunks, emb.offsets, chunk_threshold=floor, k=ecfg.k, index=ecfg.index)
        left, right = unique_pairs(np.concatenate([left, pl]), np.concatenate([right, pr]))
    if config.method == "hybrid":
        ll, lr, lsh_info = _lsh_candidates(prep, config, empty)
        info.update(lsh_info)
        left, right = unique_pairs(np.concatenate([left, ll]), np.concatenate([right, lr]))
    t1 = time.perf_counter()
    if config.method == "retsim-partial":
        assert emb.chunks is not None and emb.offsets is not None
        scores = partial_scores(emb.chunks, emb.offsets, left, right)
    elif config.method == "rerank":
        from neardup.verify.crossencoder import rerank_scores

        rerank_info: dict[str, Any] = {}
        scores = rerank_scores(prep.corpus.texts, left, right, ecfg.cross_model, info=rerank_info)
        info.update(rerank_info, rerank_floor=ecfg.rerank_floor)
    else:
        scores = cosine_scores(emb.docs, left, right)
    if config.method == "hybrid" and ecfg.hybrid_rule == "linear":
        weights, totals = prep.weights(config.verify.idf_power)
        ngram = score_pairs(prep.sets, left, right, "weighted-overlap", weights=weights, totals=totals)
        scores = hybrid_scores(ngram, scores, ecfg.hybrid_weight)
        info.update(hybrid_rule="linear", hybrid_weight=ecfg.hybrid_weight)
    elif config.method == "hybrid":
        from neardup.verify.hybrid import DEFAULT_HYBRID_COEF, logistic_scores

        coef = ecfg.hybrid_coef or DEFAULT_HYBRID_COEF
        scores = logistic_scores(hybrid_pair_features(prep, config, left, right, cosine=scores), coef)
        info.update(hybrid_rule="logistic", hybrid_coef=list(coef))
    t2 = time.perf_counter()
    info.update(n_candidates=int(left.size), seconds_candidates=t1 - t0, seconds_verify=t2 - t1)
    return left, right, scores, info


def hybrid_pair_features(prep: Prepared, config: DedupConfig, left: np.ndarray, right: np.ndarray,
                         cosine: np.ndarray | None = None) -> np.ndarray:
    """The hybrid model's features of candidate pairs (:data:`neardup.verify.hybrid.HYBRID_FEATURES`).

    IDF-weighted overlap of the word shingles, RETSim document cosine (``cosine`` if already computed),
    RETSim partial-duplicate chunk score, length ratio. Tuning fits the model on these.
    """
    from neardup.verify.cosine import cosine_scores, partial_scores
    from neardup.verify.hybrid import hybrid_features

    assert prep.embeddings is not None
    weights, totals = prep.weights(config.verify.idf_power)
    ngram = score_pairs(prep.sets, left, right, "weighted-overlap", weights=weights, totals=totals)
    cos = cosine_scores(prep.embeddings.docs, left, right) if cosine is None else cosine
    chunks, offsets = prep.embeddings.chunks, prep.embeddings.offsets
    assert chunks is not None and offsets is not None  # embed_texts keeps hybrid's chunks
    return hybrid_features(ngram, cos, partial_scores(chunks, offsets, left, right), prep.lengths, left, right)


def find_pairs(prep: Prepared, config: DedupConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """Candidates then verification: the verified pairs ``(left, right, score)`` at ``config.threshold``."""
    left, right, scores, info = candidate_pairs(prep, config)
    keep = scores >= float(config.threshold) - 1e-12
    info["n_verified"] = int(keep.sum())
    return left[keep], right[keep], scores[keep], info


def default_min_collisions(threshold: float, num_perm: int) -> int:
    """Collision count used by ``rule="collisions"`` when none is given: half the expected count at the threshold.

    >>> default_min_collisions(0.5, 128)
    32
    """
    return max(2, int(round(0.5 * threshold * num_perm)))


def run_prepared(prep: Prepared, config: DedupConfig | None = None) -> DedupResult:
    """Finish a run from prepared representations (candidates, verify, cluster, summary)."""
    cfg = config or prep.config
    if not prep.compatible_with(cfg):
        raise ValueError("config needs a different representation than the prepared one; call prepare() again")
    left, right, scores, info = find_pairs(prep, cfg)
    t1 = time.perf_counter()
    clusters = cluster_pairs(len(prep.corpus), left, right, scores, prep.lengths, cfg.cluster)
    t2 = time.perf_counter()
    timings = dict(prep.timings)
    timings.update(candidates=info.pop("seconds_candidates"), verify=info.pop("seconds_verify"), cluster=t2 - t1)
    timings["total"] = sum(timings.values())
    summary = _summary(prep.corpus, clusters, cfg, info, timings)
    return DedupResult(ids=prep.corpus.ids, clusters=clusters, left=left, right=right, scores=scores, summary=summary)


def run(corpus: Corpus, config: DedupConfig | None = None, progress: bool = False) -> DedupResult:
    """The whole pipeline on one corpus.

    >>> from neardup.io.read import Corpus
    >>> r = run(Corpus.from_texts(["the cat sat on the mat today", "the cat sat on the mat today!", "dogs bark"]))
    >>> r.groups()
    [['0', '1']]
    """
    cfg = config or DedupConfig()
    return run_prepared(prepare(corpus, cfg, progress=progress), cfg)


def _summary(corpus: Corpus, clusters: Clusters, cfg: DedupConfig, info: dict[str, Any],
             timings: dict[str, float]) -> dict[str, Any]:
    n = len(corpus)
    reps = clusters.is_representative
    multi = clusters.sizes > 1
    big_reps = np.flatnonzero(reps & multi)
    largest = sorted(big_reps.tolist(), key=lambda i: (-int(clusters.sizes[i]), i))[:10]
    params = config_to_dict(cfg)
    if cfg.method in ("minhash", "hybrid"):
        params["minhash"]["algorithm"] = minhash.ALGORITHM
    params.update(info)
    total = timings.get("total", 0.0)
    return {
        "input": corpus.source,
        "n_docs": n,
        "n_clusters": int(reps.sum()),
        "n_duplicate_clusters": int(big_reps.size),
        "n_duplicates": int(n - reps.sum()),
        "duplicate_ratio": float((n - reps.sum()) / n) if n else 0.0,
        "n_pairs": int(info.get("n_verified", 0)),
        "n_empty_docs": corpus.n_empty,
        "n_truncated_docs": corpus.n_truncated,
        "n_skipped_records": len(corpus.skipped),
        "skipped_records": corpus.skipped[:100],
        "n_oversized_clusters": int((reps & clusters.oversized).sum()),
        "largest_clusters": [
            {"cluster": corpus.ids[i], "size": int(clusters.sizes[i]), "oversized": bool(clusters.oversized[i])}
            for i in largest
        ],
        "params": params,
        "timings": {k: round(v, 4) for k, v in timings.items()},
        "docs_per_second": round(n / total, 1) if total > 0 else None,
    }


__all__ = ["DedupResult", "Prepared", "prepare", "candidate_pairs", "find_pairs", "hybrid_pair_features", "run",
           "run_prepared"]
