"""Candidate pairs by exact shingle sharing: an inverted index from shingle to documents.

Owns the ``ngram`` method's candidate step; must not compute the final similarity (see verify/).

Every pair of documents that shares at least ``min_shared`` shingles is a candidate, except that
shingles held by more than ``max_df`` documents (boilerplate, templates, stock phrases) are left out
of the index: they would generate a quadratic number of pairs and are weak evidence. The verified
score still counts them, so skipping only affects which pairs get looked at.
"""

from __future__ import annotations

import numpy as np

from neardup.candidates.buckets import count_pairs, pairs_from_keys
from neardup.text.shingle import ShingleSets


def shared_shingle_pairs(sets: ShingleSets, max_df: int = 500, min_shared: int = 1
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs that share at least ``min_shared`` indexed shingles, with the number shared.

    >>> from neardup.text.shingle import ShingleConfig, shingle_many
    >>> sets = shingle_many(["a b c d", "a b c e", "x y z"], ShingleConfig(n=3))
    >>> l, r, c = shared_shingle_pairs(sets)
    >>> list(zip(l.tolist(), r.tolist(), c.tolist()))
    [(0, 1, 1)]
    """
    left, right = pairs_from_keys(sets.values, sets.doc_index, max_group=max_df, unique=False)
    left, right, counts = count_pairs(left, right)
    keep = counts >= min_shared
    return left[keep], right[keep], counts[keep]
