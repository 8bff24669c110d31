"""Exact set similarity of candidate pairs: Jaccard and the overlap coefficient.

Owns scoring a pair from its two shingle sets; must not choose candidates or clusters.

* Jaccard ``|A∩B| / |A∪B|`` punishes any difference in length.
* Overlap coefficient ``|A∩B| / min(|A|, |B|)`` does not punish abridgement: an article and its
  truncated reprint score 1.0.
* ``weighted-`` variants count each shingle with an IDF weight ``log((N + 1) / df) ** power``
  (df = documents of the corpus holding it). Shingles of shared boilerplate (templated notices,
  "Pay March 31", "Reuter") weigh little and the rare ones (figures, names) weigh much, so two
  instances of one template score low while a reprint keeps a high score.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from neardup.arrays import distinct
from neardup.jit import compiled, pays
from neardup.text.shingle import ShingleSets, sort_by_group


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Jaccard similarity of two sorted unique arrays (0 when both are empty).

    >>> jaccard(np.array([1, 2, 3]), np.array([2, 3, 4]))
    0.5
    """
    inter = np.intersect1d(a, b, assume_unique=True).size
    union = a.size + b.size - inter
    return inter / union if union else 0.0


def overlap_coefficient(a: np.ndarray, b: np.ndarray) -> float:
    """``|A∩B| / min(|A|, |B|)`` of two sorted unique arrays (0 when either is empty).

    >>> overlap_coefficient(np.array([1, 2]), np.array([1, 2, 3, 4]))
    1.0
    """
    small = min(a.size, b.size)
    if small == 0:
        return 0.0
    return np.intersect1d(a, b, assume_unique=True).size / small


SCORES: tuple[str, ...] = ("jaccard", "overlap", "weighted-jaccard", "weighted-overlap")


def idf(df: np.ndarray, n: int, power: float = 2.0) -> np.ndarray:
    """The weight of a shingle held by ``df`` of ``n`` documents: ``log((n + 1) / df) ** power``.

    The one definition of the IDF weight: every weighted score (in memory, chunked, cross-collection) uses it.

    >>> idf(np.array([1, 3]), 3, power=1).round(3).tolist()
    [1.386, 0.288]
    """
    return np.log((n + 1) / np.asarray(df)) ** power


def idf_weights(sets: ShingleSets, power: float = 2.0) -> np.ndarray:
    """Weight of every value of ``sets`` (aligned with ``sets.values``): ``log((N+1)/df) ** power``.

    >>> from neardup.text.shingle import shingle_many
    >>> w = idf_weights(shingle_many(["a b c", "a b c", "x y z"]), power=1)
    >>> bool(w[0] < w[2])
    True
    """
    n = len(sets)
    if sets.values.size == 0:
        return np.empty(0, dtype=np.float64)
    return idf_weights_of_codes(*value_codes(np.asarray(sets.values)), n, power)


def idf_weights_of_codes(codes: np.ndarray, counts: np.ndarray, n: int, power: float = 2.0) -> np.ndarray:
    """:func:`idf_weights` from :func:`value_codes` already computed (the same figures): one logarithm per
    distinct value, gathered (8x faster than one per value on character shingles)."""
    return idf(counts, n, power)[codes]


def idf_of_frequencies(df: np.ndarray, n: int, power: float = 2.0) -> np.ndarray:
    """:func:`idf` of many document frequencies (the same figures): one logarithm per frequency up to the
    largest, gathered, when there are fewer of those than frequencies; else one per distinct frequency.

    >>> idf_of_frequencies(np.array([3, 1, 3], dtype=np.uint32), 3, power=1).round(3).tolist()
    [0.288, 1.386, 0.288]
    """
    df = np.asarray(df)
    if df.size == 0:
        return np.empty(0, dtype=np.float64)
    top = int(df.max())
    if top < df.size:
        table = np.zeros(top + 1, dtype=np.float64)
        table[1:] = idf(np.arange(1, top + 1, dtype=np.int64), n, power)
        return table[df]
    distinct, at = np.unique(df, return_inverse=True)
    return idf(distinct.astype(np.int64), n, power)[at]


#: Values up to which :func:`value_codes` sorts (``np.unique``) rather than importing ``pyarrow.compute``
#: (about 60 ms the first time, in a small run's start): a few milliseconds either way at this size.
SMALL_VALUES = 1 << 17


def value_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A dense code per entry (equal values, equal codes; ``0..k-1``, numbered by first occurrence) and each
    code's count, from a hash table (Arrow's dictionary encoding): 5x faster than sorting (``np.unique``) on
    millions of hashes; up to :data:`SMALL_VALUES` values, sorted to the same codes.

    >>> codes, counts = value_codes(np.array([7, 3, 7, 7], dtype=np.uint64))
    >>> codes.tolist(), counts.tolist()
    ([0, 1, 0, 0], [3, 1])
    """
    if len(values) <= SMALL_VALUES:
        distinct, first, at = np.unique(values, return_index=True, return_inverse=True)
        order = np.empty(len(distinct), dtype=np.int32)  # codes by first occurrence, as Arrow numbers them
        order[np.argsort(first, kind="stable")] = np.arange(len(distinct), dtype=np.int32)
        codes = order[at.reshape(-1)]
    else:
        import pyarrow as pa
        import pyarrow.compute as pc

        codes = pc.dictionary_encode(pa.array(values)).indices.to_numpy()
    return codes, np.bincount(codes)


def intersection_sizes(sets: ShingleSets, left: np.ndarray, right: np.ndarray, block: int = 2048,
                       weights: np.ndarray | None = None, codes: np.ndarray | None = None) -> np.ndarray:
    """``|A∩B|`` for many pairs at once (vectorised over blocks of pairs); with ``weights``
    (aligned with ``sets.values``; a value's weight is the same wherever it occurs) the summed weight of the
    shared values instead, read from the left documents' positions only (the chunked engine's tiles look up
    no weights for right documents).

    With ``codes`` (:func:`value_codes` of ``sets.values``, for sets held in memory) each left document's
    values are marked in a table indexed by code and each right document's values looked up in it:
    5-6x faster on long sets (character shingles) than sorting each pair's values together, and the
    same sums to the last bit (both add a pair's shared weights in ascending value order).

    >>> from neardup.text.shingle import ShingleConfig, shingle_many
    >>> s = shingle_many(["a b c d", "a b c e", "z y x w"], ShingleConfig(n=3))
    >>> intersection_sizes(s, np.array([0, 0]), np.array([1, 2])).tolist()
    [1, 0]
    >>> _marked_intersections(s, np.array([0, 0]), np.array([1, 2]), None, value_codes(s.values)[0]).tolist()
    [1, 0]
    """
    sizes = sets.sizes
    if left.size and pays(int(sizes[left].sum()) + int(sizes[right].sum())):
        return _merged_intersections(sets, left, right, weights)
    if codes is not None and left.size and _marking_pays(sets, left, right):
        return _marked_intersections(sets, left, right, weights, codes)
    out = np.zeros(left.size, dtype=np.int64 if weights is None else np.float64)
    for lo in range(0, left.size, block):
        lb, rb = left[lo : lo + block], right[lo : lo + block]
        # Tag each value with its pair number; a value shared by both documents of a pair
        # appears twice under the same tag.
        la, ra = sizes[lb], sizes[rb]
        tags = np.concatenate([np.repeat(np.arange(lb.size), la), np.repeat(np.arange(rb.size), ra)])
        idx = np.concatenate([sets.positions(lb, la), sets.positions(rb, ra)])
        vals = np.asarray(sets.values[idx])
        order = sort_by_group(tags, vals, lb.size, runs=True)  # two runs: left sides, right sides
        t, v = tags[order], vals[order]
        dup = (t[1:] == t[:-1]) & (v[1:] == v[:-1])
        w = None if weights is None else weights[idx[order][:-1][dup]]  # the left document's (as sorted first)
        out[lo : lo + block] = np.bincount(t[1:][dup], weights=w, minlength=lb.size)
    return out


def _parts(array: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An array as two plain arrays read one after the other: ``(array, empty)``, or the two halves of
    an array that is two arrays read as one (the chunked engine's tiles, which have ``a`` and ``b``)."""
    if hasattr(array, "a") and hasattr(array, "b"):
        return np.asarray(array.a), np.asarray(array.b)  # type: ignore[attr-defined]
    array = np.asarray(array)
    return array, array[:0]


def _merged_intersections(sets: ShingleSets, left: np.ndarray, right: np.ndarray,
                          weights: np.ndarray | None) -> np.ndarray:
    """:func:`intersection_sizes` by a compiled merge of each pair's two sorted sets (the same sums to the
    last bit: shared weights added in ascending value order)."""
    va, vb = _parts(sets.values)
    wa, wb = _parts(weights) if weights is not None else (va[:0].view(np.float64), vb[:0].view(np.float64))
    out = _merge_loop(va, vb, np.asarray(sets.offsets, dtype=np.int64), np.asarray(left, dtype=np.int64),
                      np.asarray(right, dtype=np.int64), wa, wb, weights is not None)
    return out if weights is not None else out.astype(np.int64)


@compiled
def _merge_loop(va: np.ndarray, vb: np.ndarray, offsets: np.ndarray, left: np.ndarray, right: np.ndarray,
                wa: np.ndarray, wb: np.ndarray, weighted: bool) -> np.ndarray:
    """:func:`_merged_intersections`' loop; values (and weights) at positions from ``va.size`` on are read
    from ``vb`` (``wb``). A set that lies in one of the two arrays (every set of the engine's tiles) is merged
    without branching on the order of the values: both sides step by the comparison, and a shared value adds
    its weight times one, any other value times zero (the same sums: adding +0.0 leaves a sum unchanged), 1.6x
    faster than the branches a CPU mispredicts about every other step; a set that straddles the two arrays is
    merged reading each value from the array it lies in."""
    split = va.size
    out = np.zeros(left.size, dtype=np.float64)
    for k in range(left.size):
        i, i_end = offsets[left[k]], offsets[left[k] + 1]
        j, j_end = offsets[right[k]], offsets[right[k] + 1]
        total = 0.0
        if (i_end <= split or i >= split) and (j_end <= split or j >= split):
            x_values, x_weights, i_at = (va, wa, 0) if i_end <= split else (vb, wb, split)
            y_values, j_at = (va, 0) if j_end <= split else (vb, split)
            i, i_end, j, j_end = i - i_at, i_end - i_at, j - j_at, j_end - j_at
            while i < i_end and j < j_end:
                x = x_values[i]
                y = y_values[j]
                if weighted:  # the left document's weight of the value (equal values, equal weights)
                    total += x_weights[i] * (x == y)
                else:
                    total += x == y
                i += x <= y
                j += y <= x
            out[k] = total
            continue
        while i < i_end and j < j_end:
            x = va[i] if i < split else vb[i - split]
            y = va[j] if j < split else vb[j - split]
            if x < y:
                i += 1
            elif y < x:
                j += 1
            else:
                if weighted:
                    total += wa[i] if i < split else wb[i - split]
                else:
                    total += 1.0
                i += 1
                j += 1
        out[k] = total
    return out


#: Marking costs a fixed ~12 µs per left document and ~5 ns per value looked up; sorting ~30 ns per value.
MARK_VALUES_PER_DOC = 500


def _marking_pays(sets: ShingleSets, left: np.ndarray, right: np.ndarray) -> bool:
    """Whether the pairs hold enough values per left document for marking to beat sorting."""
    sizes = sets.sizes
    values = int(sizes[left].sum()) + int(sizes[right].sum())
    return values > MARK_VALUES_PER_DOC * distinct(left).size


def _marked_intersections(sets: ShingleSets, left: np.ndarray, right: np.ndarray, weights: np.ndarray | None,
                          codes: np.ndarray) -> np.ndarray:
    """:func:`intersection_sizes` by marking: pairs grouped by left document; its values' weights (or
    ones) written into a table indexed by code, every right document's codes looked up and summed."""
    out = np.zeros(left.size, dtype=np.float64)
    if left.size:
        marker = np.zeros(int(codes.max()) + 1 if codes.size else 0, dtype=np.float64)
        offsets, sizes = sets.offsets, sets.sizes
        order = np.argsort(left, kind="stable")
        by_left = left[order]
        starts = np.flatnonzero(np.r_[True, by_left[1:] != by_left[:-1]])
        for lo, hi in zip(starts.tolist(), np.r_[starts[1:], left.size].tolist()):
            a = int(by_left[lo])
            mine = codes[offsets[a] : offsets[a + 1]]
            marker[mine] = 1.0 if weights is None else weights[offsets[a] : offsets[a + 1]]
            at = order[lo:hi]
            others = right[at]
            lengths = sizes[others]
            looked_up = marker[codes[sets.positions(others, lengths)]]
            out[at] = np.bincount(np.repeat(np.arange(others.size), lengths), weights=looked_up,
                                  minlength=others.size)
            marker[mine] = 0.0
    return out if weights is not None else out.astype(np.int64)


def doc_weight_totals(sets: ShingleSets, weights: np.ndarray, block: int = 1 << 16,
                      after_block: Callable[[], None] | None = None) -> np.ndarray:
    """Summed weight of each document's shingles (block by block, so memory-mapped inputs stay cheap;
    ``after_block`` runs after each block, e.g. to drop the pages just read).

    >>> from neardup.text.shingle import ShingleConfig, shingle_many
    >>> s = shingle_many(["a b c", "", "a b c d"], ShingleConfig(n=3))
    >>> doc_weight_totals(s, np.ones(3)).tolist()
    [1.0, 0.0, 2.0]
    """
    n = len(sets)
    totals = np.zeros(n, dtype=np.float64)
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        offs = np.asarray(sets.offsets[lo : hi + 1])
        nonempty = np.diff(offs) > 0
        if nonempty.any():
            w = np.asarray(weights[offs[0] : offs[-1]])
            totals[lo:hi][nonempty] = np.add.reduceat(w, (offs[:-1] - offs[0])[nonempty])
        if after_block is not None:
            after_block()
    return totals


def score_pairs(sets: ShingleSets, left: np.ndarray, right: np.ndarray, score: str = "overlap",
                weights: np.ndarray | None = None, idf_power: float = 2.0,
                totals: np.ndarray | None = None, codes: np.ndarray | None = None) -> np.ndarray:
    """Exact score of each pair (one of :data:`SCORES`), as float64.

    Weighted scores use ``weights`` (aligned with ``sets.values``) or compute IDF weights, and the
    per-document ``totals`` of :func:`doc_weight_totals` (computed when not given). ``codes``
    (:func:`value_codes` of ``sets.values``) chooses the faster marking intersection (same scores).

    >>> from neardup.text.shingle import shingle_many
    >>> s = shingle_many(["a b c d e", "a b c d"])
    >>> score_pairs(s, np.array([0]), np.array([1]), "overlap").tolist()
    [1.0]
    """
    if score not in SCORES:
        raise ValueError(f"score must be one of {SCORES}, got {score!r}")
    if score.startswith("weighted-"):
        if weights is None:
            weights = idf_weights(sets, idf_power)
        if totals is None:
            totals = doc_weight_totals(sets, weights)
        inter = intersection_sizes(sets, left, right, weights=weights, codes=codes)
        la, lb = totals[left], totals[right]
    else:
        inter = intersection_sizes(sets, left, right, codes=codes).astype(np.float64)
        la = sets.sizes[left].astype(np.float64)
        lb = sets.sizes[right].astype(np.float64)
    if score.endswith("jaccard"):
        denom = la + lb - inter
    else:
        denom = np.minimum(la, lb)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denom > 0, inter / denom, 0.0)
