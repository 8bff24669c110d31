import numpy as np

from neardup.config import ShingleConfig
from neardup.represent.simhash import fingerprints, hamming, similarity
from neardup.text.shingle import shingle_many

CFG = ShingleConfig(n=4, char=True)


def test_similar_texts_have_closer_fingerprints_than_unrelated():
    base = "the central bank raised interest rates by half a point on tuesday"
    near = "the central bank raised interest rates by half a point on wednesday"
    far = "a local football club unveiled a new stadium plan for the coming season"
    fp = fingerprints(shingle_many([base, near, far], CFG))
    assert hamming(fp[:1], fp[1:2])[0] < hamming(fp[:1], fp[2:3])[0]
    assert similarity(fp[:1], fp[1:2])[0] > 0.8


def test_hamming_counts_bits():
    a = np.array([0, 2**64 - 1], dtype=np.uint64)
    b = np.array([1, 0], dtype=np.uint64)
    assert hamming(a, b).tolist() == [1, 64]


def test_chunked_equals_unchunked():
    texts = [f"document number {i} " * (i % 5 + 1) for i in range(30)]
    sets = shingle_many(texts, CFG)
    assert np.array_equal(fingerprints(sets, max_chunk=5), fingerprints(sets))


def test_the_compiled_loop_gives_numpys_fingerprints(monkeypatch):
    """Large batches take the compiled loop: the same fingerprint, bit for bit, as each bit's votes summed by
    NumPy, for sets of every size (empty, one value, an even count where a bit's votes can tie at 0: unset)."""
    rng = np.random.default_rng(5)
    sizes = np.r_[0, 1, 2, 4, rng.integers(0, 300, 200)]
    values = rng.integers(0, 2**64, int(sizes.sum()), dtype=np.uint64, endpoint=False)
    values[: sizes[:4].sum()] = [7, 7, 2**63 + 1, 1, 2, 3, 2**64 - 1]  # ties on the bits where 2 of 4 agree
    from neardup.text.shingle import ShingleSets

    sets = ShingleSets(values, np.r_[0, np.cumsum(sizes)].astype(np.int64))
    monkeypatch.setenv("NEARDUP_JIT", "0")
    want = fingerprints(sets)
    monkeypatch.setenv("NEARDUP_JIT", "1")
    got = fingerprints(sets)
    assert np.array_equal(got, want)
    # one value: itself; two: the bits both set (a tie unsets); four: the bits three or four of them set
    assert got[:4].tolist() == [0, 7, 1, 3]
