"""Turn "documents that share a key" into candidate pairs: the mechanism under LSH, inverted indexes and SimHash tables.

Owns grouping by key and pair generation, vectorised; must not know what the keys mean.
Pairs are two int64 arrays ``(left, right)`` of document indices with ``left < right``.
"""

from __future__ import annotations

import numpy as np

_EMPTY_PAIRS = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))


def pairs_from_keys(keys: np.ndarray, docs: np.ndarray, max_group: int | None = None,
                    star_above: int | None = None, unique: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """All pairs of documents that share a key value.

    ``max_group``: groups bigger than this are skipped (keys too common to be evidence).
    ``star_above``: groups bigger than this link every member to the group's first document
    only (linear instead of quadratic; enough for connectivity, used for LSH buckets).
    ``unique=False`` keeps one pair per shared key (for counting shared keys with :func:`count_pairs`).

    >>> l, r = pairs_from_keys(np.array([5, 7, 5, 5]), np.array([0, 1, 2, 3]))
    >>> sorted(zip(l.tolist(), r.tolist()))
    [(0, 2), (0, 3), (2, 3)]
    """
    if keys.size < 2:
        return _EMPTY_PAIRS
    k, d = by_key(keys, docs)
    boundary = np.ones(k.size + 1, dtype=bool)
    boundary[1:-1] = k[1:] != k[:-1]
    starts = np.flatnonzero(boundary[:-1])
    sizes = np.diff(np.flatnonzero(boundary))
    lefts: list[np.ndarray] = []
    rights: list[np.ndarray] = []
    big = sizes > (star_above if star_above is not None else np.iinfo(np.int64).max)
    if max_group is not None:
        keep = sizes <= max_group
    else:
        keep = np.ones(sizes.size, dtype=bool)
    # Groups of the same size form a 2-D block; take its upper triangle in one step.
    for s in np.unique(sizes[keep & ~big & (sizes >= 2)]):
        block = d[starts[(sizes == s) & keep][:, None] + np.arange(s)[None, :]]
        iu, ju = np.triu_indices(int(s), k=1)
        lefts.append(block[:, iu].ravel())
        rights.append(block[:, ju].ravel())
    for start, size in zip(starts[big & keep], sizes[big & keep]):
        members = d[start : start + size]
        lefts.append(np.full(size - 1, members[0], dtype=np.int64))
        rights.append(members[1:])
    if not lefts:
        return _EMPTY_PAIRS
    left, right = np.concatenate(lefts), np.concatenate(rights)
    return unique_pairs(left, right) if unique else (left, right)


def by_key(keys: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``keys`` and ``docs`` (document indices) in the order of ``np.lexsort((docs, keys))``: by key, then by
    document within a key. NumPy's quicksort of the keys (its SIMD sort where the CPU has one), then one sort
    of ``group * width + doc`` codes orders each key's documents: 2-6x faster than lexsort on 195k keys,
    LSH bucket hashes or a few thousand repeated values alike (lexsort's order where a code would not fit).

    >>> k, d = by_key(np.array([9, 5, 9, 1, 9], dtype=np.uint64), np.array([4, 3, 2, 1, 0]))
    >>> k.tolist(), d.tolist()
    ([1, 5, 9, 9, 9], [1, 3, 0, 2, 4])
    """
    order = np.argsort(keys)
    k, d = keys[order], docs[order]
    first = np.empty(k.size, dtype=bool)  # where each key's run starts
    first[:1] = True
    np.not_equal(k[1:], k[:-1], out=first[1:])
    if first.all():
        return k, d
    width = int(d.max()) + 1
    if d.dtype.kind not in "iu" or int(d.min()) < 0 or int(np.count_nonzero(first)) * width >= 2**62:
        order = np.lexsort((docs, keys))
        return keys[order], docs[order]
    codes = np.cumsum(first, dtype=np.int64)
    codes *= width
    codes += d.astype(np.int64, copy=False)  # documents under 2**62 here: exact whatever their integer type
    codes.sort()
    return k, (codes % width).astype(d.dtype, copy=False)


def unique_pairs(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Order each pair (left < right), drop self-pairs and repeats, sort.

    >>> l, r = unique_pairs(np.array([3, 1, 2, 2]), np.array([1, 3, 2, 0]))
    >>> list(zip(l.tolist(), r.tolist()))
    [(0, 2), (1, 3)]
    """
    lo = np.minimum(left, right).astype(np.int64)
    hi = np.maximum(left, right).astype(np.int64)
    keep = lo != hi
    lo, hi = lo[keep], hi[keep]
    if lo.size == 0:
        return _EMPTY_PAIRS
    code = np.unique(lo * (int(hi.max()) + 1) + hi)
    width = int(hi.max()) + 1
    return code // width, code % width


def count_pairs(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct ordered pairs with how often each occurs (e.g. shared keys per pair).

    >>> l, r, c = count_pairs(np.array([0, 0, 1]), np.array([1, 1, 2]))
    >>> list(zip(l.tolist(), r.tolist(), c.tolist()))
    [(0, 1, 2), (1, 2, 1)]
    """
    if left.size == 0:
        return left.astype(np.int64), right.astype(np.int64), np.empty(0, dtype=np.int64)
    width = int(max(left.max(), right.max())) + 1
    code, counts = np.unique(left.astype(np.int64) * width + right, return_counts=True)
    return code // width, code % width, counts
