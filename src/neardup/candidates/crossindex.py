"""An in-memory index of one (small) collection's look-up keys, probed by the keys of another (streamed)
collection: the candidate step of cross-collection matching.

Owns cross-collection key look-up; must not read files, compute keys (a method's ``keys`` does) or
verify pairs. Per table, the indexed keys are kept sorted; a probe finds equal keys by binary search,
so memory is about 16 bytes per indexed key row, and nothing of the probing side is kept.
"""

from __future__ import annotations

import numpy as np

from neardup.candidates.buckets import by_key

_EMPTY = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))


class KeyIndex:
    """Key tables of an indexed collection: rows ``(key, doc, table)``.

    ``max_docs``: a key held by more indexed documents than this in one table proposes no pair (a
    boilerplate shingle); None keeps every key.

    >>> index = KeyIndex(np.array([5, 6, 7, 5], dtype=np.uint64), np.array([0, 0, 1, 1]), np.array([0, 1, 1, 0]))
    >>> q, p = index.probe(np.array([5, 7, 9], dtype=np.uint64), np.array([0, 0, 1]), np.array([0, 1, 1]))
    >>> sorted(zip(q.tolist(), p.tolist()))
    [(0, 0), (1, 0), (1, 0)]
    """

    def __init__(self, keys: np.ndarray, docs: np.ndarray, tables: np.ndarray, max_docs: int | None = None) -> None:
        self._keys: dict[int, np.ndarray] = {}
        self._docs: dict[int, np.ndarray] = {}
        for t in np.unique(tables).tolist():
            sel = tables == t
            k, d = keys[sel], np.asarray(docs[sel], dtype=np.int64)
            k, d = by_key(k, d)
            if max_docs is not None and k.size:
                uniq, start, counts = np.unique(k, return_index=True, return_counts=True)
                common = np.repeat(counts > max_docs, counts)
                k, d = k[~common], d[~common]
            self._keys[t], self._docs[t] = k, d

    def probe(self, keys: np.ndarray, rows: np.ndarray, tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pairs ``(indexed doc, probe row)``, one for each table in which they share a key."""
        qs, ps = [], []
        for t in np.unique(tables).tolist():
            if t not in self._keys:
                continue
            sel = tables == t
            k, r = keys[sel], np.asarray(rows[sel], dtype=np.int64)
            lo = np.searchsorted(self._keys[t], k, side="left")
            hi = np.searchsorted(self._keys[t], k, side="right")
            counts = hi - lo
            hit = counts > 0
            if not hit.any():
                continue
            starts, counts_h = lo[hit], counts[hit]
            probe_rows = np.repeat(r[hit], counts_h)
            seg = np.repeat(np.cumsum(counts_h) - counts_h, counts_h)
            positions = np.repeat(starts, counts_h) + (np.arange(counts_h.sum()) - seg)
            qs.append(self._docs[t][positions])
            ps.append(probe_rows)
        if not qs:
            return _EMPTY
        return np.concatenate(qs), np.concatenate(ps)


__all__ = ["KeyIndex"]
