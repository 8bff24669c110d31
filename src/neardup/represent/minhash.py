"""MinHash signatures of shingle sets, computed for many documents at once in NumPy.

Owns the hash family and signatures; must not decide which pairs are candidates (see candidates/).

Hash family: multiply-shift, ``h_i(x) = ((a_i * x + b_i) mod 2**64) >> 32`` with odd ``a_i``
drawn from a seeded generator, so signatures are reproducible across runs and machines.
Each signature value is the minimum of ``h_i`` over the document's 64-bit shingle hashes (uint32).
An empty set gets the all-ones signature and is flagged by :func:`empty_rows`.
"""

from __future__ import annotations

import numpy as np

from neardup.text.shingle import ShingleSets

EMPTY_VALUE = np.uint32(0xFFFFFFFF)


def hash_params(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The (a, b) parameters of ``num_perm`` seeded hash functions (a odd).

    >>> a, b = hash_params(4, seed=1)
    >>> bool((a % 2 == 1).all()), a.dtype.name
    (True, 'uint64')
    """
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2**63, size=num_perm, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    b = rng.integers(0, 2**63, size=num_perm, dtype=np.uint64)
    return a, b


def signatures(sets: ShingleSets, num_perm: int = 128, seed: int = 1, max_chunk: int = 1 << 16) -> np.ndarray:
    """MinHash signature of every document: a ``(len(sets), num_perm)`` uint32 array.

    Works over consecutive blocks of documents holding about ``max_chunk`` shingles, so the
    temporary array stays near ``max_chunk * num_perm * 8`` bytes whatever the corpus size.

    >>> from neardup.text.shingle import shingle_many
    >>> sig = signatures(shingle_many(["a b c d", "a b c d", "x y z w"]), num_perm=16)
    >>> bool((sig[0] == sig[1]).all()), bool((sig[0] == sig[2]).all())
    (True, False)
    """
    a, b = hash_params(num_perm, seed)
    n = len(sets)
    out = np.full((n, num_perm), EMPTY_VALUE, dtype=np.uint32)
    offsets = sets.offsets
    start = 0
    shift = np.uint64(32)
    while start < n:
        # Grow the block until it holds max_chunk shingles (at least one document).
        end = int(np.searchsorted(offsets, offsets[start] + max_chunk, side="right")) - 1
        end = min(max(end, start + 1), n)
        lo, hi = int(offsets[start]), int(offsets[end])
        if hi > lo:
            vals = np.asarray(sets.values[lo:hi])
            # (num_perm, shingles) layout: each document is a contiguous run in every row, so the
            # min-reduction streams through memory. The shift is monotone, so min(h) >> 32 equals
            # min(h >> 32) and is applied once per document instead of once per shingle.
            hashed = np.multiply.outer(a, vals)
            hashed += b[:, None]
            local = offsets[start:end] - lo
            nonempty = np.diff(offsets[start : end + 1]) > 0
            reduced = np.minimum.reduceat(hashed, local[nonempty], axis=1)
            out[start:end][nonempty] = (reduced >> shift).astype(np.uint32).T
        start = end
    return out


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
