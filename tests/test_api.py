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
    assert r.groups() == [["0", "1", "2"]]
    assert r.representatives == ["2", "3"]  # the longest text represents its cluster
    assert r.cluster_ids == ["2", "2", "2", "3"]
    assert {(a, b) for a, b, _ in r.pairs_by_id()} <= {("0", "1"), ("0", "2"), ("1", "2")}


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
    assert r.groups() == [["0", "2"]]


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
