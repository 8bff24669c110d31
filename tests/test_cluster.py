import numpy as np
import igraph as ig
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.cluster import cluster_pairs, connected_components
from neardup.config import ClusterConfig


@given(st.integers(1, 40), st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39)), max_size=60))
@settings(max_examples=80, deadline=None)
def test_union_find_matches_igraph(n, edges):
    edges = [(a % n, b % n) for a, b in edges]
    left = np.array([a for a, _ in edges], dtype=np.int64)
    right = np.array([b for _, b in edges], dtype=np.int64)
    ours = connected_components(n, left, right)
    theirs = ig.Graph(n=n, edges=edges).connected_components().membership
    # Same partition: labels agree up to renaming.
    assert len(set(zip(ours.tolist(), theirs))) == len(set(theirs)) == len(set(ours.tolist()))


def test_representative_is_longest_then_first_seen():
    lengths = np.array([5, 9, 9, 1])
    c = cluster_pairs(4, np.array([0, 1]), np.array([1, 2]), np.array([1.0, 1.0]), lengths)
    assert c.labels.tolist() == [1, 1, 1, 3]
    assert c.is_representative.tolist() == [False, True, False, True]
    assert c.sizes.tolist() == [3, 3, 3, 1]


def test_oversized_clusters_are_flagged():
    n = 6
    left, right = np.arange(4), np.arange(1, 5)
    c = cluster_pairs(n, left, right, np.ones(4), np.ones(n), ClusterConfig(algorithm="components", max_cluster_size=3))
    assert c.oversized.tolist() == [True] * 5 + [False]
    star = cluster_pairs(n, np.zeros(4, dtype=np.int64), np.arange(1, 5), np.ones(4), np.ones(n),
                         ClusterConfig(max_cluster_size=3))  # greedy: the kept document and its four copies
    assert star.oversized.tolist() == [True] * 5 + [False]


def _two_cliques_joined_by_weak_edge():
    a = [(i, j) for i in range(5) for j in range(i + 1, 5)]
    b = [(i, j) for i in range(5, 10) for j in range(i + 1, 10)]
    edges = a + b + [(4, 5)]
    scores = [0.9] * (len(a) + len(b)) + [0.3]
    return (np.array([e[0] for e in edges]), np.array([e[1] for e in edges]), np.array(scores))


def test_components_chain_but_communities_split_the_weak_link():
    left, right, scores = _two_cliques_joined_by_weak_edge()
    lengths = np.arange(10)
    chained = cluster_pairs(10, left, right, scores, lengths, ClusterConfig(algorithm="components"))
    assert chained.n_clusters == 1
    for algo in ("louvain", "leiden"):
        split = cluster_pairs(10, left, right, scores, lengths, ClusterConfig(algorithm=algo))
        assert split.n_clusters == 2, algo
        assert len(set(split.labels[:5].tolist())) == 1 and len(set(split.labels[5:].tolist())) == 1


def test_community_detection_is_deterministic():
    left, right, scores = _two_cliques_joined_by_weak_edge()
    runs = [cluster_pairs(10, left, right, scores, np.ones(10), ClusterConfig(algorithm="leiden")).labels.tolist()
            for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]


def _whole_corpus(n, left, right, scores, lengths, cfg, keys):
    """The clusters as computed before documents outside pairs were set aside: every array over all ``n``."""
    from neardup.cluster import _communities, _finalise, average_linkage

    if cfg.algorithm == "agglomerative":
        floor = float(np.min(scores)) if left.size else 0.0
        return _finalise(average_linkage(n, left, right, scores, floor), lengths, cfg, keys)
    groups = connected_components(n, left, right)
    if cfg.algorithm not in (None, "components") and left.size:
        in_edge = np.zeros(n, dtype=bool)
        in_edge[left] = in_edge[right] = True
        nodes = np.flatnonzero(in_edge)
        local = np.full(n, -1, dtype=np.int64)
        local[nodes] = np.arange(nodes.size)
        membership = _communities(nodes.size, local[left], local[right], scores, cfg)
        _, comm = np.unique(groups[nodes] * (nodes.size + 1) + membership, return_inverse=True)
        groups = np.arange(n, dtype=np.int64) + n
        groups[nodes] = comm
    return _finalise(groups, lengths, cfg, keys)


@given(st.integers(1, 60), st.lists(st.tuples(st.integers(0, 59), st.integers(0, 59)), max_size=80),
       st.sampled_from(["components", "leiden", "agglomerative"]), st.sampled_from(["longest", "first"]),
       st.sampled_from([None, 2, 3]), st.booleans(), st.randoms(use_true_random=False))
@settings(max_examples=120, deadline=None)
def test_clusters_found_among_the_paired_documents_equal_the_whole_corpus_s(n, edges, algorithm, policy, cap,
                                                                            with_keys, rng):
    """Components, communities, linkage groups and representatives are found among the documents in pairs
    alone, the rest set to themselves: the same labels, sizes and flags as arrays over the whole corpus gave."""
    edges = [(a % n, b % n) for a, b in edges if a % n != b % n]
    left = np.array([a for a, _ in edges], dtype=np.int64)
    right = np.array([b for _, b in edges], dtype=np.int64)
    scores = np.array([rng.random() for _ in edges])
    lengths = np.array([rng.randrange(5) for _ in range(n)])
    keys = np.array([float(rng.randrange(3)) for _ in range(n)]) if with_keys else None
    cfg = ClusterConfig(algorithm=algorithm, representative=policy, max_cluster_size=cap)
    ours, before = cluster_pairs(n, left, right, scores, lengths, cfg, keys), _whole_corpus(n, left, right, scores,
                                                                                            lengths, cfg, keys)
    for field in ("labels", "sizes", "oversized"):
        assert np.array_equal(getattr(ours, field), getattr(before, field)), field
        assert getattr(ours, field).dtype == getattr(before, field).dtype, field


def test_clustering_a_large_corpus_with_few_pairs_holds_little_beyond_its_result():
    """The result is 17 bytes a document (labels, sizes, flags); arrays over the whole corpus for the
    components and the representatives took 89 at their peak (850 MB at 10M stories, past the memory limit)."""
    import tracemalloc

    n, rng = 1_000_000, np.random.default_rng(1)
    left, right = rng.integers(0, n, 1000), rng.integers(0, n, 1000)
    lengths = rng.integers(1, 100, n)
    tracemalloc.start()
    try:
        clusters = cluster_pairs(n, left, right, np.ones(1000), lengths, ClusterConfig(algorithm="components"))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        greedy = cluster_pairs(n, left, right, np.ones(1000), lengths)
        greedy_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    outside = np.setdiff1d(np.arange(n), np.concatenate([left, right]))
    assert np.array_equal(clusters.labels[outside], outside) and (clusters.sizes[outside] == 1).all()
    assert (clusters.sizes[left] >= 2).all() and (clusters.labels[left] == clusters.labels[right]).all()
    assert peak < 20 * n, peak / n
    assert np.array_equal(greedy.labels[outside], outside)
    assert greedy.unlinked().size == 0 and greedy_peak < 20 * n + 17 * n, greedy_peak / n  # (the components' result still held)


def _greedy_reference(n, edges, scores, lengths):
    """The decision rule written as plainly as it reads: in the representative order (longest, then first
    seen), a document is removed as a copy of the best-scoring document already kept that it was verified
    against, else kept."""
    order = sorted(range(n), key=lambda i: (-lengths[i], i))
    kept, copy_of = set(), {}
    for d in order:
        best = None
        for (a, b), s in zip(edges, scores):
            other = b if a == d else a if b == d else None
            if other is not None and other in kept and (best is None or s > best[0]
                                                          or (s == best[0] and order.index(other) < order.index(best[1]))):
                best = (s, other)
        if best is None:
            kept.add(d)
        else:
            copy_of[d] = best[1]
    return [copy_of.get(i, i) for i in range(n)]


@given(st.integers(2, 25), st.lists(st.tuples(st.integers(0, 24), st.integers(0, 24), st.integers(1, 4)), max_size=60),
       st.lists(st.integers(1, 6), min_size=25, max_size=25))
@settings(max_examples=150, deadline=None)
def test_greedy_removes_a_document_only_as_a_verified_copy_of_a_kept_one(n, raw, raw_lengths):
    seen, edges, scores = set(), [], []
    for a, b, s in raw:
        a, b = a % n, b % n
        if a != b and (min(a, b), max(a, b)) not in seen:
            seen.add((min(a, b), max(a, b)))
            edges.append((a, b))
            scores.append(s / 4)
    lengths = np.array(raw_lengths[:n])
    left = np.array([a for a, _ in edges], dtype=np.int64)
    right = np.array([b for _, b in edges], dtype=np.int64)
    c = cluster_pairs(n, left, right, np.array(scores), lengths)
    assert c.labels.tolist() == _greedy_reference(n, edges, scores, lengths)
    verified = {(a, b): s for (a, b), s in zip(edges, scores)} | {(b, a): s for (a, b), s in zip(edges, scores)}
    kept, removed, link = c.links()
    assert removed.tolist() == np.flatnonzero(~c.is_representative).tolist() and c.unlinked().size == 0
    for k, r, s in zip(kept.tolist(), removed.tolist(), link.tolist()):
        assert c.is_representative[k] and verified[(k, r)] == s  # a kept document, by a verified pair
        assert lengths[k] >= lengths[r]  # that is not shorter (the policy's order)
    assert np.array_equal(np.bincount(c.labels, minlength=n)[c.labels], c.sizes)


def test_greedy_keeps_what_a_chain_would_remove():
    """Replies that each quote one post: the post matches every reply, the replies match nothing of each
    other. Components make one cluster and keep one reply; greedy keeps every reply and removes the post."""
    post, replies = 0, [1, 2, 3]
    lengths = np.array([10, 30, 25, 20])
    left, right = np.array([post] * 3), np.array(replies)
    chain = cluster_pairs(4, left, right, np.ones(3), lengths, ClusterConfig(algorithm="components"))
    assert chain.is_representative.tolist() == [False, True, False, False] and chain.unlinked().tolist() == [2, 3]
    c = cluster_pairs(4, left, right, np.ones(3), lengths)
    assert c.is_representative.tolist() == [False, True, True, True]
    assert c.copy_of.tolist() == [1, -1, -1, -1]


def test_greedy_decides_a_long_chain_past_its_rounds():
    """A chain 0-1-2-...: each document a copy of the one before decides two documents a round, so a chain of
    501 runs out of rounds and the rest is decided pair by pair; the result alternates kept / removed."""
    n = 501
    left, right = np.arange(n - 1), np.arange(1, n)
    c = cluster_pairs(n, left, right, np.ones(n - 1), np.full(n, 10))  # equal lengths: input order
    assert c.is_representative.tolist() == [i % 2 == 0 for i in range(n)]
    assert c.copy_of[1::2].tolist() == list(range(0, n - 1, 2)) and c.unlinked().size == 0
