"""64-bit SimHash fingerprints of shingle sets (Charikar), and Hamming distances between them.

Owns fingerprints and their distance; must not pick candidate pairs (see candidates/simhash_tables).
Each shingle hash votes +1/-1 on each of the 64 bits; the fingerprint keeps the bits with a
positive total. Similar sets give fingerprints a small Hamming distance apart.
"""

from __future__ import annotations

import numpy as np

from neardup.text.shingle import ShingleSets

BITS = 64


def fingerprints(sets: ShingleSets, max_chunk: int = 1 << 18) -> np.ndarray:
    """SimHash of every document as uint64 (0 for an empty set).

    >>> from neardup.text.shingle import shingle_many
    >>> fp = fingerprints(shingle_many(["a b c d e f", "a b c d e f", ""]))
    >>> bool(fp[0] == fp[1]), int(fp[2])
    (True, 0)
    """
    n = len(sets)
    out = np.zeros(n, dtype=np.uint64)
    offsets = sets.offsets
    start = 0
    while start < n:
        end = int(np.searchsorted(offsets, offsets[start] + max_chunk, side="right")) - 1
        end = min(max(end, start + 1), n)
        lo, hi = int(offsets[start]), int(offsets[end])
        if hi > lo:
            vals = sets.values[lo:hi]
            bits = np.unpackbits(vals.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
            votes = bits.astype(np.int32) * 2 - 1
            local = offsets[start:end] - lo
            nonempty = np.diff(offsets[start : end + 1]) > 0
            totals = np.add.reduceat(votes, local[nonempty], axis=0)
            packed = np.packbits(totals > 0, axis=1, bitorder="little")
            out[start:end][nonempty] = packed.view(np.uint64).ravel()
        start = end
    return out


def hamming(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Bitwise Hamming distance between uint64 arrays, element by element.

    >>> hamming(np.array([0b1011], dtype=np.uint64), np.array([0b0001], dtype=np.uint64)).tolist()
    [2]
    """
    x = np.bitwise_xor(a, b)
    return np.unpackbits(x.view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1).astype(np.int64)


def similarity(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``1 - hamming / 64``: the score a SimHash pair is verified against.

    >>> similarity(np.array([0], dtype=np.uint64), np.array([3], dtype=np.uint64)).tolist()
    [0.96875]
    """
    return 1.0 - hamming(a, b) / BITS
