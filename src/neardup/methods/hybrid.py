"""Hybrid: two views of each document, MinHash-LSH on shingles and RETSim neighbours, each candidate pair
scored by both (a linear rule, or a logistic model fitted by ``neardup tune``), clustered by Leiden.

Owns how the views' candidates are combined and the pair features and rules; must not fit the model
(:mod:`neardup.eval.tune` does) or implement either view (it holds a :class:`~neardup.methods.minhash.MinHash`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from neardup.candidates.buckets import unique_pairs
from neardup.config import DedupConfig
from neardup.methods import register
from neardup.methods.base import COMBINED_SCORE_GRID, Candidates, Representation, VectorMethod
from neardup.methods.minhash import MinHash
from neardup.represent import minhash
from neardup.text.shingle import ShingleSets
from neardup.verify.overlap import score_pairs

#: Each of the hybrid's signals alone, swept by ``neardup tune`` beside the fitted model (linear rule
#: weights: 1 = the IDF-weighted n-gram overlap, 0 = the RETSim cosine).
HYBRID_FALLBACK_WEIGHTS: tuple[float, ...] = (1.0, 0.0)


@register
class Hybrid(VectorMethod):
    """MinHash-LSH candidates plus RETSim neighbours at cosine >= ``hybrid_min_cosine``; score
    ``w * weighted overlap + (1 - w) * cosine`` or the logistic model's probability (threshold 0.6).

    >>> Hybrid(DedupConfig(method="hybrid")).params()["hybrid_rule"]
    'linear'
    """

    name = "hybrid"
    default_threshold = 0.6
    # Candidates from two sources: Leiden communities cut the chains shared boilerplate builds between
    # clusters (an aggregator's footer on copies abridged to a headline); on no benchmark set did it cost ARI.
    default_cluster = "leiden"
    chunks = True  # the learned rule uses the partial-duplicate chunk score
    threshold_grid = COMBINED_SCORE_GRID

    def __init__(self, config: DedupConfig) -> None:
        super().__init__(config)
        self.shingles = MinHash(dataclasses.replace(config, method="minhash",
                                                    minhash=dataclasses.replace(config.minhash, rule="lsh")))

    def sketch(self, sets: ShingleSets) -> np.ndarray:
        return self.shingles.sketch(sets)

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["minhash"]["algorithm"] = minhash.ALGORITHM
        return out

    def representation_key(self) -> tuple[Any, ...]:
        return (*super().representation_key(), self.shingles.num_perm, self.shingles.seed)

    def floor(self) -> float:
        return self.config.embed.hybrid_min_cosine

    def weighted(self) -> bool:
        return True

    def candidates(self, rep: Representation) -> Candidates:
        left, right = self.neighbours(rep)
        lsh = self.shingles.candidates(rep)
        left, right = unique_pairs(np.concatenate([left, lsh.left]), np.concatenate([right, lsh.right]))
        return Candidates(left, right, {})

    def overlap(self, rep: Representation, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """IDF-weighted overlap coefficient of the pairs' shingle sets."""
        weights, totals = rep.weights(self.config.verify.idf_power)
        return score_pairs(rep.sets, left, right, "weighted-overlap", weights=weights, totals=totals,
                           codes=rep.codes())

    def features(self, rep: Representation, left: np.ndarray, right: np.ndarray,
                 cosine: np.ndarray | None = None) -> np.ndarray:
        """The model's features of pairs (:data:`neardup.verify.hybrid.HYBRID_FEATURES`): weighted overlap,
        RETSim document cosine (``cosine`` if computed), partial-duplicate chunk score, length ratio."""
        from neardup.verify.cosine import cosine_scores, partial_scores
        from neardup.verify.hybrid import hybrid_features

        vectors = rep.vectors
        assert vectors is not None and vectors.chunks is not None and vectors.offsets is not None
        cos = cosine_scores(vectors.docs, left, right) if cosine is None else cosine
        return hybrid_features(self.overlap(rep, left, right), cos,
                               partial_scores(vectors.chunks, vectors.offsets, left, right), rep.lengths, left, right)

    def score(self, rep: Representation, left: np.ndarray, right: np.ndarray,
              info: dict[str, Any] | None = None) -> np.ndarray:
        from neardup.verify.cosine import cosine_scores, hybrid_scores
        from neardup.verify.hybrid import DEFAULT_HYBRID_COEF, logistic_scores

        assert rep.vectors is not None
        cosine = cosine_scores(rep.vectors.docs, left, right)
        embed = self.config.embed
        if embed.hybrid_rule == "linear":
            return hybrid_scores(self.overlap(rep, left, right), cosine, embed.hybrid_weight)
        return logistic_scores(self.features(rep, left, right, cosine=cosine), embed.hybrid_coef or DEFAULT_HYBRID_COEF)

    def views(self, rep: Representation, left: np.ndarray, right: np.ndarray,
              scores: np.ndarray) -> list[tuple[str, np.ndarray]]:
        """Both views: the shingles' IDF-weighted overlap and the RETSim document cosine."""
        from neardup.verify.cosine import cosine_scores

        assert rep.vectors is not None
        return [(self.shingles.view(), self.overlap(rep, left, right)),
                (self.encoder, cosine_scores(rep.vectors.docs, left, right))]

    def params(self) -> dict[str, Any]:
        from neardup.verify.hybrid import DEFAULT_HYBRID_COEF

        embed = self.config.embed
        rule: dict[str, Any] = ({"hybrid_rule": "linear", "hybrid_weight": embed.hybrid_weight}
                                if embed.hybrid_rule == "linear" else
                                {"hybrid_rule": "logistic", "hybrid_coef": list(embed.hybrid_coef or DEFAULT_HYBRID_COEF)})
        return {**super().params(), **self.shingles.params(), **rule}

    def fits(self) -> bool:
        return self.config.embed.hybrid_rule == "logistic"

    def fit(self, rep: Representation, left: np.ndarray, right: np.ndarray, usable: np.ndarray,
            positive: np.ndarray) -> dict[str, Any] | None:
        """For the logistic rule: its coefficients fitted on the labelled candidate pairs (``usable``, with
        ``positive`` labels), as ``DedupConfig.replace`` keywords (the defaults where the labels cannot fit one)."""
        if not self.fits():
            return None
        from neardup.verify.hybrid import DEFAULT_HYBRID_COEF, fit_logistic

        x = self.features(rep, left, right)
        coef = fit_logistic(x[usable], np.asarray(positive)[usable]) or DEFAULT_HYBRID_COEF
        return {"embed__hybrid_rule": "logistic", "embed__hybrid_coef": tuple(coef)}

    def tuning_settings(self) -> list[dict[str, Any]]:
        # the model's coefficients are fitted by the tuner (fit); then each signal alone
        return [{"embed__hybrid_rule": "logistic"}] + [
            {"embed__hybrid_rule": "linear", "embed__hybrid_weight": w} for w in HYBRID_FALLBACK_WEIGHTS]
