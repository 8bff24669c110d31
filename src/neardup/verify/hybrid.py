"""The hybrid method's pair verifier: features of a candidate pair and a small logistic model over them.

Owns the feature list, the (deterministic, NumPy-only) regularised logistic regression and its scores;
must not find candidates, embed texts or choose thresholds (tuning fits the model, see :mod:`neardup.eval.tune`).

The documented rule (``hybrid_rule="logistic"``): for a candidate pair with IDF-weighted overlap
coefficient ``o``, RETSim document cosine ``c``, RETSim partial-duplicate chunk score ``p`` (mean over
the shorter text's chunks of the best cosine to a chunk of the other) and length ratio ``r`` (shorter /
longer, in characters), the score is the probability

    ``P(duplicate) = 1 / (1 + exp(-(b_o*o + b_c*c + b_p*p + b_r*r + b_0)))``

with the coefficients fitted on the validation split's candidate pairs (a pair is positive when both
documents carry the same cluster label) by L2-regularised logistic regression (penalty
``0.5 * l2 * |b|^2`` on the four weights, not on the intercept; Newton's method from zero, so the fit
is deterministic), and the threshold on the probability tuned on the same split. Cosine and partial
scores are clipped to [0, 1]. The fitted coefficients travel as ``EmbedConfig.hybrid_coef``.
"""

from __future__ import annotations

import numpy as np

# Column order of the feature matrix and of the first four coefficients (the fifth is the intercept).
HYBRID_FEATURES: tuple[str, ...] = ("weighted_overlap", "cosine", "partial", "length_ratio")
# Used when there is nothing to fit on (a validation split without positive or without negative
# candidate pairs) and for an untuned hybrid_rule="logistic": the model fitted (l2=1) on the hybrid candidate
# pairs within each half of the labelled Reuters day (reuters_days, 565 stories; benchmarks/bench_quality.py's
# halves), rounded. The IDF-weighted overlap dominates: on wire data templated notices look alike to RETSim.
DEFAULT_HYBRID_COEF: tuple[float, ...] = (5.2, 1.2, 1.5, -0.15, -6.7)
L2: float = 1.0


def hybrid_features(ngram: np.ndarray, cosine: np.ndarray, partial: np.ndarray, lengths: np.ndarray,
                    left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """The ``(n_pairs, 4)`` feature matrix in :data:`HYBRID_FEATURES` order.

    >>> hybrid_features(np.array([0.5]), np.array([1.2]), np.array([-0.1]), np.array([10, 40]),
    ...                 np.array([0]), np.array([1])).tolist()
    [[0.5, 1.0, 0.0, 0.25]]
    """
    ln = np.asarray(lengths, dtype=np.float64)
    a, b = ln[left], ln[right]
    ratio = np.minimum(a, b) / np.maximum(np.maximum(a, b), 1.0)
    return np.column_stack([np.asarray(ngram, dtype=np.float64), np.clip(cosine, 0.0, 1.0),
                            np.clip(partial, 0.0, 1.0), ratio]).reshape(-1, len(HYBRID_FEATURES))


def fit_logistic(features: np.ndarray, labels: np.ndarray, l2: float = L2, max_iter: int = 100
                 ) -> tuple[float, ...] | None:
    """Coefficients (one per feature, then the intercept) of an L2-regularised logistic regression.

    Returns ``None`` when ``labels`` hold only one class (nothing to fit). Newton's method from zero:
    the same data give the same coefficients.

    >>> x = np.array([[0.9, 0.9], [0.8, 0.95], [0.1, 0.9], [0.2, 0.3]])
    >>> coef = fit_logistic(x, np.array([1, 1, 0, 0]))
    >>> (logistic_scores(x, coef) > 0.5).tolist()
    [True, True, False, False]
    """
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    if y.size == 0 or y.min() == y.max():
        return None
    n, d = x.shape
    xb = np.hstack([x, np.ones((n, 1))])
    reg = np.full(d + 1, float(l2))
    reg[-1] = 0.0
    beta = np.zeros(d + 1)
    for _ in range(max_iter):
        p = _sigmoid(xb @ beta)
        grad = xb.T @ (p - y) + reg * beta
        hess = (xb * (p * (1.0 - p))[:, None]).T @ xb + np.diag(reg) + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-10:
            break
    return tuple(round(float(v), 6) for v in beta)


def logistic_scores(features: np.ndarray, coef: tuple[float, ...] | list[float]) -> np.ndarray:
    """``P(duplicate)`` of each row under the model ``coef`` (weights, then intercept).

    >>> logistic_scores(np.array([[1.0, 1.0, 1.0, 1.0]]), (4.0, 1.0, 1.5, 0.5, -7.0)).round(3).tolist()
    [0.5]
    """
    c = np.asarray(coef, dtype=np.float64)
    x = np.asarray(features, dtype=np.float64)
    if c.size != x.shape[1] + 1:
        raise ValueError(f"hybrid_coef needs {x.shape[1] + 1} numbers ({', '.join(HYBRID_FEATURES)}, intercept), "
                         f"got {c.size}")
    return _sigmoid(x @ c[:-1] + c[-1])


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -35.0, 35.0)))


__all__ = ["DEFAULT_HYBRID_COEF", "HYBRID_FEATURES", "fit_logistic", "hybrid_features", "logistic_scores"]
