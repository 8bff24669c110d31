"""Training on labelled days: several pair-labelled files with generator-made noisy copies, validation on
another file, the trained bi-encoder and cross-encoder as views of multiview (and of tune's search), and
``neardup label`` recording answers that train and evaluate."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from neardup.train.common import TrainConfig
from neardup.train.sources import load_labelled_sets

from .conftest import EXAMPLE


def _day(root: Path, name: str, part: int) -> Path:
    """A pair-labelled 'day' from half of the example's clusters: positives within clusters, negatives
    between neighbouring clusters (reason ``template``) and a few singletons (``unrelated``)."""
    rows = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        if r.get("cluster"):
            groups[r["cluster"]].append(r)
    keys = sorted(groups)[part::2][:12]
    docs = [r for k in keys for r in groups[k]]
    pairs = []
    for k in keys:
        m = groups[k]
        pairs += [{"a": m[i]["id"], "b": m[j]["id"], "label": 1, "reason": "resend"}
                  for i in range(len(m)) for j in range(i + 1, len(m))]
    for k1, k2 in zip(keys, keys[1:]):
        pairs.append({"a": groups[k1][0]["id"], "b": groups[k2][0]["id"], "label": 0, "reason": "template"})
    pairs.append({"a": groups[keys[0]][0]["id"], "b": groups[keys[-1]][0]["id"], "label": 0, "reason": "unrelated"})
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "docs.jsonl").write_text("".join(json.dumps({"id": r["id"], "text": r["text"]}) + "\n" for r in docs))
    (folder / "pair_labels.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))
    return folder / "pair_labels.jsonl"


@pytest.fixture(scope="module")
def days(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("days")
    return _day(root, "day-a", 0), _day(root, "day-b", 1)


def test_labelled_days_join_with_noisy_copies_that_keep_their_negatives(days):
    one = load_labelled_sets([days[0]])
    both = load_labelled_sets(list(days), copies=2, seed=3)
    n_a = len(one)
    n_b = len(load_labelled_sets([days[1]]))
    assert len(both) == 3 * (n_a + n_b)
    # two days never share a cluster; each copy is in its original's cluster
    assert not {c for c in both.clusters if c.startswith("0/")} & {c for c in both.clusters if c.startswith("1/")}
    where = {doc_id: i for i, doc_id in enumerate(both.ids)}
    copies = [i for i, doc_id in enumerate(both.ids) if "~n" in doc_id]
    assert len(copies) == 2 * (n_a + n_b)
    for i in copies:
        original = where[both.ids[i].split("~n")[0]]
        assert both.clusters[i] == both.clusters[original] and both.texts[i] != both.texts[original]
    # every labelled negative is also a negative of each copy of either end: 1 + 2 + 2 per labelled pair
    labelled_negs = len(one.negatives) + len(load_labelled_sets([days[1]]).negatives)
    assert len(both.negatives) == 5 * labelled_negs
    for a, b in both.negatives:
        assert both.clusters[a] != both.clusters[b]
    assert both.info["negative_kinds"] == {"template": 22, "unrelated": 2}
    assert both.info["parts"][0]["noisy_copies"]["per_document"] == 2
    # seeded: the same copies again, other copies under another seed
    assert load_labelled_sets(list(days), copies=2, seed=3).texts == both.texts
    assert load_labelled_sets(list(days), copies=2, seed=4).texts != both.texts


def test_labelled_training_settings_are_checked():
    from neardup.config import ConfigError

    with pytest.raises(ConfigError, match="--noisy-copies"):
        TrainConfig(data="x", out="y", copies=11)
    with pytest.raises(ConfigError, match="not --synthetic"):
        TrainConfig(data="x", out="y", synthetic=True, copies=1)
    with pytest.raises(ConfigError, match="one --data"):
        TrainConfig(data=("x", "z"), out="y", synthetic=True)
    one = TrainConfig(data=("x",), out="y")
    assert one.data == "x" and one.fingerprint() == TrainConfig(data="x", out="y").fingerprint()


def test_without_self_pairs_the_positives_join_different_labelled_documents(days):
    """--no-self-pairs: no document is paired with its own noisy copy; every labelled duplicate pair is still
    a positive, seen through noise on either side; the option changes the run's fingerprint (and only off
    its default), and needs labelled data with copies."""
    from neardup.config import ConfigError
    from neardup.train.pairs import build_pairs, positive_pairs

    ts = load_labelled_sets([days[0]], copies=1, seed=0)
    origin = ts.origins()
    every = positive_pairs(ts, max_per_cluster=100)
    cross = positive_pairs(ts, max_per_cluster=100, self_pairs=False)
    assert any(origin[a] == origin[b] for a, b in every)
    assert cross and all(origin[a] != origin[b] for a, b in cross)
    assert set(cross) == {p for p in every if origin[p[0]] != origin[p[1]]}
    labelled = {tuple(sorted(p)) for p in positive_pairs(load_labelled_sets([days[0]]), max_per_cluster=100)}
    seen = {tuple(sorted((origin[a], origin[b]))) for a, b in cross}
    ids = load_labelled_sets([days[0]]).ids
    assert seen == {tuple(sorted((ids[a], ids[b]))) for a, b in labelled}
    # noise on either side and on both: each labelled pair (a, b) gives (a, b), (a, b~), (a~, b), (a~, b~)
    assert len(cross) == 4 * len(labelled)
    pairs = build_pairs(ts, 2.0, 0.8, seed=0, self_pairs=False)
    assert pairs.info["counts"]["positive"] == len(positive_pairs(ts, self_pairs=False))
    assert TrainConfig(data="x", out="y", copies=1, self_pairs=True).fingerprint() == \
        TrainConfig(data="x", out="y", copies=1).fingerprint() != \
        TrainConfig(data="x", out="y", copies=1, self_pairs=False).fingerprint()
    with pytest.raises(ConfigError, match="--no-self-pairs"):
        TrainConfig(data="x", out="y", self_pairs=False)


def test_labelled_data_draws_two_hard_heavy_negatives_a_positive_unless_told(days):
    """The negatives' default follows the data: labelled days (real siblings to draw on) 2 a positive, 80% hard;
    --synthetic keeps the NEWS-COPY mix; given values win, and the pairs built follow them."""
    from neardup.train.pairs import HARD_FRACTION, build_pairs

    labelled = TrainConfig(data="x", out="y")
    assert (labelled.neg_per_pos, labelled.hard_fraction) == (2.0, 0.8)
    synthetic = TrainConfig(data="x", out="y", synthetic=True)
    assert (synthetic.neg_per_pos, synthetic.hard_fraction) == (1.0, HARD_FRACTION)
    given = TrainConfig(data="x", out="y", neg_per_pos=0.5, hard_fraction=0.0)
    assert (given.neg_per_pos, given.hard_fraction) == (0.5, 0.0)
    assert labelled.fingerprint() != given.fingerprint()
    ts = load_labelled_sets([days[0]], copies=0, seed=0)
    pairs = build_pairs(ts, labelled.neg_per_pos, labelled.hard_fraction, seed=0)
    c = pairs.info["counts"]
    negatives = sum(v for k, v in c.items() if k != "positive")
    assert negatives >= 1.5 * c["positive"], c
    assert pairs.info["hard_fraction_target"] == 0.8  # as many hard as the pool holds, up to 80% of them
    assert c["hard"] + c["mined"] == min(pairs.info["hard_pool"]["explicit"] + pairs.info["hard_pool"]["mined"],
                                         round(0.8 * negatives)), pairs.info


def test_biencoder_trains_on_one_day_and_validates_on_another(tmp_path, days, tiny_model):
    from neardup.cli.train import train_app
    from neardup.represent.transformer import TransformerEncoder

    out = tmp_path / "bi"
    res = CliRunner().invoke(train_app, [
        "biencoder", "--data", str(days[0]), "--val-data", str(days[1]), "--noisy-copies", "1", "--base", tiny_model,
        "--out", str(out), "--steps", "32", "--batch-size", "8", "--lr", "1e-3", "--warmup", "0",
        "--max-seq-length", "64", "--eval-max-tokens", "64", "--threads", "1", "--quiet", "--format", "json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout.strip().splitlines()[-1])
    assert report["steps"] == 32 and report["loss_last"] < report["loss_first"], report
    n_val = 2 * len(load_labelled_sets([days[1]]))
    assert report["data"]["validation"]["n_docs"] == n_val  # the other day with its copies, not a split
    assert report["data"]["train"]["n_docs"] == 2 * len(load_labelled_sets([days[0]]))
    assert report["data"]["negative_kinds"] == {"template": 11, "unrelated": 1}
    assert report["validation_after"]["ari"] is not None
    encoder = TransformerEncoder(out)
    assert encoder.encode(["a story"]).shape == (1, 32)
    # the pipeline reads texts as the model was trained (64 tokens here), unless told otherwise
    assert encoder.model.max_seq_length == 64 and TransformerEncoder(out, max_tokens=100).model.max_seq_length == 100
    bad = CliRunner().invoke(train_app, ["biencoder", "--data", str(days[0]), "--val-data", str(tmp_path / "nope.jsonl"),
                                         "--out", str(out)])
    assert bad.exit_code == 2 and "--val-data" in bad.output
    bad = CliRunner().invoke(train_app, ["crossencoder", "--data", str(days[0]), "--no-self-pairs", "--out", str(out)])
    assert bad.exit_code == 2 and "--no-self-pairs applies to labelled data with --noisy-copies" in bad.output


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, days, tiny_model) -> tuple[str, str]:
    """A tiny bi-encoder and a cross-encoder started from it, a few steps each on one day."""
    from neardup.train.biencoder import train_biencoder
    from neardup.train.crossencoder import train_crossencoder

    root = tmp_path_factory.mktemp("trained")
    common = dict(data=(str(days[0]),), copies=1, batch_size=8, max_seq_length=64, lr=1e-3, warmup=0.0,
                  evaluate=False, progress=False, checkpoint_every=0, threads=1)
    train_biencoder(TrainConfig(out=str(root / "bi"), base=tiny_model, steps=6, **common))
    train_crossencoder(TrainConfig(out=str(root / "ce"), candidates=str(root / "bi"), steps=6, mine="minhash", **common))
    return str(root / "bi"), str(root / "ce")


def test_trained_views_enter_multiview(tmp_path, days, trained):
    import neardup
    from neardup.config import ConfigError, DedupConfig
    from neardup.eval.evaluate import load_labelled
    from neardup.methods.multiview import MultiView

    bi, ce = trained
    cfg = DedupConfig(method="multiview").replace(embed__model=bi, embed__cross_model=ce, embed__k=10)
    method = MultiView(cfg)
    assert method.kinds == ("word", "char", "biencoder", "crossencoder") and method.needs_texts
    data = load_labelled(days[1])
    out = tmp_path / "run"
    docs = days[1].with_name("docs.jsonl")
    result = neardup.dedup(str(docs), config=cfg.replace(threshold=0.3), output=out)
    import pyarrow.parquet as pq

    ev = pq.read_table(out / "evidence.parquet").to_pylist()
    assert ev and {v["view"] for v in ev[0]["views"]} == {"word 4-grams", "char 5-grams", "biencoder", "cross-encoder"}
    # the cross-encoder read the pairs the other views rate close, and only those (the shingle views here:
    # the untrained tiny bi-encoder rates every pair close)
    from neardup.methods.multiview import calibrated
    from neardup.pipeline import prepare

    shingled = cfg.replace(multiview__views=("word", "char", "crossencoder"), multiview__crossencoder_floor=0.4)
    prep = prepare(data.corpus, shingled)
    m = MultiView(prep.config).plan(prep.rep)
    left, right, _ = m.candidates(prep.rep)
    scores = m.view_scores(prep.rep, left, right)
    thresholds = dict(zip(m.kinds, m.view_thresholds))
    best = np.max(np.vstack([calibrated(scores[v], thresholds[v]) for v in ("word", "char")]), axis=0)
    far = best < 0.4
    assert far.any() and (scores["crossencoder"][far] == 0).all()
    assert ((scores["crossencoder"][~far] > 0) & (scores["crossencoder"][~far] < 1)).all()
    assert result.summary["n_docs"] == len(data.corpus)
    # tuning fits the logistic rule over the four views (and the length ratio, the intercept)
    from neardup.eval.tune import tune

    r = tune(data, None, cfg)
    assert r["params"]["combine"] in ("logistic", "max", "word", "char", "biencoder", "crossencoder")
    logistic = [t for t in r["trials"] if t.get("combine") == "logistic"]
    assert logistic and len(logistic[0]["coef"]) == 6 and logistic[0]["views"] == method.kinds
    with pytest.raises(ConfigError, match="one vector view"):
        DedupConfig(method="multiview").replace(multiview__views=("word", "retsim", "biencoder"))
    with pytest.raises(ConfigError, match="cross-model"):
        MultiView(DedupConfig(method="multiview").replace(multiview__views=("word", "crossencoder")))


def test_a_cross_encoder_trained_on_the_diff_view_scores_pairs_the_same_way(tmp_path, days, trained):
    """--pair-view diff: recorded in the report and the folder, and scoring (rerank and
    the multiview's view alike) shows the model each pair's differences, as in training."""
    from neardup.cli.train import train_app
    from neardup.verify.crossencoder import CrossEncoderScorer, diff_pair, read_pair_format

    bi, _ = trained
    out = tmp_path / "ce-diff"
    res = CliRunner().invoke(train_app, [
        "crossencoder", "--data", str(days[0]), "--noisy-copies", "1", "--candidates", bi, "--pair-view", "diff",
        "--out", str(out), "--steps", "6", "--batch-size", "8", "--max-seq-length", "64", "--mine", "minhash",
        "--threads", "1", "--no-eval", "--quiet", "--format", "json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout.strip().splitlines()[-1])
    assert report["pair_view"] == "diff" and report["steps"] == 6
    assert read_pair_format(out)["view"] == "diff"
    scorer = CrossEncoderScorer(out)
    a = "FRANKLIN CALIFORNIA TAX-FREE FUND SETS DIVIDEND. It will pay 5.2 cts a share."
    b = "FRANKLIN OHIO TAX-FREE FUND SETS DIVIDEND. It will pay 3.1 cts a share."
    got = scorer.score([(a, b)])
    direct = scorer.model.predict([diff_pair(a, b)], convert_to_numpy=True).reshape(-1)
    plain = scorer.model.predict([(a, b)], convert_to_numpy=True).reshape(-1)
    assert got[0] == pytest.approx(float(direct[0]), abs=1e-6) and abs(float(plain[0]) - float(direct[0])) > 1e-6
    bad = CliRunner().invoke(train_app, ["crossencoder", "--data", str(days[0]), "--pair-view", "words",
                                         "--out", str(tmp_path / "bad")])
    assert bad.exit_code == 2 and "--pair-view must be text or diff" in bad.output


def test_search_space_with_a_cross_encoder_tries_rerank_and_trained_views():
    from neardup.eval.search import DEFAULT_METHODS, SearchSpace

    assert "rerank" not in SearchSpace.fixing().methods
    space = SearchSpace.fixing(model="bi", cross_model="ce")
    assert space.methods == (*DEFAULT_METHODS, "rerank") and space.cross_model == "ce"
    assert SearchSpace.fixing(method="multiview", cross_model="ce").methods == ("multiview",)


def test_label_records_answers_that_resume_and_evaluate(tmp_path):
    from neardup.cli import app
    from neardup.eval.evaluate import load_labelled

    out = tmp_path / "labels.jsonl"
    args = ["label", str(EXAMPLE), "-o", str(out), "--pairs", "6", "--chars", "80", "--width", "100"]
    res = CliRunner().invoke(app, args, input="y\nmaybe\nn\ns\nq\n")
    assert res.exit_code == 0, res.output
    assert "answer y, n, s or q" in res.output and "2 answers recorded" in res.output
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["label"] for r in recs] == [1, 0] and all(0 <= r["score"] <= 1 for r in recs)
    again = CliRunner().invoke(app, args, input="y\ny\ny\ny\ny\ny\n")
    assert again.exit_code == 0, again.output
    assert "2 of the 6 drawn already" in again.output
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(recs) == 6 and len({frozenset((r["a"], r["b"])) for r in recs}) == 6
    data = load_labelled(out, docs=EXAMPLE)  # the answers are a labelled-pair file
    assert data.pairs is not None and len(data.pairs) == 6
    bad = CliRunner().invoke(app, ["label", str(EXAMPLE), "-o", str(EXAMPLE)])
    assert bad.exit_code == 2


def test_trained_views_default_to_the_threshold_their_training_validated(tmp_path):
    from neardup.config import DedupConfig
    from neardup.methods.multiview import DEFAULT_VIEW_THRESHOLDS, MultiView

    bi, ce = tmp_path / "bi", tmp_path / "ce"
    bi.mkdir()
    ce.mkdir()
    (bi / "train_report.json").write_text(json.dumps({"validation_after": {"ari": 0.8, "threshold": 0.97}}))
    cfg = DedupConfig(method="multiview").replace(embed__model=str(bi), embed__cross_model=str(ce))
    m = MultiView(cfg)
    assert dict(zip(m.kinds, m.view_thresholds))["biencoder"] == 0.97
    assert dict(zip(m.kinds, m.view_thresholds))["crossencoder"] == DEFAULT_VIEW_THRESHOLDS["crossencoder"]
    (ce / "train_report.json").write_text("{not json")  # a damaged report: the default, no error
    assert dict(zip(MultiView(cfg).kinds, MultiView(cfg).view_thresholds))["crossencoder"] == 0.5
