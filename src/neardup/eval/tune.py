"""Threshold tuning the NEWS-COPY way: sweep one method's settings on a validation set, report the best on a
test set.

Owns the sweep of one method and the choice of its setting; must not implement stages or metrics. What is
searched is the method's: its thresholds (``threshold_grid``) and candidate-rule settings
(``tuning_settings``). The search of the whole configuration (representation, score, clustering too)
that ``neardup tune`` runs is :mod:`neardup.eval.search`, which re-uses this module's pieces.

A rule whose candidates pass the cap (``minhash.max_candidates_per_doc``) is left out. The representation
is computed once per data set; for each candidate-rule setting (for MinHash:
LSH bands derived from several LSH thresholds, and the k-hashes/c-collisions rule at several c) the
candidate pairs are found and scored once, then every verification threshold is a cheap filter
followed by clustering and scoring. The best setting maximises validation ARI (ties: F1, then the preferred
setting, then the higher threshold); it is then run, unchanged, on the test set. For ``hybrid`` the candidate pairs'
features are computed once and a logistic model over them is fitted on the validation split's labels
(:mod:`neardup.verify.hybrid`); the threshold is then swept over its probability. Two fallbacks are swept
beside it, each one of the hybrid's signals alone on the same candidates (the linear rule at weight 1,
IDF-weighted n-gram overlap, and at weight 0, RETSim cosine): the fitted model maximises likelihood, not
ARI, and on a small validation split one signal alone can cluster better. The model wins ties.
Any other method that fits settings on labels says so (:meth:`~neardup.methods.base.Method.fits`) and
is fitted the same way through :meth:`~neardup.methods.base.Method.fit` (``multiview``: its logistic
model, swept beside its label-free rule and each of its views alone on the same candidates).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from neardup import methods
from neardup.calibrate import resolve
from neardup.cluster import cluster_pairs, passes
from neardup.config import ConfigError, DedupConfig
from neardup.eval.evaluate import LabelledData, evaluate, score
from neardup.pipeline import Prepared, candidate_pairs, prepare
from neardup.progress import progress_bar
from neardup.results import DedupResult

def default_grid(method: str) -> list[float]:
    """The thresholds swept for a method (its class's ``threshold_grid``).

    >>> default_grid("simhash")[:2]
    [0.8, 0.8156]
    """
    return list(methods.method_class(method).threshold_grid)


#: Every method's threshold grid, by name.
DEFAULT_GRIDS: dict[str, list[float]] = {name: default_grid(name) for name in methods.names()}
# Short names of swept settings in ``params`` -> the DedupConfig.replace key they set.
PARAM_KEYS: dict[str, str] = {"rule": "minhash__rule", "lsh_threshold": "minhash__lsh_threshold",
                              "min_collisions": "minhash__min_collisions", "hybrid_weight": "embed__hybrid_weight",
                              "hybrid_rule": "embed__hybrid_rule", "hybrid_coef": "embed__hybrid_coef",
                              "rerank_floor": "embed__rerank_floor", "combine": "multiview__combine",
                              "views": "multiview__views", "coef": "multiview__coef"}


@dataclass(frozen=True)
class Trial:
    """One point of the sweep: the setting, its validation metrics, and its rank among equally good
    settings (``preference``: higher wins a tie in ARI and F1, before the threshold is looked at)."""

    params: dict[str, Any]
    metrics: dict[str, Any]
    preference: int = 0


def candidate_settings(base: DedupConfig) -> list[dict[str, Any]]:
    """The candidate-rule settings swept for a method (as ``DedupConfig.replace`` keywords): the method's own
    :meth:`~neardup.methods.base.Method.tuning_settings`.

    >>> len(candidate_settings(DedupConfig(method="ngram")))
    1
    """
    return methods.get(base).tuning_settings()


def sweep(data: LabelledData, base: DedupConfig, thresholds: list[float] | None = None,
          progress: bool = False, prep: Prepared | None = None) -> list[Trial]:
    """Every (setting, threshold) on ``data`` with its metrics, computing each candidate set once."""
    grid = sorted(thresholds or default_grid(base.method))
    prep = prep or prepare(data.corpus, base, progress=progress)
    trials: list[Trial] = []
    settings = candidate_settings(base)
    bar = progress_bar(progress, total=len(settings) * len(grid), desc="tuning", unit="trial", leave=False)
    for setting in settings:
        loosest = base.replace(threshold=grid[0], **setting)
        t0 = time.perf_counter()
        preference = 0
        try:
            if methods.get(loosest).fits():  # a model fitted on this split's labelled pairs (hybrid's, multiview's)
                method = methods.get(loosest).plan(prep.rep)
                left, right, _ = method.candidates(prep.rep)
                fitted = method.fit(prep.rep, left, right, *pair_labels(data, left, right)) or {}
                setting = {**setting, **fitted}
                scores = methods.get(loosest.replace(**fitted)).plan(prep.rep).score(prep.rep, left, right)
                preference = 1
            else:
                left, right, scores, _ = candidate_pairs(prep, loosest)
        except ConfigError:  # a rule over the candidate cap (e.g. few collisions on character shingles)
            bar.update(len(grid))
            continue
        seconds = time.perf_counter() - t0 + sum(prep.timings.values())
        for t in grid:
            keep = passes(scores, t)
            clusters = cluster_pairs(len(data.corpus), left[keep], right[keep], scores[keep], prep.lengths,
                                     base.cluster, threshold=t)
            result = DedupResult(ids=data.corpus.ids, clusters=clusters, left=left[keep], right=right[keep],
                                 scores=scores[keep], summary={})
            metrics = score(result, data)
            metrics.update(n_docs=len(data.corpus), seconds=round(seconds, 4))
            params = {"threshold": t, **{k.split("__", 1)[-1]: v for k, v in setting.items()}}
            trials.append(Trial(params=params, metrics=metrics, preference=preference))
            bar.update(1)
    bar.close()
    return trials


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


#: Fewer true duplicate pairs than this in a split: its figures are warned about (they swing with a pair or two).
FEW_TRUE_PAIRS = 30


def true_pairs(data: LabelledData) -> int:
    """The true duplicate pairs of a split: its positive labelled pairs, or the pairs inside its clusters."""
    if data.pairs is not None:
        return sum(1 for _, _, label in data.pairs if label == 1)
    from collections import Counter

    sizes = Counter(x for x in (data.corpus.labels or []) if x is not None).values()
    return sum(n * (n - 1) // 2 for n in sizes)


def data_warnings(data: LabelledData, split: str) -> list[str]:
    """What makes a split unfit to choose a setting on, or to report one: no true duplicate pair (every
    threshold then scores alike, and the choice says nothing), or fewer than :data:`FEW_TRUE_PAIRS` (its
    figures swing with a pair or two).

    >>> from neardup.io.read import read_records
    >>> c = read_records([{"id": "a", "text": "x", "cluster": "1"}, {"id": "b", "text": "y", "cluster": "2"}],
    ...                  label_field="cluster")
    >>> data_warnings(LabelledData(corpus=c), "validation")
    ['the validation set has no true duplicate pair: every setting scores alike there, so the chosen one is arbitrary']
    """
    positives = true_pairs(data)
    if not positives:
        return [(f"the {split} set has no true duplicate pair: every setting scores alike there, so the chosen one "
                 "is arbitrary")]
    if positives < FEW_TRUE_PAIRS:
        return [(f"the {split} set has only {positives} true duplicate pair{'s' if positives != 1 else ''}: its "
                 f"figures (ARI, F1) move a lot with each pair; label at least {FEW_TRUE_PAIRS}")]
    return []


def split_warnings(validation: LabelledData, test: LabelledData | None) -> list[str]:
    """What makes a tuning's figures unfit to report: :func:`data_warnings` of each split, and a test set
    that is the validation set (its figures then measure the fit, not the choice).

    >>> from neardup.io.read import read_records
    >>> c = read_records([{"id": "a", "text": "x", "cluster": "1"}, {"id": "b", "text": "x", "cluster": "1"}],
    ...                  label_field="cluster")
    >>> split_warnings(LabelledData(corpus=c), LabelledData(corpus=c))[-1][:50]
    'the test set is the validation set: its figures sa'
    """
    out = data_warnings(validation, "validation")
    if test is None:
        return out
    if test is validation or (test.corpus.ids == validation.corpus.ids and test.corpus.texts == validation.corpus.texts
                              and test.corpus.labels == validation.corpus.labels and test.pairs == validation.pairs):
        return out + ["the test set is the validation set: its figures say how well the choice fits the data it was "
                      "chosen on, not how well it does on new data; give a test set of its own"]
    return out + data_warnings(test, "test")


def tune(validation: LabelledData, test: LabelledData | None, base: DedupConfig,
         thresholds: list[float] | None = None, progress: bool = False) -> dict[str, Any]:
    """Pick the best setting on ``validation`` and report it on ``test``.

    Returns ``params`` (the chosen setting), ``chosen`` (its whole :class:`DedupConfig`, e.g. for
    :func:`neardup.io.config_file.save_config`), ``validation`` and ``test`` metrics (as :func:`evaluate`),
    ``warnings`` (:func:`data_warnings` of the validation set) and ``trials`` (every point of the sweep,
    for plots).
    """
    t0 = time.perf_counter()
    base = resolve(base, validation.corpus.texts)
    prep = prepare(validation.corpus, base, progress=progress)
    trials = sweep(validation, base, thresholds, progress=progress, prep=prep)
    best = best_trial(trials)
    chosen = config_for(base, best.params)
    val_metrics = evaluate(validation, chosen, prepared=prep)
    out: dict[str, Any] = {
        "method": base.method,
        "params": best.params,
        "chosen": chosen,
        "validation": val_metrics,
        "test": evaluate(test, chosen) if test is not None else None,
        "warnings": data_warnings(validation, "validation"),
        "n_trials": len(trials),
        "seconds": round(time.perf_counter() - t0, 3),
        "trials": [{**tr.params, **{k: tr.metrics[k] for k in ("ari", "precision", "recall", "f1")}}
                   for tr in trials],
    }
    return out
