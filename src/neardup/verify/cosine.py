"""Scores of candidate pairs from embeddings: cosine, partial-duplicate (chunk) score, hybrid score.

Owns scoring pairs from vectors; must not search for neighbours or cluster.
"""

from __future__ import annotations

import numpy as np


def cosine_scores(emb: np.ndarray, left: np.ndarray, right: np.ndarray, block: int = 65536) -> np.ndarray:
    """Cosine of each pair of L2-normalised rows (0 for a zero row).

    >>> e = np.array([[1, 0], [0.6, 0.8]], dtype=np.float32)
    >>> cosine_scores(e, np.array([0]), np.array([1])).round(3).tolist()
    [0.6]
    """
    out = np.empty(left.size, dtype=np.float64)
    for lo in range(0, left.size, block):
        a, b = emb[left[lo : lo + block]], emb[right[lo : lo + block]]
        out[lo : lo + block] = np.einsum("ij,ij->i", a, b)
    return out


def partial_scores(chunks: np.ndarray, offsets: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """For each pair, the mean over the shorter document's chunks of the best cosine to a chunk of the other.

    An abridged copy whose every chunk appears in the full story scores about 1.0; a document
    without chunks (empty) scores 0.

    >>> c = np.eye(3, dtype=np.float32); c[2] = c[0]
    >>> partial_scores(c, np.array([0, 2, 3]), np.array([0]), np.array([1])).tolist()
    [1.0]
    """
    out = np.zeros(left.size, dtype=np.float64)
    counts = np.diff(offsets)
    for k, (a, b) in enumerate(zip(left.tolist(), right.tolist())):
        if counts[a] == 0 or counts[b] == 0:
            continue
        if counts[a] > counts[b]:
            a, b = b, a
        sims = chunks[offsets[a] : offsets[a + 1]] @ chunks[offsets[b] : offsets[b + 1]].T
        out[k] = float(sims.max(axis=1).mean())
    return out


def hybrid_scores(ngram: np.ndarray, cosine: np.ndarray, weight: float) -> np.ndarray:
    """``weight * ngram + (1 - weight) * cosine``: the hybrid method's documented rule.

    >>> hybrid_scores(np.array([0.2]), np.array([0.9]), 0.5).tolist()
    [0.55]
    """
    return weight * ngram + (1.0 - weight) * np.clip(cosine, 0.0, 1.0)
