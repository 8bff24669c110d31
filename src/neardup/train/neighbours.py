"""Real neighbours: documents of one file that are similar, yet not duplicates of each other.

Owns finding them (:func:`real_neighbours`) and drawing neighbourhoods and split groups from them
(:class:`NeighbourGraph`); must not read files, sample training sources or make training pairs.

Random sources rarely include real *template siblings* (dividend, earnings or bond notices that share most
words and differ in names and figures) or separate reports of one event, the hard negatives of real wire
data. :func:`neardup.train.sources.load_training_set` (``neighbours > 0``) draws that fraction of its
sources as *neighbourhoods*: a source plus up to ``neighbour_max`` of its real nearest neighbours in the
same file, i.e. documents that MinHash-LSH finds and whose IDF-weighted overlap (weights from the whole
file) lies in ``neighbour_band`` (default 0.15-0.6) and that are *not* duplicates by the source-dedup rule
(:data:`SOURCE_DEDUP_CONFIG <neardup.eval.benchsets.SOURCE_DEDUP_CONFIG>`: plain overlap < 0.3), so they
are never collapsed by :func:`~neardup.eval.benchsets.dedup_sources`. Each such pair becomes two
different clusters, an explicit hard negative (every member of one cluster with every member of the
other, like the generator's), and one split group (connected components of the in-band pairs among the
kept sources), so no neighbourhood straddles the train/validation split.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from neardup.io.read import Corpus

__all__ = ["NEIGHBOUR_BAND", "NEIGHBOUR_MAX", "NeighbourGraph", "real_neighbours"]

#: IDF-weighted overlap band of real neighbours (``neighbours=``): similar, yet below the dedup rule.
NEIGHBOUR_BAND: tuple[float, float] = (0.15, 0.6)
#: Neighbours drawn with each neighbourhood's seed source.
NEIGHBOUR_MAX = 2


@dataclass
class NeighbourGraph:
    """Real neighbours among ``positions`` (indices into a corpus, in sampling order): pairs found by
    MinHash-LSH with their IDF-weighted overlap ``weighted`` and plain overlap ``overlap``, ``band`` the
    weighted-overlap band of a usable neighbour and ``dup_threshold`` the plain overlap at which the
    source-dedup rule calls a pair a duplicate. Built by :func:`real_neighbours`."""

    positions: list[int]
    left: np.ndarray
    right: np.ndarray
    weighted: np.ndarray
    overlap: np.ndarray
    band: tuple[float, float]
    dup_threshold: float
    blocked: set[int] = field(default_factory=set)

    @property
    def n_searched(self) -> int:
        return len(self.positions)

    def in_band(self) -> np.ndarray:
        """Mask of the pairs that are usable neighbours: weighted overlap in the band, not duplicates."""
        lo, hi = self.band
        return (self.weighted >= lo) & (self.weighted < hi) & (self.overlap < self.dup_threshold)

    def close(self) -> np.ndarray:
        """Mask of the pairs too similar to sit in different neighbourhoods: in the band or above it, or
        duplicates by the dedup rule."""
        return (self.weighted >= self.band[0]) | (self.overlap >= self.dup_threshold)

    @property
    def n_pairs(self) -> int:
        ok = self.in_band()
        if self.blocked:
            bl = np.array(sorted(self.blocked), dtype=np.int64)
            ok &= ~np.isin(self.left, bl) & ~np.isin(self.right, bl)
        return int(ok.sum())

    def neighbourhoods(self, target: int, max_neighbours: int = NEIGHBOUR_MAX) -> list[list[int]]:
        """Seed sources (in sampling order) with up to ``max_neighbours`` in-band neighbours each (closest
        first), until ``target`` documents are taken; corpus indices. A document joins only when it is
        not close (:meth:`close`) to any document of another neighbourhood, and neighbours of one seed
        are not duplicates of each other, so neighbourhoods stay apart and survive the dedup pass."""
        band = self.in_band()
        close = self.close()
        nb: dict[int, list[tuple[float, int]]] = defaultdict(list)
        near: dict[int, set[int]] = defaultdict(set)
        dup: set[tuple[int, int]] = set()
        for a, b, w, ok, c in zip(self.left.tolist(), self.right.tolist(), self.weighted.tolist(), band.tolist(),
                                  close.tolist()):
            if a in self.blocked or b in self.blocked:
                continue
            if ok:
                nb[a].append((w, b))
                nb[b].append((w, a))
            if c:
                near[a].add(b)
                near[b].add(a)
            if c and not ok:  # too similar to be neighbours: above the band, or duplicates by the dedup rule
                dup.add((min(a, b), max(a, b)))
        taken: set[int] = set()
        out: list[list[int]] = []
        for seed_pos in range(len(self.positions)):
            if len(taken) >= target:
                break
            if seed_pos in taken or seed_pos in self.blocked or not nb.get(seed_pos) or near[seed_pos] & taken:
                continue
            hood = [seed_pos]
            for _, b in sorted(nb[seed_pos], key=lambda t: (-t[0], t[1])):
                if len(hood) > max_neighbours or (len(hood) > 1 and len(taken) + len(hood) >= target):
                    break
                if b in taken or near[b] & taken or any((min(b, h), max(b, h)) in dup for h in hood):
                    continue
                hood.append(b)
            if len(hood) > 1:
                taken.update(hood)
                out.append([self.positions[h] for h in hood])
        return out

    def groups_and_pairs(self, ids: Sequence[str], positions: Sequence[int]
                         ) -> tuple[list[str], list[tuple[str, str, float, float]]]:
        """For the kept sources (``ids`` with their corpus ``positions``): a split group each (connected
        components of the in-band pairs among them, named after their first member; a source with no
        in-band pair is its own group) and the in-band pairs ``(id_a, id_b, weighted, overlap)``."""
        from neardup.cluster import connected_components

        local = {pos: k for k, pos in enumerate(self.positions)}
        kept = {local[p]: j for j, p in enumerate(positions) if p in local}
        band = self.in_band()
        la: list[int] = []
        lb: list[int] = []
        pairs: list[tuple[str, str, float, float]] = []
        for a, b, w, o, ok in zip(self.left.tolist(), self.right.tolist(), self.weighted.tolist(),
                                  self.overlap.tolist(), band.tolist()):
            if ok and a in kept and b in kept:
                ja, jb = sorted((kept[a], kept[b]))
                la.append(ja)
                lb.append(jb)
                pairs.append((str(ids[ja]), str(ids[jb]), float(w), float(o)))
        comp = connected_components(len(ids), np.array(la, dtype=np.int64), np.array(lb, dtype=np.int64))
        first: dict[int, str] = {}
        for j, c in enumerate(comp.tolist()):
            first.setdefault(c, str(ids[j]))
        return [first[c] for c in comp.tolist()], pairs


def real_neighbours(texts: Sequence[str], band: tuple[float, float] = NEIGHBOUR_BAND,
                    positions: Sequence[int] | None = None) -> NeighbourGraph:
    """Candidate pairs of ``texts`` with their IDF-weighted and plain overlap, as a :class:`NeighbourGraph`.

    Uses the source-dedup settings (:data:`~neardup.eval.benchsets.SOURCE_DEDUP_CONFIG`: word 4-grams,
    MinHash-LSH bands for Jaccard 0.1), so the plain overlap is exactly the score ``dedup_sources``
    compares with its threshold (0.3), and the IDF weights (power 2) come from ``texts``.

    >>> g = real_neighbours(["a b c d e f g h i j k l", "a b c d e f g h x y z w", "n o p q r s t u"], (0.1, 0.9))
    >>> g.left.tolist(), g.right.tolist(), bool(g.in_band()[0])
    ([0], [1], False)
    """
    from neardup.eval.benchsets import SOURCE_DEDUP_CONFIG
    from neardup.pipeline import candidate_pairs, prepare
    from neardup.verify.overlap import score_pairs

    n = len(texts)
    pos = list(range(n)) if positions is None else list(positions)
    cfg = SOURCE_DEDUP_CONFIG
    empty = np.empty(0, np.int64)
    if n < 2:
        return NeighbourGraph(pos, empty, empty, np.empty(0), np.empty(0), band, float(cfg.threshold))
    prep = prepare(Corpus(ids=[str(i) for i in range(n)], texts=list(texts)), cfg)
    left, right, overlap, _ = candidate_pairs(prep, cfg)
    left, right = np.asarray(left, np.int64), np.asarray(right, np.int64)
    weights, totals = prep.weights(cfg.verify.idf_power)
    weighted = score_pairs(prep.sets, left, right, "weighted-overlap", weights=weights, totals=totals)
    return NeighbourGraph(pos, left, right, np.asarray(weighted, np.float64), np.asarray(overlap, np.float64),
                          band, float(cfg.threshold))
