"""Every compiled loop equals the NumPy code of its job, bit for bit, on random inputs; a run with compiled
loops gives the same output as one without."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import jit
from neardup.config import NormalizeConfig, ShingleConfig
from neardup.engine import tasks
from neardup.engine.tiles import _Joined
from neardup.text import normalize, shingle
from neardup.text.shingle import ShingleSets
from neardup.verify import overlap, passages


@pytest.fixture
def compiled_loops(monkeypatch):
    """Compiled loops at any size (``NEARDUP_JIT=1``); the NumPy code with ``switch(False)``."""
    def switch(on: bool) -> None:
        monkeypatch.setenv("NEARDUP_JIT", "1" if on else "0")
    switch(True)
    return switch


texts = st.lists(st.text(alphabet="ab cé中\n😀", max_size=40), max_size=12)


@given(texts, st.integers(1, 9), st.sampled_from([1, 1, 2, 3]), st.booleans())
@settings(max_examples=150, deadline=None)
def test_shingle_loop_equals_numpy(docs, n, sample, char):
    import os
    cfg = ShingleConfig(n=n, char=char, sample=sample)
    os.environ["NEARDUP_JIT"] = "0"
    try:
        ref = shingle.shingle_many(docs, cfg)
        os.environ["NEARDUP_JIT"] = "1"
        got = shingle.shingle_many(docs, cfg)
    finally:
        del os.environ["NEARDUP_JIT"]
    assert np.array_equal(ref.values, got.values) and np.array_equal(ref.offsets, got.offsets)


# Texts made of what the compiled normalization treats apart: in ASCII, hyphens, line breaks with "\\r", tabs, "_"
# (which joins words at a break but is no letter), capitals, digits; beyond it, letters and digits that case
# folding or NFKC change (into several letters, or ASCII), marks, invisible characters, spaces and separators.
_PIECES = ["a", "Ab", "Z9", "_", "-", "\n", "\r", "\t", " ", "  ", "-\n", "- \t\r\n \t", "x-\ny", "!", "@", "\x0b",
           "é", "ＯＩＬ", "Straße", "ǅ", "ﬁ", "e\u0301", "\u200b", "中文", "٣", "²", "Ⅻ", "\u00a0", "\u2028", "а", "é-\nb",
           "\x1c"]
raw_texts = st.lists(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join), max_size=10)


@given(raw_texts, st.booleans(), st.booleans())
@settings(max_examples=300, deadline=None)
def test_normalize_loop_equals_normalize(docs, dehyphenate, casefold):
    import os
    cfg = NormalizeConfig(dehyphenate=dehyphenate, casefold=casefold)
    expected = [normalize.normalize(t, cfg) for t in docs]
    os.environ["NEARDUP_JIT"] = "1"
    try:
        units, lengths = normalize.normalized_code_points(docs, cfg)
    finally:
        del os.environ["NEARDUP_JIT"]
    assert units.dtype == np.uint32 and lengths.tolist() == [len(t) for t in expected]
    assert units.tobytes().decode("utf-32-le") == "".join(expected)


@given(raw_texts, st.integers(1, 5), st.sampled_from([1, 1, 3]), st.booleans())
@settings(max_examples=150, deadline=None)
def test_word_shingles_of_a_method_equal_those_of_its_numpy_path(docs, n, sample, casefold):
    """Words normalized, split and hashed by compiled loops (a batch large enough) against the words
    :func:`~neardup.text.normalize.normalize_words` gives, hashed by xxhash (compiled loops off)."""
    import os

    from neardup import methods
    from neardup.config import DedupConfig

    cfg = DedupConfig(method="minhash").replace(shingle__n=n, shingle__sample=sample, normalize__casefold=casefold)
    os.environ["NEARDUP_JIT"] = "0"
    try:
        ref = methods.get(cfg).shingle(docs, max_chars=45)
        os.environ["NEARDUP_JIT"] = "1"
        got = methods.get(cfg).shingle(docs, max_chars=45)
    finally:
        del os.environ["NEARDUP_JIT"]
    assert np.array_equal(ref.values, got.values) and np.array_equal(ref.offsets, got.offsets)


def test_char_shingles_of_a_method_equal_those_of_normalized_texts(compiled_loops):
    from neardup import methods
    from neardup.config import DedupConfig

    docs = ["Oil prices ROSE 3%-\n4% in London_trading;\tcafé-\ncrème", "a-\r\nb - \nc", "", "UPPER-\n_lower"] * 50
    for cfg in (DedupConfig(method="minhash").replace(shingle__char=True, shingle__n=5),
                DedupConfig(method="minhash").replace(shingle__char=True, shingle__n=3, normalize__casefold=False)):
        got = methods.get(cfg).shingle(docs, max_chars=30)
        ref = shingle.shingle_many([normalize.normalize(t[:30], cfg.normalize) for t in docs], cfg.shingle)
        assert np.array_equal(got.values, ref.values) and np.array_equal(got.offsets, ref.offsets)


def test_shingle_loop_sorts_long_documents_and_clustered_hashes(compiled_loops):
    rng = np.random.default_rng(0)
    lengths = np.array([5000, 0, 3, 700, 1], dtype=np.int64)
    units = rng.integers(0, 2**64 - 1, size=int(lengths.sum()), dtype=np.uint64)
    units[:2000] = units[0]  # a long run of one unit: many repeated grams
    for sample in (1, 2, 1000):  # 1000: every kept hash in the lowest 1/1000 of the range
        got = shingle._ngram_sets(units, lengths, 4, sample)
        compiled_loops(False)
        ref = shingle._ngram_sets(units, lengths, 4, sample)
        compiled_loops(True)
        assert np.array_equal(ref.values, got.values) and np.array_equal(ref.offsets, got.offsets)
        assert all((np.diff(got[i].astype(np.float64)) > 0).all() for i in range(len(got)))


@given(st.lists(st.lists(st.integers(0, 60), max_size=50), min_size=1, max_size=20), st.integers(0, 2**16),
       st.booleans())
@settings(max_examples=100, deadline=None)
def test_merge_loop_equals_sorting_and_marking(docs, seed, weighted):
    sets_list = [np.unique(np.array(d, dtype=np.uint64)) for d in docs]
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([s.size for s in sets_list])
    sets = ShingleSets(np.concatenate(sets_list), offsets)
    weights = overlap.idf_weights(sets, 2.0) if weighted else None
    rng = np.random.default_rng(seed)
    left, right = rng.integers(0, len(docs), size=30), rng.integers(0, len(docs), size=30)
    merged = overlap._merged_intersections(sets, left, right, weights)
    import os
    os.environ["NEARDUP_JIT"] = "0"
    try:
        sorted_ = overlap.intersection_sizes(sets, left, right, weights=weights)
    finally:
        del os.environ["NEARDUP_JIT"]
    assert merged.dtype == sorted_.dtype and np.array_equal(merged, sorted_)
    if sets.values.size:
        marked = overlap._marked_intersections(sets, left, right, weights, overlap.value_codes(sets.values)[0])
        assert np.array_equal(merged, marked)
        cut = int(offsets[len(docs) // 2])  # the same sets as two arrays read as one (the engine's tiles)
        joined = ShingleSets(_Joined(sets.values[:cut], sets.values[cut:]), offsets)
        halves = None if weights is None else _Joined(weights[:cut], weights[cut:])
        assert np.array_equal(overlap._merged_intersections(joined, left, right, halves), merged)
        inside = max(0, min(int(sets.values.size) - 1, cut + 1))  # two arrays cut inside a set: read across them
        joined = ShingleSets(_Joined(sets.values[:inside], sets.values[inside:]), offsets)
        halves = None if weights is None else _Joined(weights[:inside], weights[inside:])
        assert np.array_equal(overlap._merged_intersections(joined, left, right, halves), merged)


@pytest.mark.parametrize("parts", [2, 16, 1024])
def test_grouping_loops_equal_radix_sort(compiled_loops, parts):
    values = np.random.default_rng(parts).integers(0, 2**64 - 1, size=50_000, dtype=np.uint64)
    values[:100] = 0  # partition 0 crowded
    items = np.random.default_rng(1).random(values.size)
    got, counts = tasks.grouped(values, parts)
    back = tasks.ungrouped(values, parts, items)
    compiled_loops(False)
    ref, ref_counts = tasks.grouped(values, parts)
    assert np.array_equal(got, ref) and np.array_equal(counts, ref_counts)
    assert np.array_equal(back, tasks.ungrouped(values, parts, items))
    assert np.array_equal(tasks.ungrouped(values, parts, got), values)  # the inverse


# Texts of few distinct words, so that pairs share many runs (and grams repeat past the cap on their
# matches); with ASCII and non-ASCII words and hyphen breaks, and "™" between words (a raw slice holding it
# normalizes to one more word, so the check by normalization rejects passages across it).
_WORDS = ["oil", "Oil", "fell", "in", "London", "3%", "rose", "café", "ＯＩＬ", "the-\nend", "a", "a", "a", "e\u0301",
          "a\u200bb", "Straße", "中文", "😀", "x_y", "-\n", "ﬁ", "™"]
passage_texts = st.lists(st.lists(st.sampled_from(_WORDS), max_size=80).map(" ".join), min_size=1, max_size=8)


@given(passage_texts, st.data(), st.integers(1, 4), st.integers(1, 4))
@settings(max_examples=150, deadline=None)
def test_passage_loops_equal_numpy(docs, data, max_passages, min_words):
    import os
    index = st.integers(0, len(docs) - 1)
    pairs = data.draw(st.lists(st.tuples(index, index), min_size=1, max_size=12))
    a, b = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    found = []
    try:
        for on in ("0", "1"):
            os.environ["NEARDUP_JIT"] = on
            w = passages.words_of(docs)
            found.append(([w.hashes, w.starts, w.ends, w.offsets, w.exact],
                          passages.passages(docs, a, b, max_passages=max_passages, min_words=min_words)))
    finally:
        del os.environ["NEARDUP_JIT"]
    (ref_words, ref), (got_words, got) = found
    assert all(np.array_equal(x, y) for x, y in zip(ref_words, got_words))
    assert ref == got


def test_raw_word_table_equals_the_raw_word_pattern_at_every_code_point():
    table = passages._raw_word_table()
    assert table.size == 0x110000
    assert all(bool(passages._RAW_WORD_RE.fullmatch(chr(c))) == table[c] for c in range(0x110000))


def test_passage_loops_cap_repeated_grams_and_runs_tried_as_numpy_does(compiled_loops):
    """Long texts of four words: every gram repeats far past the matches kept of it, and a pair holds far
    more runs than are tried."""
    rng = np.random.default_rng(1)
    docs = [" ".join(rng.choice(["oil", "fell", "in", "London"], size=n)) for n in (3000, 2500, 40, 0)]
    docs.append(" ".join(["oil"] * 500))
    # with itself: 256 runs of "oil" overlap the first one taken; the run of the ten words after them is
    # the 257th, one past those tried (244 "oil"s: the 256th, and a second passage)
    tail = " ".join(f"u{i}" for i in range(10))
    docs += [" ".join(["oil"] * 245 + [tail]), " ".join(["oil"] * 244 + [tail])]
    a, b = np.array([0, 1, 0, 4, 2, 3, 5, 6]), np.array([1, 0, 4, 4, 0, 1, 5, 6])
    got = passages.passages(docs, a, b, max_passages=5)
    compiled_loops(False)
    ref = passages.passages(docs, a, b, max_passages=5)
    assert got == ref
    assert sum(map(len, got)) >= 15  # the random texts share passages, and "oil" x500 shares with itself
    assert (len(got[6]), len(got[7])) == (1, 2)


def test_pays_follows_size_and_switch(monkeypatch):
    monkeypatch.delenv("NEARDUP_JIT", raising=False)
    assert not jit.pays(jit.MIN_ELEMENTS - 1) and jit.pays(jit.MIN_ELEMENTS)
    monkeypatch.setenv("NEARDUP_JIT", "0")
    assert not jit.pays(10**9)


def test_run_with_compiled_loops_equals_numpy_run(compiled_loops):
    from neardup.api import dedup

    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(400)]
    base = [" ".join(rng.choice(words, size=60)) for _ in range(40)]
    docs = base + [t[: int(len(t) * 0.8)] + " tail" for t in base[:15]]
    records = [{"id": f"d{i}", "text": t} for i, t in enumerate(docs)]
    results = []
    for on in (True, False):
        compiled_loops(on)
        for char in (False, True):
            r = dedup(records, method="minhash", engine="memory", shingle__char=char, shingle__n=5 if char else 4)
            results.append((r.left.tolist(), r.right.tolist(), r.scores.tolist(), r.cluster_ids))
    assert results[0] == results[2] and results[1] == results[3]
    assert len(results[0][0]) >= 15 and len(results[1][0]) >= 15  # the planted copies were found


def test_ctrl_c_during_a_compiled_call_interrupts_after_it(monkeypatch):
    """numba and llvmlite run Python code inside a call (loading a cached loop, ctypes callbacks), where a
    KeyboardInterrupt would be swallowed or turned into a SystemError: the interrupt comes after the call."""
    import os
    import signal

    import numba

    finished = []

    def machine(*args):
        os.kill(os.getpid(), signal.SIGINT)  # Python runs the handler at its next instruction, inside the call
        total = sum(range(10_000))
        finished.append(total)
        return total

    monkeypatch.setattr(numba, "njit", lambda **options: lambda fn: machine)
    loop = jit.compiled(lambda a: a)
    with pytest.raises(KeyboardInterrupt):
        loop(1)
    assert finished == [sum(range(10_000))]  # the call ran to its end
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
