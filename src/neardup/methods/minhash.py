"""MinHash: shingles, seeded MinHash signatures, LSH bands (or the k-hashes / c-collisions rule), and an
exact (by default IDF-weighted overlap) score of every candidate: neardup's default method.

Owns MinHash's settings resolved once (bands and rows, collision count), its keys and bucket rules; must
not schedule work or compute signatures itself (:mod:`neardup.represent.minhash`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from neardup.candidates.lsh import band_bucket_pairs, band_keys, collision_bucket_pairs, lsh_plan
from neardup.config import DedupConfig
from neardup.methods import register
from neardup.methods.base import KeyedMethod, Representation
from neardup.represent import minhash
from neardup.text.shingle import ShingleSets

#: Jaccard levels ``neardup tune`` derives LSH bands for, and collision counts (as fractions of num_perm).
LSH_THRESHOLDS: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
MIN_COLLISIONS_FRACTIONS: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5)


def default_min_collisions(threshold: float, num_perm: int) -> int:
    """Collision count of ``rule="collisions"`` when none is given: half the expected count at the threshold.

    >>> default_min_collisions(0.5, 128)
    32
    """
    return max(2, int(round(0.5 * threshold * num_perm)))


@register
class MinHash(KeyedMethod):
    """Word 4-grams (by default), 128 MinHash permutations, LSH bands derived for Jaccard 0.2, candidates
    verified by the IDF-weighted overlap coefficient at 0.45.

    >>> m = MinHash(DedupConfig())
    >>> m.params(), m.n_tables()
    ({'bands': 28, 'rows': 2}, 28)
    >>> MinHash(DedupConfig().replace(minhash__rule="collisions")).params()
    {'min_collisions': 29}
    """

    name = "minhash"
    default_threshold = 0.45

    def __init__(self, config: DedupConfig) -> None:
        super().__init__(config)
        mh = config.minhash
        self.num_perm, self.seed, self.rule, self.max_bucket = mh.num_perm, mh.seed, mh.rule, mh.max_bucket
        self.bands = self.rows = 0
        if mh.rule == "lsh":
            self.bands, self.rows = lsh_plan(mh, self.threshold)
        else:
            self.min_shared = mh.min_collisions or default_min_collisions(self.threshold, mh.num_perm)
            self.max_key_docs = mh.max_bucket
        self.scores_from = "sketch" if self.score_name == "none" else "sets"

    def sketch(self, sets: ShingleSets) -> np.ndarray:
        return minhash.signatures(sets, self.num_perm, self.seed)

    def representation_key(self) -> tuple[Any, ...]:
        return (*super().representation_key(), self.num_perm, self.seed)

    def n_tables(self) -> int:
        return self.bands if self.rule == "lsh" else self.num_perm

    def table_keys(self, rep: Representation, docs: np.ndarray, tables: range) -> np.ndarray:
        assert rep.sketch is not None
        t0, t1 = tables.start, tables.stop
        if self.rule == "lsh":
            return band_keys(np.asarray(rep.sketch[docs, t0 * self.rows : t1 * self.rows]), t1 - t0, self.rows,
                             first_band=t0)
        return np.asarray(rep.sketch[docs, t0:t1]).astype(np.uint64)

    def bucket_pairs(self, keys: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.rule == "lsh":
            return band_bucket_pairs(keys, docs, self.max_bucket)
        return collision_bucket_pairs(keys, docs, self.max_bucket)

    def score_sketches(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.mean(a == b, axis=1)

    def params(self) -> dict[str, Any]:
        if self.rule == "lsh":
            return {"bands": self.bands, "rows": self.rows}
        return {"min_collisions": self.min_shared}

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["minhash"]["algorithm"] = minhash.ALGORITHM
        return out

    def tuning_settings(self) -> list[dict[str, Any]]:
        if self.config.minhash.bands is not None:
            return [{}]
        settings: list[dict[str, Any]] = [{"minhash__rule": "lsh", "minhash__lsh_threshold": t} for t in LSH_THRESHOLDS]
        counts = sorted({max(2, int(round(f * self.num_perm))) for f in MIN_COLLISIONS_FRACTIONS})
        return settings + [{"minhash__rule": "collisions", "minhash__min_collisions": c} for c in counts]
