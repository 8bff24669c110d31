"""Validation and test scores of a bi-encoder (and of cross-encoder re-ranking), through neardup's own eval.

Owns computing embeddings of labelled sets and tuning a threshold the NEWS-COPY way (sweep on
validation, apply unchanged to test); must not train. The bi-encoder path builds a
:class:`neardup.pipeline.Prepared` with the given embeddings and runs :func:`neardup.eval.tune.sweep`
on it, so candidates, scoring, clustering and metrics are exactly the pipeline's ``biencoder`` method.
The re-ranking path takes the bi-encoder's candidates (k nearest neighbours above ``floor``), scores
them with a cross-encoder and sweeps the threshold on its probability.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from neardup.config import DedupConfig, EmbedConfig
from neardup.eval.evaluate import LabelledData, score
from neardup.pipeline import Prepared, prepare
from neardup.results import DedupResult

BIENCODER_GRID: list[float] = [round(float(x), 3) for x in np.arange(0.30, 0.9951, 0.01)]
RERANK_GRID: list[float] = [round(float(x), 3) for x in np.arange(0.05, 0.9951, 0.025)]


def encode_texts(model: Any, texts: Sequence[str], max_tokens: int = 512, batch_size: int = 16,
                 max_chars: int = 100_000, progress: bool = False) -> np.ndarray:
    """L2-normalised float32 embeddings with a loaded ``SentenceTransformer``, as the pipeline makes them
    (``max_tokens`` tokens per text; empty texts get zero rows)."""
    old = model.max_seq_length
    model.max_seq_length = min(max_tokens, 512)
    try:
        clipped = [t[:max_chars] for t in texts]
        emb = model.encode(clipped, batch_size=batch_size, show_progress_bar=progress, convert_to_numpy=True,
                           normalize_embeddings=True)
    finally:
        model.max_seq_length = old
    emb = np.ascontiguousarray(emb, dtype=np.float32)
    empty = np.fromiter((not t.strip() for t in clipped), dtype=bool, count=len(clipped))
    emb[empty] = 0.0
    return emb


def prepared_with(data: LabelledData, embeddings: np.ndarray, k: int = 100, model: str | None = None) -> Prepared:
    """A pipeline :class:`Prepared` for the ``biencoder`` method holding ``embeddings`` (no encoder is loaded)."""
    from neardup.methods.base import Representation
    from neardup.represent.embeddings import Embeddings

    cfg = DedupConfig(method="biencoder", embed=EmbedConfig(model=model, k=k))
    base = prepare(data.corpus, DedupConfig(method="ngram"))
    rep = Representation(sets=base.sets, lengths=base.lengths, vectors=Embeddings(docs=embeddings))
    return Prepared(corpus=data.corpus, config=cfg, rep=rep, timings=dict(base.timings))


def _at(data: LabelledData, prep: Prepared, left: np.ndarray, right: np.ndarray, scores: np.ndarray,
        threshold: float, config: DedupConfig) -> dict[str, Any]:
    from neardup.cluster import cluster_pairs, passes

    keep = passes(scores, threshold)

    clusters = cluster_pairs(len(data.corpus), left[keep], right[keep], scores[keep], prep.lengths, config.cluster,
                             threshold=threshold)
    res = DedupResult(ids=data.corpus.ids, clusters=clusters, left=left[keep], right=right[keep],
                      scores=scores[keep], summary={})
    out = score(res, data)
    out.update(threshold=threshold, n_pred_pairs=int(keep.sum()), n_docs=len(data.corpus))
    return out


def _best(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return max(rows, key=lambda r: (round(r["ari"], 12), round(r["f1"], 12), r["threshold"]))


def tune_biencoder(validation: LabelledData, val_emb: np.ndarray, test: LabelledData | None = None,
                   test_emb: np.ndarray | None = None, k: int = 100,
                   grid: Sequence[float] | None = None) -> dict[str, Any]:
    """Best threshold on validation (ARI, then F1, then higher) and the metrics there and on test."""
    from neardup.eval.tune import best_trial, sweep

    thresholds = list(grid or BIENCODER_GRID)
    prep = prepared_with(validation, val_emb, k)
    trials = sweep(validation, prep.config, thresholds, prep=prep)
    best = best_trial(trials)
    t = float(best.params["threshold"])
    out: dict[str, Any] = {"threshold": t, "validation": {**best.metrics, "threshold": t}}
    if test is not None and test_emb is not None:
        from neardup.pipeline import candidate_pairs

        tprep = prepared_with(test, test_emb, k)
        cfg = tprep.config.replace(threshold=t)
        left, right, scores, _ = candidate_pairs(tprep, cfg)
        out["test"] = _at(test, tprep, left, right, scores, t, cfg)
    return out


@dataclass
class RerankCandidates:
    """Bi-encoder candidates of one set with their cosine and cross-encoder scores."""

    prep: Prepared
    left: np.ndarray
    right: np.ndarray
    cosine: np.ndarray
    ce: np.ndarray
    seconds_scoring: float


def rerank_candidates(data: LabelledData, emb: np.ndarray, score_pairs: Callable[[list[tuple[str, str]]], np.ndarray],
                      floor: float, k: int = 20) -> RerankCandidates:
    """The ``k`` nearest neighbours of each document with cosine >= ``floor``, scored by ``score_pairs``."""
    from neardup.candidates.vectors import knn_pairs

    prep = prepared_with(data, emb, k)
    ok = np.flatnonzero(prep.sets.sizes > 0)
    vl, vr, cos = knn_pairs(emb[ok], k=k, threshold=floor)
    left, right = ok[vl], ok[vr]
    t0 = time.perf_counter()
    texts = data.corpus.texts
    ce = score_pairs([(texts[a], texts[b]) for a, b in zip(left.tolist(), right.tolist())]) if left.size else np.empty(0)
    return RerankCandidates(prep, left, right, np.asarray(cos, np.float64), np.asarray(ce, np.float64),
                            time.perf_counter() - t0)


def rerank_floors(loosest: float, step: float = 0.02, top: float = 0.99) -> list[float]:
    """Cosine floors swept with the cross-encoder threshold: from ``loosest`` up in ``step``s.

    >>> rerank_floors(0.9, 0.03)
    [0.9, 0.93, 0.96, 0.99]
    """
    out = [round(float(loosest), 3)]
    while out[-1] + step <= top + 1e-9:
        out.append(round(out[-1] + step, 3))
    return out


def tune_rerank(validation: LabelledData, val: RerankCandidates, test: LabelledData | None = None,
                tst: RerankCandidates | None = None, grid: Sequence[float] | None = None,
                floors: Sequence[float] | None = None) -> dict[str, Any]:
    """Sweep (cosine floor, cross-encoder probability threshold) on validation; apply both to test.

    A pair is kept when the bi-encoder's cosine reaches the floor AND the cross-encoder's probability
    reaches the threshold. ``floors`` default: from the loosest candidate cosine up to 0.99 in steps of
    0.02 (the cross-encoder scores are computed once, at the loosest floor).
    """
    cfg = DedupConfig(method="biencoder")
    lo = float(val.cosine.min()) if val.cosine.size else 0.0
    fl = list(floors) if floors is not None else rerank_floors(np.floor(lo * 100) / 100)

    def at(data: LabelledData, c: RerankCandidates, f: float, t: float) -> dict[str, Any]:
        keep = c.cosine >= f - 1e-9
        ce = np.where(keep, c.ce, -1.0)
        return {**_at(data, c.prep, c.left, c.right, ce, t, cfg), "floor": f}

    rows = [at(validation, val, float(f), float(t)) for f in fl for t in (grid or RERANK_GRID)]
    best = max(rows, key=lambda r: (round(r["ari"], 12), round(r["f1"], 12), -r["floor"], r["threshold"]))
    t, f = float(best["threshold"]), float(best["floor"])
    out: dict[str, Any] = {"threshold": t, "floor": f, "validation": {**best, "n_scored": int(val.left.size),
                                                                    "seconds_scoring": round(val.seconds_scoring, 2)}}
    if test is not None and tst is not None:
        out["test"] = {**at(test, tst, f, t), "n_scored": int(tst.left.size),
                       "seconds_scoring": round(tst.seconds_scoring, 2)}
    return out


def floor_for_recall(data: LabelledData, emb: np.ndarray, recall: float = 0.98, k: int = 20,
                     lowest: float = 0.3) -> float:
    """The highest cosine floor at which the k-NN candidates still hold ``recall`` of the true pairs
    (a loose first stage for re-ranking, chosen on validation)."""
    from neardup.candidates.vectors import knn_pairs

    labels = data.corpus.labels or []
    truth = {(i, j) for i in range(len(labels)) for j in range(i + 1, len(labels))
             if labels[i] is not None and labels[i] == labels[j]}
    if not truth:
        return lowest
    left, right, cos = knn_pairs(emb, k=k, threshold=lowest)
    found = sorted((float(c) for a, b, c in zip(left.tolist(), right.tolist(), cos.tolist()) if (a, b) in truth),
                   reverse=True)
    need = int(np.ceil(recall * len(truth)))
    if len(found) < need:
        return lowest
    return max(lowest, float(np.floor(found[need - 1] * 100) / 100))


__all__ = ["BIENCODER_GRID", "RERANK_GRID", "RerankCandidates", "encode_texts", "floor_for_recall", "prepared_with",
           "rerank_candidates", "rerank_floors", "tune_biencoder", "tune_rerank"]
