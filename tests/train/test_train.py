"""Training: data and split by cluster, hard-negative mining, a tiny bi-encoder and cross-encoder trained for a
few steps (loss falls, the saved models load and score), resume, time budget, and the CLI."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from neardup.train.common import TrainConfig
from neardup.train.dataset import TrainingSet, from_labelled, from_records, split_by_cluster
from neardup.train.mining import mine_hard_negatives
from neardup.train.pairs import build_pairs
from neardup.train.sources import load_training_set
from neardup.train.loop import TrainError, checkpoint_dirs
from neardup.train.synthetic import SyntheticConfig, make_clusters

from .conftest import EXAMPLE


def _tiny_cfg(data: Path, out: Path, base: str, **kw) -> TrainConfig:
    args = dict(data=str(data), out=str(out), synthetic=True, base=base, max_sources=16, batch_size=8,
                max_seq_length=64, lr=1e-3, warmup=0.0, evaluate=False, progress=False, checkpoint_every=0,
                eval_max_tokens=64, mine="minhash", threads=1)
    args.update(kw)
    return TrainConfig(**args)


@pytest.fixture(scope="module")
def synthetic_set(source_texts: Path) -> TrainingSet:
    return load_training_set(source_texts, synthetic=True, max_sources=30, seed=0)


# ---------------------------------------------------------------------------------------------- data


def test_synthetic_clusters_have_copies_and_hard_negatives_in_their_source_group():
    recs = make_clusters(["a", "b"], ["Sales rose 5% at Acme in May, said Jo Ray in London. " * 3,
                                      "The council in Porto approved 12 new buses on Monday. " * 3],
                         seed=1, config=SyntheticConfig(copies=(2, 2), p_hard=1.0))
    roles = Counter(r["role"] for r in recs)
    assert roles == {"original": 2, "copy": 4, "hard_negative": 2}
    for r in recs:
        assert r["group"] == r["source_id"]
        if r["role"] == "hard_negative":
            assert r["cluster"] != r["source_id"]
        else:
            assert r["cluster"] == r["source_id"]
    ts = from_records(recs)
    assert ts.negatives and all(ts.clusters[a] != ts.clusters[b] for a, b in ts.negatives)


def test_hard_negative_kinds_are_chosen_by_config():
    texts = [f"Sales rose {i}% at Acme Corp in May, said Jo Ray of Leeds. " * 3 for i in range(1, 7)]
    kinds = lambda cfg: [r["ops"][0].split(":")[1].split("+")[0]  # noqa: E731
                         for r in make_clusters([str(i) for i in range(6)], texts, seed=2, config=cfg)
                         if r["role"] == "hard_negative"]
    assert kinds(SyntheticConfig(p_hard=1.0)) == ["update", "same_event_rewrite", "template_sibling"] * 2
    assert kinds(SyntheticConfig(p_hard=1.0, hard_kinds=("entity_swap", "update"))) == ["entity_swap", "update"] * 3
    with pytest.raises(ValueError, match="hard_kinds"):
        SyntheticConfig(hard_kinds=("entity_swap", "typo"))
    with pytest.raises(ValueError, match="hard_kinds"):
        SyntheticConfig(hard_kinds=())


def test_split_is_by_cluster_never_by_pair(synthetic_set):
    train, val = split_by_cluster(synthetic_set, 0.3, seed=3)
    assert len(train) + len(val) == len(synthetic_set)
    assert not set(train.ids) & set(val.ids)
    assert not set(train.clusters) & set(val.clusters)
    assert not set(train.groups) & set(val.groups)
    assert val.stats()["n_duplicate_clusters"] > 0 and train.stats()["n_duplicate_clusters"] > 0
    # pairs built on either side only join documents of that side
    for part in (train, val):
        p = build_pairs(part, seed=0)
        assert p.a.max() < len(part) and p.b.max() < len(part)


def test_split_of_labelled_pairs_drops_negatives_across_the_split(tmp_path):
    docs = [{"id": str(i), "text": f"text number {i} " * 5} for i in range(20)]
    pairs = [{"a": str(2 * i), "b": str(2 * i + 1), "label": 1} for i in range(10)]
    pairs += [{"a": str(i), "b": str((i + 5) % 20), "label": 0} for i in range(20)]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))
    ts = load_training_set(tmp_path / "pairs.jsonl")
    assert ts.stats()["n_duplicate_clusters"] == 10 and len(ts.negatives) == 20
    train, val = split_by_cluster(ts, 0.3, seed=0)
    assert not set(train.ids) & set(val.ids)
    for part in (train, val):
        assert all(part.clusters[a] != part.clusters[b] for a, b in part.negatives)
    assert len(train.negatives) + len(val.negatives) < 20


def test_labelled_clusters_load_with_singletons():
    from neardup.eval.evaluate import load_labelled

    ts = from_labelled(load_labelled(EXAMPLE))
    sizes = Counter(ts.clusters)
    assert len(ts) == 300 and sum(1 for s in sizes.values() if s == 1) >= 100
    assert ts.labelled().corpus.labels.count(None) == sum(1 for s in sizes.values() if s == 1)


def test_pairs_follow_the_hard_to_random_ratio(synthetic_set):
    only_explicit = build_pairs(synthetic_set, neg_per_pos=1.0, hard_fraction=2 / 3, seed=0)
    c = only_explicit.info["counts"]
    assert c["hard"] + c["mined"] + c["random"] == c["positive"]
    assert c["mined"] == 0 and c["hard"] == len(synthetic_set.negatives)  # pool too small: random fills in
    ml, mr, _ = mine_hard_negatives(synthetic_set.texts, synthetic_set.clusters, "minhash", k=10)
    p = build_pairs(synthetic_set, neg_per_pos=1.0, hard_fraction=2 / 3, mined=list(zip(ml, mr)), seed=0)
    c = p.info["counts"]
    assert c["hard"] + c["mined"] + c["random"] == c["positive"] and c["mined"] > 0
    assert abs(p.info["hard_fraction_realised"] - 2 / 3) < 0.05, p.info
    lab = p.label.astype(bool)
    clusters = np.array(synthetic_set.cluster_index())
    assert (clusters[p.a[lab]] == clusters[p.b[lab]]).all()
    assert (clusters[p.a[~lab]] != clusters[p.b[~lab]]).all()


def test_mining_returns_close_pairs_with_different_labels(synthetic_set):
    ts = synthetic_set
    left, right, scores = mine_hard_negatives(ts.texts, ts.clusters, "minhash", k=3)
    assert left.size > 0
    assert all(ts.clusters[a] != ts.clusters[b] for a, b in zip(left, right))
    assert (np.diff(scores) <= 1e-12).all()  # closest first
    # the mined pairs are the generator's hard negatives, not random pairs: they share a group
    same_group = np.mean([ts.groups[a] == ts.groups[b] for a, b in zip(left[:10], right[:10])])
    assert same_group >= 0.8
    # encoder mining: neighbours in embedding space
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(6, 8)).astype(np.float32)
    emb[1] = emb[0] + 0.01
    emb[3] = emb[2] + 0.01
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    l2, r2, s2 = mine_hard_negatives(["x"] * 6, ["a", "b", "c", "c", "d", "e"], "encoder", k=2, embeddings=emb)
    assert (l2[0], r2[0]) == (0, 1) and s2[0] > 0.99  # different labels, closest; (2, 3) share a label
    assert (2, 3) not in set(zip(l2.tolist(), r2.tolist()))


# ---------------------------------------------------------------------------------------------- training


def test_biencoder_loss_falls_and_the_saved_model_loads(tmp_path, source_texts, tiny_model):
    from neardup.represent.transformer import TransformerEncoder
    from neardup.train.biencoder import train_biencoder

    out = tmp_path / "bi"
    rep = train_biencoder(_tiny_cfg(source_texts, out, tiny_model, steps=24, evaluate=True))
    assert rep["steps"] == 24 and rep["stopped"] == "finished"
    assert rep["loss_last"] < rep["loss_first"], rep
    assert rep["validation_before"]["ari"] is not None and rep["validation_after"]["ari"] is not None
    enc = TransformerEncoder(out)
    emb = enc.encode(["a reprinted story", "a reprinted story", "something else entirely"])
    assert emb.shape == (3, 32)
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-4)
    assert float(emb[0] @ emb[1]) > 0.999
    assert (out / "train_report.json").exists() and checkpoint_dirs(out)


@pytest.mark.parametrize("loss", ["mnrl", "supcon"])
def test_other_losses_train(tmp_path, source_texts, tiny_model, loss):
    from neardup.train.biencoder import train_biencoder

    rep = train_biencoder(_tiny_cfg(source_texts, tmp_path / loss, tiny_model, steps=12, loss=loss))
    assert rep["steps"] == 12 and rep["loss_last"] < rep["loss_first"], rep


def test_resume_continues_the_step_count(tmp_path, source_texts, tiny_model):
    import torch

    from neardup.train.biencoder import train_biencoder

    out = tmp_path / "resume"
    first = train_biencoder(_tiny_cfg(source_texts, out, tiny_model, steps=8, stop_at_step=3, checkpoint_every=2))
    assert (first["steps"], first["total_steps"], first["stopped"]) == (3, 8, "stop_at_step")
    assert [p.name for p in checkpoint_dirs(out)] == ["step-0000002", "step-0000003"]
    second = train_biencoder(_tiny_cfg(source_texts, out, tiny_model, steps=8, resume=True, checkpoint_every=2))
    assert (second["resumed_from"], second["steps"], second["stopped"]) == (3, 8, "finished")
    state = torch.load(checkpoint_dirs(out)[-1] / "state.pt", map_location="cpu", weights_only=False)
    assert state["step"] == 8 and len(state["losses"]) == 8
    assert state["scheduler"]["last_epoch"] == 8  # the LR schedule continued too
    with pytest.raises(TrainError, match="other data or settings"):
        train_biencoder(_tiny_cfg(source_texts, out, tiny_model, steps=8, resume=True, batch_size=4))
    with pytest.raises(TrainError, match="no checkpoint"):
        train_biencoder(_tiny_cfg(source_texts, tmp_path / "empty", tiny_model, steps=8, resume=True))


def test_time_budget_stops_training_with_a_checkpoint(tmp_path, source_texts, tiny_model):
    from neardup.train.biencoder import train_biencoder

    rep = train_biencoder(_tiny_cfg(source_texts, tmp_path / "budget", tiny_model, steps=500, max_minutes=0.01))
    assert rep["stopped"] == "budget" and rep["steps"] < 500
    assert checkpoint_dirs(tmp_path / "budget")


def test_crossencoder_scores_a_trained_positive_above_a_negative(tmp_path, source_texts, tiny_model):
    from neardup.train.crossencoder import train_crossencoder
    from neardup.verify.crossencoder import CrossEncoderScorer, read_pair_format, rerank_scores, write_pair_format

    out = tmp_path / "ce"
    # lr 3e-4 and 80 steps, not the tiny config's 1e-3 and 40: this random 2-layer model often collapses to one
    # constant score at those (as MiniLM did at 1e-4 with 256-token pairs); 3e-4 x 80 learned on seeds 0-3
    rep = train_crossencoder(_tiny_cfg(source_texts, out, None, steps=80, evaluate=True, max_sources=10,
                                       candidates=tiny_model, lr=3e-4, mine=None))
    assert rep["loss_last"] < rep["loss_first"], rep
    # by default a cross-encoder starts from, and mines its hard negatives with, the bi-encoder it re-ranks
    assert rep["base"] == tiny_model
    assert rep["mine"] == "encoder" and rep["pairs"]["counts"]["mined"] > 0
    assert rep["validation_after"] is not None
    train, _ = split_by_cluster(load_training_set(source_texts, synthetic=True, max_sources=10, seed=0), 0.15, 0)
    pairs = build_pairs(train, seed=0)
    pos = [(train.texts[a], train.texts[b]) for a, b, y in zip(pairs.a, pairs.b, pairs.label) if y == 1][:5]
    neg = [(train.texts[a], train.texts[b]) for a, b, y, k in zip(pairs.a, pairs.b, pairs.label, pairs.kind)
           if y == 0 and k == "random"][:5]
    scorer = CrossEncoderScorer(out)
    s = scorer.score(pos + neg, batch_size=4)
    assert s.shape == (10,) and ((s >= 0) & (s <= 1)).all()
    assert s[:5].mean() > s[5:].mean(), s
    assert scorer.stats["last_n_pairs"] == 10 and scorer.stats["seconds"] > 0
    # the folder records aligned training pairs, and scoring aligns the same way: a copy with an extra
    # lead paragraph reads exactly like the plain copy; a scorer told the model was unaligned does not align
    assert scorer.align and read_pair_format(out) == {"align": True, "view": "text"} and scorer.view == "text"
    story = pos[0][0]
    lead = ("Shares in the region fell in early trading as investors weighed a week of weak factory data and "
            "warnings from exporters about slowing demand in Asia and in Europe, dealers said on Monday. ") * 2
    aligned = scorer.score([(lead + story, story), (story, story)], batch_size=2)
    assert aligned[0] == aligned[1]  # the same tokens
    write_pair_format(out, False)
    plain = CrossEncoderScorer(out).score([(lead + story, story), (story, story)], batch_size=2)
    assert plain[0] != plain[1], plain
    write_pair_format(out, True)
    texts = [pos[0][0], pos[0][1], neg[0][1]]
    info: dict = {}
    r = rerank_scores(texts, np.array([0, 0]), np.array([1, 2]), str(out), info=info)
    assert r.shape == (2,) and info["n_scored"] == 2
    with pytest.raises(ValueError, match="cross-model"):
        rerank_scores(texts, np.array([0]), np.array([1]), None)


def test_cli_trains_and_fails_cleanly(tmp_path, source_texts, tiny_model):
    from neardup.cli.train import train_app

    runner = CliRunner()
    out = tmp_path / "cli"
    res = runner.invoke(train_app, ["biencoder", "--data", str(source_texts), "--synthetic", "--base", tiny_model,
                                    "--out", str(out), "--steps", "2", "--batch-size", "4", "--max-sources", "8",
                                    "--max-seq-length", "32", "--threads", "1", "--no-eval", "--quiet", "--format", "json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout.strip().splitlines()[-1])
    assert report["steps"] == 2 and (out / "modules.json").exists()
    bad = runner.invoke(train_app, ["biencoder", "--data", str(source_texts), "--out", str(out), "--loss", "nope"])
    assert bad.exit_code == 2 and "--loss" in bad.output
    bad = runner.invoke(train_app, ["crossencoder", "--data", str(tmp_path / "missing.jsonl"), "--out", str(out)])
    assert bad.exit_code == 2 and "no such file" in bad.output


def test_rerank_tuning_sweeps_floor_and_threshold_on_validation():
    from neardup.io.read import read_records
    from neardup.eval.evaluate import LabelledData
    from neardup.train.evaluate import rerank_candidates, tune_rerank

    recs = [{"id": str(i), "text": f"story {i // 2} " * 5 + f"copy {i}", "cluster": f"c{i // 2}" if i < 8 else None}
            for i in range(12)]
    data = LabelledData(read_records(recs, label_field="cluster"))
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(12, 16)).astype(np.float32)
    emb[1::2] = emb[0::2] + 0.05 * rng.normal(size=(6, 16))  # each odd doc near its even neighbour
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)

    def oracle_scores(pairs):  # a perfect cross-encoder: 0.9 for true duplicates, 0.1 otherwise
        labels = {r["text"]: r["cluster"] for r in recs}
        return np.array([0.9 if labels[a] is not None and labels[a] == labels[b] else 0.1 for a, b in pairs])

    cands = rerank_candidates(data, emb, oracle_scores, floor=-1.0, k=11)
    assert cands.left.size == 66  # every pair is a candidate at floor -1
    out = tune_rerank(data, cands, data, cands)
    assert out["validation"]["ari"] == 1.0 and out["test"]["ari"] == 1.0
    assert 0.1 < out["threshold"] <= 0.9 and out["floor"] >= -1.0


def test_interruption_saves_a_checkpoint_and_reports_it(tmp_path):
    import torch

    from neardup.train.loop import LoopConfig, run_loop

    module = torch.nn.Linear(4, 1)
    x = torch.randn(8, 4)

    def loss_fn(step: int):
        if step == 3:
            raise KeyboardInterrupt
        return module(x).pow(2).mean()

    res = run_loop(module, list(range(10)), loss_fn, LoopConfig(out=tmp_path, lr=0.01, progress=False,
                                                               checkpoint_every=0), fingerprint="f")
    assert (res.step, res.stopped) == (3, "interrupted")
    assert [p.name for p in checkpoint_dirs(tmp_path)] == ["step-0000003"]
    again = run_loop(module, list(range(10)), lambda s: module(x).pow(2).mean(),
                     LoopConfig(out=tmp_path, lr=0.01, progress=False, resume=True), fingerprint="f")
    assert (again.resumed_from, again.step, again.stopped) == (3, 10, "finished")


def test_models_load_silently_and_leave_transformers_settings_alone(tiny_model, capfd):
    """No "Loading weights" bar, load report or conversion notice on stderr (they ignored --quiet)."""
    from transformers.utils import logging as hf_logging

    from neardup.represent.transformer import TransformerEncoder
    from neardup.train.biencoder import load_sentence_transformer
    from neardup.train.crossencoder import load_cross_encoder

    hf_logging.enable_progress_bar()
    hf_logging.set_verbosity_info()
    capfd.readouterr()
    try:
        load_sentence_transformer(tiny_model)
        load_cross_encoder(tiny_model, 64)  # a new head: transformers reports its "newly initialized" weights
        TransformerEncoder(tiny_model, max_tokens=32)
        err = capfd.readouterr().err
        assert "Loading weights" not in err and "initialized" not in err and "Converting" not in err, err
        assert hf_logging.is_progress_bar_enabled() and hf_logging.get_verbosity() == hf_logging.INFO
    finally:
        hf_logging.set_verbosity_warning()
