import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.eval.metrics import adjusted_rand_index, contingency_pairs, pair_label_scores, pairwise_scores


def test_hand_computed_ari_and_pairs():
    # pred {0,1},{2},{3}; true {0,1,2},{3}: pairs both=1, pred=1, true=3, all=6.
    pred, true = [0, 0, 1, 2], [0, 0, 0, 1]
    assert contingency_pairs(pred, true) == (1, 1, 3, 6)
    expected = 1 * 3 / 6
    assert adjusted_rand_index(pred, true) == pytest.approx((1 - expected) / ((1 + 3) / 2 - expected))
    s = pairwise_scores(pred, true)
    assert (s["precision"], s["recall"]) == (1.0, pytest.approx(1 / 3))
    assert s["f1"] == pytest.approx(0.5)


def test_null_labels_are_singletons():
    assert contingency_pairs([0, 0, 1], [None, None, "x"])[2] == 0
    assert pairwise_scores([0, 0, 1], [None, None, "x"])["precision"] == 0.0


def test_perfect_and_empty_predictions():
    assert adjusted_rand_index(["a", "a", "b"], [1, 1, 2]) == 1.0
    s = pairwise_scores([0, 1, 2], [0, 0, 1])
    assert s["precision"] == 1.0 and s["recall"] == 0.0 and s["f1"] == 0.0


@given(st.lists(st.integers(0, 4), min_size=2, max_size=30), st.lists(st.integers(0, 4), min_size=2, max_size=30))
@settings(max_examples=60, deadline=None)
def test_ari_matches_scikit_learn(a, b):
    sk = pytest.importorskip("sklearn.metrics")
    n = min(len(a), len(b))
    assert adjusted_rand_index(a[:n], b[:n]) == pytest.approx(sk.adjusted_rand_score(b[:n], a[:n]), abs=1e-9)


def test_pair_label_scores():
    s = pair_label_scores([True, False, True, False], [1, 1, 0, 0])
    assert (s["precision"], s["recall"], s["f1"]) == (0.5, 0.5, 0.5)
