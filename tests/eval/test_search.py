"""The search of the whole configuration (neardup.eval.search): planted best choices, the start point never
beaten, the budget, missing extras, and the chosen configuration written as a file."""

import random

import pytest

from neardup.config import ConfigError, DedupConfig, parse_duration
from neardup.eval.evaluate import LabelledData, evaluate
from neardup.eval.search import SearchSpace, search, tune_config
from neardup.io.config_file import load_config
from neardup.io.read import read_records

_LETTERS = "abcdefghijklmnoprstuvwy"


def _vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    return ["".join(rng.choice(_LETTERS) for _ in range(rng.randint(5, 9))) for _ in range(size)]


def _one_char(word: str, rng: random.Random) -> str:
    i = rng.randrange(len(word))
    return word[:i] + rng.choice([c for c in _LETTERS if c != word[i]]) + word[i + 1 :]


def _labelled(records: list[dict]) -> LabelledData:
    return LabelledData(read_records(records, label_field="cluster"))


def _corpus(seed: int, n: int, length: int, variants) -> LabelledData:
    """``n`` documents of ``length`` random words, each followed by ``variants(i, words, rng)``: its derived
    documents as ``(id suffix, words, duplicate?)``; a document with a duplicate variant shares its cluster."""
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    recs = []
    for i in range(n):
        words = [rng.choice(vocab) for _ in range(length)]
        derived = variants(i, words, rng, vocab)
        dup = any(d for _, _, d in derived)
        recs.append({"id": f"d{i}", "text": " ".join(words), "cluster": f"c{i}" if dup else None})
        recs += [{"id": f"d{i}-{suffix}", "text": " ".join(w), "cluster": f"c{i}" if d else None}
                 for suffix, w, d in derived]
    return _labelled(recs)


def _noisy_corpus(seed: int = 0) -> LabelledData:
    """Duplicates are OCR-like copies (one character changed in every other word): no word 4-gram
    survives, most character 5-grams do."""
    def variants(i, words, rng, vocab):
        return [("copy", [_one_char(w, rng) if j % 2 else w for j, w in enumerate(words)], True)] if i < 12 else []

    return _corpus(seed, 40, 50, variants)


def _template_corpus(seed: int = 0) -> LabelledData:
    """Duplicates have one word in 16 replaced (word 4-grams ~0.75, character 5-grams ~0.9); template
    siblings, not duplicates, have one character changed in every 8th word (word 4-grams ~0.5, character
    5-grams ~0.9): only word shingles above the default threshold (0.45) tell them apart."""
    def variants(i, words, rng, vocab):
        if i < 10:
            return [("copy", [rng.choice(vocab) if j % 16 == 7 else w for j, w in enumerate(words)], True)]
        if i < 20:
            return [("sibling", [_one_char(w, rng) if j % 8 == 3 else w for j, w in enumerate(words)], False)]
        return []

    return _corpus(seed, 30, 64, variants)


#: Small enough for a test: the MinHash method, its candidate rules, one score, connected components.
_SMALL = SearchSpace(methods=("minhash",), scores=("weighted-overlap",), clusters=("greedy",))


def test_noisy_duplicates_make_the_search_choose_character_shingles():
    data = _noisy_corpus()
    found = search(data, DedupConfig(method="minhash"), _SMALL)
    assert not found.start.shingle.char  # the start (word 4-grams) misses the copies
    assert found.chosen.shingle.char and found.params["char"] is True
    assert found.metrics["ari"] > found.start_metrics["ari"] + 0.3
    assert found.metrics["ari"] == pytest.approx(evaluate(data, found.chosen)["ari"])  # the choice reproduces


def test_template_siblings_make_the_search_choose_word_shingles_above_the_default_threshold():
    data = _template_corpus()
    start = DedupConfig(method="minhash").replace(shingle__char=True)  # start from character 5-grams
    found = search(data, start, _SMALL)
    assert found.start.shingle.char
    assert not found.chosen.shingle.char
    assert found.chosen.threshold > DedupConfig(method="minhash").threshold
    assert found.metrics["ari"] > found.start_metrics["ari"] and found.metrics["ari"] > 0.9
    default = search(data, None, _SMALL)  # from the calibrated default (method auto)
    assert default.start_params["method"] == "minhash"
    assert default.metrics["ari"] >= default.start_metrics["ari"]
    assert default.metrics["ari"] == pytest.approx(found.metrics["ari"])


def test_the_start_point_wins_ties():
    data = _noisy_corpus()
    start = DedupConfig(method="minhash", threshold=0.3).replace(shingle__char=True, shingle__n=5)
    found = search(data, start, _SMALL)
    assert found.start_metrics["ari"] == 1.0
    assert found.chosen == start.replace(cluster__algorithm="greedy", verify__score="weighted-overlap")


def test_a_tiny_budget_runs_the_start_cell_and_reports_what_it_skipped():
    data = _noisy_corpus()
    full = search(data, DedupConfig(method="minhash"), _SMALL)
    short = search(data, DedupConfig(method="minhash"), _SMALL, budget=1e-6)
    assert short.report["cells_tried"] == 1 and short.report["stages"]["start"] == 1
    assert full.report["cells_tried"] > 10
    budget = [s for s in short.report["skipped"] if s["reason"] == "budget"]
    assert budget and sum(len(s["cells"]) for s in budget) >= 5
    assert "representation" in budget[0]["what"]
    assert short.params == short.start_params and short.chosen.shingle == full.start.shingle
    assert not [s for s in full.report["skipped"] if s["reason"] == "budget"]


def test_the_report_counts_the_space_and_times_each_part():
    from neardup.methods.base import SET_SCORE_GRID
    from neardup.methods.minhash import LSH_THRESHOLDS, MIN_COLLISIONS_FRACTIONS

    found = search(_noisy_corpus(), DedupConfig(method="minhash"), _SMALL)
    report = found.report
    # 6 shingles x (the start's own rule + every tuning setting but lsh_threshold 0.2, which is the same; no
    # collisions rule for character shingles) x 1 score x 1 clustering x the threshold grid (0.45, the start's,
    # is in it)
    rules = 1 + len(LSH_THRESHOLDS) - 1
    assert report["space_size"] == 3 * (2 * rules + len(MIN_COLLISIONS_FRACTIONS)) * len(SET_SCORE_GRID)
    assert set(report["seconds_by_part"]) == {"represent", "candidates", "verify", "cluster", "metrics"}
    labels = {f"word {n}-grams" for n in (3, 4, 5)} | {f"char {n}-grams" for n in (4, 5, 6)}
    assert set(report["by_representation"]) == labels
    assert max(r["best_ari"] for r in report["by_representation"].values()) == pytest.approx(found.metrics["ari"])
    assert report["by_representation"]["word 4-grams"]["best_ari"] < found.metrics["ari"]
    assert report["points_tried"] == len(found.trials)
    assert {"stage", "representation", "method", "char", "ngram", "threshold", "ari", "f1"} <= set(found.trials[0])


def test_missing_extras_and_unregistered_methods_are_skipped_with_a_reason(monkeypatch):
    from neardup.eval import search as search_module

    monkeypatch.setattr(search_module, "_missing", lambda modules: [m for m in modules if m in ("onnxruntime", "leidenalg")])
    space = SearchSpace(methods=("minhash", "retsim", "biencoder", "multiview"), scores=("weighted-overlap",),
                        clusters=("components", "leiden"))
    found = search(_noisy_corpus(), DedupConfig(method="minhash"), space, budget=1e-6)
    reasons = {s["what"]: s["reason"] for s in found.report["skipped"]}
    assert "onnxruntime" in reasons["retsim"]
    assert "--model" in reasons["biencoder"]
    assert "leidenalg" in reasons["cluster leiden"]
    assert "multiview" not in reasons  # searched without the neural extra too (its word and character views)
    assert {tr["method"] for tr in found.trials} == {"minhash"}


def test_fixing_takes_what_the_user_gave_out_of_the_search():
    assert SearchSpace.fixing().methods == SearchSpace().methods
    assert SearchSpace.fixing(method="auto").methods == SearchSpace().methods
    space = SearchSpace.fixing(n=5, cluster="leiden", score="jaccard")
    assert space.shingles == ((False, 5), (True, 5)) and space.methods == ("minhash", "ngram")
    assert space.clusters == ("leiden",) and space.scores == ("jaccard",)
    with pytest.raises(ConfigError, match="search clusters must be among"):
        SearchSpace(clusters=("kmeans",))


def test_durations_parse_strictly():
    assert parse_duration("90s") == 90 and parse_duration("10m") == 600 and parse_duration("1h") == 3600
    for bad in ("10", "ten minutes", "10x", "0s", "", "-5m"):
        with pytest.raises(ConfigError, match="duration"):
            parse_duration(bad)


def test_tune_config_writes_the_choice_and_refuses_to_overwrite(tmp_path):
    data = _noisy_corpus()
    out = tmp_path / "chosen.json"
    res = tune_config(data, _noisy_corpus(seed=1), DedupConfig(method="minhash"), space=_SMALL, out=out)
    assert load_config(out) == res["chosen"]
    assert res["test"]["ari"] == pytest.approx(evaluate(_noisy_corpus(seed=1), load_config(out))["ari"])
    assert res["default"]["validation"]["ari"] < res["validation"]["ari"]
    import json

    tuned = json.loads(out.read_text())["tuned"]
    assert tuned["validation"]["ari"] == pytest.approx(res["validation"]["ari"])
    assert tuned["search"]["cells_tried"] == res["search"]["cells_tried"] and tuned["params"] == res["params"]
    from neardup.io.write import OutputError

    with pytest.raises(OutputError, match="exists"):
        tune_config(data, None, DedupConfig(method="minhash"), space=_SMALL, out=out)
    tune_config(data, None, DedupConfig(method="minhash"), space=_SMALL, out=out, overwrite=True)
