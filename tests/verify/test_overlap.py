import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.config import ShingleConfig
from neardup.text.shingle import ShingleSets, shingle_many
from neardup.verify.overlap import (
    _marked_intersections,
    idf_weights,
    intersection_sizes,
    jaccard,
    overlap_coefficient,
    score_pairs,
    value_codes,
)

int_sets = st.lists(st.sets(st.integers(0, 40), max_size=25), min_size=2, max_size=8)


def _sets(py_sets):
    arrays = [np.array(sorted(s), dtype=np.uint64) for s in py_sets]
    offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum([a.size for a in arrays], out=offsets[1:])
    values = np.concatenate(arrays) if arrays else np.empty(0, dtype=np.uint64)
    return ShingleSets(values, offsets)


@given(int_sets)
@settings(max_examples=80, deadline=None)
def test_vectorised_scores_equal_set_arithmetic(py_sets):
    sets = _sets(py_sets)
    n = len(py_sets)
    left, right = np.triu_indices(n, k=1)
    inter = intersection_sizes(sets, left, right, block=3)
    jac = score_pairs(sets, left, right, "jaccard")
    ovl = score_pairs(sets, left, right, "overlap")
    for k, (a, b) in enumerate(zip(left, right)):
        A, B = py_sets[a], py_sets[b]
        assert inter[k] == len(A & B)
        assert jac[k] == (len(A & B) / len(A | B) if A | B else 0.0)
        assert ovl[k] == (len(A & B) / min(len(A), len(B)) if A and B else 0.0)


@given(st.lists(st.sets(st.integers(0, 2**64 - 1), max_size=60), min_size=2, max_size=10),
       st.lists(st.integers(0, 9), min_size=2, max_size=40))
@settings(max_examples=80, deadline=None)
def test_marking_gives_the_sorted_intersections_to_the_last_bit(py_sets, picks):
    """The in-memory marking path and the chunked engines' sorting path must agree exactly (engines
    are compared score for score), weighted or not, whatever the pairs' order and repeats."""
    sets = _sets(py_sets)
    n = len(py_sets)
    left = np.array([p % n for p in picks[::2]], dtype=np.int64)
    right = np.array([(p * 7 + 3) % n for p in picks[1::2]][: left.size], dtype=np.int64)
    left = left[: right.size]
    codes, counts = value_codes(sets.values)
    weights = idf_weights(sets, 2.0) * np.pi  # irrational sums: any change of order shows in the last bits
    for w in (None, weights):
        sorted_way = intersection_sizes(sets, left, right, block=3, weights=w)
        marked = _marked_intersections(sets, left, right, w, codes)
        assert sorted_way.dtype == marked.dtype and np.array_equal(sorted_way, marked)
    assert counts.sum() == sets.values.size and counts.size == np.unique(sets.values).size


@given(st.lists(st.integers(0, 2**64 - 1) | st.integers(0, 30), max_size=300))
@settings(max_examples=80, deadline=None)
def test_small_inputs_sort_to_the_codes_arrow_gives(values):
    """Small inputs are coded by sorting (no pyarrow.compute import): the same codes, numbered by first
    occurrence, and the same counts as Arrow's dictionary encoding (``SMALL_VALUES`` moved to force it)."""
    import neardup.verify.overlap as overlap

    arr = np.array(values, dtype=np.uint64)
    small = value_codes(arr)
    saved = overlap.SMALL_VALUES
    overlap.SMALL_VALUES = -1
    try:
        arrow = value_codes(arr)
    finally:
        overlap.SMALL_VALUES = saved
    assert small[0].dtype == arrow[0].dtype
    assert np.array_equal(small[0], arrow[0]) and np.array_equal(small[1], arrow[1])


def test_hand_computed_values():
    a, b = np.array([1, 2, 3, 4], dtype=np.uint64), np.array([3, 4, 5], dtype=np.uint64)
    assert jaccard(a, b) == 2 / 5
    assert overlap_coefficient(a, b) == 2 / 3


def test_overlap_forgives_abridgement_and_jaccard_does_not():
    full = "one two three four five six seven eight nine ten eleven twelve"
    abridged = "one two three four five six"
    sets = shingle_many([full, abridged], ShingleConfig(n=2))
    l, r = np.array([0]), np.array([1])
    assert score_pairs(sets, l, r, "overlap")[0] == 1.0
    assert score_pairs(sets, l, r, "jaccard")[0] < 0.5


def test_weighted_overlap_discounts_shared_boilerplate():
    # Ten notices from one template with different figures; one of them is re-sent.
    notices = [f"quarterly dividend {i} cents vs {i + 1} cents pay april record march" for i in range(10)]
    texts = notices + [notices[0]]
    sets = shingle_many(texts, ShingleConfig(n=2))
    l, r = np.array([0, 0]), np.array([1, 10])
    plain = score_pairs(sets, l, r, "overlap")
    weighted = score_pairs(sets, l, r, "weighted-overlap")
    assert weighted[1] == pytest.approx(1.0)  # the re-send
    assert weighted[0] < plain[0]  # template siblings drop
    w = idf_weights(sets, power=1)
    assert w.shape == sets.values.shape and (w > 0).all()
