import itertools

import numpy as np
import pytest

pytest.importorskip("faiss")
pytest.importorskip("usearch")

from neardup.candidates.vectors import VectorIndex, knn_pairs, partial_pairs, range_pairs, search_recall  # noqa: E402

pytestmark = pytest.mark.neural


def _unit(x):
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _planted(n=300, dim=32, seed=0):
    rng = np.random.default_rng(seed)
    base = _unit(rng.normal(size=(n, dim)))
    near = _unit(base[:50] + 0.05 * rng.normal(size=(50, dim)))
    return np.vstack([base, near])


def test_exact_knn_and_range_search_agree_with_brute_force():
    x = _planted()
    sims = x @ x.T
    want = {(i, j) for i, j in itertools.combinations(range(len(x)), 2) if sims[i, j] >= 0.9}
    l, r, s = range_pairs(x, 0.9)
    assert set(zip(l.tolist(), r.tolist())) == want
    assert np.allclose(s, sims[l, r], atol=1e-5)
    l2, r2, _ = knn_pairs(x, k=5, threshold=0.9)
    assert set(zip(l2.tolist(), r2.tolist())) == want  # each row has < 5 such neighbours
    assert {(i, 300 + i) for i in range(50)} <= want


def test_hnsw_finds_the_planted_pairs_with_high_recall():
    x = _planted()
    l, r, _ = knn_pairs(x, k=5, threshold=0.9, index="hnsw")
    found = set(zip(l.tolist(), r.tolist()))
    assert len(found & {(i, 300 + i) for i in range(50)}) >= 48
    assert search_recall(x, k=10) >= 0.95


def test_a_small_hnsw_index_is_the_same_in_every_build():
    """Up to HNSW_SERIAL_ROWS rows the graph is built by one thread: the same neighbours every time (several
    threads racing for neighbours gave a different, sometimes worse, graph from build to build)."""
    x = _planted()
    found = [VectorIndex(x, "hnsw").search(x, 10) for _ in range(8)]
    for scores, rows in found[1:]:
        assert np.array_equal(rows, found[0][1]) and np.array_equal(scores, found[0][0])


def test_partial_matching_scores_an_abridged_copy_fully():
    rng = np.random.default_rng(1)
    story = _unit(rng.normal(size=(6, 16)))       # doc 0: six chunks
    abridged = story[:3] + 0.01                     # doc 1: its first three chunks (noisy)
    other = _unit(rng.normal(size=(4, 16)))         # doc 2: unrelated
    chunks = _unit(np.vstack([story, abridged, other]))
    offsets = np.array([0, 6, 9, 13])
    l, r, s = partial_pairs(chunks, offsets, chunk_threshold=0.95)
    got = {(a, b): v for a, b, v in zip(l.tolist(), r.tolist(), s.tolist())}
    assert got == {(0, 1): pytest.approx(1.0)}
