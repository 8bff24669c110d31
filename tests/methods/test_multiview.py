"""Method multiview: each view its own shingling and bands, candidates the union of the views', every pair
scored in every view (evidence lists them all), a fitted model or a view alone never worse than the best
view on validation, and on a real labelled day under OCR noise no worse than its best view."""

import random
from dataclasses import replace

import numpy as np
import pytest

import neardup
from neardup import methods
from neardup.candidates.lsh import lsh_plan
from neardup.config import ConfigError, DedupConfig, config_from_dict, config_to_dict
from neardup.eval.evaluate import LabelledData, evaluate
from neardup.eval.tune import config_for, tune
from neardup.io.read import read_records
from neardup.methods import multiview
from neardup.pipeline import prepare
from neardup.synth import apply_noise, get_preset
from tests.conftest import shared_file

WORD_CHAR = DedupConfig(method="multiview").replace(multiview__views=("word", "char"))
_WORDS = ("market oil price shares trading bank rate company profit dividend quarter growth export "
          "tonnes wheat sugar coffee index bond yield dollar yen mark sterling gold copper loan debt "
          "budget deficit tariff treaty minister union strike plant output sales order").split()


def _ocr(text: str, rng: random.Random, rate: float = 0.12) -> str:
    """Scanner-like damage: characters swapped for look-alikes, dropped, or words run together."""
    out = []
    for ch in text:
        r = rng.random()
        if r < rate / 3 and ch.isalpha():
            out.append({"o": "0", "l": "1", "e": "c", "a": "o", "i": "l", "s": "5"}.get(ch, ch + ch))
        elif r < 2 * rate / 3 and ch != " ":
            continue
        elif r < rate and ch == " ":
            continue
        else:
            out.append(ch)
    return "".join(out)


def _planted(seed: int = 0, n_sources: int = 40) -> LabelledData:
    """Sources with a clean copy (word shingles see it), an OCR-damaged copy (only character shingles
    do), or none; sources are random word strings, so distinct ones share little."""
    rng = random.Random(seed)
    records = []
    for s in range(n_sources):
        text = " ".join(rng.choice(_WORDS) + rng.choice(("", "s", "ed", "ing")) for _ in range(60))
        kind = s % 3
        label = f"c{s}" if kind else None
        records.append({"id": f"{s}", "text": text, "cluster": label})
        if kind == 1:
            words = text.split()
            records.append({"id": f"{s}-copy", "text": " ".join(words[:50]), "cluster": label})
        elif kind == 2:
            records.append({"id": f"{s}-ocr", "text": _ocr(text, rng), "cluster": label})
    return LabelledData(read_records(records, label_field="cluster"))


def test_each_shingle_view_has_its_own_shingling_and_bands():
    m = methods.get(WORD_CHAR)
    word, char = m.shingles["word"], m.shingles["char"]
    assert (word.config.shingle.char, word.config.shingle.n) == (False, 4)
    assert (char.config.shingle.char, char.config.shingle.n) == (True, 5)
    mv = WORD_CHAR.multiview
    assert char.config.minhash.lsh_threshold == mv.char_lsh_threshold > word.config.minhash.lsh_threshold
    assert (char.bands, char.rows) == lsh_plan(char.config.minhash, mv.char_lsh_threshold)
    assert (word.bands, word.rows) == lsh_plan(word.config.minhash, mv.word_lsh_threshold)
    assert (char.bands, char.rows) != (word.bands, word.rows)
    assert m.view_names() == ["word 4-grams", "char 5-grams"]
    # the representation holds both views, each recovered exactly
    rep = prepare(_planted().corpus, WORD_CHAR).rep
    parts = m.view_representations(rep)
    alone = word.shingle(["alpha beta gamma delta epsilon"], 1000)
    packed = m.shingle(["alpha beta gamma delta epsilon"], 1000)
    assert np.array_equal(multiview.split_view(packed, 0)[0].values, alone.values >> np.uint64(1))
    assert rep.sketch.shape[1] == word.num_perm + char.num_perm
    assert np.array_equal(np.asarray(parts["char"].sketch), np.asarray(rep.sketch[:, word.num_perm:]))


def test_candidates_are_the_union_of_every_views():
    data = _planted()
    prep = prepare(data.corpus, WORD_CHAR)
    m = methods.get(prep.config).plan(prep.rep)
    own = m.view_candidates(prep.rep)
    found = m.candidates(prep.rep)
    union = set(zip(found.left.tolist(), found.right.tolist()))
    for view, (left, right) in own.items():
        assert set(zip(left.tolist(), right.tolist())) <= union, view
    word, char = (set(zip(*[x.tolist() for x in own[v]])) for v in ("word", "char"))
    assert char - word, "the OCR-damaged copies are found by the char view only"
    assert union == word | char
    assert found.info["candidates_by_view"] == {"word": len(word), "char": len(char)}


def test_tune_is_never_worse_than_the_best_view_on_validation():
    data = _planted()
    out = tune(data, None, WORD_CHAR)
    best = out["validation"]["ari"]
    for view in ("word", "char"):  # each view as its own method, tuned on the same data
        alone = tune(data, None, DedupConfig(method="minhash").replace(shingle__char=view == "char"))
        assert best >= alone["validation"]["ari"] - 1e-9, view
    combines = {t["combine"] for t in out["trials"]}
    assert combines == {"logistic", "max", "word", "char"}
    chosen = config_for(prep_config(data), out["params"])
    assert evaluate(data, chosen)["ari"] == pytest.approx(best)
    logistic = [t for t in out["trials"] if t["combine"] == "logistic"]
    assert all(len(t["coef"]) == 4 for t in logistic)  # word, char, length ratio, intercept


def prep_config(data: LabelledData) -> DedupConfig:
    from neardup.calibrate import resolve

    return resolve(WORD_CHAR, data.corpus.texts)


def test_evidence_lists_every_view_with_its_score():
    data = _planted()
    result = neardup.dedup(list(data.corpus.texts), config=WORD_CHAR)
    rows = result.evidence()
    assert rows, "the planted duplicates should be found"
    prep = prepare(data.corpus, WORD_CHAR)
    m = methods.get(prep.config).plan(prep.rep)
    scores = m.view_scores(prep.rep, result.left, result.right)
    for k, row in enumerate(rows):
        assert [v["view"] for v in row["views"]] == ["word 4-grams", "char 5-grams"]
        assert [v["score"] for v in row["views"]] == pytest.approx([scores["word"][k], scores["char"][k]])


def test_views_and_rules_are_checked_and_round_trip():
    with pytest.raises(ConfigError, match="views must be distinct names"):
        DedupConfig(method="multiview").replace(multiview__views=("word", "words"))
    with pytest.raises(ConfigError, match="need a shingle view"):
        DedupConfig(method="multiview").replace(multiview__views=("retsim",))
    with pytest.raises(ConfigError, match="coef must be 4 numbers"):
        WORD_CHAR.replace(multiview__coef=(1.0, 2.0))
    with pytest.raises(ConfigError, match="names a view that is not among"):
        WORD_CHAR.replace(multiview__combine="retsim")
    cfg = WORD_CHAR.replace(multiview__combine="logistic", multiview__coef=(1, 2, 0, -1))
    assert config_from_dict(config_to_dict(cfg)) == cfg


def test_retsim_without_the_neural_extra_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(multiview, "neural_available", lambda: False)
    assert multiview.default_views() == ("word", "char")
    assert methods.get(DedupConfig(method="multiview")).kinds == ("word", "char")
    with pytest.raises(ConfigError, match="needs the neural extra"):
        methods.get(DedupConfig(method="multiview").replace(multiview__views=("word", "retsim")))


def test_the_command_line_names_views_and_rule(tmp_path, example_path):
    from typer.testing import CliRunner

    from neardup.cli import app

    out = tmp_path / "o"
    res = CliRunner().invoke(app, ["dedup", str(example_path), "-o", str(out), "-m", "multiview", "--views",
                                   "word,char", "--combine", "max", "--engine", "memory", "-q"])
    assert res.exit_code == 0, res.output
    import json

    params = json.loads((out / "summary.json").read_text())["params"]
    assert params["views"] == ["word", "char"] and params["combine"] == "max"


def test_on_a_reuters_day_under_ocr_noise_multiview_is_no_worse_than_its_best_view():
    from neardup.eval.loaders import load_any

    day = load_any(shared_file("reuters_days/docs.jsonl"))
    spec = get_preset("ocr-heavy")
    texts = [apply_noise(t, spec, 0, doc_id=i).text for t, i in zip(day.corpus.texts, day.corpus.ids)]
    data = LabelledData(corpus=replace(day.corpus, texts=texts))
    both = evaluate(data, WORD_CHAR)["ari"]  # label-free: each view at its calibrated threshold
    alone = {v: evaluate(data, DedupConfig(method="multiview").replace(multiview__views=(v,)))["ari"]
             for v in ("word", "char")}
    assert both >= max(alone.values()) - 0.03, (both, alone)


def test_a_prepared_multiview_run_keeps_the_thresholds_the_corpus_calibrated():
    """run_prepared with a multiview config that names no view thresholds uses those prepare() resolved on
    the texts (it used the clean-text defaults)."""
    import json
    from pathlib import Path

    from neardup.config import DedupConfig
    from neardup.io.read import Corpus
    from neardup.pipeline import prepare, run_prepared
    import random

    example = Path(__file__).resolve().parents[2] / "examples" / "news.jsonl"
    texts = [json.loads(line)["text"] for line in example.read_text(encoding="utf-8").splitlines()]
    rng = random.Random(0)  # one letter in six garbled: damage the profile measures
    noisy = ["".join(rng.choice("qxzjkv#%") if c.isalpha() and rng.random() < 0.16 else c for c in t) for t in texts]
    cfg = DedupConfig(method="multiview").replace(multiview__views=("word", "char"))
    prep = prepare(Corpus.from_texts(noisy), cfg)
    resolved = prep.config.multiview.view_thresholds
    assert resolved is not None and resolved[0] < 0.45  # damaged text: looser than the clean defaults
    result = run_prepared(prep, cfg)
    assert tuple(result.summary["params"]["view_thresholds"]) == tuple(resolved)
