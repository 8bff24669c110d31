"""An in-memory LSH index of one (small) collection, probed by batches of another (streamed) collection.

Owns cross-collection candidate look-up; must not read files or verify pairs.
The index keeps, per band, the sorted bucket keys of the indexed documents; a probe computes the
band keys of a batch and finds equal keys by binary search, so memory is ``bands * 16`` bytes per
indexed document, and nothing of the probing side is kept.
"""

from __future__ import annotations

import numpy as np

from neardup.candidates.lsh import band_keys

_EMPTY = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))


class BandIndex:
    """LSH band tables over MinHash signatures of the indexed collection.

    >>> sig = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=np.uint32)
    >>> index = BandIndex(sig, bands=2, rows=2)
    >>> probe = np.array([[1, 2, 9, 9], [0, 0, 0, 0]], dtype=np.uint32)
    >>> q, p = index.probe(probe)
    >>> list(zip(q.tolist(), p.tolist()))
    [(0, 0)]
    """

    def __init__(self, signatures: np.ndarray, bands: int, rows: int, exclude: np.ndarray | None = None) -> None:
        self.bands, self.rows = bands, rows
        docs = np.arange(signatures.shape[0], dtype=np.int64)
        if exclude is not None:
            docs = docs[~exclude]
        keys = band_keys(signatures[docs], bands, rows)
        self._keys: list[np.ndarray] = []
        self._docs: list[np.ndarray] = []
        for b in range(bands):
            order = np.argsort(keys[:, b], kind="stable")
            self._keys.append(keys[order, b])
            self._docs.append(docs[order])

    def probe(self, signatures: np.ndarray, exclude: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Pairs ``(indexed doc, probe row)`` sharing at least one band bucket, without repeats."""
        rows_idx = np.arange(signatures.shape[0], dtype=np.int64)
        if exclude is not None:
            rows_idx = rows_idx[~exclude]
        if rows_idx.size == 0:
            return _EMPTY
        keys = band_keys(signatures[rows_idx], self.bands, self.rows)
        qs, ps = [], []
        for b in range(self.bands):
            lo = np.searchsorted(self._keys[b], keys[:, b], side="left")
            hi = np.searchsorted(self._keys[b], keys[:, b], side="right")
            counts = hi - lo
            hit = counts > 0
            if not hit.any():
                continue
            starts, counts_h = lo[hit], counts[hit]
            probe_rows = np.repeat(rows_idx[hit], counts_h)
            seg = np.repeat(np.cumsum(counts_h) - counts_h, counts_h)
            positions = np.repeat(starts, counts_h) + (np.arange(counts_h.sum()) - seg)
            qs.append(self._docs[b][positions])
            ps.append(probe_rows)
        if not qs:
            return _EMPTY
        q, p = np.concatenate(qs), np.concatenate(ps)
        width = int(p.max()) + 1
        code = np.unique(q * width + p)
        return code // width, code % width

