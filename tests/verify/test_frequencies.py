"""Document frequencies counted in a hash table: the counts NumPy gives, lookups, and the memory bound."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.verify.frequencies import FrequencyTable, counts_of
from neardup.verify.overlap import idf_of_frequencies

values = st.lists(st.sampled_from([0, 1, 2, 2**63, 2**64 - 1, 12345, 2**32]) | st.integers(0, 2**64 - 1),
                  max_size=300)


def _sorted(entries):
    keys, counts = entries
    order = np.argsort(keys)
    return keys[order], counts[order]


@given(st.lists(values, min_size=1, max_size=4))
@settings(max_examples=100, deadline=None)
def test_table_counts_equal_numpy(batches):
    table = FrequencyTable(1 << 20)
    for batch in batches:
        assert table.add(np.array(batch, dtype=np.uint64))
    every = np.array([v for b in batches for v in b], dtype=np.uint64)
    keys, counts = _sorted(table.entries())
    ref_keys, ref_counts = counts_of(every)
    assert np.array_equal(keys, ref_keys) and np.array_equal(counts, ref_counts)
    probe = np.concatenate([every, np.array([3, 2**64 - 2], dtype=np.uint64)])
    expected = dict(zip(ref_keys.tolist(), ref_counts.tolist()))
    assert table.lookup(probe).tolist() == [expected.get(v, 0) for v in probe.tolist()]


def test_a_growing_table_keeps_every_count_and_merges_counts_with_amounts():
    """Many distinct values (the table doubles several times from 2**16 slots); two tables' entries merged
    with their counts as amounts equal the counts of all the values at once."""
    rng = np.random.default_rng(1)
    pool = rng.integers(0, 2**64 - 1, 300_000, dtype=np.uint64, endpoint=True)
    halves = [pool[rng.integers(0, pool.size, 400_000)] for _ in range(2)]
    parts = []
    for half in halves:
        table = FrequencyTable(1 << 26)
        assert table.add(half[:150_000]) and table.add(half[150_000:])
        parts.append(table.entries())
    assert table.bits > 17
    merged = FrequencyTable(1 << 26)
    for keys, counts in parts:
        assert merged.add(keys, counts)
    ref_keys, ref_counts = counts_of(np.concatenate(halves))
    keys, counts = _sorted(merged.entries())
    assert np.array_equal(keys, ref_keys) and np.array_equal(counts, ref_counts)
    n = 10**6
    merged.map_counts(lambda df: idf_of_frequencies(df, n, 2.0))
    got = merged.lookup(np.concatenate(halves))
    assert got.dtype == np.float64
    assert np.array_equal(got, idf_of_frequencies(ref_counts[np.searchsorted(ref_keys, np.concatenate(halves))], n, 2.0))
    absent = np.setdiff1d(np.arange(10, dtype=np.uint64), ref_keys)
    assert absent.size and merged.lookup(absent).tolist() == [0.0] * absent.size


def test_a_table_gives_up_past_its_memory_and_refuses_misuse():
    table = FrequencyTable(24 << 16)  # 2**16 slots at most: 2**15 distinct values
    assert table.max_entries == 1 << 15
    assert table.add(np.arange(1 << 15, dtype=np.uint64))  # exactly full
    assert not table.add(np.array([1 << 40], dtype=np.uint64))  # one more distinct value
    with pytest.raises(ValueError, match="unusable"):  # what it holds is a part of what was added
        table.lookup(np.array([1], dtype=np.uint64))
    calls = []

    def zero_after_the_first_block(c):
        calls.append(c.size)
        return c * (1.0 if len(calls) == 1 else 0.0)

    for bad, message in ((zero_after_the_first_block, "all zero bits"), (lambda c: c.astype(np.float32), "8-byte")):
        broken = FrequencyTable(1 << 24)
        assert broken.add(np.arange(1, 200_000, dtype=np.uint64))  # slots over several of map_counts' blocks
        with pytest.raises(ValueError, match=message):
            broken.map_counts(bad)
        with pytest.raises(ValueError, match="unusable"):
            broken.lookup(np.array([1], dtype=np.uint64))
    assert len(calls) == 2  # the first block was replaced, the second refused
    ok = FrequencyTable(1 << 20)
    assert ok.add(np.array([4, 4, 9], dtype=np.uint64))
    ok.map_counts(lambda c: c * 2.0)
    out = np.empty(3)
    assert ok.lookup(np.array([4, 9, 5], dtype=np.uint64), out) is out and out.tolist() == [4.0, 2.0, 0.0]
    with pytest.raises(ValueError, match="out must be"):
        ok.lookup(np.array([4], dtype=np.uint64), np.empty(1, dtype=np.uint64))
    with pytest.raises(ValueError, match="replaced"):
        ok.add(np.array([4], dtype=np.uint64))


@given(values, st.lists(st.tuples(st.integers(0, 300), st.integers(0, 300)), max_size=6))
@settings(max_examples=100, deadline=None)
def test_a_compacted_table_saved_as_slots_looks_up_what_it_counted_and_ranges_too(batch, spans):
    """What the weights stage saves for verification: the counts made weights, the table compacted to at most
    half full, rebuilt from its slots; its lookups, of all values or of ranges of them, are the weights."""
    every = np.array(batch, dtype=np.uint64)
    table = FrequencyTable(1 << 24)
    assert table.add(every)
    table.map_counts(lambda df: idf_of_frequencies(df, 1000, 2.0))
    before = table.lookup(every)
    table.compact()
    loaded = FrequencyTable.of_slots(table.slots.copy(), np.float64)
    assert loaded.filled == np.unique(every).size and loaded.filled * 2 <= loaded.slots.size // 2
    assert np.array_equal(loaded.lookup(every), before)
    starts = np.array([min(a, b, every.size) for a, b in spans], dtype=np.int64)
    ends = np.array([min(max(a, b), every.size) for a, b in spans], dtype=np.int64)
    out = np.full(every.size, -1.0)
    loaded.lookup_ranges(every, starts, ends, out)
    inside = np.zeros(every.size, dtype=bool)
    for a, b in zip(starts, ends):
        inside[a:b] = True
    assert np.array_equal(out[inside], before[inside]) and (out[~inside] == -1.0).all()


def test_a_grown_table_compacts_to_half_full_and_refuses_bad_slots():
    table = FrequencyTable(1 << 26)
    assert table.add(np.arange(100_000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    assert table.slots.size // 2 == 1 << 19  # grown while a quarter full
    table.compact()
    assert table.slots.size // 2 == 1 << 18 and table.lookup(np.array([0], dtype=np.uint64)).tolist() == [1]
    with pytest.raises(ValueError, match="power of two"):
        FrequencyTable.of_slots(np.zeros(6, dtype=np.uint64), np.float64)
