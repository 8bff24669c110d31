"""Turn "documents that share a key" into candidate pairs: the mechanism under LSH, inverted indexes and SimHash tables.

Owns grouping by key and pair generation, vectorised; must not know what the keys mean.
Pairs are two int64 arrays ``(left, right)`` of document indices with ``left < right``.
"""

from __future__ import annotations

import numpy as np

from neardup.arrays import distinct

_EMPTY_PAIRS = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))


#: Pair codes gathered before their repeats are dropped (64 MiB of int64), and the distinct codes kept
#: before those of several such gatherings are merged: a bucket rule that emits each pair once per key it
#: shares (the n-gram index: 82.7M pairs, 31.4M distinct, over 200k stories' word 4-grams) holds about
#: its distinct pairs, not all of them.
PAIR_CHUNK = 1 << 23


def pairs_from_keys(keys: np.ndarray, docs: np.ndarray, max_group: int | None = None,
                    star_above: int | None = None, unique: bool = True,
                    centre_rank: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """All pairs of documents that share a key value.

    ``max_group``: groups bigger than this are skipped (keys too common to be evidence).
    ``star_above``: groups bigger than this link every member to one member only, the centre (linear instead
    of quadratic; used for LSH buckets): the member of lowest ``centre_rank`` (one per row of ``docs``: the
    document the representative policy decides first, so each copy is verified against the document that
    will be kept), ties and without ranks the group's first document.
    ``unique=False`` keeps one pair per shared key (for counting shared keys with :func:`count_pairs`); else
    the pairs are distinct and sorted (as :func:`unique_pairs` makes them), their repeats dropped
    :data:`PAIR_CHUNK` pairs at a time as they are made.

    >>> l, r = pairs_from_keys(np.array([5, 7, 5, 5]), np.array([0, 1, 2, 3]))
    >>> sorted(zip(l.tolist(), r.tolist()))
    [(0, 2), (0, 3), (2, 3)]
    >>> l, r = pairs_from_keys(np.array([5, 7, 5, 5]), np.array([0, 1, 2, 3]), star_above=2,
    ...                        centre_rank=np.array([3, 0, 1, 2]))  # document 2 comes first among 0, 2, 3
    >>> sorted(zip(l.tolist(), r.tolist()))
    [(0, 2), (2, 3)]
    """
    if keys.size < 2:
        return _EMPTY_PAIRS
    k, d = by_key(keys, docs)
    boundary = np.ones(k.size + 1, dtype=bool)
    boundary[1:-1] = k[1:] != k[:-1]
    starts = np.flatnonzero(boundary[:-1])
    sizes = np.diff(np.flatnonzero(boundary))
    big = sizes > (star_above if star_above is not None else np.iinfo(np.int64).max)
    if max_group is not None:
        keep = sizes <= max_group
    else:
        keep = np.ones(sizes.size, dtype=bool)
    out = _Pairs(int(d.max()) + 1 if unique else None)
    # Groups of the same size form a 2-D block; take its upper triangle in one step (a chunk of groups at a
    # time, at most PAIR_CHUNK pairs where the groups are small enough).
    for s in distinct(sizes[keep & ~big & (sizes >= 2)]):
        firsts = starts[(sizes == s) & keep]
        iu, ju = np.triu_indices(int(s), k=1)
        step = max(1, PAIR_CHUNK // iu.size)
        for lo in range(0, firsts.size, step):
            block = d[firsts[lo : lo + step][:, None] + np.arange(s)[None, :]]
            out.add(block[:, iu].ravel(), block[:, ju].ravel())
    ranks = None  # aligned with (k, d): by_key's order is lexsort's
    if centre_rank is not None and (big & keep).any():
        ranks = np.asarray(centre_rank)[np.lexsort((docs, keys))]
    for start, size in zip(starts[big & keep], sizes[big & keep]):
        members = d[start : start + size]
        at = 0 if ranks is None else int(np.argmin(ranks[start : start + size]))
        others = np.delete(members, at)
        centre = np.full(size - 1, members[at], dtype=np.int64)
        out.add(np.minimum(centre, others), np.maximum(centre, others))
    return out.pairs()


class _Pairs:
    """The pairs :func:`pairs_from_keys` makes, gathered: as they come (``width`` None), or distinct, as codes
    ``lo * width + hi`` of documents under ``width``, repeats dropped a chunk at a time."""

    def __init__(self, width: int | None) -> None:
        self.width = width
        self.lefts: list[np.ndarray] = []
        self.rights: list[np.ndarray] = []
        self.pending: list[np.ndarray] = []
        self.pending_size = 0
        self.done: list[np.ndarray] = []
        self.done_size = 0

    def add(self, left: np.ndarray, right: np.ndarray) -> None:
        if self.width is None:
            self.lefts.append(left)
            self.rights.append(right)
            return
        lo, hi = np.minimum(left, right).astype(np.int64), np.maximum(left, right).astype(np.int64)
        apart = lo != hi
        code = lo[apart] * self.width + hi[apart]
        self.pending.append(code)
        self.pending_size += code.size
        if self.pending_size >= PAIR_CHUNK:
            self._flush()

    def _flush(self) -> None:
        if self.pending:
            self.done.append(distinct(np.concatenate(self.pending)))
            self.done_size += self.done[-1].size
            self.pending, self.pending_size = [], 0
        if len(self.done) > 1 and self.done_size >= 4 * PAIR_CHUNK:  # merged: repeats across chunks dropped too
            self.done = [distinct(np.concatenate(self.done))]
            self.done_size = self.done[0].size

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        if self.width is None:
            if not self.lefts:
                return _EMPTY_PAIRS
            return np.concatenate(self.lefts), np.concatenate(self.rights)
        self._flush()
        if not self.done:
            return _EMPTY_PAIRS
        code = self.done[0] if len(self.done) == 1 else distinct(np.concatenate(self.done))
        return code // self.width, code % self.width


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
    if left.size == 0:
        return _EMPTY_PAIRS
    out = _Pairs(int(max(left.max(), right.max())) + 1)
    out.add(left, right)
    return out.pairs()


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
