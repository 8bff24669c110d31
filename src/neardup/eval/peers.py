"""Other libraries as benchmark peers: each clusters with its own index, tuned by validation ARI like neardup.

Owns the adapters (text -> the peer's sketch or embedding -> the peer's candidates -> union-find
clusters) and their threshold grids; must not score or choose settings (see :mod:`neardup.eval.suite`).

Peers (each skipped, with a note, when its package is not installed):

* ``datasketch`` -- ``MinHash`` (128 permutations, SHA-1 hashing as datasketch does) of the word
  4-grams (``lower()``, split on ``\\W+``, joined by spaces: neardup's default n), indexed in
  ``MinHashLSH(threshold=t, num_perm=128)`` (datasketch derives bands/rows from ``t``); every document
  queries the index; clusters = union-find over the returned pairs. Two variants are swept, as one grid:
  ``filter=lsh`` (the LSH answer as is: datasketch's usual use) and ``filter=estimate`` (a pair is kept
  when the MinHash Jaccard estimate is >= t).
* ``rensa`` -- ``RMinHash`` (128 permutations) of the same 4-grams in ``RMinHashLSH(threshold=t,
  num_perm=128, num_bands=b)``; rensa does not derive ``b``, so ``b`` is the divisor of 128 that
  minimises the false-positive + false-negative mass at ``t`` (datasketch's rule, restricted to
  ``b * r = 128``); same two filters as datasketch (rensa's ``jaccard`` estimate).
* ``unisim-retsim`` -- RETSim embeddings from unisim's own ``TextSim.embed`` (CPU ONNX, exact
  cosine similarity as ``TextSim.similarity`` computes it); a pair is a duplicate when the cosine is
  >= t; clusters = union-find. It is slow -- its cost grows with text length (one model call per
  512 characters): measured 20-40 docs/s for AG News texts (~230 characters) and ~5 docs/s for BBC
  articles (~2,000 characters) on 2 cores under a load average of ~9 (other jobs running) -- so the
  suite caps its splits (``slow=True``, ``--slow-max-docs``).

Threshold grids: MinHash peers use neardup's MinHash grid (0.05..0.95 by 0.025); RETSim 0.50..0.99
by 0.01. ``--quick`` takes every second value.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import importlib.util
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neardup.cluster import connected_components

__all__ = ["PEERS", "Peer", "DatasketchPeer", "RensaPeer", "RetsimPeer", "get_peer", "word_ngrams"]

NUM_PERM = 128
NGRAM = 4
_SPLIT = re.compile(r"\W+")
MINHASH_GRID = [round(float(x), 3) for x in np.arange(0.05, 0.951, 0.025)]
RETSIM_GRID = [round(float(x), 3) for x in np.arange(0.50, 0.9951, 0.01)]


def word_ngrams(text: str, n: int = NGRAM) -> list[str]:
    """Distinct lower-cased word n-grams (``\\W+`` split); a text shorter than n words is one gram.

    >>> word_ngrams("The cat, the cat sat.", 2)
    ['the cat', 'cat the', 'cat sat']
    """
    tok = [x for x in _SPLIT.split(text.lower()) if x]
    if len(tok) < n:
        return [" ".join(tok)] if tok else []
    return list(dict.fromkeys(" ".join(tok[i : i + n]) for i in range(len(tok) - n + 1)))


def _labels(n: int, pairs: Sequence[tuple[int, int]] | np.ndarray) -> np.ndarray:
    arr = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return connected_components(n, arr[:, 0].copy(), arr[:, 1].copy())


def _false_mass(t: float, b: int, r: int, steps: int = 200) -> float:
    xs = np.linspace(0.0, 1.0, steps + 1)
    p = 1.0 - (1.0 - xs ** r) ** b
    dx = xs[1] - xs[0]
    fp = np.where(xs < t, p, 0.0)
    fn = np.where(xs >= t, 1.0 - p, 0.0)
    return float(0.5 * dx * (fp.sum() + fn.sum()))


def divisor_bands(threshold: float, num_perm: int = NUM_PERM) -> int:
    """The band count ``b`` (a divisor of ``num_perm``) minimising FP + FN mass at ``threshold``.

    >>> divisor_bands(0.5), divisor_bands(0.9)
    (32, 4)
    """
    divisors = [b for b in range(1, num_perm + 1) if num_perm % b == 0]
    return min(divisors, key=lambda b: (_false_mass(threshold, b, num_perm // b), b))


@dataclass(eq=False)
class Peer(ABC):
    """A peer library: availability, its grid, a threshold-independent prepare step and clustering."""

    name: str = ""
    module: str = ""
    slow: bool = False
    description: str = ""

    def missing(self) -> str | None:
        """Why the peer cannot run (package not installed), or None."""
        if importlib.util.find_spec(self.module) is None:
            return f"{self.name}: package {self.module!r} is not installed (pip install 'neardup[bench]')"
        return None

    @abstractmethod
    def grid(self, quick: bool = False) -> list[dict[str, Any]]:
        """The settings swept on validation (threshold and the peer's filter)."""

    @abstractmethod
    def prepare(self, texts: Sequence[str]) -> Any:
        """The threshold-independent part: signatures, index or embeddings."""

    @abstractmethod
    def cluster(self, state: Any, params: dict[str, Any]) -> np.ndarray:
        """Cluster labels for one setting."""

    def run(self, texts: Sequence[str], params: dict[str, Any]) -> np.ndarray:
        """The whole peer pipeline from texts to cluster labels (what the suite times)."""
        return self.cluster(self.prepare(texts), params)


@dataclass
class _MinHashState:
    n: int
    sketches: list[Any]
    empty: list[bool]
    cache: dict[Any, list[tuple[int, int, float]]] = field(default_factory=dict)


def _minhash_grid(quick: bool) -> list[dict[str, Any]]:
    grid = MINHASH_GRID[::2] if quick else MINHASH_GRID
    return [{"threshold": t, "filter": f} for f in ("lsh", "estimate") for t in grid]


def _filter_pairs(cands: list[tuple[int, int, float]], params: dict[str, Any]) -> list[tuple[int, int]]:
    t = float(params["threshold"])
    if params.get("filter", "lsh") == "estimate":
        return [(i, j) for i, j, est in cands if est >= t - 1e-12]
    return [(i, j) for i, j, _ in cands]


class DatasketchPeer(Peer):
    """datasketch ``MinHashLSH`` over word 4-gram ``MinHash`` es (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__("datasketch", "datasketch", False, "datasketch MinHashLSH, word 4-grams, 128 perms")

    def grid(self, quick: bool = False) -> list[dict[str, Any]]:
        return _minhash_grid(quick)

    def prepare(self, texts: Sequence[str]) -> _MinHashState:
        from datasketch import MinHash

        grams = [[g.encode("utf-8") for g in word_ngrams(t)] for t in texts]
        mhs = MinHash.bulk(grams, num_perm=NUM_PERM)
        return _MinHashState(len(texts), mhs, [not g for g in grams])

    def _candidates(self, st: _MinHashState, threshold: float) -> list[tuple[int, int, float]]:
        from datasketch import MinHashLSH

        lsh = MinHashLSH(threshold=threshold, num_perm=NUM_PERM)
        key = (lsh.b, lsh.r)
        if key not in st.cache:  # MinHashLSH uses t only to pick (b, r): same (b, r), same answer
            with lsh.insertion_session() as session:
                for i, m in enumerate(st.sketches):
                    if not st.empty[i]:
                        session.insert(i, m, check_duplication=False)
            out: list[tuple[int, int, float]] = []
            for i, m in enumerate(st.sketches):
                if not st.empty[i]:
                    out += [(i, j, m.jaccard(st.sketches[j])) for j in lsh.query(m) if j > i]
            st.cache[key] = out
        return st.cache[key]

    def cluster(self, state: _MinHashState, params: dict[str, Any]) -> np.ndarray:
        return _labels(state.n, _filter_pairs(self._candidates(state, float(params["threshold"])), params))


class RensaPeer(Peer):
    """rensa ``RMinHashLSH`` over word 4-gram ``RMinHash`` es (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__("rensa", "rensa", False, "rensa RMinHash + RMinHashLSH, word 4-grams, 128 perms")

    def grid(self, quick: bool = False) -> list[dict[str, Any]]:
        return _minhash_grid(quick)

    def prepare(self, texts: Sequence[str]) -> _MinHashState:
        from rensa import RMinHash

        sketches = []
        empty = []
        for t in texts:
            grams = word_ngrams(t)
            m = RMinHash(num_perm=NUM_PERM, seed=42)
            if grams:
                m.update(grams)
            sketches.append(m)
            empty.append(not grams)
        return _MinHashState(len(texts), sketches, empty)

    def _candidates(self, st: _MinHashState, threshold: float) -> list[tuple[int, int, float]]:
        from rensa import RMinHashLSH

        bands = divisor_bands(threshold)
        if bands not in st.cache:  # candidates depend on the bands only
            lsh = RMinHashLSH(threshold=threshold, num_perm=NUM_PERM, num_bands=bands)
            for i, m in enumerate(st.sketches):
                if not st.empty[i]:
                    lsh.insert(i, m)
            out: list[tuple[int, int, float]] = []
            for i, m in enumerate(st.sketches):
                if not st.empty[i]:
                    out += [(i, j, m.jaccard(st.sketches[j])) for j in lsh.query(m) if j > i]
            st.cache[bands] = out
        return st.cache[bands]

    def cluster(self, state: _MinHashState, params: dict[str, Any]) -> np.ndarray:
        return _labels(state.n, _filter_pairs(self._candidates(state, float(params["threshold"])), params))


@dataclass
class _EmbeddingState:
    n: int
    sims: np.ndarray  # upper-triangle pair similarities, sorted descending
    left: np.ndarray
    right: np.ndarray


class RetsimPeer(Peer):
    """RETSim through unisim's ``TextSim`` (embed, cosine threshold, union-find)."""

    def __init__(self) -> None:
        super().__init__("unisim-retsim", "unisim", True, "unisim TextSim (RETSim v1, ONNX CPU), cosine, union-find")
        self._textsim: Any = None

    def textsim(self) -> Any:
        """One ``TextSim`` per process (loading the model takes seconds)."""
        if self._textsim is None:
            import logging

            from unisim import TextSim

            logging.getLogger().setLevel(max(logging.getLogger().level, logging.ERROR))
            self._textsim = TextSim(store_data=False, index_type="exact", return_embeddings=False, verbose=0)
        return self._textsim

    def grid(self, quick: bool = False) -> list[dict[str, Any]]:
        return [{"threshold": t} for t in (RETSIM_GRID[::2] if quick else RETSIM_GRID)]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit RETSim embeddings of ``texts`` (n x 256)."""
        if not texts:
            return np.zeros((0, 256), dtype=np.float32)
        emb = np.asarray(self.textsim().embed(list(texts)), dtype=np.float32)
        norms = np.linalg.norm(emb, axis=1, keepdims=True)
        return emb / np.where(norms > 0, norms, 1.0)

    def prepare(self, texts: Sequence[str]) -> _EmbeddingState:
        emb = self.embed(texts)
        n = emb.shape[0]
        lo = min(RETSIM_GRID)
        left_parts, right_parts, sim_parts = [], [], []
        for start in range(0, n, 1024):  # blocks of rows keep memory at 1024 x n floats
            block = emb[start : start + 1024] @ emb.T
            rows, cols = np.nonzero(block >= lo - 1e-6)
            rows = rows + start
            keep = cols > rows
            left_parts.append(rows[keep])
            right_parts.append(cols[keep])
            sim_parts.append(block[rows[keep] - start, cols[keep]])
        left = np.concatenate(left_parts) if left_parts else np.empty(0, np.int64)
        right = np.concatenate(right_parts) if right_parts else np.empty(0, np.int64)
        sims = np.concatenate(sim_parts) if sim_parts else np.empty(0, np.float32)
        order = np.argsort(-sims, kind="stable")
        return _EmbeddingState(n, sims[order], left[order].astype(np.int64), right[order].astype(np.int64))

    def cluster(self, state: _EmbeddingState, params: dict[str, Any]) -> np.ndarray:
        t = float(params["threshold"])
        k = int(np.searchsorted(-state.sims, -t + 1e-6, side="right"))
        return connected_components(state.n, state.left[:k].copy(), state.right[:k].copy())


PEERS: dict[str, Peer] = {p.name: p for p in (DatasketchPeer(), RensaPeer(), RetsimPeer())}


def get_peer(name: str) -> Peer | None:
    """The peer called ``name``, or None when it is not a peer (then it is a neardup method)."""
    return PEERS.get(name)
