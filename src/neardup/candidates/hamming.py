"""Candidate pairs of 64-bit fingerprints within a Hamming distance, by block tables (Manku et al.).

Owns the SimHash candidate step; must not compute fingerprints (see represent/simhash).

Split the 64 bits into ``k + m`` blocks. Two fingerprints at most ``k`` bits apart differ in at most
``k`` blocks, so they agree exactly on at least ``m`` blocks: bucketing by every combination of ``m``
blocks finds every such pair (no false negatives) and the distance is then checked exactly.
``m`` is the smallest value whose keys have at least 16 bits, within ``max_tables`` tables.
"""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor
from itertools import combinations
from math import comb

import numpy as np

from neardup.arrays import distinct
from neardup.candidates.buckets import by_key, pairs_from_keys, unique_pairs
from neardup.jit import compiled, cores, pays
from neardup.represent.simhash import BITS, hamming

_EMPTY_PAIRS = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))


def table_plan(max_distance: int, max_tables: int = 64) -> tuple[int, int]:
    """(blocks, blocks per key) used for a maximum distance: the fewest tables whose keys have at least 16
    bits; where no plan of at most ``max_tables`` tables has keys that wide, the plan within ``max_tables``
    expected to bucket the fewest pairs (tables times the share of pairs one table buckets, ``2**-bits``, for
    fingerprints at random): every plan finds the same pairs, and short keys make each table's buckets
    hold a large share of the corpus.

    >>> table_plan(3), table_plan(6), table_plan(9), table_plan(12)
    ((4, 1), (8, 2), (11, 2), (13, 1))
    """
    k = max_distance
    plans = [(k + m, m) for m in range(1, BITS - k + 1) if comb(k + m, m) <= max_tables]
    for blocks, m in plans:
        if m * BITS // blocks >= 16:
            return blocks, m
    if not plans:
        return k + 1, 1
    return min(plans, key=lambda plan: comb(plan[0], plan[1]) * 2.0 ** (-plan[1] * BITS / plan[0]))


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


def near_bucket_pairs(keys: np.ndarray, docs: np.ndarray, fps: np.ndarray,
                      max_distance: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of one table's buckets (documents ``docs``, distinct, with equal ``keys``) whose fingerprints
    ``fps`` (one a row) lie at most ``max_distance`` bits apart, the lower document first, unsorted: those of
    :func:`~neardup.candidates.buckets.pairs_from_keys` that pass the distance, made by a compiled loop on
    large tables without the others (a table's buckets can hold hundreds of pairs a document).

    >>> fps = np.array([0b0111, 0b0001, 0b1000, 0b0110], dtype=np.uint64)
    >>> l, r = near_bucket_pairs(np.array([3, 3, 3, 5], dtype=np.uint64), np.arange(4), fps, 2)
    >>> sorted(zip(l.tolist(), r.tolist()))
    [(0, 1), (1, 2)]
    """
    if keys.size < 2:
        return _EMPTY_PAIRS
    fps = np.ascontiguousarray(fps, dtype=np.uint64)
    docs = np.asarray(docs, dtype=np.int64)
    k, rows = by_key(keys, np.arange(keys.size))
    sizes = np.diff(np.flatnonzero(np.r_[True, k[1:] != k[:-1], True]))
    if pays(int((sizes * (sizes - 1) // 2).sum())):  # the loop's work is the buckets' pairs, not their rows
        return _near_pairs(k, docs[rows], fps[rows], max_distance)
    a, b = pairs_from_keys(k, rows, unique=False)  # rows, not documents: already in key order
    near = hamming(fps[a], fps[b]) <= max_distance
    a, b = docs[a[near]], docs[b[near]]
    return np.minimum(a, b), np.maximum(a, b)


#: Bucketed pairs (distance checks) from which :func:`_near_pairs` splits its work over threads: about 4 ms.
SPLIT_PAIRS = 1 << 22


def _near_pairs(keys: np.ndarray, docs: np.ndarray, fps: np.ndarray, max_distance: int,
                threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`near_bucket_pairs` over rows sorted by key, by the compiled loop: the pairs within
    ``max_distance`` counted, then written (two passes over every bucket's pairs: the counting one, without a
    store, is vectorised, about 1 ns a pair; growing the output inside one pass made it 50x slower). The loop
    releases the lock: the buckets are split into ``threads`` runs of about equal pairs (default: this
    process's cores, :func:`neardup.jit.cores`), each run counted and written by its own thread into its own
    slice of the output, so the pairs come in the same order as from one thread."""
    runs = _bucket_runs(keys, threads or cores())
    spans = list(zip(runs[:-1].tolist(), runs[1:].tolist()))
    none = np.empty(0, dtype=np.int64)

    def loop(i: int, left: np.ndarray = none, right: np.ndarray = none) -> int:
        lo, hi = spans[i]
        return _near_pairs_loop(keys[lo:hi], docs[lo:hi], fps[lo:hi], max_distance, left, right)

    with contextlib.ExitStack() as stack:
        each = map if len(spans) == 1 else \
            stack.enter_context(ThreadPoolExecutor(len(spans), thread_name_prefix="neardup-near-pairs")).map
        at = np.r_[0, np.cumsum(list(each(loop, range(len(spans)))))]
        left, right = np.empty(int(at[-1]), dtype=np.int64), np.empty(int(at[-1]), dtype=np.int64)
        list(each(lambda i: loop(i, left[at[i]:at[i + 1]], right[at[i]:at[i + 1]]), range(len(spans))))
    return left, right


def _bucket_runs(keys: np.ndarray, threads: int) -> np.ndarray:
    """Row bounds of at most ``threads`` runs of whole buckets of sorted ``keys``, each holding about an equal
    share of the buckets' pairs and at least :data:`SPLIT_PAIRS` of them (one run, ``[0, n]``, below that).

    >>> _bucket_runs(np.repeat(np.arange(4), 3000), 2).tolist()
    [0, 6000, 12000]
    >>> _bucket_runs(np.repeat(np.arange(4), 30), 2).tolist()
    [0, 120]
    """
    n = keys.size
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    sizes = np.diff(np.r_[starts, n]).astype(np.int64)
    work = np.cumsum(sizes * (sizes - 1) // 2)
    total = int(work[-1]) if work.size else 0
    runs = min(threads, total // SPLIT_PAIRS)
    if runs < 2:
        return np.array([0, n], dtype=np.int64)
    # Each share of the pairs ends with the bucket that reaches it; empty runs (one huge bucket) dropped.
    ends = np.r_[starts[1:], n]
    return distinct(np.r_[0, ends[np.searchsorted(work, total * np.arange(1, runs) / runs)], n].astype(np.int64))


@compiled
def _near_pairs_loop(keys: np.ndarray, docs: np.ndarray, fps: np.ndarray, max_distance: int, left: np.ndarray,
                     right: np.ndarray) -> int:
    """One pass of :func:`_near_pairs`: the pairs within the distance counted, and written into ``left``
    and ``right`` where they are not empty (the lower document first). The distance is the population count
    of the XOR of the two fingerprints, in bit operations the compiler makes one instruction."""
    n = keys.size
    write = left.size > 0
    w = 0
    start = 0
    while start < n:
        end = start + 1
        while end < n and keys[end] == keys[start]:
            end += 1
        for i in range(start, end - 1):
            fi = fps[i]
            for j in range(i + 1, end):
                x = fi ^ fps[j]
                x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
                x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
                x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
                near = np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56)) <= max_distance
                if write and near:
                    left[w] = min(docs[i], docs[j])
                    right[w] = max(docs[i], docs[j])
                w += near
        start = end
    return w


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
    own = fps[docs]
    pairs = [near_bucket_pairs(keys[:, t], docs, own, max_distance) for t in range(keys.shape[1])]
    left, right = unique_pairs(np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs]))
    return left, right, hamming(fps[left], fps[right]) if left.size else np.empty(0, dtype=np.int64)
