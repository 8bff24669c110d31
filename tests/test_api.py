import numpy as np
import pytest

import neardup
from neardup.config import ConfigError, DedupConfig, config_from_dict, config_to_dict


def test_dedup_on_texts_returns_clusters_pairs_and_representatives():
    texts = ["Shares in Harbor Lines rose 5 percent on Monday after strong results.",
             "shares in harbor lines rose 5 percent on monday after strong results",
             "SHARES IN HARBOR LINES ROSE 5 PERCENT ON MONDAY AFTER STRONG RESULTS. More follows.",
             "The weather service warned of storms along the northern coast."]
    r = neardup.dedup(texts)
    assert r.groups() == [[0, 1, 2]]  # a list of texts' ids are its row numbers
    assert r.representatives == [2, 3]  # the longest text represents its cluster
    assert r.cluster_ids == [2, 2, 2, 3]
    # the pair behind each removal, kept document first: one a removed document
    assert sorted((a, b) for a, b, _ in r.pairs_by_id()) == [(2, 0), (2, 1)]
    assert [(d["id"], d["kept"], d["copy_of"]) for d in r.decisions] == [
        (0, False, 2), (1, False, 2), (2, True, None), (3, True, None)]
    graph = neardup.dedup(texts, all_pairs=True)  # every verified pair, as the graph algorithms see it
    assert graph.groups() == r.groups() and {(a, b) for a, b, _ in graph.pairs_by_id()} == {(0, 1), (0, 2), (1, 2)}


def test_dedup_accepts_records_paths_and_stage_options(example_path):
    r = neardup.dedup([{"id": "x", "text": "a b c d e f"}, {"id": "y", "text": "a b c d e f"}], shingle__n=2)
    assert r.groups() == [["x", "y"]]
    r2 = neardup.dedup(example_path, method="ngram", threshold=0.6, cluster__algorithm="leiden")
    assert r2.summary["params"]["method"] == "ngram" and r2.summary["params"]["cluster"]["algorithm"] == "leiden"


@pytest.mark.parametrize("method", ["minhash", "ngram", "simhash"])
def test_every_method_finds_an_exact_copy_and_ignores_empty_docs(method):
    text = "the port authority approved a plan to rebuild the old harbour bridge on friday"
    r = neardup.dedup([text, "", text, "  ", "an unrelated sentence about football clubs and their stadiums"],
                      method=method)
    assert r.groups() == [[0, 2]]


def test_config_round_trips_and_validates():
    cfg = DedupConfig(method="minhash", threshold=0.3).replace(minhash__num_perm=64, cluster__algorithm="louvain")
    assert config_from_dict(config_to_dict(cfg)) == cfg
    with pytest.raises(ConfigError, match="num_perm"):
        DedupConfig().replace(minhash__num_perm=1)
    with pytest.raises(ConfigError, match="unknown stage"):
        DedupConfig().replace(nothing__x=1)


def test_collision_rule_and_hand_set_bands_work_end_to_end(example_path):
    a = neardup.dedup(example_path, minhash__rule="collisions", minhash__min_collisions=10)
    b = neardup.dedup(example_path, minhash__bands=32, minhash__rows=4)
    assert a.summary["params"]["min_collisions"] == 10 and b.summary["params"]["bands"] == 32
    assert len(a.groups()) > 20 and len(b.groups()) > 20
    assert np.all(a.scores >= 0.45 - 1e-9)


def test_a_giant_cluster_is_decided_against_its_kept_document_in_linear_work():
    """3,000 copies of one story, each with its own last word: an LSH bucket far over max_bucket. Each copy is a
    candidate of the longest copy only (the bucket's centre: the document the policy keeps), verified against it
    and removed as its copy: one candidate pair, one written pair and one piece of evidence a removed document."""
    story = ("The port authority approved a plan on Friday to rebuild the old harbour bridge, closed since the "
             "storm in March, at a cost of 40 million euros over three years, officials said. ")
    texts = [story + f"ref{i}" + " tail" * (i == 1234) for i in range(3000)]
    # unweighted: in a corpus of nothing but these copies IDF weighs the shared words at 0
    r = neardup.dedup(texts, method="minhash", verify__score="jaccard")
    kept = [d for d in r.decisions if d["kept"]]
    assert [d["id"] for d in kept] == [1234]  # the longest
    assert all(d["copy_of"] == 1234 and d["score"] >= r.summary["params"]["threshold"] for d in r.decisions
               if not d["kept"])
    assert r.summary["n_pairs_written"] == 2999 and len(r.evidence()) == 2999
    assert r.summary["n_candidates"] < 3 * 3000  # linear: the star of each oversized bucket, not 4.5M pairs
