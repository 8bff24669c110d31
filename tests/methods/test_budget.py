"""Candidate counts stay bounded: a budget plans the LSH threshold on the corpus itself (the same in every
engine), and a cap stops a run whose candidates explode with a message naming the settings."""

import random

import numpy as np
import pytest

import neardup
from neardup import methods
from neardup.config import ConfigError, DedupConfig, EngineConfig
from neardup.io.write import write_jsonl
from neardup.methods import minhash as minhash_method
from neardup.methods.base import Representation
from neardup.text.shingle import ShingleSets

WORDS = ("market share price bank rate trade export import dollar yen oil crude stock index fell rose "
         "percent said official government minister company profit loss quarter year billion million").split()


@pytest.fixture()
def crowded(tmp_path):
    """600 short stories over one small vocabulary (their character 5-grams are shared by most of the
    corpus, as in real news) and 20 planted copies with a few characters changed."""
    rng = random.Random(7)
    texts = [" ".join(rng.choice(WORDS) for _ in range(40)) for _ in range(600)]
    for i in range(20):
        chars = list(texts[i])
        for p in rng.sample(range(len(chars)), 4):
            chars[p] = "x"
        texts.append("".join(chars))
    path = tmp_path / "crowded.jsonl"
    write_jsonl(path, ({"id": str(i), "text": t} for i, t in enumerate(texts)))
    return path


CHAR = dict(method="minhash", threshold=0.6, shingle__char=True, shingle__n=5)


def test_a_budget_raises_the_lsh_threshold_until_candidates_fit_and_keeps_the_true_pairs(crowded, monkeypatch):
    monkeypatch.setattr(minhash_method, "PLAN_FLOOR", 0)
    loose = neardup.dedup(crowded, **CHAR, minhash__candidates_per_doc=1e12)  # a budget too large to bind
    budget = neardup.dedup(crowded, **CHAR, minhash__candidates_per_doc=2)
    assert loose.summary["params"]["minhash"]["lsh_threshold"] == 0.2
    planned = budget.summary["params"]["minhash"]["lsh_threshold"]
    assert planned > 0.2 and budget.summary["params"]["bands"] != loose.summary["params"]["bands"]
    assert loose.summary["n_candidates"] > 10 * 620  # word-style bands propose most of the corpus
    assert budget.summary["n_candidates"] <= 3 * 620
    planted = {(str(i), str(600 + i)) for i in range(20)}
    assert planted <= {(a, b) for a, b, _ in budget.pairs_by_id()}  # the copies are still found
    # every engine plans on the joined representation and runs the same settings
    local = neardup.dedup(crowded, **CHAR, minhash__candidates_per_doc=2, engine=EngineConfig(name="local", workers=1, progress=False),
                          output=crowded.parent / "out")
    assert local.summary["params"]["minhash"]["lsh_threshold"] == planned
    assert [p[:2] for p in local.pairs_by_id()] == [p[:2] for p in budget.pairs_by_id()]


def test_a_corpus_smaller_than_the_plans_sample_is_planned_on_its_own_candidates(crowded, monkeypatch):
    """Under :data:`PLAN_DOCS` documents the plan counts every pair the candidates stage would propose: the
    planned level fits the budget exactly, and the level it passed over would not have."""
    monkeypatch.setattr(minhash_method, "PLAN_FLOOR", 0)
    unfiltered = dict(CHAR, minhash__estimate_floor=None)
    budget = neardup.dedup(crowded, **unfiltered, minhash__candidates_per_doc=2)
    planned = budget.summary["params"]["minhash"]["lsh_threshold"]
    assert planned > 0.2 and budget.summary["n_candidates"] <= 2 * 620
    # the count the plan reports is the candidates the run proposed
    assert round(budget.summary["params"]["planned_candidates_per_doc"] * 620) == budget.summary["n_candidates"]
    passed_over = max(x for x in minhash_method.LSH_LADDER if x < planned)
    looser = neardup.dedup(crowded, **unfiltered, minhash__lsh_threshold=passed_over,
                          minhash__candidates_per_doc=1e12)
    assert looser.summary["n_candidates"] > 2 * 620


def test_a_budget_binds_on_a_large_corpus_whose_candidates_are_rare_pairs(monkeypatch):
    """40k documents, of which 4,000 pairs agree on their first four signature values (a candidate under bands
    of up to four rows) and nothing else collides: 0.1 candidates a document, twice a budget of 0.05. A level
    with four rows a band would propose too many, so the plan takes five. 20k random pairs of 800M would have
    met one of these pairs 0.1 times: the plan's count, all pairs of a sample, meets about 250."""
    monkeypatch.setattr(minhash_method, "PLAN_FLOOR", 0)
    rng = np.random.default_rng(3)
    n = 40_000
    sketch = rng.integers(0, 2**32, (n, 128), dtype=np.uint64).astype(np.uint32)
    sketch[1:8000:2, :4] = sketch[0:8000:2, :4]
    sets = ShingleSets(np.arange(n, dtype=np.uint64), np.arange(n + 1, dtype=np.int64))
    rep = Representation(sets=sets, lengths=np.ones(n, dtype=np.int64), sketch=sketch)
    config = DedupConfig().replace(**CHAR, minhash__lsh_threshold=0.2, minhash__candidates_per_doc=0.05)
    planned = methods.get(config).plan(rep)
    assert planned.rows == 5 and planned.config.minhash.lsh_threshold == 0.45
    unbound = methods.get(config.replace(minhash__candidates_per_doc=0.2)).plan(rep)  # 8,000 allowed
    assert unbound.config.minhash.lsh_threshold == 0.2


def test_character_shingles_are_bounded_by_default_and_word_shingles_are_not(crowded, monkeypatch):
    monkeypatch.setattr(minhash_method, "PLAN_FLOOR", 0)
    res = neardup.dedup(crowded, **CHAR)  # -m minhash --char-ngrams: the unit's budget and floor, no setting given
    mh = res.summary["params"]["minhash"]
    assert (mh["candidates_per_doc"], mh["estimate_floor"]) == (minhash_method.CHAR_CANDIDATES_PER_DOC,
                                                                 minhash_method.CHAR_ESTIMATE_FLOOR)
    assert mh["lsh_threshold"] > 0.2 and res.summary["n_candidates"] <= minhash_method.CHAR_CANDIDATES_PER_DOC * 620
    planted = {(str(i), str(600 + i)) for i in range(20)}
    assert planted <= {(a, b) for a, b, _ in res.pairs_by_id()}
    word = DedupConfig(method="minhash").replace(shingle__char=True).replace(shingle__char=False).minhash
    assert (word.candidates_per_doc, word.estimate_floor) == (None, None)  # the bounds follow the unit


def test_a_budget_never_loosens_the_configured_threshold(crowded):
    res = neardup.dedup(crowded, **CHAR, minhash__lsh_threshold=0.5, minhash__candidates_per_doc=1000)
    assert res.summary["params"]["minhash"]["lsh_threshold"] == 0.5


@pytest.mark.parametrize("engine", ["memory", "local"])
def test_candidates_over_the_cap_stop_the_run_with_the_settings_named(crowded, monkeypatch, engine, tmp_path):
    monkeypatch.setattr(minhash_method, "CAP_FLOOR", 0)
    eng = EngineConfig(name=engine, workers=1, progress=False)
    with pytest.raises(ConfigError, match=r"candidate step yields over 1,240 pairs for 620 documents.*lsh_threshold"
                                          r".*candidates_per_doc.*max_candidates_per_doc"):
        neardup.dedup(crowded, **CHAR, minhash__max_candidates_per_doc=2, engine=eng, output=tmp_path / "o")
    res = neardup.dedup(crowded, **CHAR, minhash__max_candidates_per_doc=None)
    assert res.summary["n_candidates"] > 1240


def test_budget_settings_are_checked():
    with pytest.raises(ConfigError, match="candidates_per_doc must be > 0"):
        DedupConfig().replace(minhash__candidates_per_doc=0)
    assert np.isclose(DedupConfig().minhash.max_candidates_per_doc, 1000.0)


def test_an_estimate_floor_skips_chance_candidates_and_keeps_every_verified_pair(crowded, tmp_path):
    """The MinHash estimate screens candidates before exact verification, the same in every engine."""
    every = neardup.dedup(crowded, **CHAR)
    floored = neardup.dedup(crowded, **CHAR, minhash__estimate_floor=0.9)
    assert floored.summary["n_candidates"] < every.summary["n_candidates"] / 10  # chance collisions skipped
    assert floored.pairs_by_id() == every.pairs_by_id()  # and no verified pair lost
    local = neardup.dedup(crowded, **CHAR, minhash__estimate_floor=0.9, output=tmp_path / "o",
                          engine=EngineConfig(name="local", workers=1, progress=False))
    assert local.summary["n_candidates"] == floored.summary["n_candidates"]
    assert local.pairs_by_id() == floored.pairs_by_id()
    with pytest.raises(ConfigError, match="estimate_floor must be in"):
        DedupConfig().replace(minhash__estimate_floor=1.5)


def test_the_estimate_is_the_overlap_the_jaccard_estimate_and_the_sizes_imply():
    m = minhash_method.MinHash(DedupConfig(method="minhash", threshold=0.6).replace(minhash__estimate_floor=0.9))
    a = np.zeros((3, 128), dtype=np.uint64)
    b = a.copy()
    b[0, 64:] = 1  # J = .5: overlap .5 * 200 / (1.5 * 100) = .667 >= .9 * .6
    b[1, 32:] = 1  # J = .25: .25 * 200 / (1.25 * 100) = .4, dropped ...
    b[2, 32:] = 1  # ... unless the smaller set is far smaller: .25 * 400 / (1.25 * 100) = .8
    keep = m.keep_candidates(a, b, np.array([100, 100, 100]), np.array([100, 100, 300]))
    assert keep.tolist() == [True, False, True]
    assert m.keep_candidates(a, b) is None  # without sizes, nothing is screened
    jaccard = minhash_method.MinHash(DedupConfig(method="minhash", threshold=0.6).replace(
        minhash__estimate_floor=0.9, verify__score="jaccard"))
    assert jaccard.keep_candidates(a, b, np.full(3, 100), np.full(3, 100)).tolist() == [False, False, False]
    # the same screen of pairs given as indices into the sketch rows, as the chunked engines read them
    rows, ia, ib = np.concatenate([a, b]), np.arange(3), np.arange(3, 6)
    assert m.keep_rows(rows, ia, ib, np.array([100, 100, 100]), np.array([100, 100, 300])).tolist() == keep.tolist()
    assert m.keep_rows(rows, ia, ib) is None


@pytest.mark.parametrize("jit", ["0", "1"])
def test_the_agreement_of_rows_is_the_mean_of_equal_coordinates_to_the_bit(monkeypatch, jit):
    from neardup.represent.minhash import agreement

    monkeypatch.setenv("NEARDUP_JIT", jit)
    rng = np.random.default_rng(int(jit))
    rows = rng.integers(0, 4, size=(50, 128), dtype=np.uint64).astype(np.uint32)  # many equal coordinates
    ia, ib = rng.integers(0, 50, size=(2, 300))
    assert np.array_equal(agreement(rows, ia, ib), np.mean(rows[ia] == rows[ib], axis=1))
    assert agreement(rows, ia[:0], ib[:0]).dtype == np.float64


def test_the_collisions_rule_over_the_cap_names_its_own_remedies(crowded, monkeypatch):
    """The collisions rule has no bands: its cap error says what drives its pairs (values shared within
    max_bucket) and, for character n-grams, whose least hashes are common n-grams, to use words or the LSH
    rule; the tuner offers the rule for word n-grams only."""
    monkeypatch.setattr(minhash_method, "CAP_FLOOR", 0)
    rule = dict(minhash__rule="collisions", minhash__max_candidates_per_doc=2, minhash__max_bucket=1000)
    with pytest.raises(ConfigError, match=r"yields over 1,240 pairs .*'min_collisions': 38.*max_bucket \(1000\).*"
                                          r"character n-grams.*--word-ngrams.*--rule lsh") as err:
        neardup.dedup(crowded, **CHAR, **rule)
    assert "lsh_threshold" not in str(err.value)
    with pytest.raises(ConfigError, match=r"max_bucket \(1000\) documents: lower max_bucket") as err:
        neardup.dedup(crowded, **{**CHAR, "shingle__char": False, "shingle__n": 2}, **rule)
    assert "character" not in str(err.value)
    char, word = (minhash_method.MinHash(DedupConfig(method="minhash").replace(shingle__char=c)) for c in (True, False))
    assert {s["minhash__rule"] for s in char.tuning_settings()} == {"lsh"}
    assert {s["minhash__rule"] for s in word.tuning_settings()} == {"lsh", "collisions"}


def test_the_collisions_rule_stops_where_most_signature_values_would_go_uncounted(crowded, example_path):
    """Values held by more than max_bucket documents are not counted by the collisions rule: where that is most of
    a corpus's (character 5-grams over one small vocabulary, the least hashes common n-grams) the run stops and
    says so, rather than find a few of the pairs; word 4-grams of news stories run."""
    rule = dict(minhash__rule="collisions", minhash__max_bucket=20)
    with pytest.raises(ConfigError, match=r"of the signature values of these 620 documents are held by more than "
                                          r"minhash.max_bucket \(20\).*--word-ngrams"):
        neardup.dedup(crowded, **CHAR, **rule)
    words = neardup.dedup(example_path, method="minhash", **rule)
    assert words.summary["n_pairs"] > 0
