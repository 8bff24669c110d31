"""Candidate pairs from embeddings: exact search (FAISS flat inner product), approximate search
(USearch HNSW), range search, and partial-duplicate matching over chunk embeddings.

Owns vector search; must not compute embeddings (see represent/) or cluster.
All embeddings are L2-normalised float32 rows, so inner product is cosine similarity.
FAISS and USearch are imported inside the functions (the ``neural`` extra).
"""

from __future__ import annotations

import numpy as np

from neardup.arrays import distinct
from neardup.represent.encoder import require_extra

_EMPTY = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32))
INDEXES: tuple[str, ...] = ("flat", "hnsw")
#: How far under a floor a neighbour's cosine may come out of a float32 search and still be a candidate (its score
#: then takes the threshold cut, :func:`neardup.cluster.passes`).
SEARCH_SLACK = 1e-6


def near(sims: np.ndarray, floor: float) -> np.ndarray:
    """Which neighbours' cosines ``sims`` reach ``floor`` within the search's rounding (:data:`SEARCH_SLACK`).

    >>> near(np.array([0.8999995, 0.89, 0.95], dtype=np.float32), 0.9).tolist()
    [True, False, True]
    """
    return np.asarray(sims) >= floor - SEARCH_SLACK


def _pairs(query_rows: np.ndarray, neighbours: np.ndarray, sims: np.ndarray, threshold: float,
           same_collection: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flatten k-NN results to unique pairs above ``threshold`` (left < right within one collection)."""
    q = np.repeat(query_rows, neighbours.shape[1])
    nb = neighbours.ravel()
    s = sims.ravel()
    keep = (nb >= 0) & near(s, threshold)
    if same_collection:
        keep &= nb != q
    q, nb, s = q[keep], nb[keep], s[keep]
    if same_collection:
        lo, hi = np.minimum(q, nb), np.maximum(q, nb)
    else:
        lo, hi = q, nb
    if lo.size == 0:
        return _EMPTY
    width = int(max(hi.max(), lo.max())) + 1
    code = lo.astype(np.int64) * width + hi
    code, first = np.unique(code, return_index=True)
    return code // width, code % width, s[first].astype(np.float32)


class VectorIndex:
    """Rows of L2-normalised float32 vectors, searched by inner product (cosine): exactly (FAISS
    ``IndexFlatIP``, ``kind="flat"``) or approximately (USearch HNSW, ``kind="hnsw"``). The one place a
    vector search is written; :func:`knn_pairs` (one collection) and cross-collection matching use it.

    >>> e = np.eye(3, dtype=np.float32)
    >>> sims, ids = VectorIndex(e).search(e[:1], 2)
    >>> ids.tolist(), sims.round(3).tolist()
    ([[0, 1]], [[1.0, 0.0]])
    """

    def __init__(self, vectors: np.ndarray, kind: str = "flat", ef: int = 256) -> None:
        if kind not in INDEXES:
            raise ValueError(f"index must be one of {INDEXES}, got {kind!r}")
        x = np.ascontiguousarray(vectors, dtype=np.float32)
        self.kind, self.size = kind, x.shape[0]
        if kind == "flat":
            faiss = require_extra("faiss", "neural")
            self._index = faiss.IndexFlatIP(x.shape[1])
            self._index.add(x)
        else:
            self._index = hnsw_index(x, ef=ef)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(similarities, row numbers)`` of each query's ``k`` nearest rows, as ``(m, k)`` arrays
        (row -1 where fewer than ``k`` rows exist)."""
        q = np.ascontiguousarray(queries, dtype=np.float32)
        if self.kind == "flat":
            d, nb = self._index.search(q, k)
            return d, nb.astype(np.int64)
        m = self._index.search(q, k)
        nb = np.asarray(m.keys, dtype=np.int64).reshape(-1, k)
        d = 1.0 - np.asarray(m.distances, dtype=np.float32).reshape(-1, k)
        return d, nb


def knn_pairs(embeddings: np.ndarray, k: int = 100, threshold: float = 0.0, index: str = "flat",
              batch: int = 4096, hnsw_ef: int = 256) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs of rows among each row's ``k`` nearest neighbours with cosine >= ``threshold``.

    ``index="flat"``: exact (FAISS ``IndexFlatIP``); ``index="hnsw"``: approximate (USearch HNSW).

    >>> e = np.eye(3, dtype=np.float32); e[1] = e[0]
    >>> l, r, s = knn_pairs(e, k=2, threshold=0.9)
    >>> list(zip(l.tolist(), r.tolist()))
    [(0, 1)]
    """
    n = embeddings.shape[0]
    if n < 2:
        return _EMPTY
    if index not in INDEXES:
        raise ValueError(f"index must be one of {INDEXES}, got {index!r}")
    x = np.ascontiguousarray(embeddings, dtype=np.float32)
    k = min(k + 1, n)
    ix = VectorIndex(x, index, ef=hnsw_ef)
    lefts, rights, sims = [], [], []
    for lo in range(0, n, batch):
        d, nb = ix.search(x[lo : lo + batch], k)
        part = _pairs(np.arange(lo, min(lo + batch, n)), nb, d, threshold)
        lefts.append(part[0]), rights.append(part[1]), sims.append(part[2])
    return _merge(lefts, rights, sims)


def _merge(lefts: list[np.ndarray], rights: list[np.ndarray], sims: list[np.ndarray]
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not lefts:
        return _EMPTY
    left, right, sim = np.concatenate(lefts), np.concatenate(rights), np.concatenate(sims)
    if left.size == 0:
        return _EMPTY
    width = int(right.max()) + 1
    code, first = np.unique(left * width + right, return_index=True)
    return code // width, code % width, sim[first]


#: Rows up to which an HNSW index is built by one thread. Rows inserted by several threads at once race for
#: their neighbours: the graph, and so the candidates, differ from run to run, and now and then are worse (on
#: 350 planted vectors, recall@10 1.0 in most builds, 0.95 or 0.91 in some; one thread: 1.0 every time).
HNSW_SERIAL_ROWS = 50_000


def hnsw_index(x: np.ndarray, ef: int = 256, connectivity: int = 32):  # type: ignore[no-untyped-def]
    """A USearch HNSW index over rows of ``x`` (keys are row numbers), inner-product metric: the same index in
    every run up to :data:`HNSW_SERIAL_ROWS` rows, built on every core past them."""
    require_extra("usearch", "neural")
    from usearch.index import Index

    ix = Index(ndim=x.shape[1], metric="ip", dtype="f32", connectivity=connectivity, expansion_add=ef,
               expansion_search=ef)
    ix.add(np.arange(x.shape[0], dtype=np.int64), x, threads=1 if x.shape[0] <= HNSW_SERIAL_ROWS else 0)
    return ix


def range_pairs(embeddings: np.ndarray, threshold: float, batch: int = 4096) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair with cosine >= ``threshold`` (exact FAISS range search; no k limit).

    >>> e = np.eye(3, dtype=np.float32); e[2] = e[0]
    >>> l, r, s = range_pairs(e, 0.99)
    >>> list(zip(l.tolist(), r.tolist()))
    [(0, 2)]
    """
    faiss = require_extra("faiss", "neural")
    x = np.ascontiguousarray(embeddings, dtype=np.float32)
    n = x.shape[0]
    if n < 2:
        return _EMPTY
    ix = faiss.IndexFlatIP(x.shape[1])
    ix.add(x)
    lefts, rights, sims = [], [], []
    for lo in range(0, n, batch):
        lims, d, nb = ix.range_search(x[lo : lo + batch], threshold - 1e-6)
        rows = np.repeat(np.arange(lo, min(lo + batch, n)), np.diff(lims.astype(np.int64)))
        nb = nb.astype(np.int64)
        keep = nb != rows
        a, b = np.minimum(rows[keep], nb[keep]), np.maximum(rows[keep], nb[keep])
        lefts.append(a.astype(np.int64)), rights.append(b.astype(np.int64)), sims.append(d[keep].astype(np.float32))
    return _merge(lefts, rights, sims)


def search_recall(embeddings: np.ndarray, k: int = 10, ef: int = 256, sample: int = 2000, seed: int = 0) -> float:
    """Recall@k of the HNSW index against exact search, on a sample of query rows.

    >>> rng = np.random.default_rng(0); x = rng.normal(size=(500, 16)).astype(np.float32)
    >>> x /= np.linalg.norm(x, axis=1, keepdims=True)
    >>> search_recall(x, k=5) > 0.95
    True
    """
    x = np.ascontiguousarray(embeddings, dtype=np.float32)
    rng = np.random.default_rng(seed)
    queries = rng.choice(x.shape[0], size=min(sample, x.shape[0]), replace=False)
    _, exact = VectorIndex(x, "flat").search(x[queries], k)
    _, approx = VectorIndex(x, "hnsw", ef=ef).search(x[queries], k)
    hits = sum(len(set(a.tolist()) & set(b.tolist())) for a, b in zip(exact, approx))
    return hits / exact.size


def partial_pairs(chunks: np.ndarray, offsets: np.ndarray, chunk_threshold: float, k: int = 20,
                  index: str = "flat") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Document pairs scored by the share of the shorter document's chunks that match a chunk of the other.

    ``chunks``: chunk embeddings of all documents, ``offsets`` (n_docs + 1) where each document's
    chunks start. A chunk matches when its cosine to some chunk of the other document is at least
    ``chunk_threshold``. Score = matched chunks of the shorter document / its chunk count, so an
    abridged copy whose every chunk appears in the full story scores 1.0.

    >>> c = np.eye(4, dtype=np.float32); c[2] = c[0]; c[3] = c[1]
    >>> l, r, s = partial_pairs(c, np.array([0, 2, 3, 4]), 0.99)
    >>> list(zip(l.tolist(), r.tolist(), s.tolist()))
    [(0, 1, 1.0), (0, 2, 1.0)]
    """
    n_docs = offsets.size - 1
    doc_of = np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(offsets))
    ci, cj, _ = knn_pairs(chunks, k=k, threshold=chunk_threshold, index=index)
    di, dj = doc_of[ci], doc_of[cj]
    cross = di != dj
    ci, cj, di, dj = ci[cross], cj[cross], di[cross], dj[cross]
    if ci.size == 0:
        return _EMPTY
    # Each matched chunk counts once per (document pair, side).
    lo, hi = np.minimum(di, dj), np.maximum(di, dj)
    chunk_lo = np.where(di == lo, ci, cj)
    chunk_hi = np.where(di == lo, cj, ci)
    width = n_docs
    pair = lo * width + hi
    n_chunks = np.diff(offsets)
    pairs_u = distinct(pair)
    matched_lo = _count_distinct(pair, chunk_lo, pairs_u)
    matched_hi = _count_distinct(pair, chunk_hi, pairs_u)
    a, b = pairs_u // width, pairs_u % width
    shorter_is_a = n_chunks[a] <= n_chunks[b]
    matched = np.where(shorter_is_a, matched_lo, matched_hi)
    score = matched / np.minimum(n_chunks[a], n_chunks[b])
    return a, b, np.minimum(score, 1.0).astype(np.float32)


def _count_distinct(pair: np.ndarray, chunk: np.ndarray, pairs_u: np.ndarray) -> np.ndarray:
    width = int(chunk.max()) + 1
    code = distinct(pair * width + chunk)
    return np.bincount(np.searchsorted(pairs_u, code // width), minlength=pairs_u.size)
