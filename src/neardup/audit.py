"""Reading a finished run to audit it, what matters first: the weakest decisions (removed documents whose link
to the kept one scores lowest), a seeded sample of the pairs nearest the threshold, the oversized and the
largest clusters, and a cluster's documents side by side with the passages they share.

Owns choosing what to read and gathering it (ids, texts, scores, views and shared passages) into plain
records the renderers take (:mod:`neardup.report.terminal`, :mod:`neardup.report.run`); must not render,
compute a pair's evidence rows (:mod:`neardup.evidence`) or decide duplicates. Texts come from
:meth:`~neardup.results.DedupResult.texts` (held by an in-memory run, else read again from the input);
a pair's passages come from its evidence, or are found on the spot for two documents of a cluster that
are not a verified pair (or when the run wrote no evidence).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from neardup.evidence import PASSAGE_TEXT_CHARS, spans_of

if TYPE_CHECKING:
    from neardup.results import DedupResult

#: A sample of pairs "near the threshold": scores below ``threshold + NEAR_BAND``.
NEAR_BAND = 0.05


@dataclass
class PairView:
    """Two documents side by side: ``score``, ``views`` and ``spans`` (offsets into ``left_text`` and
    ``right_text``) as in ``evidence.parquet``; ``score`` is None (and ``views`` empty) when the two are
    not a verified pair (documents of one cluster linked through others)."""

    left: str
    right: str
    left_text: str
    right_text: str
    score: float | None
    views: list[dict[str, Any]] = field(default_factory=list)
    spans: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ClusterView:
    """One cluster for reading: its representative beside each of the first other members (``pairs``),
    the ids of every member (``members``: the representative first, then input order) and the scores of
    its verified pairs (``n_pairs`` of them)."""

    cluster: str
    size: int
    oversized: bool
    members: list[str]
    pairs: list[PairView]
    n_pairs: int
    policy: str = "longest"


@dataclass
class ClusterRow:
    """One line of a list of clusters: its id, size, whether it is oversized, and its representative's text."""

    cluster: str
    size: int
    oversized: bool
    text: str


@dataclass
class RunView:
    """What the HTML run report shows: the summary, the weakest decisions (each removed document beside the
    kept one, lowest link score first), a seeded sample of pairs near the threshold (``near_band`` above it),
    the oversized and the largest clusters; and for its plots, the links' scores and the clusters' sizes."""

    summary: dict[str, Any]
    threshold: float
    largest: list[ClusterView]
    oversized: list[ClusterView]
    near: list[PairView]
    near_band: float
    n_near: int
    seed: int
    weakest: list[PairView] = field(default_factory=list)
    link_scores: np.ndarray = field(default_factory=lambda: np.empty(0))
    cluster_sizes: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))


def cluster_of(result: DedupResult, key: str) -> str:
    """The id of the cluster named ``key``: a cluster id, or the id of one of its documents.

    >>> import neardup
    >>> cluster_of(neardup.dedup(["the cat sat on the mat", "The cat sat on the mat!", "a dog"]), "0")
    '1'
    """
    ids = result.ids
    try:
        i = ids.index(key)
    except ValueError:
        raise KeyError(f"no document or cluster {key!r} in this run") from None
    return ids[int(result.clusters.labels[i])]


def _members(result: DedupResult, cluster: str) -> list[int]:
    ids, labels = result.ids, result.clusters.labels
    rep = ids.index(cluster)
    others = [int(i) for i in np.flatnonzero(labels == labels[rep]) if i != rep]
    return [rep, *others]


def _evidence_of(result: DedupResult, pairs: set[tuple[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
    """The stored evidence rows of the pairs ``(left, right)`` (either order), by pair."""
    if not pairs or not result.has_evidence:
        return {}
    import pyarrow as pa
    import pyarrow.compute as pc

    table = result.evidence_table()
    docs = pa.array(sorted({d for p in pairs for d in p}), pa.string())
    rows = table.filter(pc.and_(pc.is_in(table["left"], docs), pc.is_in(table["right"], docs))).to_pylist()
    return {(r["left"], r["right"]): r for r in rows
            if (r["left"], r["right"]) in pairs or (r["right"], r["left"]) in pairs}


def _swap(spans: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """Spans as seen from the other document: its offsets first, the passage as ``text`` (its text) has it."""
    return [{**s, "left_start": s["right_start"], "left_end": s["right_end"], "right_start": s["left_start"],
             "right_end": s["left_end"], "text": text[s["right_start"] : s["right_end"]][:PASSAGE_TEXT_CHARS]}
            for s in spans]


def pair_view(left: str, right: str, texts: dict[str, str], stored: dict[tuple[str, str], dict[str, Any]],
              score: float | None = None) -> PairView:
    """``left`` beside ``right``: their evidence if stored (in either order), else passages found now."""
    a, b = texts.get(left, ""), texts.get(right, "")
    row = stored.get((left, right))
    if row is not None:
        return PairView(left, right, a, b, row["score"], row["views"], row["spans"])
    row = stored.get((right, left))
    if row is not None:
        return PairView(left, right, a, b, row["score"], row["views"], _swap(row["spans"], a))
    return PairView(left, right, a, b, score, [], spans_of(a, b))


def cluster_view(result: DedupResult, key: str, max_docs: int | None = None,
                 texts: dict[str, str] | None = None) -> ClusterView:
    """The cluster named ``key`` (a cluster or document id): the representative beside each of the first
    ``max_docs - 1`` other members (default 3 shown), with the passages each shares with it.

    >>> import neardup
    >>> v = cluster_view(neardup.dedup(["Oil fell 3% in London.", "oil fell 3% in london", "A dog."]), "1")
    >>> v.cluster, v.members, [s["text"] for s in v.pairs[0].spans]
    ('0', ['0', '1'], ['Oil fell 3% in London'])
    """
    cluster = cluster_of(result, key)
    ids, clusters = result.ids, result.clusters
    index = _members(result, cluster)
    shown = index[: max(2, max_docs if max_docs is not None else 4)]
    members = [ids[i] for i in index]
    if texts is None:
        texts = result.texts([ids[i] for i in shown])
    rep = members[0]
    labels, left, right = clusters.labels, result.left, result.right
    label = labels[index[0]]
    n_pairs = int(((labels[left] == label) & (labels[right] == label)).sum())
    with_rep = ((left == index[0]) & np.isin(right, shown)) | ((right == index[0]) & np.isin(left, shown))
    scores = {(ids[int(a)], ids[int(b)]): float(s) for a, b, s in
              zip(left[with_rep], right[with_rep], result.scores[with_rep])}
    stored = _evidence_of(result, set(scores))
    pairs = [pair_view(rep, ids[i], texts, stored, scores.get((rep, ids[i]), scores.get((ids[i], rep))))
             for i in shown[1:]]
    r = index[0]
    policy = ((result.summary.get("params") or {}).get("cluster") or {}).get("representative", "longest")
    return ClusterView(cluster=cluster, size=int(clusters.sizes[r]), oversized=bool(clusters.oversized[r]),
                       members=members, pairs=pairs, n_pairs=n_pairs, policy=str(policy))


def largest_clusters(result: DedupResult, n: int = 10, oversized_only: bool = False,
                     preview: int = 120) -> list[ClusterRow]:
    """The ``n`` largest clusters of more than one document (ties: the first seen), with the first
    ``preview`` characters of each representative's text (from :meth:`~neardup.results.DedupResult.texts`).

    >>> import neardup
    >>> [(c.cluster, c.size) for c in largest_clusters(neardup.dedup(["a b c d", "a b c d", "x y"]))]
    [('0', 2)]
    """
    clusters = result.clusters
    keep = clusters.is_representative & (clusters.sizes > 1)
    if oversized_only:
        keep &= clusters.oversized
    reps = np.flatnonzero(keep)
    reps = reps[np.lexsort((reps, -clusters.sizes[reps]))][:n]
    ids = result.ids
    try:
        texts = result.texts([ids[i] for i in reps]) if preview else {}
    except (ValueError, OSError):  # the input is not at hand: ids and sizes only
        texts = {}
    return [ClusterRow(ids[i], int(clusters.sizes[i]), bool(clusters.oversized[i]),
                       " ".join(texts.get(ids[i], "").split())[:preview]) for i in reps.tolist()]


def near_threshold(result: DedupResult, n: int = 20, seed: int = 0, band: float = NEAR_BAND
                   ) -> tuple[list[tuple[str, str, float]], int]:
    """A seeded random sample of ``n`` pairs scoring below ``threshold + band`` (the pairs a threshold
    audit reads; all of them when fewer), sorted by score; and how many such pairs there are.

    >>> import neardup
    >>> r = neardup.dedup(["the cat sat on the mat today", "the cat sat on the mat", "a dog barked"])
    >>> near_threshold(r, band=1.0)[1]
    1
    """
    threshold = float((result.summary.get("params") or {}).get("threshold", 0.0))
    scores = result.scores
    near = np.flatnonzero(scores < threshold + band)
    pick = near if near.size <= n else np.sort(np.random.default_rng(seed).choice(near, size=n, replace=False))
    pick = pick[np.argsort(scores[pick], kind="stable")]
    ids = result.ids
    return [(ids[int(result.left[k])], ids[int(result.right[k])], float(scores[k])) for k in pick], int(near.size)


def weakest_links(result: DedupResult, n: int = 10) -> list[tuple[str, str, float]]:
    """The ``n`` removals most worth reading: ``(kept, removed, score)`` of the removed documents whose verified
    link to the document kept for them scores lowest, lowest first (ties: input order).

    >>> import neardup
    >>> r = neardup.dedup(["the cat sat on the mat today", "the cat sat on the mat", "a dog barked"])
    >>> weakest_links(r)
    [('0', '1', 1.0)]
    """
    clusters, ids = result.clusters, result.ids
    if clusters.linked is None:
        return []
    kept, removed, scores = clusters.links()
    pick = np.lexsort((removed, scores))[:n]
    return [(ids[int(kept[k])], ids[int(removed[k])], float(scores[k])) for k in pick]


def run_view(result: DedupResult, clusters: int = 10, docs: int = 3, sample: int = 20, seed: int = 0,
             band: float = NEAR_BAND) -> RunView:
    """What the run report shows (see :class:`RunView`): the ``sample`` weakest decisions, ``sample`` pairs
    near the threshold, the ``clusters`` largest and up to as many oversized clusters, each with its
    representative beside ``docs - 1`` members; the texts are read once for all of them."""
    ids = result.ids
    largest = [c.cluster for c in largest_clusters(result, clusters, preview=0)]
    oversized = [c.cluster for c in largest_clusters(result, clusters, oversized_only=True, preview=0)]
    near, n_near = near_threshold(result, sample, seed, band)
    weakest = weakest_links(result, sample)
    needed: set[str] = {a for a, _, _ in near} | {b for _, b, _ in near} | {d for a, b, _ in weakest for d in (a, b)}
    for c in dict.fromkeys(largest + oversized):
        needed.update(ids[i] for i in _members(result, c)[: max(2, docs)])
    texts = result.texts(needed)
    views = {c: cluster_view(result, c, max_docs=docs, texts=texts) for c in dict.fromkeys(largest + oversized)}
    stored = _evidence_of(result, {(a, b) for a, b, _ in near + weakest})
    threshold = float((result.summary.get("params") or {}).get("threshold", 0.0))
    cl = result.clusters
    return RunView(summary=result.summary, threshold=threshold, largest=[views[c] for c in largest],
                   oversized=[views[c] for c in oversized], near=[pair_view(a, b, texts, stored, s) for a, b, s in near],
                   near_band=band, n_near=n_near, seed=seed,
                   weakest=[pair_view(a, b, texts, stored, s) for a, b, s in weakest],
                   link_scores=cl.link_scores if cl.link_scores is not None else result.scores,
                   cluster_sizes=cl.sizes[cl.is_representative & (cl.sizes > 1)])


__all__ = ["NEAR_BAND", "ClusterRow", "ClusterView", "PairView", "RunView", "cluster_of", "cluster_view",
           "largest_clusters", "near_threshold", "pair_view", "run_view", "weakest_links"]
