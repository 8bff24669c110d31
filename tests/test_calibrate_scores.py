"""The threshold read from the corpus's own candidate scores (issue 59): where the profile's threshold cuts a mode
of copies, the valley below it; where the scores show no second mode, the profile's threshold; never higher than
the profile's; recorded in ``summary.json``'s ``calibration.scores``."""

from __future__ import annotations

import random

import numpy as np
import pytest

import neardup
from neardup import calibrate_scores as cs
from neardup.calibrate import resolve
from neardup.config import DedupConfig
from neardup.eval.metrics import adjusted_rand_index
from neardup.synth.campaigns import CAMPAIGN_PRESETS, campaign_corpus
from neardup.synth.lexicon import CITIES, COMMON_WORDS, NAMES


def campaign_texts(seed: int = 5) -> tuple[list[str], list[object]]:
    """About 500 texts: 60 stories sent as padded campaigns of 2-6 copies (heavy: 6% of words inserted, padded by
    30-100%) among 250 untouched stories, all of random words with a few shared boilerplate sentences. They read as
    clean text (word 4-grams at 0.45), where the copies score about 0.1-0.35 against each other."""
    vocab = COMMON_WORDS + [n.lower() for n in NAMES] + [c.lower() for c in CITIES] + [f"w{i}x" for i in range(5000)]
    b = random.Random(99)
    boiler = [" ".join(b.choice(COMMON_WORDS) for _ in range(14)).capitalize() + "." for _ in range(25)]
    rng = random.Random(seed)

    def story() -> str:
        out = [" ".join(rng.choice(vocab) for _ in range(rng.randint(8, 16))).capitalize() + "." for _ in range(10)]
        out[rng.randrange(len(out))] = rng.choice(boiler)
        out.insert(rng.randrange(len(out)), rng.choice(boiler))
        return " ".join(out)

    stories = [story() for _ in range(60)]
    background = [story() for _ in range(250)]
    others = [story() for _ in range(100)]
    return campaign_corpus(stories, background, others, seed=1, sizes=(2, 6), **CAMPAIGN_PRESETS["heavy"])


@pytest.fixture(scope="module")
def campaigns() -> tuple[list[str], list[object]]:
    return campaign_texts()


def _two_modes(rng: np.random.Generator, copies: int = 3000) -> np.ndarray:
    """Unrelated pairs near 0, and a campaign's copies at .4-.55 (the issue's busted spam at character 5-grams)."""
    return np.concatenate([np.clip(rng.normal(0.47, 0.04, copies), 0, 1), rng.beta(1, 12, 5000)])


def test_a_mode_the_profile_cuts_gets_the_valley_below_it():
    rng = np.random.default_rng(0)
    got = cs.estimate(_two_modes(rng), 0.674, rng.beta(1, 30, 2000))
    assert got.decided == "scores" and got.threshold < 0.674
    assert 0.25 < got.threshold < 0.38  # between the unrelated pairs and the copies
    assert got.low <= got.valley <= got.high and got.high - got.low < 0.05 and got.found >= 0.9
    assert got.mode_pairs >= 2900
    # a profile under the whole mode, or inside it from below, finds the same valley
    assert cs.estimate(_two_modes(np.random.default_rng(0)), 0.45).threshold == pytest.approx(got.threshold, abs=0.01)


def test_one_mode_falls_back_to_the_profile():
    rng = np.random.default_rng(1)
    unrelated = rng.beta(1, 8, 20_000)  # falls from 0: no second mode
    got = cs.estimate(unrelated, 0.45)
    assert got.decided == "profile" and got.threshold == 0.45 and got.valley is None
    # too few pairs in a second mode: the profile decides too
    few = np.concatenate([unrelated[:2000], np.clip(rng.normal(0.3, 0.02, 40), 0, 1)])
    assert cs.estimate(few, 0.45).decided == "profile"


def test_a_mode_above_the_profile_never_raises_it():
    """Exact re-sends pile up at 1.0 on real news, with a valley near .7 between them and the rest; abridged and
    corrected copies score .45-.75 among templates, so the profile's 0.45 stays."""
    rng = np.random.default_rng(2)
    scores = np.concatenate([rng.beta(1, 6, 20_000), np.clip(rng.normal(0.97, 0.02, 1000), 0, 1)])
    got = cs.estimate(scores, 0.45)
    assert got.decided == "profile" and got.threshold == 0.45


def test_the_sample_is_the_same_however_the_candidates_are_partitioned():
    rng = np.random.default_rng(3)
    codes = rng.choice(10**9, 50_000, replace=False).astype(np.int64)
    whole = cs.sample_codes(codes, 1000)
    parts = [cs.sample_codes(codes[p::7], 1000) for p in range(7)]  # partitioned, each sampled on its own
    assert np.array_equal(cs.sample_codes(np.concatenate(parts), 1000), whole)
    assert np.array_equal(cs.sample_codes(np.concatenate([codes, codes[:10]]), 1000), whole)  # repeats count once
    assert np.array_equal(cs.null_codes(500, 100, seed=4), cs.null_codes(500, 100, seed=4))


def test_a_padded_campaign_gets_a_threshold_low_enough_to_find_it_and_the_summary_says_why(campaigns):
    texts, truth = campaigns
    res = neardup.dedup(texts)
    cal = res.summary["calibration"]
    scores = cal["scores"]
    assert cal["choice"]["threshold"] == 0.45 and cal["choice"]["shingle__char"] is False  # read as clean text
    assert scores["decided"] == "scores" and scores["profile_threshold"] == 0.45
    assert res.summary["params"]["threshold"] == scores["threshold"] < 0.2
    assert res.summary["decision"]["threshold"] == scores["threshold"]
    assert set(scores) >= {"valley", "low", "high", "found", "depth", "mode_pairs", "sample", "null", "reason"}
    assert scores["low"] <= scores["valley"] <= scores["high"]
    alone = neardup.dedup(texts, auto__scores=False)
    assert "scores" not in alone.summary["calibration"] and alone.summary["params"]["threshold"] == 0.45
    assert adjusted_rand_index(res.clusters.labels.tolist(), truth) > \
        adjusted_rand_index(alone.clusters.labels.tolist(), truth) + 0.3


def test_a_threshold_the_user_gave_is_never_replaced(campaigns):
    texts, _ = campaigns
    res = neardup.dedup(texts, threshold=0.45)
    assert res.summary["params"]["threshold"] == 0.45 and "scores" not in res.summary["calibration"]
    assert res.summary["calibration"]["given"] == ["threshold"]
    assert not cs.applies(resolve(DedupConfig(method="auto", threshold=0.45), texts[:50]))
    assert not cs.applies(resolve(DedupConfig(method="auto"), texts[:50]).replace(threshold=0.3))  # not auto's choice


def test_clean_text_keeps_the_profile(example_path):
    res = neardup.dedup(example_path)
    scores = res.summary["calibration"]["scores"]
    assert scores["decided"] == "profile" and res.summary["params"]["threshold"] == scores["profile_threshold"]
