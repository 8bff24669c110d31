"""Candidate pairs from MinHash signatures: LSH banding, and the k-hashes/c-collisions rule.

Owns which signature agreements make a pair worth verifying; must not score pairs exactly.

Banding: the signature is cut into ``bands`` bands of ``rows`` values; documents whose values agree
on a whole band share a bucket. A pair with Jaccard s collides in at least one band with
probability ``1 - (1 - s**rows)**bands``. :func:`optimal_bands_rows` picks (bands, rows) for a
threshold t the way datasketch does: minimise the weighted false-positive mass (the integral of
that probability below t) plus the false-negative mass (the integral of its complement above t);
:func:`lsh_plan` is the one place a run's bands and rows are decided.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

import numpy as np

from neardup.arrays import distinct
from neardup.candidates.buckets import count_pairs, pairs_from_keys, unique_pairs
from neardup.config import MinHashConfig

_EMPTY_PAIRS = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))


def collision_probability(s: np.ndarray | float, bands: int, rows: int) -> np.ndarray | float:
    """Probability that a pair with Jaccard ``s`` shares at least one LSH bucket.

    >>> round(float(collision_probability(0.5, bands=16, rows=8)), 4)
    0.0607
    """
    return 1.0 - (1.0 - np.power(s, rows)) ** bands


@lru_cache(maxsize=1024)
def optimal_bands_rows(threshold: float, num_perm: int, fp_weight: float = 0.5,
                       fn_weight: float = 0.5) -> tuple[int, int]:
    """(bands, rows) with bands*rows <= num_perm minimising weighted false positive/negative mass.

    >>> optimal_bands_rows(0.5, 128)
    (25, 5)
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    # Every (bands, rows) with bands * rows <= num_perm, bands-major: the order ties are broken in.
    bands = np.repeat(np.arange(1, num_perm + 1), num_perm // np.arange(1, num_perm + 1))
    rows = np.concatenate([np.arange(1, num_perm // b + 1) for b in range(1, num_perm + 1)])
    grid_lo = np.linspace(0.0, threshold, 201)
    grid_hi = np.linspace(threshold, 1.0, 201)
    fp = np.trapezoid(collision_probability(grid_lo, bands[:, None], rows[:, None]), grid_lo, axis=1)
    fn = np.trapezoid(1.0 - collision_probability(grid_hi, bands[:, None], rows[:, None]), grid_hi, axis=1)
    errors = (fp_weight * fp + fn_weight * fn).tolist()
    # The first plan whose error is below the best so far by more than 1e-12 (not merely the argmin:
    # plans within rounding of each other keep the earlier one).
    best = 0
    for i, err in enumerate(errors):
        if err < errors[best] - 1e-12:
            best = i
    return int(bands[best]), int(rows[best])


def lsh_plan(config: MinHashConfig, threshold: float) -> tuple[int, int]:
    """(bands, rows) of MinHash LSH: the configured ones, else the optimum for ``config.lsh_threshold``
    (or, when that is None, for the method ``threshold``).

    >>> lsh_plan(MinHashConfig(), 0.45), lsh_plan(MinHashConfig(bands=32, rows=4), 0.45)
    ((28, 2), (32, 4))
    """
    if config.bands is not None and config.rows is not None:
        return config.bands, config.rows
    return optimal_bands_rows(config.lsh_threshold or float(threshold), config.num_perm)


def band_keys(signatures: np.ndarray, bands: int, rows: int, first_band: int = 0) -> np.ndarray:
    """One 64-bit bucket key per (document, band): a ``(n_docs, bands)`` uint64 array.

    ``signatures`` holds the ``bands * rows`` values of bands ``first_band ..`` (so a few bands of a
    large corpus can be keyed at a time: the keys are those of the whole signature). The band index is
    mixed into the key, so equal values in different bands never collide.

    >>> sig = np.array([[1, 2, 3, 4], [1, 2, 9, 9]], dtype=np.uint32)
    >>> k = band_keys(sig, bands=2, rows=2)
    >>> bool(k[0, 0] == k[1, 0]), bool(k[0, 1] == k[1, 1]), bool((band_keys(sig[:, 2:], 1, 2, 1) == k[:, 1:]).all())
    (True, False, True)
    """
    n = signatures.shape[0]
    out = np.empty((n, bands), dtype=np.uint64)
    seeds = np.uint64(0x9E3779B97F4A7C15) * np.arange(first_band + 1, first_band + bands + 1, dtype=np.uint64)
    shifted = np.empty((min(n, _KEY_DOCS), bands), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for lo in range(0, n, _KEY_DOCS):  # a block of documents at a time: its temporaries stay in cache
            block = np.asarray(signatures[lo : lo + _KEY_DOCS, : bands * rows])
            block = block.reshape(block.shape[0], bands, rows)
            acc, tmp = out[lo : lo + block.shape[0]], shifted[: block.shape[0]]
            acc[:] = seeds
            for j in range(rows):
                acc ^= block[:, :, j].astype(np.uint64)
                acc *= np.uint64(0x100000001B3)
                np.right_shift(acc, np.uint64(29), out=tmp)
                acc ^= tmp
    return out


#: Documents keyed at once by :func:`band_keys` (32 bands: 1 MiB of keys, each step's temporaries in cache;
#: the whole table at once, 200k documents, took 0.33 s against 0.10 s).
_KEY_DOCS = 4096


def band_bucket_pairs(keys: np.ndarray, docs: np.ndarray, max_bucket: int,
                      centre_rank: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The candidate pairs of one band: documents that share its bucket key (``docs`` distinct: a band puts a
    document in one bucket), each pair once, its lower document first, in no set order (the tables' pairs are
    made distinct and sorted where they are combined). A bucket larger than ``max_bucket`` links its members to
    one member only (linear in the bucket, not quadratic: templates and boilerplate stay cheap): the member of
    lowest ``centre_rank`` (per row: the document the representative policy decides first), else its first.

    >>> l, r = band_bucket_pairs(np.array([7, 7, 7, 5], dtype=np.uint64), np.arange(4), max_bucket=2)
    >>> list(zip(l.tolist(), r.tolist()))
    [(0, 1), (0, 2)]
    """
    return pairs_from_keys(keys, docs, star_above=max_bucket, unique=False, centre_rank=centre_rank)


def collision_bucket_pairs(keys: np.ndarray, docs: np.ndarray, max_bucket: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs that agree on one signature position (one per shared value; values held by more than
    ``max_bucket`` documents do not count): counted over all positions by the collisions rule."""
    return pairs_from_keys(keys, docs, max_group=max_bucket, unique=False)


def lsh_pairs(signatures: np.ndarray, bands: int, rows: int, exclude: np.ndarray | None = None,
              max_bucket: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of documents that share at least one LSH band bucket.

    Buckets larger than ``max_bucket`` link their members to the bucket's first document only,
    which keeps the pair count linear for templates and boilerplate; ``exclude`` masks out rows
    (empty documents) that must never be candidates.

    >>> sig = np.array([[1, 2, 3, 4], [1, 2, 9, 9], [7, 7, 7, 7]], dtype=np.uint32)
    >>> l, r = lsh_pairs(sig, bands=2, rows=2)
    >>> list(zip(l.tolist(), r.tolist()))
    [(0, 1)]
    """
    per_band = list(_band_pairs(signatures, bands, rows, exclude, max_bucket))
    if not per_band:
        return _EMPTY_PAIRS
    return unique_pairs(np.concatenate([p[0] for p in per_band]), np.concatenate([p[1] for p in per_band]))


def count_lsh_pairs(signatures: np.ndarray, bands: int, rows: int, max_bucket: int = 200,
                    limit: float | None = None) -> int:
    """How many pairs :func:`lsh_pairs` proposes; with ``limit``, counting may stop at a first count above it
    (a band or two of a loose banding is enough to know it proposes too many).

    >>> sig = np.array([[1, 2, 3, 4], [1, 2, 9, 9], [1, 2, 9, 9]], dtype=np.uint32)
    >>> count_lsh_pairs(sig, bands=2, rows=2), count_lsh_pairs(sig, bands=2, rows=2, limit=1) > 1
    (3, True)
    """
    n = signatures.shape[0]
    found, pending, seen = np.empty(0, dtype=np.int64), [], 0
    for left, right in _band_pairs(signatures, bands, rows, None, max_bucket):
        pending.append(left * n + right)
        seen += left.size
        if limit is not None and seen > limit:
            found, pending = distinct(np.concatenate([found, *pending])), []
            seen = found.size
            if seen > limit:
                break
    return int(distinct(np.concatenate([found, *pending])).size)


def _band_pairs(signatures: np.ndarray, bands: int, rows: int, exclude: np.ndarray | None,
                max_bucket: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Each band's pairs of documents that share its bucket (buckets linked as :func:`lsh_pairs` says), each pair
    once, its lower document first (a band puts a document in one bucket)."""
    if bands * rows > signatures.shape[1]:
        raise ValueError(f"bands*rows={bands * rows} exceeds the signature length {signatures.shape[1]}")
    docs = np.arange(signatures.shape[0], dtype=np.int64)
    if exclude is not None:
        docs = docs[~exclude]
    if docs.size < 2:
        return
    keys = band_keys(signatures[docs], bands, rows)
    for band in range(bands):
        yield pairs_from_keys(keys[:, band], docs, star_above=max_bucket, unique=False)


def collision_pairs(signatures: np.ndarray, min_collisions: int, exclude: np.ndarray | None = None,
                    max_bucket: int = 200) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs whose signatures agree in at least ``min_collisions`` positions, with the count.

    Values shared by more than ``max_bucket`` documents at one position are not counted.

    >>> sig = np.array([[1, 2, 3], [1, 2, 4], [1, 5, 6]], dtype=np.uint32)
    >>> l, r, c = collision_pairs(sig, min_collisions=2)
    >>> list(zip(l.tolist(), r.tolist(), c.tolist()))
    [(0, 1, 2)]
    """
    docs = np.arange(signatures.shape[0], dtype=np.int64)
    if exclude is not None:
        docs = docs[~exclude]
    sig = signatures[docs].astype(np.uint64)
    lefts, rights = [], []
    for j in range(sig.shape[1]):
        left, right = collision_bucket_pairs(sig[:, j], docs, max_bucket)
        lefts.append(left)
        rights.append(right)
    if not lefts:
        return _EMPTY_PAIRS + (np.empty(0, dtype=np.int64),)
    left, right, counts = count_pairs(np.concatenate(lefts), np.concatenate(rights))
    keep = counts >= min_collisions
    return left[keep], right[keep], counts[keep]
