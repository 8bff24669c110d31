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
    c = cluster_pairs(n, left, right, np.ones(4), np.ones(n), ClusterConfig(max_cluster_size=3))
    assert c.oversized.tolist() == [True] * 5 + [False]


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
