"""Re-rank: bi-encoder neighbours (a loose cosine floor), each pair scored by a cross-encoder trained with
``neardup train crossencoder``; the threshold applies to its duplicate probability.

Owns the two-stage rule and its settings; must not load models itself (:mod:`neardup.verify.crossencoder`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from neardup.config import ConfigError, DedupConfig
from neardup.methods import register
from neardup.methods.base import Representation, VectorMethod

#: Bi-encoder cosine floors ``neardup tune`` sweeps (those >= the configured floor, loosest first, so the
#: cross-encoder scores every candidate once and the tighter floors re-use its scores).
RERANK_FLOORS: tuple[float, ...] = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.92, 0.94, 0.96)


@register
class Rerank(VectorMethod):
    """Bi-encoder candidates at cosine >= ``rerank_floor`` (0.8), cross-encoder probability >= threshold (0.5)."""

    name = "rerank"
    default_threshold = 0.5
    encoder = "biencoder"
    needs_texts = True
    threshold_grid = tuple(round(float(x), 3) for x in np.arange(0.05, 0.9951, 0.025))

    @classmethod
    def check(cls, config: DedupConfig) -> None:
        if not config.embed.cross_model:
            raise ConfigError("method rerank needs a cross-encoder: cross_model (--cross-model DIR, "
                              "from `neardup train crossencoder`)")

    def floor(self) -> float:
        return self.config.embed.rerank_floor  # loose first stage; the threshold applies to the cross-encoder

    def score(self, rep: Representation, left: np.ndarray, right: np.ndarray,
              info: dict[str, Any] | None = None) -> np.ndarray:
        from neardup.verify.crossencoder import rerank_scores

        assert rep.texts is not None
        return rerank_scores(rep.texts, left, right, self.config.embed.cross_model, info=info)

    def views(self, rep: Representation, left: np.ndarray, right: np.ndarray,
              scores: np.ndarray) -> list[tuple[str, np.ndarray]]:
        """Both stages: the bi-encoder cosine that made the pair a candidate, the cross-encoder's probability."""
        from neardup.verify.cosine import cosine_scores

        assert rep.vectors is not None
        return [(self.encoder, cosine_scores(rep.vectors.docs, left, right)), ("cross-encoder", scores)]

    def params(self) -> dict[str, Any]:
        return {**super().params(), "rerank_floor": self.config.embed.rerank_floor}

    def tuning_settings(self) -> list[dict[str, Any]]:
        floor = self.config.embed.rerank_floor
        return [{"embed__rerank_floor": f} for f in [floor, *(f for f in RERANK_FLOORS if f > floor + 1e-9)]]
