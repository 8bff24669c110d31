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
