import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.candidates.allpairs import shared_shingle_pairs
from neardup.candidates.buckets import by_key, count_pairs, pairs_from_keys, unique_pairs
from neardup.candidates.hamming import hamming_pairs, table_plan
from neardup.candidates.lsh import collision_pairs, collision_probability, lsh_pairs, optimal_bands_rows
from neardup.config import ShingleConfig
from neardup.represent.minhash import signatures
from neardup.represent.simhash import hamming
from neardup.text.shingle import shingle_many


@given(st.lists(st.integers(0, 6), min_size=0, max_size=40))
@settings(max_examples=80, deadline=None)
def test_pairs_from_keys_matches_brute_force(keys):
    keys_arr = np.array(keys, dtype=np.int64)
    docs = np.arange(len(keys), dtype=np.int64)
    left, right = pairs_from_keys(keys_arr, docs)
    got = set(zip(left.tolist(), right.tolist()))
    want = {(i, j) for i, j in itertools.combinations(range(len(keys)), 2) if keys[i] == keys[j]}
    assert got == want


@given(keys=st.lists(st.integers(0, 2**64 - 1), max_size=60), spread=st.integers(1, 2**64 - 1),
       dtype=st.sampled_from([np.uint64, np.int64, np.int32, np.uint16]),
       docs_kind=st.sampled_from(["range", "shuffled", "repeats", "negative"]), seed=st.integers(0, 2**16),
       docs_dtype=st.sampled_from([np.int64, np.int32, np.uint32, np.uint64]))
@settings(max_examples=300, deadline=None)
def test_by_key_orders_as_lexsort_does(keys, spread, dtype, docs_kind, seed, docs_dtype):
    """Keys from all distinct to a few repeated values, of every dtype the candidate stages use, and documents
    in order, shuffled, repeated or (the fallback) negative: the order of ``np.lexsort((docs, keys))``."""
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    k = np.array([x % spread for x in keys], dtype=object)
    k = np.array([info.min + int(x) % (int(info.max) - int(info.min) + 1) for x in k]).astype(dtype)
    n = k.size
    docs = {"range": np.arange(n), "shuffled": rng.permutation(n), "repeats": rng.integers(0, max(1, n // 3), n),
            "negative": rng.integers(-5, 5, n)}[docs_kind]
    docs = docs.astype(np.int64 if docs_kind == "negative" else docs_dtype)
    order = np.lexsort((docs, k))
    got_k, got_d = by_key(k, docs)
    assert got_k.dtype == k.dtype and got_d.dtype == docs.dtype
    assert got_k.tolist() == k[order].tolist() and got_d.tolist() == docs[order].tolist()


@given(st.integers(2, 600), st.integers(1, 30), st.integers(1, 40), st.integers(0, 2**32))
@settings(max_examples=60, deadline=None)
def test_pairs_from_keys_drops_repeats_a_chunk_at_a_time(n, n_keys, chunk, seed):
    """Documents sharing many keys (each pair emitted once per key it shares, as the n-gram index does), with
    the chunk of pairs made before repeats are dropped as small as one pair: the distinct sorted pairs of
    every key, the same as one ``unique_pairs`` of them all, through every merge of chunks."""
    import neardup.candidates.buckets as buckets

    rng = np.random.default_rng(seed)
    docs = rng.integers(0, n // 3 + 2, n).astype(np.int64)  # a document holds several keys, repeats among them
    keys = rng.integers(0, n_keys, n).astype(np.uint64)
    raw_left, raw_right = pairs_from_keys(keys, docs, unique=False)
    want = unique_pairs(raw_left, raw_right)
    before = buckets.PAIR_CHUNK
    try:
        buckets.PAIR_CHUNK = chunk
        got = pairs_from_keys(keys, docs)
    finally:
        buckets.PAIR_CHUNK = before
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
    assert got[0].size == len({(a, b) for a, b in zip(raw_left.tolist(), raw_right.tolist()) if a != b})


def test_distinct_is_numpys_unique_by_one_sort():
    from neardup.arrays import distinct

    rng = np.random.default_rng(4)
    for dtype in (np.int64, np.int32, np.uint64, np.uint8, np.bool_):
        for n in (0, 1, 2, 1000):
            a = rng.integers(0, 2 if dtype is np.bool_ else 50, (n, 2) if n == 1000 else n).astype(dtype)
            got = distinct(a)
            assert got.dtype == a.dtype and np.array_equal(got, np.unique(a))
    floats = np.array([2.0, np.nan, 1.0, np.nan, 2.0])  # floats go to np.unique: one NaN, as it keeps
    assert np.array_equal(distinct(floats), np.unique(floats), equal_nan=True)


def test_big_groups_become_stars_or_are_skipped():
    keys = np.zeros(10, dtype=np.int64)
    docs = np.arange(10, dtype=np.int64)
    left, right = pairs_from_keys(keys, docs, star_above=4)
    assert set(left.tolist()) == {0} and right.tolist() == list(range(1, 10))
    assert pairs_from_keys(keys, docs, max_group=4)[0].size == 0


def test_unique_and_count_pairs():
    left, right = unique_pairs(np.array([2, 1, 1]), np.array([1, 2, 1]))
    assert list(zip(left.tolist(), right.tolist())) == [(1, 2)]
    l, r, c = count_pairs(np.array([0, 0, 0, 1]), np.array([1, 1, 2, 2]))
    assert list(zip(l.tolist(), r.tolist(), c.tolist())) == [(0, 1, 2), (0, 2, 1), (1, 2, 1)]


def test_optimal_bands_rows_fit_and_move_with_threshold():
    for t in (0.2, 0.5, 0.8):
        b, r = optimal_bands_rows(t, 128)
        assert b * r <= 128
        # The S-curve crosses 0.5 near the threshold.
        assert collision_probability(min(t + 0.3, 1.0), b, r) > 0.5
    assert optimal_bands_rows(0.8, 128)[1] > optimal_bands_rows(0.2, 128)[1]


def _corpus():
    base = [f"story {i} about " + " ".join(f"w{i}_{k}" for k in range(40)) for i in range(30)]
    dups = [t.replace(f"w{i}_3 ", "changed ") for i, t in enumerate(base[:10])]
    return base + dups


def test_lsh_finds_planted_near_duplicates_and_excludes_empty():
    sets = shingle_many(_corpus() + ["", ""], ShingleConfig(n=3))
    sig = signatures(sets, 128)
    left, right = lsh_pairs(sig, *optimal_bands_rows(0.5, 128), exclude=sets.sizes == 0)
    pairs = set(zip(left.tolist(), right.tolist()))
    assert {(i, 30 + i) for i in range(10)} <= pairs
    assert not any(40 in p or 41 in p for p in pairs)  # two empty docs never pair


def test_collision_rule_counts_agreeing_positions():
    sets = shingle_many(_corpus(), ShingleConfig(n=3))
    sig = signatures(sets, 64)
    left, right, counts = collision_pairs(sig, min_collisions=20)
    brute = {(i, j) for i, j in itertools.combinations(range(len(sets)), 2) if (sig[i] == sig[j]).sum() >= 20}
    assert set(zip(left.tolist(), right.tolist())) == brute
    assert all(c == (sig[i] == sig[j]).sum() for i, j, c in zip(left, right, counts))


def test_inverted_index_counts_shared_shingles_exactly():
    texts = ["a b c d e", "a b c d f", "q r s t", "a b c d e"]
    sets = shingle_many(texts, ShingleConfig(n=2))
    left, right, shared = shared_shingle_pairs(sets)
    got = {(int(a), int(b)): int(c) for a, b, c in zip(left, right, shared)}
    for (a, b), c in got.items():
        assert c == np.intersect1d(sets[a], sets[b]).size
    assert got[(0, 3)] == 4 and (0, 2) not in got


@given(st.lists(st.integers(0, 2**64 - 1), min_size=2, max_size=25), st.integers(0, 12), st.integers(0, 2**32))
@settings(max_examples=40, deadline=None)
def test_hamming_pairs_has_no_false_negatives(values, k, seed):
    rng = np.random.default_rng(seed)
    fps = np.array(values, dtype=np.uint64)
    # Plant near neighbours: flip up to k bits of some values.
    flips = [int(v) ^ int(sum(1 << int(b) for b in rng.choice(64, size=rng.integers(0, k + 1), replace=False)))
             for v in values[:5]]
    fps = np.concatenate([fps, np.array(flips, dtype=np.uint64)])
    left, right, dist = hamming_pairs(fps, k)
    got = set(zip(left.tolist(), right.tolist()))
    want = {(i, j) for i, j in itertools.combinations(range(fps.size), 2)
            if hamming(fps[i : i + 1], fps[j : j + 1])[0] <= k}
    assert got == want


def test_table_plan_keeps_keys_wide_enough():
    blocks, m = table_plan(6)
    assert m * 64 // blocks >= 16 and blocks == 6 + m


def test_where_no_plan_has_16_bit_keys_the_plan_buckets_fewer_pairs_than_one_block_keys():
    """Distance 9 within 64 tables: no plan has 16-bit keys. One block a key (10 tables of 6-bit keys) put
    a large share of the corpus in each bucket; the plan taken (55 tables of two blocks, 11-12 bits) buckets
    several times fewer pairs over all its tables, and finds the same pairs within the distance."""
    from neardup.candidates.hamming import _block_masks, table_keys, table_masks

    assert table_plan(9) == (11, 2) and table_masks(9).size == 55
    rng = np.random.default_rng(2)
    fps = rng.integers(0, 2**64, 4000, dtype=np.uint64, endpoint=False)
    fps[2000:] = fps[:2000] ^ (np.uint64(1) << rng.integers(0, 64, 2000).astype(np.uint64))  # near pairs

    def bucketed(masks: np.ndarray) -> int:
        counts = [np.unique(keys, return_counts=True)[1] for keys in table_keys(fps, masks).T]
        return sum(int((c * (c - 1) // 2).sum()) for c in counts)

    one_block = np.array(_block_masks(10), dtype=np.uint64)
    assert bucketed(table_masks(9)) * 4 < bucketed(one_block)
    left, right, _ = hamming_pairs(fps, 9)
    assert set(zip(left.tolist(), right.tolist())) >= {(i, i + 2000) for i in range(2000)}


@given(st.integers(2, 400), st.integers(1, 40), st.integers(0, 12), st.integers(0, 2**32))
@settings(max_examples=40, deadline=None)
def test_near_bucket_pairs_compiled_and_numpy_are_the_bucket_pairs_within_the_distance(n, n_keys, k, seed):
    """A table's pairs within the distance, made by the compiled loop (without the others) or by NumPy: both
    are the pairs of its buckets whose fingerprints are within ``k`` bits, each once, the lower document
    first, whatever order the documents come in."""
    import os

    from neardup.candidates.hamming import near_bucket_pairs

    rng = np.random.default_rng(seed)
    keys = rng.integers(0, n_keys, n).astype(np.uint64)
    docs = rng.permutation(3 * n)[:n].astype(np.int64)
    fps = rng.integers(0, 2**64, n, dtype=np.uint64, endpoint=False)
    near = rng.random(n) < 0.5
    fps[near] = fps[0] ^ rng.integers(0, 64, int(near.sum())).astype(np.uint64)  # a few bits off the first
    want = {(int(min(docs[i], docs[j])), int(max(docs[i], docs[j])))
            for i, j in itertools.combinations(range(n), 2)
            if keys[i] == keys[j] and hamming(fps[i : i + 1], fps[j : j + 1])[0] <= k}
    before = os.environ.get("NEARDUP_JIT")
    try:
        for jit in ("0", "1"):
            os.environ["NEARDUP_JIT"] = jit
            left, right = near_bucket_pairs(keys, docs, fps, k)
            assert left.size == len(want) and set(zip(left.tolist(), right.tolist())) == want
    finally:
        if before is None:
            os.environ.pop("NEARDUP_JIT", None)
        else:
            os.environ["NEARDUP_JIT"] = before


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_near_pairs_split_over_threads_are_the_one_thread_pairs_in_the_same_order(seed, monkeypatch):
    """The compiled loop's buckets split over threads: runs of whole buckets (a bucket's rows never in two
    runs) covering every row, at most one a thread; the pairs written by the threads are those of one thread,
    in the same order, however many threads and whatever the buckets' sizes (one bucket holding most rows)."""
    from neardup.candidates import hamming as hm

    monkeypatch.setattr(hm, "SPLIT_PAIRS", 1)
    rng = np.random.default_rng(seed)
    n = 3000
    keys = np.sort(np.where(rng.random(n) < 0.4, 5, rng.integers(0, 60, n))).astype(np.uint64)
    docs = rng.permutation(n).astype(np.int64)
    fps = rng.integers(0, 2**64, n, dtype=np.uint64, endpoint=False)
    fps[::3] = fps[0] ^ rng.integers(0, 2**16, fps[::3].size).astype(np.uint64)
    one = hm._near_pairs(keys, docs, fps, 12, threads=1)
    assert one[0].size > 1000
    for threads in (2, 3, 7, 64):
        runs = hm._bucket_runs(keys, threads)
        assert runs[0] == 0 and runs[-1] == n and (np.diff(runs) > 0).all() and len(runs) - 1 <= threads
        assert all(keys[b - 1] != keys[b] for b in runs[1:-1].tolist())
        left, right = hm._near_pairs(keys, docs, fps, 12, threads=threads)
        assert np.array_equal(left, one[0]) and np.array_equal(right, one[1])
    assert len(hm._bucket_runs(keys, 3)) == 3  # the bucket of 40% of the rows holds most pairs: two runs
    assert hm._bucket_runs(np.repeat(np.arange(30), 100), 3).tolist() == [0, 1000, 2000, 3000]


def test_band_keys_a_block_of_documents_at_a_time_equal_the_whole_signature_at_once():
    """Keys computed in blocks of documents (across the blocks' edges, every integer type a sketch may have)
    are the keys of the whole table in one pass: equal keys, equal buckets."""
    from neardup.candidates import lsh

    rng = np.random.default_rng(7)
    for n in (0, 1, lsh._KEY_DOCS, 2 * lsh._KEY_DOCS + 5):
        for dtype in (np.uint32, np.uint64, np.int32, np.int64):
            info = np.iinfo(dtype)
            sig = rng.integers(info.min, info.max, size=(n, 20), dtype=dtype, endpoint=True)
            for bands, rows, first in ((5, 4, 0), (3, 6, 2), (1, 1, 9)):
                block = sig[:, : bands * rows].reshape(n, bands, rows)
                seeds = np.uint64(0x9E3779B97F4A7C15) * np.arange(first + 1, first + bands + 1, dtype=np.uint64)
                with np.errstate(over="ignore"):
                    want = np.broadcast_to(seeds, (n, bands)).copy()
                    for j in range(rows):
                        want ^= block[:, :, j].astype(np.uint64)
                        want *= np.uint64(0x100000001B3)
                        want ^= want >> np.uint64(29)
                assert np.array_equal(lsh.band_keys(sig, bands, rows, first), want)


def test_a_bands_bucket_pairs_are_distinct_and_ordered_without_sorting():
    """A band puts each document in one bucket, so its pairs are distinct with the lower document first: the
    same pairs as the distinct sorted ones, stars of large buckets included."""
    from neardup.candidates.lsh import band_bucket_pairs

    rng = np.random.default_rng(1)
    keys = rng.integers(0, 300, 5000).astype(np.uint64)
    keys[rng.choice(5000, 400, replace=False)] = 7  # one bucket past max_bucket: a star
    docs = rng.permutation(20_000)[:5000].astype(np.int64)
    left, right = band_bucket_pairs(keys, docs, max_bucket=200)
    assert bool(np.all(left < right))
    codes = left * 20_000 + right
    assert np.unique(codes).size == codes.size
    ul, ur = unique_pairs(left, right)
    assert np.array_equal(np.sort(codes), ul * 20_000 + ur) and np.count_nonzero(keys == 7) - 1 <= left.size
