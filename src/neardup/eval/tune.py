"""Threshold tuning the NEWS-COPY way: sweep settings on a validation set, report the best on a test set.

Owns the search grid and the choice of setting; must not implement stages or metrics.

The representation is computed once per data set; for each candidate-rule setting (for MinHash:
LSH bands derived from several LSH thresholds, and the k-hashes/c-collisions rule at several c) the
candidate pairs are found and scored once, then every verification threshold is a cheap filter
followed by clustering and scoring. The best setting maximises validation ARI (ties: F1, then the preferred
setting, then the higher threshold); it is then run, unchanged, on the test set. For ``hybrid`` the candidate pairs'
features are computed once and a logistic model over them is fitted on the validation split's labels
(:mod:`neardup.verify.hybrid`); the threshold is then swept over its probability. Two fallbacks are swept
beside it, each one of the hybrid's signals alone on the same candidates (the linear rule at weight 1,
IDF-weighted n-gram overlap, and at weight 0, RETSim cosine): the fitted model maximises likelihood, not
ARI, and on a small validation split one signal alone can cluster better. The model wins ties.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from neardup.cluster import cluster_pairs
from neardup.config import DedupConfig
from neardup.eval.evaluate import LabelledData, evaluate, score
from neardup.pipeline import DedupResult, Prepared, candidate_pairs, hybrid_pair_features, prepare

DEFAULT_GRIDS: dict[str, list[float]] = {
    # Heavy OCR noise pushes the best n-gram threshold very low, so the grid starts at 0.01.
    "minhash": [0.01, 0.02, 0.03, 0.04] + [round(float(x), 3) for x in np.arange(0.05, 0.951, 0.025)],
    "ngram": [0.01, 0.02, 0.03, 0.04] + [round(float(x), 3) for x in np.arange(0.05, 0.951, 0.025)],
    "simhash": [round(float(x), 4) for x in np.arange(0.80, 0.9851, 0.015625)],
    "retsim": [round(float(x), 3) for x in np.arange(0.50, 0.9951, 0.01)],
    "retsim-partial": [round(float(x), 3) for x in np.arange(0.50, 0.9951, 0.01)],
    "biencoder": [round(float(x), 3) for x in np.arange(0.50, 0.9951, 0.01)],
    # hybrid: thresholds on the fitted model's probability; few positive pairs (a real wire day) give
    # low probabilities, so the grid reaches 0.01.
    "hybrid": [0.01, 0.02, 0.03, 0.04] + [round(float(x), 3) for x in np.arange(0.05, 0.951, 0.025)]
              + [0.96, 0.97, 0.98, 0.99],
    "rerank": [round(float(x), 3) for x in np.arange(0.05, 0.9951, 0.025)],
}
# Short names of swept settings in ``params`` -> the DedupConfig.replace key they set.
PARAM_KEYS: dict[str, str] = {"rule": "minhash__rule", "lsh_threshold": "minhash__lsh_threshold",
                              "min_collisions": "minhash__min_collisions", "hybrid_weight": "embed__hybrid_weight",
                              "hybrid_rule": "embed__hybrid_rule", "hybrid_coef": "embed__hybrid_coef",
                              "rerank_floor": "embed__rerank_floor"}
LSH_THRESHOLDS: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
# Method rerank: bi-encoder cosine floors swept (those >= the configured rerank_floor, loosest first, so the
# cross-encoder scores every candidate once and the tighter floors re-use them).
RERANK_FLOORS: tuple[float, ...] = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.92, 0.94, 0.96)
MIN_COLLISIONS_FRACTIONS: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5)


# Method hybrid: its signals alone, swept beside the fitted model (linear rule weights: 1 = n-gram overlap, 0 = cosine).
HYBRID_FALLBACK_WEIGHTS: tuple[float, ...] = (1.0, 0.0)


@dataclass(frozen=True)
class Trial:
    """One point of the sweep: the setting, its validation metrics, and its rank among equally good
    settings (``preference``: higher wins a tie in ARI and F1, before the threshold is looked at)."""

    params: dict[str, Any]
    metrics: dict[str, Any]
    preference: int = 0


def candidate_settings(base: DedupConfig) -> list[dict[str, Any]]:
    """The candidate-rule settings swept for a method (as ``DedupConfig.replace`` keywords).

    >>> len(candidate_settings(DedupConfig(method="ngram")))
    1
    """
    if base.method == "hybrid":  # the model's coefficients are fitted in sweep(); then each signal alone
        return [{"embed__hybrid_rule": "logistic"}] + [
            {"embed__hybrid_rule": "linear", "embed__hybrid_weight": w} for w in HYBRID_FALLBACK_WEIGHTS]
    if base.method == "rerank":
        floors = [f for f in RERANK_FLOORS if f > base.embed.rerank_floor + 1e-9]
        return [{"embed__rerank_floor": f} for f in [base.embed.rerank_floor, *floors]]
    if base.method != "minhash" or base.minhash.bands is not None:
        return [{}]
    k = base.minhash.num_perm
    settings: list[dict[str, Any]] = [{"minhash__rule": "lsh", "minhash__lsh_threshold": t} for t in LSH_THRESHOLDS]
    counts = sorted({max(2, int(round(f * k))) for f in MIN_COLLISIONS_FRACTIONS})
    settings += [{"minhash__rule": "collisions", "minhash__min_collisions": c} for c in counts]
    return settings


def sweep(data: LabelledData, base: DedupConfig, thresholds: list[float] | None = None,
          progress: bool = False, prep: Prepared | None = None) -> list[Trial]:
    """Every (setting, threshold) on ``data`` with its metrics, computing each candidate set once."""
    grid = sorted(thresholds or DEFAULT_GRIDS[base.method])
    prep = prep or prepare(data.corpus, base, progress=progress)
    trials: list[Trial] = []
    settings = candidate_settings(base)
    bar = tqdm(total=len(settings) * len(grid), desc="tuning", unit="trial", disable=not progress, leave=False)
    for setting in settings:
        loosest = base.replace(threshold=grid[0], **setting)
        t0 = time.perf_counter()
        preference = 0
        if loosest.method == "hybrid" and loosest.embed.hybrid_rule == "logistic":
            left, right, scores, setting = _fit_hybrid(prep, data, loosest)
            preference = 1
        else:
            left, right, scores, info = candidate_pairs(prep, loosest)
        seconds = time.perf_counter() - t0 + sum(prep.timings.values())
        for t in grid:
            keep = scores >= t - 1e-12
            clusters = cluster_pairs(len(data.corpus), left[keep], right[keep], scores[keep], prep.lengths,
                                     base.cluster)
            result = DedupResult(ids=data.corpus.ids, clusters=clusters, left=left[keep], right=right[keep],
                                 scores=scores[keep], summary={})
            metrics = score(result, data)
            metrics.update(n_docs=len(data.corpus), seconds=round(seconds, 4))
            params = {"threshold": t, **{k.split("__", 1)[-1]: v for k, v in setting.items()}}
            trials.append(Trial(params=params, metrics=metrics, preference=preference))
            bar.update(1)
    bar.close()
    return trials


def _fit_hybrid(prep: Prepared, data: LabelledData, config: DedupConfig
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """Hybrid candidates scored by a logistic model fitted on ``data``'s labels; the setting carries its coefficients."""
    from neardup.verify.hybrid import DEFAULT_HYBRID_COEF, fit_logistic, logistic_scores

    # candidates do not depend on the rule; the linear rule finds them without the partial score
    left, right, _, _ = candidate_pairs(prep, config.replace(embed__hybrid_rule="linear"))
    features = hybrid_pair_features(prep, config, left, right)
    usable, y = pair_labels(data, left, right)
    coef = fit_logistic(features[usable], y[usable]) or DEFAULT_HYBRID_COEF
    return left, right, logistic_scores(features, coef), {"embed__hybrid_rule": "logistic",
                                                           "embed__hybrid_coef": tuple(coef)}


def pair_labels(data: LabelledData, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(usable, positive)`` per pair: cluster labels label every pair (same non-empty label = positive);
    pair-labelled data label only the pairs it lists.

    >>> from neardup.io.read import read_records
    >>> c = read_records([{"id": str(i), "text": "x", "cluster": c} for i, c in enumerate(["a", "a", None, None])],
    ...                  label_field="cluster")
    >>> pair_labels(LabelledData(c), np.array([0, 2]), np.array([1, 3]))[1].tolist()
    [True, False]
    """
    if data.pairs is None:
        labels = data.corpus.labels
        assert labels is not None
        pos = np.fromiter((labels[a] is not None and labels[a] == labels[b]
                           for a, b in zip(left.tolist(), right.tolist())), dtype=bool, count=left.size)
        return np.ones(left.size, dtype=bool), pos
    index = {doc_id: i for i, doc_id in enumerate(data.corpus.ids)}
    gold = {}
    for x, y, lab in data.pairs:
        a, b = index[x], index[y]
        gold[(min(a, b), max(a, b))] = bool(lab)
    keys = [(min(a, b), max(a, b)) for a, b in zip(left.tolist(), right.tolist())]
    usable = np.fromiter((k in gold for k in keys), dtype=bool, count=len(keys))
    pos = np.fromiter((gold.get(k, False) for k in keys), dtype=bool, count=len(keys))
    return usable, pos


def best_trial(trials: list[Trial]) -> Trial:
    """Highest ARI, then F1, then the preferred setting, then the higher (more conservative) threshold.

    >>> best_trial([Trial({"threshold": 0.5}, {"ari": 0.8, "f1": 0.7}),
    ...             Trial({"threshold": 0.6}, {"ari": 0.8, "f1": 0.7})]).params["threshold"]
    0.6
    """
    return max(trials, key=lambda tr: (round(tr.metrics["ari"], 12), round(tr.metrics["f1"], 12),
                                       tr.preference, tr.params["threshold"]))


def config_for(base: DedupConfig, params: dict[str, Any]) -> DedupConfig:
    """The full config of a tuned setting.

    >>> config_for(DedupConfig(), {"threshold": 0.4, "rule": "collisions", "min_collisions": 8}).minhash.rule
    'collisions'
    """
    changes: dict[str, Any] = {"threshold": params["threshold"]}
    for key, value in params.items():
        if key != "threshold":
            changes[PARAM_KEYS[key]] = value
    return base.replace(**changes)


def tune(validation: LabelledData, test: LabelledData | None, base: DedupConfig,
         thresholds: list[float] | None = None, progress: bool = False) -> dict[str, Any]:
    """Pick the best setting on ``validation`` and report it on ``test``.

    Returns ``params`` (the chosen setting), ``validation`` and ``test`` metrics (as :func:`evaluate`),
    and ``trials`` (every point of the sweep, for plots).
    """
    t0 = time.perf_counter()
    prep = prepare(validation.corpus, base, progress=progress)
    trials = sweep(validation, base, thresholds, progress=progress, prep=prep)
    best = best_trial(trials)
    chosen = config_for(base, best.params)
    val_metrics = evaluate(validation, chosen, prepared=prep)
    out: dict[str, Any] = {
        "method": base.method,
        "params": best.params,
        "validation": val_metrics,
        "test": evaluate(test, chosen) if test is not None else None,
        "n_trials": len(trials),
        "seconds": round(time.perf_counter() - t0, 3),
        "trials": [{**tr.params, **{k: tr.metrics[k] for k in ("ari", "precision", "recall", "f1")}}
                   for tr in trials],
    }
    return out
