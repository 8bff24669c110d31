import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rensa import RMinHash

from neardup.represent.minhash import EMPTY_VALUE, LOOP_ALGORITHM_VERSION, estimate_jaccard, permutations, signatures
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


def _by_rensa_and_loop(monkeypatch, sets, num_perm, seed):
    monkeypatch.setenv("NEARDUP_JIT", "0")
    by_rensa = signatures(sets, num_perm, seed)
    monkeypatch.setenv("NEARDUP_JIT", "1")
    return by_rensa, signatures(sets, num_perm, seed)


loop_version = pytest.mark.skipif(RMinHash.ALGORITHM_VERSION != LOOP_ALGORITHM_VERSION,
                                  reason="rensa's sketch changed: the compiled loop is not used")


@loop_version
@pytest.mark.parametrize("num_perm", [128, 256, 64, 100, 7, 1])
@pytest.mark.parametrize("seed", [1, 0, 42, 2**63 + 5])
def test_compiled_sketch_equals_rensa(monkeypatch, num_perm, seed):
    """Sets of every size rensa's kernel treats apart (empty; short ones, whose coordinates mostly take the
    fallback; ones that fill every coordinate in the first round or need more), powers of two or not."""
    rng = np.random.default_rng(seed % 1000 + num_perm)
    sizes = [0, 1, 2, 5, 8, 9, 31, 32, 33, 100, 128, 200, 600, 3000, 0]
    sets = _sets(*[rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64) for n in sizes])
    by_rensa, by_loop = _by_rensa_and_loop(monkeypatch, sets, num_perm, seed)
    assert by_loop.dtype == np.uint32 and np.array_equal(by_rensa, by_loop)


@loop_version
def test_compiled_sketch_equals_rensa_on_a_long_document_and_shared_values(monkeypatch):
    rng = np.random.default_rng(5)
    long = rng.integers(0, 2**64 - 1, size=70_000, dtype=np.uint64)  # rensa filters ranks ahead past 65,536
    sets = _sets(long, long[:40], np.arange(10, dtype=np.uint64), [])
    by_rensa, by_loop = _by_rensa_and_loop(monkeypatch, sets, 128, 1)
    assert np.array_equal(by_rensa, by_loop)


@loop_version
@given(st.lists(st.integers(0, 60), min_size=1, max_size=8), st.integers(1, 300), st.integers(0, 2**64 - 1))
@settings(max_examples=40, deadline=None)
def test_compiled_sketch_equals_rensa_on_random_sets(sizes, num_perm, seed):
    import os
    rng = np.random.default_rng(seed % 2**32)
    sets = _sets(*[rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64) for n in sizes])
    os.environ["NEARDUP_JIT"] = "0"
    try:
        by_rensa = signatures(sets, num_perm, seed)
        os.environ["NEARDUP_JIT"] = "1"
        by_loop = signatures(sets, num_perm, seed)
    finally:
        del os.environ["NEARDUP_JIT"]
    assert np.array_equal(by_rensa, by_loop)


def test_permutations_are_rensas(monkeypatch):
    """A set of one value reaches at most three coordinates in the bucket rounds; every other coordinate
    holds the value's fallback rank ``3 << 30 | (a * h + b) >> 34`` under rensa's own kernel, which these
    ``(a, b)`` reproduce (and another seed's do not)."""
    from neardup.represent import minhash

    monkeypatch.setenv("NEARDUP_JIT", "0")
    mask = (1 << 64) - 1

    def fallback_ranks(a, b, value):
        z = ((value ^ int(a[0]) ^ minhash._FALLBACK_DOMAIN) + 0x9E37_79B9_7F4A_7C15) & mask
        z = ((z ^ (z >> 30)) * 0xBF58_476D_1CE4_E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D0_49BB_1331_11EB) & mask
        h = z ^ (z >> 31)
        return np.array([3 << 30 | ((int(x) * h + int(y)) & mask) >> 34 for x, y in zip(a, b)], dtype=np.uint32)

    a, b = permutations(128, 7)
    assert (a % 2 == 1).all() and len(set(a.tolist())) == 128
    got = signatures(_sets([12345]), 128, 7)[0]
    assert (got == fallback_ranks(a, b, 12345)).sum() >= 125
    assert (got == fallback_ranks(*permutations(128, 8), 12345)).sum() < 10
