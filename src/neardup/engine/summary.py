"""The run summary (``summary.json``): one builder for every engine, so their summaries hold the same fields.

Owns the summary's fields and their order; must not compute clusters or read files.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from neardup.cluster import Clusters
from neardup.config import ReadConfig


@dataclass(frozen=True)
class ClusterCounts:
    """What the summary says of the clusters: counts and the ten largest, named. An engine computes it as
    soon as the clusters are written and can then drop their three per-document arrays (170 MB in the
    process that writes at ten million documents) before the evidence stage."""

    n_docs: int
    n_clusters: int
    n_duplicate_clusters: int
    n_oversized_clusters: int
    largest: list[dict[str, Any]]

    @classmethod
    def of(cls, clusters: Clusters, ids_of: Callable[[np.ndarray], Sequence[str]]) -> ClusterCounts:
        """The counts of ``clusters``; ``ids_of`` maps sorted document indices to their ids (an engine may
        read them from disk)."""
        reps = clusters.is_representative
        multi = np.flatnonzero(reps & (clusters.sizes > 1))
        largest = multi[np.lexsort((multi, -clusters.sizes[multi]))][:10]
        names = dict(zip(np.sort(largest).tolist(), ids_of(np.sort(largest))))
        return cls(n_docs=int(clusters.labels.size), n_clusters=int(reps.sum()), n_duplicate_clusters=int(multi.size),
                   n_oversized_clusters=int((reps & clusters.oversized).sum()),
                   largest=[{"cluster": names[int(i)], "size": int(clusters.sizes[i]),
                             "oversized": bool(clusters.oversized[i])} for i in largest])


#: What each pair score measures, for the summary's ``decision``: resemblance (both texts alike) or containment
#: (the shorter text found in the longer: abridged reprints, quoted copies).
SCORE_MEANINGS: dict[str, str] = {
    "jaccard": "resemblance: shared shingles over all shingles of the two texts",
    "weighted-jaccard": "resemblance: IDF-weighted shared shingles over all shingles of the two texts",
    "overlap": "containment: the share of the shorter text's shingles found in the other",
    "weighted-overlap": "containment: the IDF-weighted share of the shorter text's shingles found in the other",
    "none": "the sketch's own estimate of resemblance",
    "cosine": "the cosine of the two texts' embeddings",
}


def decision_rule(params: dict[str, Any]) -> dict[str, Any]:
    """How a run decided that a document is a copy: the cluster rule, the pair score it used and what that score
    measures, and the threshold.

    >>> decision_rule({"threshold": 0.45, "verify": {"score": "weighted-overlap"}, "cluster": {"algorithm": "greedy"}})["copy"]
    "containment: the IDF-weighted share of the shorter text's shingles found in the other"
    """
    score = (params.get("verify") or {}).get("score") or "cosine"
    rule = (params.get("cluster") or {}).get("algorithm") or "greedy"
    return {"rule": rule, "score": score, "copy": SCORE_MEANINGS.get(score, score), "threshold": params.get("threshold"),
            "removed_only_as_verified_copy": rule == "greedy"}


def score_range(floor: float | None, ceiling: float | None) -> dict[str, float]:
    """The ``decision`` keys saying which thresholds a re-threshold of the run can take (those given)."""
    return ({} if floor is None else {"score_floor": floor}) | ({} if ceiling is None else {"score_ceiling": ceiling})


def build_summary(*, source: str, clusters: ClusterCounts, params: dict[str, Any], n_candidates: int, n_pairs: int,
                  n_empty: int, n_truncated: int, skipped: list[dict[str, Any]], timings: dict[str, float],
                  seconds: float, engine: dict[str, Any], read: ReadConfig | None = None,
                  n_written: int | None = None, floor: float | None = None, ceiling: float | None = None,
                  n_scored: int | None = None) -> dict[str, Any]:
    """The summary of a finished run.

    ``params`` is the method's :meth:`~neardup.methods.base.Method.describe`; ``seconds`` the whole run's
    time; ``read``: how the input was read (its id and text fields are recorded, so the input can be read
    again). ``n_pairs`` counts the verified pairs, ``n_written`` the rows of ``pairs.parquet`` (by default
    the link behind each removed document; default: ``n_pairs``); ``floor``: the lowest score of the scored
    candidates kept in ``scores.parquet`` (the lowest threshold a re-threshold can take); ``ceiling``: the highest
    (:func:`~neardup.cluster.score_ceiling`: ``greedy`` scores only the pairs its decisions up to it read);
    ``n_scored``: the candidates scored (default: ``n_candidates``).

    >>> from neardup.cluster import cluster_pairs
    >>> c = cluster_pairs(3, np.array([0]), np.array([1]), np.array([1.0]), np.array([5, 9, 1]))
    >>> counts = ClusterCounts.of(c, lambda ix: [["a", "b", "c"][i] for i in ix])
    >>> s = build_summary(source="x", clusters=counts, params={}, n_candidates=1, n_pairs=1, n_empty=0,
    ...                   n_truncated=0, skipped=[], timings={}, seconds=1.0, engine={"name": "memory"})
    >>> s["n_duplicates"], s["largest_clusters"]
    (1, [{'cluster': 'b', 'size': 2, 'oversized': False}])
    """
    n, n_reps = clusters.n_docs, clusters.n_clusters
    params = dict(params)
    calibration = params.pop("calibration", None)
    return {
        "input": source,
        "read": {"id_field": (read or ReadConfig()).id_field, "text_field": (read or ReadConfig()).text_field,
                 **({"encoding": read.encoding} if read is not None and read.encoding != "utf-8" else {})},
        "n_docs": n,
        "n_clusters": n_reps,
        "n_duplicate_clusters": clusters.n_duplicate_clusters,
        "n_duplicates": n - n_reps,
        "duplicate_ratio": float((n - n_reps) / n) if n else 0.0,
        "n_pairs": int(n_pairs),
        "n_pairs_written": int(n_pairs if n_written is None else n_written),
        "n_candidates": int(n_candidates),
        "n_scored": int(n_candidates if n_scored is None else n_scored),
        "n_empty_docs": int(n_empty),
        "n_truncated_docs": int(n_truncated),
        "n_skipped_records": len(skipped),
        "skipped_records": skipped[:100],
        "n_oversized_clusters": clusters.n_oversized_clusters,
        "largest_clusters": list(clusters.largest),
        "decision": decision_rule(params) | score_range(floor, ceiling),
        "params": params,
        **({"calibration": calibration} if calibration else {}),
        "engine": engine,
        "timings": {k: round(v, 4) for k, v in timings.items()} | {"total": round(seconds, 4)},
        "docs_per_second": round(n / seconds, 1) if seconds > 0 else None,
    }


def rethresholded(summary: dict[str, Any], clusters: ClusterCounts, threshold: float, n_pairs: int, n_written: int,
                  seconds: float) -> dict[str, Any]:
    """The summary of a run decided again at ``threshold`` (:meth:`~neardup.results.DedupResult.rethreshold`): its
    counts, threshold and decision replaced, ``rethreshold`` saying from which threshold and how long it took."""
    n, n_reps = clusters.n_docs, clusters.n_clusters
    params = {**(summary.get("params") or {}), "threshold": float(threshold)}
    decision = summary.get("decision") or {}
    out = {**summary, "n_clusters": n_reps, "n_duplicate_clusters": clusters.n_duplicate_clusters,
           "n_duplicates": n - n_reps, "duplicate_ratio": float((n - n_reps) / n) if n else 0.0,
           "n_pairs": int(n_pairs), "n_pairs_written": int(n_written),
           "n_oversized_clusters": clusters.n_oversized_clusters, "largest_clusters": list(clusters.largest),
           "decision": decision_rule(params) | score_range(decision.get("score_floor"), decision.get("score_ceiling")),
           "params": params,
           "rethreshold": {"from": (summary.get("params") or {}).get("threshold"), "seconds": round(seconds, 4)},
           "timings": {"rethreshold": round(seconds, 4), "total": round(seconds, 4)}}
    out.pop("run_id", None)
    return out


__all__ = ["SCORE_MEANINGS", "ClusterCounts", "build_summary", "decision_rule", "rethresholded", "score_range"]
