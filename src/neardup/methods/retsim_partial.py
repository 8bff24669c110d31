"""RETSim partial duplicates: a document is a near-copy of another when each of its 512-character chunks
has a close chunk there (abridged copies, excerpts).

Owns the chunk-level candidate rule and score; must not load models or search vectors itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from neardup.candidates.buckets import unique_pairs
from neardup.methods import register
from neardup.methods.base import Candidates, Representation, VectorMethod


@register
class RETSimPartial(VectorMethod):
    """Document and chunk neighbours (cosine >= threshold - 0.1), scored by the mean over the shorter
    document's chunks of their best cosine to a chunk of the other."""

    name = "retsim-partial"
    default_threshold = 0.9
    chunks = True

    def floor(self) -> float:
        return self.threshold - 0.1  # a chunk-level match may show before the document-level one

    def candidates(self, rep: Representation) -> Candidates:
        from neardup.candidates.vectors import partial_pairs

        assert rep.vectors is not None and rep.vectors.chunks is not None and rep.vectors.offsets is not None
        left, right = self.neighbours(rep)
        pl, pr, _ = partial_pairs(rep.vectors.chunks, rep.vectors.offsets, chunk_threshold=self.floor(),
                                  k=self.config.embed.k, index=self.config.embed.index)
        left, right = unique_pairs(np.concatenate([left, pl]), np.concatenate([right, pr]))
        return Candidates(left, right, {})

    def score(self, rep: Representation, left: np.ndarray, right: np.ndarray,
              info: dict[str, Any] | None = None) -> np.ndarray:
        from neardup.verify.cosine import partial_scores

        assert rep.vectors is not None and rep.vectors.chunks is not None and rep.vectors.offsets is not None
        return partial_scores(rep.vectors.chunks, rep.vectors.offsets, left, right)
