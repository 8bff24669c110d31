"""Quality metrics of a clustering against labels: adjusted Rand index and pairwise precision/recall/F1.

Owns the arithmetic of scoring; must not run the pipeline or read files.

Pairwise metrics count document pairs: a predicted pair is two documents in one predicted cluster,
a true pair two documents in one labelled cluster (a null label is a singleton). Everything comes
from the contingency table, so no pair list is ever built (O(n) memory).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np


def _codes(labels: Sequence[Hashable | None]) -> np.ndarray:
    """Integer codes for labels; each None becomes its own singleton code."""
    mapping: dict[Hashable, int] = {}
    out = np.empty(len(labels), dtype=np.int64)
    nxt = 0
    for i, label in enumerate(labels):
        if label is None:
            out[i] = nxt
            nxt += 1
            continue
        code = mapping.get(label)
        if code is None:
            code = mapping[label] = nxt
            nxt += 1
        out[i] = code
    return out


def _pairs(counts: np.ndarray) -> int:
    c = counts.astype(np.int64)
    return int((c * (c - 1) // 2).sum())


def contingency_pairs(pred: Sequence[Hashable | None], true: Sequence[Hashable | None]) -> tuple[int, int, int, int]:
    """(pairs in both, predicted pairs, true pairs, all pairs).

    >>> contingency_pairs([1, 1, 2, 2], [1, 1, 1, None])
    (1, 2, 3, 6)
    """
    if len(pred) != len(true):
        raise ValueError(f"pred and true differ in length: {len(pred)} != {len(true)}")
    p, t = _codes(pred), _codes(true)
    n = p.size
    if n == 0:
        return 0, 0, 0, 0
    joint = p * (int(t.max()) + 1) + t
    _, cell = np.unique(joint, return_counts=True)
    _, row = np.unique(p, return_counts=True)
    _, col = np.unique(t, return_counts=True)
    return _pairs(cell), _pairs(row), _pairs(col), n * (n - 1) // 2


def adjusted_rand_index(pred: Sequence[Hashable | None], true: Sequence[Hashable | None]) -> float:
    """Adjusted Rand index (Hubert & Arabie): 1 for identical clusterings, about 0 for chance.

    >>> adjusted_rand_index([0, 0, 1, 1], [5, 5, 7, 7])
    1.0
    >>> round(adjusted_rand_index([0, 0, 1, 2], [0, 0, 0, 1]), 4)
    0.3333
    """
    both, p, t, total = contingency_pairs(pred, true)
    if total == 0:
        return 1.0
    expected = p * t / total
    maximum = (p + t) / 2
    if maximum == expected:
        return 1.0
    return float((both - expected) / (maximum - expected))


def pairwise_scores(pred: Sequence[Hashable | None], true: Sequence[Hashable | None]) -> dict[str, float | int]:
    """Pairwise precision, recall and F1 over the duplicate pairs implied by the clusters.

    Precision is 1.0 when nothing is predicted; recall is 1.0 when there is nothing to find.

    >>> pairwise_scores([1, 1, 2, 2], [1, 1, 1, None])["precision"]
    0.5
    """
    both, p, t, _ = contingency_pairs(pred, true)
    precision = both / p if p else 1.0
    recall = both / t if t else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "n_pred_pairs": p, "n_true_pairs": t,
            "n_correct_pairs": both}


def pair_label_scores(same_cluster: Sequence[bool], labels: Sequence[int]) -> dict[str, float | int]:
    """Precision/recall/F1 over labelled pairs: ``same_cluster`` is the prediction per labelled pair.

    >>> pair_label_scores([True, True, False], [1, 0, 1])["f1"]
    0.5
    """
    pred = np.asarray(same_cluster, dtype=bool)
    gold = np.asarray(labels, dtype=bool)
    tp = int((pred & gold).sum())
    fp = int((pred & ~gold).sum())
    fn = int((~pred & gold).sum())
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "n_pred_pairs": tp + fp, "n_true_pairs": tp + fn,
            "n_correct_pairs": tp}
