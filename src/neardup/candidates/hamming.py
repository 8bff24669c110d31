"""Candidate pairs of 64-bit fingerprints within a Hamming distance, by block tables (Manku et al.).

Owns the SimHash candidate step; must not compute fingerprints (see represent/simhash).

Split the 64 bits into ``k + m`` blocks. Two fingerprints at most ``k`` bits apart differ in at most
``k`` blocks, so they agree exactly on at least ``m`` blocks: bucketing by every combination of ``m``
blocks finds every such pair (no false negatives) and the distance is then checked exactly.
``m`` is the smallest value whose keys have at least 16 bits, within ``max_tables`` tables.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np

from neardup.candidates.buckets import pairs_from_keys, unique_pairs
from neardup.represent.simhash import BITS, hamming

_EMPTY_PAIRS = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))


def table_plan(max_distance: int, max_tables: int = 64) -> tuple[int, int]:
    """(blocks, blocks per key) used for a maximum distance.

    >>> table_plan(3)
    (4, 1)
    >>> table_plan(6)
    (8, 2)
    """
    k = max_distance
    for m in range(1, BITS - k + 1):
        blocks = k + m
        if blocks > BITS:
            break
        if comb(blocks, m) > max_tables:
            break
        if m * BITS // blocks >= 16:
            return blocks, m
    return k + 1, 1


def _block_masks(blocks: int) -> list[int]:
    edges = np.linspace(0, BITS, blocks + 1).round().astype(int)
    return [((1 << int(hi)) - 1) ^ ((1 << int(lo)) - 1) for lo, hi in zip(edges[:-1], edges[1:])]


def table_masks(max_distance: int, max_tables: int = 64) -> np.ndarray:
    """The bit mask of each block table (uint64): a fingerprint's key in table t is ``fp & masks[t]``.

    >>> [bin(int(m)).count("1") for m in table_masks(3)]
    [16, 16, 16, 16]
    """
    blocks, m = table_plan(max_distance, max_tables)
    masks = _block_masks(blocks)
    return np.array([sum(masks[i] for i in combo) for combo in combinations(range(blocks), m)], dtype=np.uint64)


def table_keys(fps: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The ``(len(fps), len(masks))`` keys of fingerprints in the given tables."""
    return np.asarray(fps, dtype=np.uint64)[:, None] & np.asarray(masks, dtype=np.uint64)[None, :]


def hamming_pairs(fps: np.ndarray, max_distance: int, exclude: np.ndarray | None = None,
                  max_tables: int = 64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All pairs with Hamming distance <= ``max_distance``, with that distance.

    >>> fps = np.array([0b1111, 0b1110, 0xFFFF0000], dtype=np.uint64)
    >>> l, r, d = hamming_pairs(fps, 2)
    >>> list(zip(l.tolist(), r.tolist(), d.tolist()))
    [(0, 1, 1)]
    """
    docs = np.arange(fps.size, dtype=np.int64)
    if exclude is not None:
        docs = docs[~exclude]
    if docs.size < 2:
        return _EMPTY_PAIRS + (np.empty(0, dtype=np.int64),)
    keys = table_keys(fps[docs], table_masks(max_distance, max_tables))
    lefts, rights = [], []
    for t in range(keys.shape[1]):
        left, right = pairs_from_keys(keys[:, t], docs)
        lefts.append(left)
        rights.append(right)
    left, right = unique_pairs(np.concatenate(lefts), np.concatenate(rights))
    dist = hamming(fps[left], fps[right]) if left.size else np.empty(0, dtype=np.int64)
    keep = dist <= max_distance
    return left[keep], right[keep], dist[keep]
