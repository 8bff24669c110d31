"""64-bit SimHash fingerprints of shingle sets (Charikar), and Hamming distances between them.

Owns fingerprints and their distance; must not pick candidate pairs (see candidates/hamming).
Each shingle hash votes +1/-1 on each of the 64 bits; the fingerprint keeps the bits with a
positive total. Similar sets give fingerprints a small Hamming distance apart.
"""

from __future__ import annotations

import numpy as np

from neardup.jit import compiled, pays
from neardup.text.shingle import ShingleSets

BITS = 64


def fingerprints(sets: ShingleSets, max_chunk: int = 1 << 18) -> np.ndarray:
    """SimHash of every document as uint64 (0 for an empty set): a compiled loop on large batches (each
    value's bits counted where they are set), NumPy a chunk of values at a time on small ones (each bit's
    votes summed); the same fingerprints to the bit.

    >>> from neardup.text.shingle import shingle_many
    >>> fp = fingerprints(shingle_many(["a b c d e f", "a b c d e f", ""]))
    >>> bool(fp[0] == fp[1]), int(fp[2])
    (True, 0)
    """
    if pays(int(sets.values.size)):
        return _fingerprint_loop(np.ascontiguousarray(sets.values, dtype=np.uint64),
                                 np.ascontiguousarray(sets.offsets, dtype=np.int64))
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


@compiled
def _fingerprint_loop(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """:func:`fingerprints`' loop: per document, how many of its values set each bit; the bit is kept where
    they are more than half (its votes, +1 set and -1 not, total over 0)."""
    n = offsets.size - 1
    out = np.zeros(n, dtype=np.uint64)
    ones = np.zeros(BITS, dtype=np.int64)
    for d in range(n):
        lo, hi = offsets[d], offsets[d + 1]
        if hi == lo:
            continue
        ones[:] = 0
        for i in range(lo, hi):
            x = values[i]
            for b in range(BITS):
                ones[b] += np.int64((x >> np.uint64(b)) & np.uint64(1))
        fp = np.uint64(0)
        for b in range(BITS):
            if 2 * ones[b] > hi - lo:
                fp |= np.uint64(1) << np.uint64(b)
        out[d] = fp
    return out


def hamming(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Bitwise Hamming distance between uint64 arrays, element by element (NumPy's population count where
    it has one, 2.0 on).

    >>> hamming(np.array([0b1011], dtype=np.uint64), np.array([0b0001], dtype=np.uint64)).tolist()
    [2]
    """
    x = np.bitwise_xor(np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64))
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(x).astype(np.int64)
    return np.unpackbits(x.view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1).astype(np.int64)


def similarity(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``1 - hamming / 64``: the score a SimHash pair is verified against.

    >>> similarity(np.array([0], dtype=np.uint64), np.array([3], dtype=np.uint64)).tolist()
    [0.96875]
    """
    return 1.0 - hamming(a, b) / BITS
