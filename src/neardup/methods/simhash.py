"""SimHash: 64-bit fingerprints of character shingles; pairs within the Hamming distance the threshold
allows, found by block tables, scored ``1 - distance / 64``.

Owns SimHash's resolved settings (Hamming distance, tables) and its keys; must not schedule work.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from neardup.candidates.buckets import pairs_from_keys
from neardup.candidates.hamming import near_bucket_pairs, table_keys, table_masks
from neardup.config import ConfigError, DedupConfig
from neardup.methods import register
from neardup.methods.base import KeyedMethod, Representation
from neardup.represent import simhash
from neardup.text.shingle import ShingleSets


@register
class SimHash(KeyedMethod):
    """Character 4-grams, one 64-bit SimHash each; candidates within ``floor((1 - threshold) * 64)`` bits.

    >>> SimHash(DedupConfig(method="simhash")).params()
    {'max_hamming': 9}
    """

    name = "simhash"
    default_threshold = 0.85
    default_score = "none"
    default_char = True
    scores_from = "sketch"
    reads_representation = True
    threshold_grid = tuple(round(float(x), 4) for x in np.arange(0.80, 0.9851, 0.015625))

    @classmethod
    def default_ngram(cls, char: bool) -> int | None:
        return 4

    @classmethod
    def check(cls, config: DedupConfig) -> None:
        if config.verify.score != "none":
            raise ConfigError(f"method simhash scores a pair by its Hamming distance: verify score must be 'none', "
                              f"got {config.verify.score!r}")

    def __init__(self, config: DedupConfig) -> None:
        super().__init__(config)
        self.max_distance = int(math.floor((1.0 - self.threshold) * simhash.BITS + 1e-9))
        self.masks = table_masks(self.max_distance, config.simhash.max_tables)

    def sketch(self, sets: ShingleSets) -> np.ndarray:
        return simhash.fingerprints(sets)

    def n_tables(self) -> int:
        return int(self.masks.size)

    def table_keys(self, rep: Representation, docs: np.ndarray, tables: range) -> np.ndarray:
        assert rep.sketch is not None
        return table_keys(np.asarray(rep.sketch[docs]), self.masks[tables.start : tables.stop])

    def bucket_pairs(self, keys: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # A table puts each document in one bucket: its pairs are distinct, the lower document first, unsorted
        # (made distinct across tables where they are combined or verified).
        return pairs_from_keys(keys, docs, unique=False)

    def table_pairs(self, rep: Representation, keys: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # Only the pairs within the distance: a table's buckets hold far more pairs than that (keys of 11-12
        # bits at distance 9: 834M pairs over 55 tables at 200k stories, 1.5 GB in one table's arrays).
        assert rep.sketch is not None
        return near_bucket_pairs(keys, docs, np.asarray(rep.sketch[docs]), self.max_distance)

    def keep_candidates(self, a: np.ndarray, b: np.ndarray, sizes_a: np.ndarray | None = None,
                        sizes_b: np.ndarray | None = None) -> np.ndarray:
        return simhash.hamming(a, b) <= self.max_distance

    def score_sketches(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return simhash.similarity(a, b)

    def params(self) -> dict[str, Any]:
        return {"max_hamming": self.max_distance}
