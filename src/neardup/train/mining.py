"""Hard-negative mining: pairs that MinHash or an encoder ranks close although their labels differ.

Owns :func:`mine_hard_negatives` (neardup's LSH with weighted overlap, or k nearest neighbours by cosine);
must not build training pairs or train models.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from neardup.io.read import Corpus

__all__ = ["MINERS", "mine_hard_negatives"]

#: The ``--mine`` choices: one miner, both (MinHash first), or none.
MINERS: tuple[str, ...] = ("minhash", "encoder", "both", "none")


def mine_hard_negatives(texts: Sequence[str], clusters: Sequence[str], method: str = "minhash", k: int = 10,
                        embeddings: np.ndarray | None = None, encode: Callable[[list[str]], np.ndarray] | None = None,
                        max_pairs: int | None = None, min_score: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs ranked close by MinHash or an encoder although their clusters differ: ``(left, right, score)``,
    closest first.

    ``minhash``: neardup's MinHash-LSH candidates (bands for Jaccard 0.1) scored by weighted overlap;
    ``encoder``: each document's ``k`` nearest neighbours by cosine, from ``embeddings`` or
    ``encode(texts)``. At most ``k`` pairs per document are kept (its closest).

    >>> t = "the council approved twelve new buses for the city on monday after a long debate"
    >>> left, right, score = mine_hard_negatives([t, t + " again", "an unrelated note about cats"], ["a", "b", "c"])
    >>> left.tolist(), right.tolist()
    ([0], [1])
    """
    n = len(texts)
    if method not in ("minhash", "encoder"):
        raise ValueError(f"mining method must be minhash or encoder, got {method!r}")
    empty = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64))
    if n < 2:
        return empty
    lab: dict[str, int] = {}
    cl = np.array([lab.setdefault(c, len(lab)) for c in clusters], dtype=np.int64)
    if method == "minhash":
        from neardup.config import DedupConfig
        from neardup.pipeline import candidate_pairs, prepare

        cfg = DedupConfig(method="minhash", threshold=0.05).replace(minhash__lsh_threshold=0.1,
                                                                   cluster__max_cluster_size=None)
        prep = prepare(Corpus(ids=[str(i) for i in range(n)], texts=list(texts)), cfg)
        left, right, scores, _ = candidate_pairs(prep, cfg)
    else:
        from neardup.candidates.vectors import knn_pairs

        emb = embeddings if embeddings is not None else (encode(list(texts)) if encode is not None else None)
        if emb is None:
            raise ValueError("encoder mining needs embeddings or an encode function")
        left, right, scores = knn_pairs(np.asarray(emb, dtype=np.float32), k=k, threshold=-1.0)
    left, right, scores = np.asarray(left, np.int64), np.asarray(right, np.int64), np.asarray(scores, np.float64)
    keep = (cl[left] != cl[right]) & (scores >= min_score)
    left, right, scores = left[keep], right[keep], scores[keep]
    order = np.lexsort((right, left, -scores))
    left, right, scores = left[order], right[order], scores[order]
    # at most k per document (counted on either end), closest first
    used = np.zeros(n, dtype=np.int64)
    sel = np.zeros(left.size, dtype=bool)
    for t in range(left.size):
        a, b = left[t], right[t]
        if used[a] < k or used[b] < k:
            sel[t] = True
            used[a] += 1
            used[b] += 1
    left, right, scores = left[sel], right[sel], scores[sel]
    if max_pairs is not None:
        left, right, scores = left[:max_pairs], right[:max_pairs], scores[:max_pairs]
    return left, right, scores
