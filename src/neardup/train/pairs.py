"""Training pairs: positives within clusters, negatives in a hard/random mix.

Owns turning a :class:`~neardup.train.dataset.TrainingSet` into a :class:`PairSet`; must not mine
negatives (it takes mined pairs from :mod:`neardup.train.mining`) or train models.

:func:`build_pairs`: every within-cluster pair (capped per cluster) is a positive; ``neg_per_pos``
negatives per positive, of which ``hard_fraction`` (default 2/3, the NEWS-COPY mix) come from the hard
pool (generator/labelled hard negatives plus mined ones) and the rest are random pairs of different
clusters. When the hard pool is smaller than its share, random negatives fill in (the realised counts are
reported).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neardup.synth import derive_seed
from neardup.train.dataset import TrainingSet

__all__ = ["HARD_FRACTION", "PairSet", "build_pairs", "positive_pairs"]

#: Default share of negatives that are hard (NEWS-COPY used about two thirds).
HARD_FRACTION = 2.0 / 3.0


@dataclass
class PairSet:
    """Training pairs (document indices into a :class:`TrainingSet`), label 1 = duplicate, and each
    pair's origin: ``positive``, ``hard`` (generator/labelled), ``mined`` or ``random``."""

    a: np.ndarray
    b: np.ndarray
    label: np.ndarray
    kind: list[str]
    info: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.a.size)


def positive_pairs(ts: TrainingSet, max_per_cluster: int = 10, seed: int = 0,
                   self_pairs: bool = True) -> list[tuple[int, int]]:
    """Within-cluster pairs, at most ``max_per_cluster`` per cluster (a seeded sample beyond that).

    ``self_pairs=False`` leaves out a document paired with its own noisy copy (or two copies of one
    document: :meth:`~neardup.train.dataset.TrainingSet.origins`), so only different labelled documents
    (original or noisy) are paired.

    >>> ts = TrainingSet(["a", "b", "c", "a~n1", "b~n1"], ["t"] * 5, list("xxyxx"), list("xxyxx"))
    >>> positive_pairs(ts)
    [(0, 1), (0, 3), (0, 4), (1, 3), (1, 4), (3, 4)]
    >>> positive_pairs(ts, self_pairs=False)
    [(0, 1), (0, 4), (1, 3), (3, 4)]
    """
    origin = None if self_pairs else ts.origins()
    members: dict[str, list[int]] = defaultdict(list)
    for i, c in enumerate(ts.clusters):
        members[c].append(i)
    rng = random.Random(derive_seed(seed, "positives"))
    out: list[tuple[int, int]] = []
    for c in sorted(members):
        m = members[c]
        pairs = [(m[x], m[y]) for x in range(len(m)) for y in range(x + 1, len(m))
                 if origin is None or origin[m[x]] != origin[m[y]]]
        if len(pairs) > max_per_cluster:
            pairs = rng.sample(pairs, max_per_cluster)
        out += pairs
    return out


def build_pairs(ts: TrainingSet, neg_per_pos: float = 1.0, hard_fraction: float = HARD_FRACTION,
                mined: Sequence[tuple[int, int]] = (), max_pos_per_cluster: int = 10, max_pairs: int | None = None,
                seed: int = 0, self_pairs: bool = True) -> PairSet:
    """Positive pairs plus negatives in the documented hard/random mix (see the module docstring).

    ``mined``: extra hard negatives (index pairs, closest first), e.g. from
    :func:`~neardup.train.mining.mine_hard_negatives`.
    ``max_pairs`` caps the total (positives and negatives shrink in proportion). ``self_pairs``: see
    :func:`positive_pairs`.

    >>> ts = TrainingSet([str(i) for i in range(6)], ["t"] * 6, list("aabbcc"), list("aabbcc"), negatives=[(0, 2)])
    >>> build_pairs(ts, seed=0).info["counts"]  # 3 negatives, 2 of them hard: the pool has 1, random fills in
    {'positive': 3, 'hard': 1, 'mined': 0, 'random': 2}
    """
    if not 0.0 <= hard_fraction <= 1.0:
        raise ValueError(f"hard_fraction must be in [0, 1], got {hard_fraction!r}")
    if neg_per_pos < 0:
        raise ValueError(f"neg_per_pos must be >= 0, got {neg_per_pos!r}")
    rng = random.Random(derive_seed(seed, "pairs"))
    pos = positive_pairs(ts, max_pos_per_cluster, seed, self_pairs)
    rng.shuffle(pos)
    if max_pairs is not None and pos:
        pos = pos[: max(1, int(round(max_pairs / (1.0 + neg_per_pos))))]
    n_neg = int(round(neg_per_pos * len(pos)))
    n_hard_target = int(round(hard_fraction * n_neg))
    clusters = ts.clusters

    def key(a: int, b: int) -> tuple[int, int]:
        return (a, b) if a < b else (b, a)

    seen: set[tuple[int, int]] = set()
    explicit = [key(a, b) for a, b in ts.negatives if clusters[a] != clusters[b]]
    rng.shuffle(explicit)
    mined_k = [key(a, b) for a, b in mined if clusters[a] != clusters[b]]
    # Alternate explicit and mined hard negatives so both kinds are used when the pool is larger than needed.
    hard: list[tuple[tuple[int, int], str]] = []
    for t in range(max(len(explicit), len(mined_k))):
        for lst, kind in ((explicit, "hard"), (mined_k, "mined")):
            if t < len(lst) and lst[t] not in seen and len(hard) < n_hard_target:
                seen.add(lst[t])
                hard.append((lst[t], kind))
        if len(hard) >= n_hard_target:
            break
    n_random = n_neg - len(hard)
    rand: list[tuple[int, int]] = []
    n = len(ts)
    tries = 0
    while len(rand) < n_random and n > 1 and tries < 50 * max(n_random, 1):
        tries += 1
        a, b = rng.randrange(n), rng.randrange(n)
        if a == b or clusters[a] == clusters[b]:
            continue
        k = key(a, b)
        if k in seen:
            continue
        seen.add(k)
        rand.append(k)
    rows = [(a, b, 1, "positive") for a, b in pos] + [(a, b, 0, kind) for (a, b), kind in hard] + \
           [(a, b, 0, "random") for a, b in rand]
    rng.shuffle(rows)
    counts = {"positive": len(pos), "hard": sum(k == "hard" for _, k in hard),
              "mined": sum(k == "mined" for _, k in hard), "random": len(rand)}
    negs = len(hard) + len(rand)
    info = {"counts": counts, "hard_fraction_target": round(hard_fraction, 4),
            "hard_fraction_realised": round(len(hard) / negs, 4) if negs else 0.0,
            "hard_pool": {"explicit": len(explicit), "mined": len(mined_k)}}
    if ts.neighbour_negatives:  # real neighbours (load_training_set(neighbours=...)) among the hard negatives
        nbk = {key(a, b) for a, b in ts.neighbour_negatives}
        info["hard_pool"]["neighbour"] = len(nbk)
        info["neighbour_negatives"] = {"explicit": sum(k == "hard" and p in nbk for p, k in hard),
                                       "mined": sum(k == "mined" and p in nbk for p, k in hard),
                                       "mined_pool": sum(p in nbk for p in mined_k)}
    return PairSet(np.array([r[0] for r in rows], dtype=np.int64), np.array([r[1] for r in rows], dtype=np.int64),
                   np.array([r[2] for r in rows], dtype=np.int64), [r[3] for r in rows], info)
