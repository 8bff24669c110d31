import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.represent.minhash import EMPTY_VALUE, estimate_jaccard, signatures
from neardup.text.shingle import ShingleSets


def _sets(*arrays):
    values = np.concatenate([np.asarray(a, dtype=np.uint64) for a in arrays])
    offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum([len(a) for a in arrays], out=offsets[1:])
    return ShingleSets(values, offsets)


@given(st.integers(0, 400), st.integers(0, 400), st.integers(1, 400), st.integers(0, 2**31))
@settings(max_examples=40, deadline=None)
def test_estimate_is_close_to_exact_jaccard(shared, only_a, only_b, seed):
    rng = np.random.default_rng(seed)
    pool = np.unique(rng.integers(0, 2**63, size=shared + only_a + only_b + 10, dtype=np.uint64))
    if pool.size < shared + only_a + only_b:
        return
    rng.shuffle(pool)
    common, a_only = pool[:shared], pool[shared : shared + only_a]
    b_only = pool[shared + only_a : shared + only_a + only_b]
    a, b = np.sort(np.concatenate([common, a_only])), np.sort(np.concatenate([common, b_only]))
    if a.size == 0:
        return
    exact = shared / (shared + only_a + only_b)
    sig = signatures(_sets(a, b), num_perm=256, seed=seed % 1000)
    # 256 permutations: standard error <= 0.5/16; allow 5 sigma.
    assert abs(estimate_jaccard(sig[0], sig[1]) - exact) <= 5 * 0.5 / 16


def test_signatures_are_seeded_and_reproducible():
    s = _sets([1, 2, 3], [4, 5, 6])
    assert np.array_equal(signatures(s, 64, seed=3), signatures(s, 64, seed=3))
    assert not np.array_equal(signatures(s, 64, seed=3), signatures(s, 64, seed=4))


def test_chunking_does_not_change_signatures():
    rng = np.random.default_rng(0)
    arrays = [np.unique(rng.integers(0, 2**63, size=rng.integers(0, 50), dtype=np.uint64)) for _ in range(40)]
    s = _sets(*arrays)
    assert np.array_equal(signatures(s, 32, max_chunk=7), signatures(s, 32, max_chunk=1 << 16))


def test_empty_set_gets_the_empty_signature():
    sig = signatures(_sets([], [1, 2]), 16)
    assert (sig[0] == EMPTY_VALUE).all() and not (sig[1] == EMPTY_VALUE).all()


def test_identical_sets_have_identical_signatures():
    sig = signatures(_sets([7, 8, 9], [9, 8, 7][::-1]), 128)
    assert estimate_jaccard(sig[0], sig[1]) == 1.0
