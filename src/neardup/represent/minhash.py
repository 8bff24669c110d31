"""MinHash signatures of shingle sets, computed for many documents at once by rensa's Rust kernel.

Owns the hash family and signatures; must not decide which pairs are candidates (see candidates/).

The shingles are already 64-bit hashes (see :mod:`neardup.text.shingle`); ``rensa`` (a Rust MinHash
library) turns the flat CSR buffer of them into one ``(n, num_perm)`` uint32 matrix in a single call,
with ``num_perm`` seeded permutations, so signatures are reproducible across runs and machines for a
given rensa algorithm version (:data:`ALGORITHM`; recorded with every run's parameters). An empty set
gets the all-ones signature and is flagged by :func:`empty_rows`.
"""

from __future__ import annotations

import gc
import itertools

import numpy as np
from rensa import RMinHash, RMinHashDigestMatrix

from neardup.text.shingle import ShingleSets

EMPTY_VALUE = np.uint32(0xFFFFFFFF)
ALGORITHM = f"rensa-rminhash-v{RMinHash.ALGORITHM_VERSION}"


def signatures(sets: ShingleSets, num_perm: int = 128, seed: int = 1, max_chunk: int = 1 << 20) -> np.ndarray:
    """MinHash signature of every document: a ``(len(sets), num_perm)`` uint32 array.

    Works over consecutive blocks of documents holding about ``max_chunk`` shingles, so the
    temporary Python rows stay bounded whatever the corpus size.

    >>> from neardup.text.shingle import shingle_many
    >>> sig = signatures(shingle_many(["a b c d", "a b c d", "x y z w"]), num_perm=16)
    >>> bool((sig[0] == sig[1]).all()), bool((sig[0] == sig[2]).all())
    (True, False)
    """
    if num_perm < 1:
        raise ValueError(f"num_perm must be >= 1, got {num_perm}")
    n = len(sets)
    out = np.empty((n, num_perm), dtype=np.uint32)
    offsets = sets.offsets
    values = np.ascontiguousarray(sets.values, dtype=np.uint64)
    start = 0
    while start < n:
        # Grow the block until it holds max_chunk shingles (at least one document).
        end = int(np.searchsorted(offsets, offsets[start] + max_chunk, side="right")) - 1
        end = min(max(end, start + 1), n)
        lo, hi = int(offsets[start]), int(offsets[end])
        local = np.ascontiguousarray(offsets[start : end + 1] - lo, dtype=np.uint64)
        matrix = RMinHash.digest_matrix_from_flat_token_hashes(values[lo:hi], local, num_perm, seed)
        out[start:end] = _rows(matrix, end - start, num_perm)
        start = end
    return out


def _rows(matrix: RMinHashDigestMatrix, n: int, num_perm: int) -> np.ndarray:
    """rensa's matrix as an ``(n, num_perm)`` array. It hands its rows out only as Python lists of ints: one
    list a document, each a container the garbage collector would scan again and again as they are made
    (a quarter of the conversion's time), so collection waits until the array is built."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        rows = matrix.to_rows()
        flat = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.uint32, count=n * num_perm)
        return flat.reshape(n, num_perm)
    finally:
        if enabled:
            gc.enable()


def empty_rows(sets: ShingleSets) -> np.ndarray:
    """Boolean mask of documents without any shingle (never candidates).

    >>> from neardup.text.shingle import shingle_many
    >>> empty_rows(shingle_many(["a b c", ""])).tolist()
    [False, True]
    """
    return sets.sizes == 0


def estimate_jaccard(sig_a: np.ndarray, sig_b: np.ndarray) -> float:
    """Fraction of agreeing signature values: an unbiased estimate of Jaccard similarity.

    >>> estimate_jaccard(np.array([1, 2, 3, 4]), np.array([1, 2, 0, 0]))
    0.5
    """
    return float(np.mean(sig_a == sig_b))
