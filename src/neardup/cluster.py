"""Cut the graph of verified pairs into clusters, pick each cluster's representative, flag oversized ones.

Owns graph -> groups; must not score pairs or read/write files.

* ``greedy`` (the default): one decision per document. Documents are taken in the representative
  policy's order; each is kept unless it has a verified pair with a document already kept, and then it
  is removed as a copy of that kept document (the best-scoring one). A removed document never keeps or
  removes another, so no chain of pairs removes a document that copies nothing kept, and every removed
  document has the one verified link that justifies it (:meth:`Clusters.links`). The work is one sort of
  the verified pairs and one pass over them;
* ``components``: connected components (every chain of duplicates is one cluster);
* ``louvain`` / ``leiden``: modularity communities on the score-weighted graph of all verified pairs (one run
  over the whole graph, not one per component: the modularity's null model then barely penalises merging
  inside a small component, so on forum text they return the components nearly whole);
* ``agglomerative``: average linkage over the verified pairs: two groups merge while the mean score
  over all their cross pairs (a pair that was not verified counts 0) reaches the threshold, so a chain
  A~B~C whose ends do not match stays split.

Cluster ids are the index of the cluster's representative document (the one kept), chosen by a policy
(:attr:`~neardup.config.ClusterConfig.representative`): by default the longest text, ties going to the
first seen. So ids and representatives are deterministic and independent of the algorithm's order. The
per-document values a policy ranks by (:func:`representative_keys`) are computed where the texts are
read (each engine's map stage), so every engine picks the same representatives.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np

from neardup.arrays import distinct
from neardup.config import ClusterConfig, ConfigError
from neardup.jit import compiled, pays


@dataclass(frozen=True)
class Clusters:
    """Cluster assignment of ``n`` documents.

    ``labels[i]`` is the index of document i's representative (a singleton is its own);
    ``sizes[i]`` the size of document i's cluster; ``oversized[i]`` whether that cluster is larger
    than the configured ``max_cluster_size`` (templates, boilerplate: check before trusting it).
    ``linked`` (sorted) are the removed documents that have a verified pair with the document kept for
    them (their representative), and ``link_scores`` those pairs' scores: under ``greedy`` every removed
    document; under ``components`` or a community, not those put with the representative through other
    documents. None where the pairs were not at hand.
    """

    labels: np.ndarray
    sizes: np.ndarray
    oversized: np.ndarray
    linked: np.ndarray | None = None
    link_scores: np.ndarray | None = None

    @property
    def copy_of(self) -> np.ndarray:
        """For each document, the index of the kept document it is removed as a copy of; -1 where it is kept."""
        return np.where(self.is_representative, -1, self.labels)

    def links(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The verified pair behind each removal, ``(kept, removed, score)``, in the removed documents' order
        (removed documents without a verified pair with their kept document have none).

        >>> c = cluster_pairs(3, np.array([0, 1]), np.array([1, 2]), np.array([0.9, 0.8]), np.array([9, 5, 1]),
        ...                   ClusterConfig(algorithm="components"))
        >>> [x.tolist() for x in c.links()]
        [[0], [1], [0.9]]
        """
        if self.linked is None or self.link_scores is None:
            raise ValueError("these clusters were made without their pairs' scores")
        return self.labels[self.linked], self.linked, self.link_scores

    def link_scores_of(self, start: int, stop: int) -> np.ndarray:
        """The link score of each document in ``[start, stop)``: NaN where it is kept or has no link.

        >>> cluster_pairs(3, np.array([0]), np.array([2]), np.array([0.7]), np.array([5, 1, 1])).link_scores_of(1, 3).tolist()
        [nan, 0.7]
        """
        out = np.full(stop - start, np.nan)
        if self.linked is not None and self.link_scores is not None:
            lo, hi = np.searchsorted(self.linked, [start, stop])
            out[self.linked[lo:hi] - start] = self.link_scores[lo:hi]
        return out

    def unlinked(self) -> np.ndarray:
        """The removed documents that have no verified pair with the document kept for them (none under
        ``greedy``): what a chain of pairs removed."""
        removed = np.flatnonzero(~self.is_representative)
        return removed if self.linked is None else np.setdiff1d(removed, self.linked, assume_unique=True)

    @property
    def is_representative(self) -> np.ndarray:
        """True for the one document kept from each cluster."""
        return self.labels == np.arange(self.labels.size)

    @property
    def n_clusters(self) -> int:
        """Number of clusters, singletons included."""
        return int(self.is_representative.sum())


def connected_components(n: int, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Component label (smallest member index) of each of ``n`` nodes, by union-find over arrays.

    >>> connected_components(5, np.array([0, 3]), np.array([1, 4])).tolist()
    [0, 0, 2, 3, 3]
    """
    parent = np.arange(n, dtype=np.int64)
    if left.size == 0:
        return parent
    # Repeated pointer jumping on min labels: O(log n) rounds of vectorised work.
    lo = np.minimum(left, right)
    hi = np.maximum(left, right)
    while True:
        pl, ph = parent[lo], parent[hi]
        new = parent.copy()
        np.minimum.at(new, ph, pl)
        np.minimum.at(new, pl, ph)
        new = new[new]
        while True:
            nxt = new[new]
            if np.array_equal(nxt, new):
                break
            new = nxt
        if np.array_equal(new, parent):
            return parent
        parent = new


def _communities(n: int, left: np.ndarray, right: np.ndarray, weights: np.ndarray, cfg: ClusterConfig) -> np.ndarray:
    import igraph as ig

    graph = ig.Graph(n=n, edges=np.column_stack([left, right]).tolist(), directed=False)
    graph.es["weight"] = np.maximum(weights, 1e-9).tolist()
    if cfg.algorithm == "louvain":
        import random

        random.seed(cfg.seed)
        ig.set_random_number_generator(random)
        membership = graph.community_multilevel(weights="weight", resolution=cfg.resolution).membership
    else:
        import leidenalg

        part = leidenalg.find_partition(
            graph, leidenalg.RBConfigurationVertexPartition, weights="weight",
            resolution_parameter=cfg.resolution, seed=cfg.seed, n_iterations=-1,
        )
        membership = part.membership
    return np.asarray(membership, dtype=np.int64)


def average_linkage(n: int, left: np.ndarray, right: np.ndarray, scores: np.ndarray, threshold: float) -> np.ndarray:
    """Group labels (smallest member) of ``n`` nodes by average-linkage agglomeration over weighted edges:
    repeatedly merge the two groups whose mean cross score (a missing edge counts 0) is highest, while it
    is >= ``threshold``. Ties go to the smaller group ids, so the result is deterministic.

    >>> average_linkage(4, np.array([0, 1, 0]), np.array([1, 2, 3]), np.array([0.9, 0.8, 0.1]), 0.6).tolist()
    [0, 0, 2, 3]
    """
    import heapq

    group = np.arange(n, dtype=np.int64)
    links: dict[int, dict[int, float]] = {}  # group -> neighbour group -> summed cross score
    for a, b, s in zip(left.tolist(), right.tolist(), np.asarray(scores, dtype=np.float64).tolist()):
        if a != b:
            links.setdefault(a, {})[b] = links.get(a, {}).get(b, 0.0) + s
            links.setdefault(b, {})[a] = links[a][b]
    size = {g: 1 for g in links}
    members = {g: [g] for g in links}
    version = {g: 0 for g in links}

    def entry(x: int, y: int) -> tuple[float, int, int, int, int]:
        lo, hi = min(x, y), max(x, y)
        return (-links[lo][hi] / (size[lo] * size[hi]), lo, hi, version[lo], version[hi])

    heap = [entry(x, y) for x, nb in links.items() for y in nb if x < y]
    heapq.heapify(heap)
    while heap:
        neg, x, y, vx, vy = heapq.heappop(heap)
        if version.get(x) != vx or version.get(y) != vy:
            continue  # stale: one of the groups changed since
        if -neg < threshold - 1e-12:
            break  # the best remaining link is too weak
        for z, total in links.pop(y).items():  # merge y into x
            links[z].pop(y)
            if z != x:
                links[x][z] = links[x].get(z, 0.0) + total
                links[z][x] = links[x][z]
        size[x] += size.pop(y)
        members[x] += members.pop(y)
        version.pop(y)
        version[x] += 1
        for z in links[x]:
            heapq.heappush(heap, entry(x, z))
    for g, nodes in members.items():
        group[nodes] = g
    return group


def field_value(value: Any) -> float:
    """A record field's value as a number a policy can rank: numbers as they are, ISO 8601 dates and
    times as POSIX seconds (naive ones read as UTC), numeric strings as numbers; anything else (missing,
    null, unparseable) is NaN, which ranks last.

    >>> field_value(3), field_value("2.5"), field_value("1970-01-02"), field_value(None)
    (3.0, 2.5, 86400.0, nan)
    """
    if isinstance(value, bool) or value is None:
        return math.nan
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, datetime):
        stamp = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
        return stamp.timestamp()
    if isinstance(value, str):
        text = value.strip()
        try:
            return float(text)
        except ValueError:
            pass
        try:
            return field_value(datetime.fromisoformat(text.replace("Z", "+00:00")))
        except ValueError:
            return math.nan
    return math.nan


def representative_keys(texts: Sequence[str], values: Sequence[Any] | None, config: ClusterConfig) -> np.ndarray | None:
    """What the representative policy ranks each document by (lower wins), or None when text lengths and
    input order alone decide (``longest``, and ``first`` without a field).

    ``values`` are the documents' values of ``config.representative_field`` (raw, or already
    :func:`field_value`'d); ``cleanest`` ranks by :func:`neardup.text.noise.noise_ratio` of ``texts``.

    >>> cfg = ClusterConfig(representative="largest", representative_field="votes")
    >>> representative_keys(["a", "b", "c"], [3, None, "7"], cfg).tolist()
    [-3.0, inf, -7.0]
    >>> representative_keys(["clean", "n|~sy"], None, ClusterConfig(representative="cleanest")).tolist()
    [0.0, 0.4]
    """
    policy, name = config.representative, config.representative_field
    if policy == "cleanest":
        from neardup.text.noise import noise_ratio

        return np.fromiter((noise_ratio(t) for t in texts), dtype=np.float64, count=len(texts))
    if name is None:
        return None
    if values is None:
        raise ConfigError(f"representative {policy!r} needs the values of field {name!r}")
    keys = np.fromiter((field_value(v) for v in values), dtype=np.float64, count=len(values))
    if policy == "largest":
        keys = -keys
    keys[np.isnan(keys)] = np.inf
    return keys


def cluster_pairs(n: int, left: np.ndarray, right: np.ndarray, scores: np.ndarray, lengths: np.ndarray,
                  config: ClusterConfig | None = None, keys: np.ndarray | None = None,
                  threshold: float | None = None) -> Clusters:
    """Cluster ``n`` documents from verified pairs ``(left, right, scores)``.

    Representatives: by the policy's ``keys`` (:func:`representative_keys`; lower wins) when given, then
    by ``lengths`` (text length per document: longest), then first seen; ``first`` ranks by ``keys``
    (when given) then input order. ``threshold`` (the method's) is the mean score average linkage needs
    (default: the lowest score). The result's links (:meth:`Clusters.links`) come from the same pairs.

    >>> c = cluster_pairs(4, np.array([0]), np.array([2]), np.array([0.9]), np.array([10, 5, 30, 1]))
    >>> c.labels.tolist(), c.sizes.tolist()
    ([2, 1, 2, 3], [2, 1, 2, 1])

    A chain: 1 copies 0 and 2 copies 1, but 2 was not verified against 0, the document kept. ``greedy`` keeps
    2; ``components`` removes it through 1:

    >>> ab, sc, ln = (np.array([0, 1]), np.array([1, 2])), np.array([0.9, 0.8]), np.array([30, 20, 10])
    >>> cluster_pairs(3, *ab, sc, ln).labels.tolist()
    [0, 0, 2]
    >>> cluster_pairs(3, *ab, sc, ln, ClusterConfig(algorithm="components")).labels.tolist()
    [0, 0, 0]
    """
    cfg = config or ClusterConfig()
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    scores = np.asarray(scores, dtype=np.float64)
    nodes = paired_documents(left, right)
    a, b = np.searchsorted(nodes, left), np.searchsorted(nodes, right)  # the pairs among the paired documents
    if cfg.algorithm in (None, "greedy"):
        ranks = policy_ranks(np.asarray(lengths)[nodes], cfg, None if keys is None else np.asarray(keys)[nodes])
        groups = greedy_copies(nodes.size, a, b, scores, ranks)
    elif cfg.algorithm == "agglomerative":  # (a monotone renumbering: its ties go to the same documents)
        floor = float(np.min(scores)) if threshold is None and left.size else float(threshold or 0.0)
        groups = average_linkage(nodes.size, a, b, scores, floor)
    else:
        groups = connected_components(nodes.size, a, b)
        if cfg.algorithm != "components" and left.size:
            # Community detection within the components (a community never spans two: prefixed to be safe).
            membership = _communities(nodes.size, a, b, scores, cfg)
            _, groups = np.unique(groups * (nodes.size + 1) + membership, return_inverse=True)
    return with_links(clusters_of_groups(n, nodes, groups, lengths, cfg, keys), left, right, scores)


def greedy_copies(n: int, left: np.ndarray, right: np.ndarray, scores: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """One decision per document over verified pairs: the documents in the order of ``ranks`` (lower first,
    distinct), each kept unless it has a pair with a document already kept, and then a copy of the
    best-scoring such document (ties: the first in that order). Returns each of ``n`` documents' group: its
    own index where kept, the kept document's where removed.

    The kept documents are the first maximal independent set of the pairs' graph in that order
    (:func:`_kept_in_order`); each removed one then takes its best kept neighbour in one sort of the pairs.

    >>> greedy_copies(4, np.array([0, 1, 2]), np.array([1, 2, 3]), np.array([0.9, 0.9, 0.7]), np.arange(4)).tolist()
    [0, 0, 2, 2]
    """
    copy_of = np.arange(n, dtype=np.int64)
    if left.size:
        swap = ranks[left] > ranks[right]
        first = np.where(swap, right, left)  # the end decided first
        later = np.where(swap, left, right)
        kept = _kept_in_order(n, first, later, ranks)
        link = kept[first] & ~kept[later]  # a removed document and a kept one before it
        f, t, s = first[link], later[link], scores[link]
        order = np.lexsort((ranks[f], -s, t))  # each removed document's best kept neighbour first
        f, t = f[order], t[order]
        head = np.ones(t.size, dtype=bool)
        head[1:] = t[1:] != t[:-1]
        copy_of[t[head]] = f[head]
    return copy_of


#: Rounds of :func:`_kept_in_order` before the rest is decided one pair at a time (a chain of documents each
#: a copy of the one before decides two a round).
KEPT_ROUNDS = 64


def _kept_in_order(n: int, first: np.ndarray, later: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """Which of ``n`` documents the rule keeps, given pairs ``first`` -> ``later`` (``first`` earlier in ``ranks``):
    a document is kept iff none of the documents before it that it is paired with is kept. Decided in rounds
    over all pairs at once: a document with a kept one before it is removed; one whose every earlier
    neighbour is removed is kept (each round decides at least the first undecided document; a cluster of
    copies takes two). Past :data:`KEPT_ROUNDS`, the rest one pair at a time in the ranks' order.

    >>> _kept_in_order(4, np.array([0, 1, 2]), np.array([1, 2, 3]), np.arange(4)).tolist()
    [True, False, True, False]
    """
    undecided, kept, removed = 0, 1, 2
    state = np.full(n, kept, dtype=np.int8)
    state[later] = undecided  # a document with no earlier neighbour is kept
    for _ in range(KEPT_ROUNDS):
        state[later[(state[first] == kept) & (state[later] == undecided)]] = removed
        blocked = np.zeros(n, dtype=bool)  # an earlier neighbour not (yet) removed
        blocked[later[state[first] != removed]] = True
        state[(state == undecided) & ~blocked] = kept
        if not (state[later] == undecided).any():
            return state == kept
    open_ = state[later] == undecided  # the rest, in order: every document before one is decided when it comes
    f, t = first[open_], later[open_]
    order = np.lexsort((ranks[f], ranks[t]))
    (_decide_in_order if pays(order.size) else _decide_in_order.py_func)(f, t, order, state)
    return state == kept


@compiled
def _decide_in_order(first: np.ndarray, later: np.ndarray, order: np.ndarray, state: np.ndarray) -> None:
    # state: 0 undecided, 1 kept, 2 removed; the pairs by their later end, so each earlier end is decided.
    for k in range(order.size):
        i = order[k]
        t = later[i]
        if state[t] == 0 and state[first[i]] == 1:
            state[t] = 2
        if k + 1 == order.size or later[order[k + 1]] != t:
            if state[t] == 0:
                state[t] = 1


def with_links(clusters: Clusters, left: np.ndarray, right: np.ndarray, scores: np.ndarray) -> Clusters:
    """``clusters`` with :attr:`Clusters.linked` and :attr:`Clusters.link_scores` from the verified pairs
    ``(left, right, scores)``: each removed document's best score with its representative. Memory in
    the pairs, not the corpus.

    >>> c = with_links(cluster_pairs(3, np.array([0]), np.array([2]), np.array([0.7]), np.array([5, 1, 1])),
    ...                np.array([2, 0]), np.array([0, 2]), np.array([0.7, 0.8]))
    >>> c.linked.tolist(), c.link_scores.tolist()
    ([2], [0.8])
    """
    labels = clusters.labels
    ends = np.concatenate([left, right]).astype(np.int64)
    removed = np.concatenate([right, left]).astype(np.int64)
    score = np.concatenate([scores, scores]).astype(np.float64)
    direct = (labels[removed] == ends) & (removed != ends)
    removed, score = removed[direct], score[direct]
    order = np.lexsort((-score, removed))
    removed, score = removed[order], score[order]
    first = np.ones(removed.size, dtype=bool)
    first[1:] = removed[1:] != removed[:-1]
    return Clusters(labels=labels, sizes=clusters.sizes, oversized=clusters.oversized,
                    linked=removed[first], link_scores=score[first])


def passes(scores: np.ndarray, threshold: float) -> np.ndarray:
    """Which ``scores`` reach ``threshold``: the threshold cut (a float's last bit forgiven).

    >>> passes(np.array([0.4, 0.45 - 1e-15, 0.5]), 0.45).tolist()
    [False, True, True]
    """
    return np.asarray(scores) >= float(threshold) - 1e-12


def score_ceiling(threshold: float, share: float | None) -> float:
    """The highest threshold a re-threshold of a ``greedy`` run may choose: ``share`` of its ``threshold``, at most 1
    (None: 1). A document removed as a copy of a root (:func:`verify_order`) at this score or more is removed at
    every threshold up to it, so the pairs it comes first in are never scored.

    >>> score_ceiling(0.6, 1.25), score_ceiling(0.9, 1.25), score_ceiling(0.6, None)
    (0.75, 1.0, 1.0)
    """
    return 1.0 if share is None else min(1.0, round(float(threshold) * float(share), 9))


def lazy_greedy(config: ClusterConfig, all_pairs: bool = False) -> bool:
    """Whether a run scores only the candidate pairs ``greedy`` reads (:func:`verify_order`): under ``greedy`` unless
    every verified pair is asked for (``all_pairs``: the graph)."""
    return config.algorithm in (None, "greedy") and not all_pairs


def ordered(left: np.ndarray, right: np.ndarray, ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's two documents as ``(first, later)`` in the policy's order ``ranks`` (:func:`policy_ranks`)."""
    left, right = np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)
    swap = ranks[left] > ranks[right]
    return np.where(swap, right, left), np.where(swap, left, right)


def roots_of(n: int, later: np.ndarray) -> np.ndarray:
    """Which of ``n`` documents come first in every candidate pair they are in (``later``: the later ends of all
    candidate pairs): ``greedy`` keeps them whatever the scores."""
    roots = np.ones(n, dtype=bool)
    roots[np.asarray(later, dtype=np.int64)] = False
    return roots


def settled_copies(n: int, first: np.ndarray, later: np.ndarray, scores: np.ndarray, roots: np.ndarray,
                   ceiling: float) -> np.ndarray:
    """Which of ``n`` documents are removed at every threshold up to ``ceiling`` whatever other pairs score: those
    with a scored pair at ``ceiling`` or more with a root (:func:`roots_of`, kept whatever the scores)."""
    settled = np.zeros(n, dtype=bool)
    settled[np.asarray(later)[roots[first] & passes(scores, ceiling)]] = True
    return settled


def verify_order(first: np.ndarray, roots: np.ndarray, settled: np.ndarray | None = None) -> np.ndarray:
    """Which candidate pairs ``greedy`` scores in each of its two passes, by their first ends (:func:`ordered`).
    Pass one (``settled`` None): the pairs a root comes first in. Pass two: those whose first end is neither a
    root nor settled (:func:`settled_copies`). What is left, pairs that a settled document comes first in, no
    decision at any threshold from the floor to the ceiling reads: a removed document keeps and removes nothing,
    and links only to kept ones. On a corpus of copies most pairs are between two copies of one kept text.

    >>> first = np.array([0, 0, 1, 1, 2])
    >>> roots = np.array([True, False, False, True])
    >>> verify_order(first, roots).tolist(), verify_order(first, roots, np.array([False, True, False, False])).tolist()
    ([True, True, False, False, False], [False, False, False, False, True])
    """
    first = np.asarray(first, dtype=np.int64)
    if settled is None:
        return roots[first]
    return ~roots[first] & ~settled[first]


def verify_in_order(n: int, left: np.ndarray, right: np.ndarray, ranks: np.ndarray,
                    score: Callable[[np.ndarray, np.ndarray], np.ndarray], ceiling: float
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Score the candidate pairs ``(left, right)`` of ``n`` documents that ``greedy`` reads at any threshold up to
    ``ceiling``, in the two passes of :func:`verify_order`; returns the scored ones ``(left, right, scores)``.
    :func:`greedy_copies` over them decides as over every candidate scored.

    >>> ranks = np.arange(3)  # 0 first: 1 and 2 copy it, and the pair of the two copies is never scored
    >>> calls = []
    >>> def score(a, b):
    ...     calls.append(list(zip(a.tolist(), b.tolist())))
    ...     return np.full(a.size, 0.9)
    >>> verify_in_order(3, np.array([0, 0, 1]), np.array([1, 2, 2]), ranks, score, 0.8)[2].tolist(), calls
    ([0.9, 0.9], [[(0, 1), (0, 2)], []])
    """
    left, right = np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)
    first, later = ordered(left, right, ranks)
    roots = roots_of(n, later)
    one = verify_order(first, roots)
    s1 = np.asarray(score(left[one], right[one]), dtype=np.float64)
    settled = settled_copies(n, first[one], later[one], s1, roots, ceiling)
    two = verify_order(first, roots, settled)
    s2 = np.asarray(score(left[two], right[two]), dtype=np.float64)
    return (np.concatenate([left[one], left[two]]), np.concatenate([right[one], right[two]]),
            np.concatenate([s1, s2]))


def score_floor(threshold: float, share: float) -> float:
    """The lowest score a run keeps for re-thresholding: ``share`` of its ``threshold``.

    >>> score_floor(0.45, 0.8)
    0.36
    """
    return round(float(threshold) * float(share), 9)


def decide(n: int, left: np.ndarray, right: np.ndarray, scores: np.ndarray, lengths: np.ndarray,
           config: ClusterConfig, keys: np.ndarray | None, threshold: float, all_pairs: bool = False
           ) -> tuple[Clusters, tuple[np.ndarray, np.ndarray, np.ndarray], int]:
    """The decisions on ``n`` documents from scored candidate pairs (any at or above a floor): the pairs that
    pass ``threshold`` (:func:`passes`) clustered (:func:`cluster_pairs`), the pairs to write
    (:func:`written_pairs`) and how many pairs passed. What every engine and a re-threshold run.

    >>> c, (kept, removed, s), n_pairs = decide(3, np.array([0, 0]), np.array([1, 2]), np.array([0.9, 0.3]),
    ...                                         np.array([9, 5, 1]), ClusterConfig(), None, 0.5)
    >>> c.labels.tolist(), kept.tolist(), removed.tolist(), n_pairs
    ([0, 0, 2], [0], [1], 1)
    """
    keep = passes(scores, threshold)
    left, right, scores = np.asarray(left)[keep], np.asarray(right)[keep], np.asarray(scores)[keep]
    clusters = cluster_pairs(n, left, right, scores, lengths, config, keys, threshold=threshold)
    return clusters, written_pairs(clusters, left, right, scores, config, all_pairs), int(left.size)


def written_pairs(clusters: Clusters, left: np.ndarray, right: np.ndarray, scores: np.ndarray,
                  config: ClusterConfig | None = None, all_pairs: bool = False
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs a run writes (``pairs.parquet``, the evidence): under ``greedy``, unless ``all_pairs``, the link
    behind each removed document, ``(kept, removed, score)`` in the removed documents' order (one a removal:
    the work and the files grow with documents, not with the pairs inside a cluster); else every verified
    pair ``(left, right, scores)``, the graph the other algorithms cut.

    >>> c = cluster_pairs(3, np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([.9, .8, .7]), np.array([9, 5, 1]))
    >>> [x.tolist() for x in written_pairs(c, np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([.9, .8, .7]))]
    [[0, 0], [1, 2], [0.9, 0.8]]
    """
    algorithm = (config or ClusterConfig()).algorithm
    if all_pairs or algorithm not in (None, "greedy"):
        return left, right, scores
    kept, removed, score = clusters.links()
    if removed.size != int((~clusters.is_representative).sum()):
        raise AssertionError("a removed document without a verified link to the document kept for it")
    return kept, removed, score


def paired_documents(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """The documents in at least one of the pairs ``(left, right)``, sorted: the only ones that can share a
    cluster."""
    return distinct(np.concatenate([np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)]))


def clusters_of_groups(n: int, nodes: np.ndarray, groups: np.ndarray, lengths: np.ndarray, cfg: ClusterConfig,
                       keys: np.ndarray | None = None) -> Clusters:
    """The clusters of ``n`` documents whose documents ``nodes`` (:func:`paired_documents`) fall in ``groups``
    (a label each, equal within a group) and whose every other document is its own cluster (size 1, its own
    representative): representatives are chosen among ``nodes`` alone, by the policy (:func:`cluster_pairs`).
    At 10M stories 2.6M documents are in pairs; the same choice over the whole corpus took 850 MB at once.

    >>> c = clusters_of_groups(5, np.array([1, 3, 4]), np.array([7, 7, 9]), np.array([1, 1, 5, 9, 2]), ClusterConfig())
    >>> c.labels.tolist(), c.sizes.tolist()
    ([0, 3, 2, 3, 4], [1, 2, 1, 2, 1])
    """
    lengths = np.asarray(lengths)
    among = _finalise(groups, lengths[nodes], cfg, None if keys is None else np.asarray(keys)[nodes])
    labels = np.arange(n, dtype=np.int64)
    labels[nodes] = nodes[among.labels]
    sizes = np.ones(n, dtype=np.int64)
    sizes[nodes] = among.sizes
    return Clusters(labels=labels, sizes=sizes, oversized=_oversized(sizes, cfg))


def _finalise(groups: np.ndarray, lengths: np.ndarray, cfg: ClusterConfig, keys: np.ndarray | None = None) -> Clusters:
    n = groups.size
    _, inverse, counts = np.unique(groups, return_inverse=True, return_counts=True)
    order = np.lexsort((policy_ranks(lengths, cfg, keys), inverse))
    first = np.ones(n, dtype=bool)
    first[1:] = inverse[order][1:] != inverse[order][:-1]
    rep_of_group = np.empty(counts.size, dtype=np.int64)
    rep_of_group[inverse[order][first]] = order[first]
    labels = rep_of_group[inverse]
    sizes = counts[inverse]
    return Clusters(labels=labels, sizes=sizes, oversized=_oversized(sizes, cfg))


def policy_ranks(lengths: np.ndarray, cfg: ClusterConfig, keys: np.ndarray | None = None) -> np.ndarray:
    """Each document's place in the representative policy's order (0 first): the policy's key (lower wins),
    then the longest text, then the smallest index (first seen); ``first`` skips the length.

    >>> policy_ranks(np.array([5, 9, 9]), ClusterConfig()).tolist()
    [2, 0, 1]
    """
    n = lengths.size
    ranks: list[np.ndarray] = [np.arange(n)]
    if cfg.representative != "first":
        ranks.append(-lengths.astype(np.int64))
    if keys is not None:
        ranks.append(np.asarray(keys, dtype=np.float64))
    place = np.empty(n, dtype=np.int64)
    place[np.lexsort(ranks)] = np.arange(n)
    return place


def _oversized(sizes: np.ndarray, cfg: ClusterConfig) -> np.ndarray:
    """Whether each document's cluster is larger than the policy's ``max_cluster_size``."""
    return sizes > cfg.max_cluster_size if cfg.max_cluster_size is not None else np.zeros(sizes.size, dtype=bool)
