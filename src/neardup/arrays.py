"""Array operations every stage shares where NumPy's own is slow on this work's arrays.

Owns :func:`distinct`, :func:`ranges` and :func:`offsets`; must not know what the arrays hold (documents,
pairs, shingles) nor import any other part of neardup.

NumPy 2.3 on makes ``np.unique(a)`` (no ``return_*``) hash the values into a ``std::unordered_set`` and sort
what is left: on 100k-10M integers of many distinct values (candidate codes, document indices, shingle
hashes) that is 20-40x slower than sorting them with its SIMD sort (10M int64: 9.2 against 0.24 s on this
machine; numpy/numpy#31969). ``np.unique`` with ``return_counts`` (or another ``return_*``) still sorts.
"""

from __future__ import annotations

import numpy as np


def distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of an integer or boolean array, flattened: ``np.unique(values)``, by one sort
    (other kinds, where NaN is its own rule, by ``np.unique``).

    >>> distinct(np.array([5, 3, 5, 9, 3])).tolist(), distinct(np.array([], dtype=np.int64)).tolist()
    ([3, 5, 9], [])
    """
    a = np.asarray(values)
    if a.dtype.kind not in "biu":
        return np.unique(a)
    a = np.sort(a, axis=None)
    if a.size < 2:
        return a
    first = np.empty(a.size, dtype=bool)
    first[0] = True
    np.not_equal(a[1:], a[:-1], out=first[1:])
    return a[first]


def ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Every position of the ranges ``[starts[i], starts[i] + counts[i])``, range after range (the values of some
    documents of a CSR array, the grams of each text, the rows of some spans).

    >>> ranges(np.array([5, 0, 9]), np.array([2, 0, 3])).tolist()
    [5, 6, 9, 10, 11]
    """
    starts, counts = np.asarray(starts, dtype=np.int64), np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    return np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(total)


def offsets(sizes: np.ndarray) -> np.ndarray:
    """The CSR offsets of rows ``sizes`` long, one after the other: 0, then each row's end.

    >>> offsets(np.array([2, 0, 3])).tolist()
    [0, 2, 2, 5]
    """
    sizes = np.asarray(sizes)
    out = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=out[1:])
    return out


__all__ = ["distinct", "offsets", "ranges"]
