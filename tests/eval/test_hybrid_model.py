"""The hybrid method's learned verifier: features, the NumPy logistic regression, labels for fitting, tuning keys."""

import numpy as np
import pytest

from neardup.config import ConfigError, DedupConfig, config_from_dict, config_to_dict
from neardup.eval.evaluate import LabelledData
from neardup.eval.tune import PARAM_KEYS, Trial, best_trial, candidate_settings, config_for, pair_labels
from neardup.io.read import read_records
from neardup.verify.hybrid import (DEFAULT_HYBRID_COEF, HYBRID_FEATURES, fit_logistic, hybrid_features,
                                   logistic_scores)


def _toy(seed=0):
    """Duplicates: high n-gram overlap or (noisy copies) high cosine with a matching partial score;
    template siblings: high cosine but low IDF-weighted overlap."""
    rng = np.random.default_rng(seed)
    dup_clean = np.column_stack([rng.uniform(0.7, 1, 40), rng.uniform(0.85, 1, 40), rng.uniform(0.85, 1, 40),
                                 rng.uniform(0.5, 1, 40)])
    dup_noisy = np.column_stack([rng.uniform(0.1, 0.4, 40), rng.uniform(0.93, 1, 40), rng.uniform(0.95, 1, 40),
                                 rng.uniform(0.8, 1, 40)])
    template = np.column_stack([rng.uniform(0.05, 0.3, 80), rng.uniform(0.6, 0.85, 80), rng.uniform(0.6, 0.85, 80),
                                rng.uniform(0.8, 1, 80)])
    x = np.vstack([dup_clean, dup_noisy, template])
    y = np.r_[np.ones(80), np.zeros(80)]
    return x, y


def test_the_learned_rule_separates_duplicates_from_template_siblings():
    x, y = _toy()
    coef = fit_logistic(x, y)
    assert coef is not None and len(coef) == len(HYBRID_FEATURES) + 1
    p = logistic_scores(x, coef)
    assert ((p >= 0.5) == (y == 1)).mean() >= 0.97
    # both signals count: n-gram overlap and the chunk-level (partial) score push towards "duplicate"
    assert coef[0] > 0 and coef[2] > 0
    # held-out draw from the same distributions
    x2, y2 = _toy(seed=1)
    assert ((logistic_scores(x2, coef) >= 0.5) == (y2 == 1)).mean() >= 0.95


def test_fit_is_deterministic_and_needs_both_classes():
    x, y = _toy()
    assert fit_logistic(x, y) == fit_logistic(x.copy(), y.copy())
    assert fit_logistic(x, np.zeros(len(x))) is None
    assert fit_logistic(np.empty((0, 4)), np.empty(0)) is None


def test_stronger_regularisation_shrinks_the_weights():
    x, y = _toy()
    loose, tight = fit_logistic(x, y, l2=0.01), fit_logistic(x, y, l2=100.0)
    assert np.abs(tight[:-1]).sum() < np.abs(loose[:-1]).sum()


def test_logistic_scores_check_the_number_of_coefficients():
    with pytest.raises(ValueError, match="hybrid_coef needs 5 numbers"):
        logistic_scores(np.zeros((2, 4)), (1.0, 2.0))
    assert logistic_scores(np.ones((1, 4)), DEFAULT_HYBRID_COEF).shape == (1,)


def test_features_clip_scores_and_take_the_length_ratio():
    f = hybrid_features(np.array([0.3, 1.0]), np.array([-0.2, 1.0000001]), np.array([0.5, 2.0]),
                        np.array([100, 50, 0]), np.array([0, 2]), np.array([1, 1]))
    assert f.tolist() == [[0.3, 0.0, 0.5, 0.5], [1.0, 1.0, 1.0, 0.0]]


def test_pair_labels_from_clusters_and_from_labelled_pairs():
    recs = [{"id": str(i), "text": "x", "cluster": c} for i, c in enumerate(["a", "a", None, None, "b"])]
    data = LabelledData(read_records(recs, label_field="cluster"))
    usable, pos = pair_labels(data, np.array([0, 2, 0]), np.array([1, 3, 4]))
    assert usable.tolist() == [True, True, True] and pos.tolist() == [True, False, False]
    plain = read_records([{"id": str(i), "text": "x"} for i in range(4)])
    paired = LabelledData(plain, pairs=[("1", "0", True), ("2", "3", False)])
    usable, pos = pair_labels(paired, np.array([0, 2, 1]), np.array([1, 3, 2]))
    assert usable.tolist() == [True, True, False] and pos.tolist() == [True, False, False]


def test_hybrid_settings_and_params_round_trip():
    assert candidate_settings(DedupConfig(method="hybrid")) == [
        {"embed__hybrid_rule": "logistic"},  # coefficients fitted by the sweep
        {"embed__hybrid_rule": "linear", "embed__hybrid_weight": 1.0},  # IDF-weighted n-gram overlap alone
        {"embed__hybrid_rule": "linear", "embed__hybrid_weight": 0.0}]  # RETSim cosine alone
    assert PARAM_KEYS["hybrid_rule"] == "embed__hybrid_rule" and PARAM_KEYS["hybrid_coef"] == "embed__hybrid_coef"
    params = {"threshold": 0.2, "hybrid_rule": "logistic", "hybrid_coef": [5, 1, 1.5, 0, -6]}  # as read from JSON
    cfg = config_for(DedupConfig(method="hybrid"), params)
    assert cfg.threshold == 0.2 and cfg.embed.hybrid_rule == "logistic"
    assert cfg.embed.hybrid_coef == (5.0, 1.0, 1.5, 0.0, -6.0)
    assert config_from_dict(config_to_dict(cfg)) == cfg
    alone = config_for(DedupConfig(method="hybrid"), {"threshold": 0.45, "hybrid_rule": "linear", "hybrid_weight": 1.0})
    assert alone.embed.hybrid_rule == "linear" and alone.embed.hybrid_weight == 1.0 and alone.threshold == 0.45


def test_a_tie_goes_to_the_preferred_setting_and_only_a_tie():
    model = Trial({"threshold": 0.2, "hybrid_rule": "logistic"}, {"ari": 0.9, "f1": 0.8}, preference=1)
    alone = Trial({"threshold": 0.6, "hybrid_rule": "linear"}, {"ari": 0.9, "f1": 0.8})
    assert best_trial([alone, model]) is model  # despite the lower threshold
    better = Trial({"threshold": 0.3, "hybrid_rule": "linear"}, {"ari": 0.91, "f1": 0.7})
    assert best_trial([model, better]) is better
    sharper = Trial({"threshold": 0.3, "hybrid_rule": "linear"}, {"ari": 0.9, "f1": 0.81})
    assert best_trial([model, sharper]) is sharper


def test_hybrid_config_errors_name_the_parameter():
    with pytest.raises(ConfigError, match="hybrid_rule"):
        DedupConfig(method="hybrid").replace(embed__hybrid_rule="svm")
    with pytest.raises(ConfigError, match="hybrid_coef"):
        DedupConfig(method="hybrid").replace(embed__hybrid_coef=(1.0, 2.0))


def test_hybrid_clusters_by_leiden_unless_told_otherwise():
    from neardup.config import ClusterConfig

    assert DedupConfig(method="hybrid").cluster.algorithm == "leiden"
    assert DedupConfig(method="minhash").cluster.algorithm == "greedy"
    assert DedupConfig(method="retsim").cluster.algorithm == "greedy"
    chosen = DedupConfig(method="hybrid", cluster=ClusterConfig(algorithm="components", max_cluster_size=50))
    assert chosen.cluster.algorithm == "components" and chosen.cluster.max_cluster_size == 50
    cfg = DedupConfig(method="hybrid", threshold=0.3)
    assert config_from_dict(config_to_dict(cfg)) == cfg
    with pytest.raises(ConfigError, match="cluster must be one of"):
        ClusterConfig(algorithm="spectral")
