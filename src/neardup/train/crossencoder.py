"""Train a cross-encoder pair classifier that re-ranks bi-encoder candidates (the ``rerank`` method).

Owns the ``neardup train crossencoder`` job: the same data, split and pairs as the bi-encoder
(positives, generated/labelled/mined hard negatives, random negatives), a sentence-transformers
``CrossEncoder`` with one output (``num_labels=1``) started from the base model's encoder weights
(default: the bi-encoder it will re-rank, ``candidates``, else the packaged all-MiniLM-L6-v2; the
classification head is new), binary cross-entropy on the
logit, AdamW with warm-up, checkpoints and resume. Pairs are shown in random order (the model should
not care which side is which). ``max_seq_length`` is the length of the *pair* (both texts share it).
With ``align_pairs`` (the default) each pair is first cut so both sides start on the same passage
(:func:`neardup.verify.crossencoder.align_pair`), and the saved folder records it so that scoring
prepares pairs the same way.

Validation before and after: "before" is the candidate bi-encoder alone (``candidates``, default the
packaged model) with its best threshold; "after" re-ranks that bi-encoder's neighbours above a loose
cosine floor (``rerank_floor``, default: the highest floor keeping 98% of the true validation pairs)
by the trained cross-encoder and tunes the threshold on its probability.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np

from neardup.synth import derive_seed
from neardup.train.common import (Timer, TrainConfig, atomic_save, brief, mined_pairs, pair_batches, prepare_data,
                                  read_report, run_job, seed_torch, summary_line, write_report)
from neardup.train.dataset import TrainingSet
from neardup.train.loop import LoopConfig, run_loop
from neardup.train.pairs import build_pairs
from neardup.verify.crossencoder import prepare_pairs, write_pair_format

DEFAULT_PAIR_LENGTH = 256
#: Learning rate of the new classification head (the encoder uses ``lr``): a fresh head at the encoder's
#: 2e-5 barely moves in the few hundred steps a CPU run affords (measured: BCE still 0.69 after 56 steps).
DEFAULT_HEAD_LR = 1e-3
#: Encoder learning rate. With 128-token pairs 1e-4 learned fastest (300 synthetic Reuters clusters, 16 pairs/step:
#: BCE 0.69 -> 0.24 in 60 steps; 2e-5 only reached 0.64 in 111 steps). With the default 256-token pairs
#: (benchmarks/bench_train.py, 336 steps) 1e-4 collapsed after warm-up: the loss stayed at ln 2 and every pair scored
#: 0.45-0.52; 3e-5 learned (BCE 0.69 -> 0.20, synthetic validation ARI 0.724 -> 0.819).
DEFAULT_LR = 3e-5
#: Hard-negative mining when ``--mine`` is not given: the candidate bi-encoder's (``candidates``) nearest
#: neighbours with different labels, i.e. the pairs re-ranking will actually be asked about. Measured
#: (benchmarks/bench_train.py, aligned pairs, one seed): validation ARI after re-ranking 0.769 with MinHash
#: mining, 0.862 with encoder mining; test ARI mixed (higher on 2 of 4 sets).
DEFAULT_MINE = "encoder"


def load_cross_encoder(path: str | None, max_length: int) -> Any:
    """A ``CrossEncoder`` with one output from a local folder (a cross-encoder, or a bi-encoder/BERT whose
    encoder weights start a new classifier), on CPU."""
    from neardup.represent.transformer import load_local_model

    ce = load_local_model("CrossEncoder", path, what="base model", num_labels=1, max_length=max_length)
    ce.max_seq_length = max_length
    return ce


def _validation_candidates(cfg: TrainConfig, val: TrainingSet, say: Callable[[str], None]) -> tuple[Any, Any, float, dict]:
    """Validation data, its candidate-bi-encoder embeddings, the rerank floor and the bi-encoder's tuned metrics."""
    from neardup.train.biencoder import load_sentence_transformer
    from neardup.train.evaluate import encode_texts, floor_for_recall, tune_biencoder

    data = val.labelled("validation")
    bi = load_sentence_transformer(cfg.candidates)
    from neardup.represent.transformer import DEFAULT_MAX_TOKENS, trained_max_tokens

    tokens = cfg.eval_max_tokens or trained_max_tokens(cfg.candidates) or DEFAULT_MAX_TOKENS
    emb = encode_texts(bi, data.corpus.texts, max_tokens=tokens)
    del bi
    before = tune_biencoder(data, emb, k=cfg.eval_k)["validation"]
    floor = cfg.rerank_floor if cfg.rerank_floor is not None else floor_for_recall(data, emb, 0.98, k=cfg.rerank_k)
    say(f"rerank floor {floor:.2f} (cosine of the candidate bi-encoder; {cfg.rerank_k} neighbours per document)")
    return data, emb, floor, before


def train_crossencoder(cfg: TrainConfig, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the whole job; returns (and writes to ``<out>/train_report.json``) the report."""
    return run_job(cfg, log, _train_crossencoder)


def _train_crossencoder(cfg: TrainConfig, say: Callable[[str], None]) -> dict[str, Any]:
    import torch

    from neardup.train.evaluate import rerank_candidates, tune_rerank

    timer = Timer(cfg.max_minutes)
    train, val = prepare_data(cfg, say)
    pair_len = cfg.max_seq_length
    previous = read_report(cfg.out) if cfg.resume else None
    before = previous.get("validation_before") if previous else None
    eval_seconds = float(previous.get("seconds_eval", 0.0)) if previous else 0.0
    vdata = vemb = None
    floor = cfg.rerank_floor if cfg.rerank_floor is not None else (previous or {}).get("rerank_floor")
    if cfg.evaluate:
        t0 = timer.elapsed()
        vdata, vemb, floor, b = _validation_candidates(cfg, val, say)
        before = before or brief(b)
        eval_seconds = max(eval_seconds, timer.elapsed() - t0)
        say(summary_line("validation before (bi-encoder alone)", before))
        write_report(cfg.out, {"kind": "crossencoder", "validation_before": before, "rerank_floor": floor,
                               "seconds_eval": round(eval_seconds, 1), "complete": False})
    seed_torch(cfg.seed)
    # Starting weights: ``base``, else the bi-encoder being re-ranked (it already knows this corpus's duplicates),
    # else the packaged model. Measured (bench_train, aligned, encoder-mined, one seed): from the fine-tuned
    # bi-encoder BCE 0.14 and validation ARI 0.911 after 336 steps; from the packaged model 0.20 and 0.862.
    base = cfg.base or cfg.candidates
    ce = load_cross_encoder(base, pair_len)

    encode = None
    mine = cfg.mine or DEFAULT_MINE
    if mine in ("encoder", "both"):
        from neardup.train.biencoder import load_sentence_transformer
        from neardup.train.evaluate import encode_texts

        bi = load_sentence_transformer(cfg.candidates)

        def encode(texts: list[str]) -> np.ndarray:
            return encode_texts(bi, texts, max_tokens=128)

    mined = mined_pairs(cfg, train, encode, say, mine)
    pairs = build_pairs(train, cfg.neg_per_pos, cfg.hard_fraction, mined, cfg.max_pos_per_cluster, cfg.max_pairs,
                        cfg.seed, cfg.self_pairs)
    c = pairs.info["counts"]
    say(f"pairs: {c['positive']} positive, {c['hard']} generated/labelled hard + {c['mined']} mined hard + "
        f"{c['random']} random negatives (hard share {pairs.info['hard_fraction_realised']:.2f})")
    rng = random.Random(derive_seed(cfg.seed, "swap"))
    swap = np.array([rng.random() < 0.5 for _ in range(len(pairs))], dtype=bool)
    batches = pair_batches(len(pairs), cfg.batch_size, cfg.epochs, cfg.steps, cfg.seed)
    texts = train.texts
    bce = torch.nn.BCEWithLogitsLoss()

    # the model's view of each pair (clipped, aligned, sides swapped), made once rather than per batch and epoch
    views = prepare_pairs([(texts[a], texts[b]) for a, b in zip(pairs.a.tolist(), pairs.b.tolist())], cfg.align_pairs,
                          cfg.pair_view)
    views = [(b, a) if s else (a, b) for (a, b), s in zip(views, swap.tolist())]

    def loss_fn(rows: np.ndarray) -> Any:
        feats = ce.preprocess([views[r] for r in rows.tolist()])
        logits = ce(feats)["scores"].reshape(-1)
        return bce(logits, torch.as_tensor(pairs.label[rows], dtype=torch.float32))

    # alignment, the diff view and a base taken from --candidates change what is trained; runs without them keep
    # their fingerprint
    resolved: dict[str, Any] = {"align_pairs": True} if cfg.align_pairs else {}
    if cfg.pair_view != "text":
        resolved["pair_view"] = cfg.pair_view
    if base and not cfg.base:
        resolved["base"] = base
    fingerprint = cfg.fingerprint(np.stack([pairs.a, pairs.b, pairs.label]), swap, extra=resolved)
    deadline = None
    if timer.deadline is not None:
        deadline = timer.deadline - (1.5 * eval_seconds if cfg.evaluate else 0.0) - 15.0
    loop = run_loop(ce, batches, loss_fn,
                    LoopConfig(out=cfg.out, lr=cfg.lr or DEFAULT_LR, weight_decay=cfg.weight_decay, warmup=cfg.warmup,
                               head_lr=cfg.head_lr or DEFAULT_HEAD_LR, head_match="classifier",
                               checkpoint_every=cfg.checkpoint_every, resume=cfg.resume, deadline=deadline,
                               stop_at_step=cfg.stop_at_step, progress=cfg.progress, desc="crossencoder"),
                    fingerprint)

    def save(d: str) -> None:
        ce.save(d)
        write_pair_format(d, cfg.align_pairs, cfg.pair_view)

    atomic_save(save, cfg.out)
    after = None
    if cfg.evaluate and vdata is not None and vemb is not None and loop.stopped != "interrupted":
        t0 = timer.elapsed()
        ce.eval()

        def score_pairs(items: list[tuple[str, str]]) -> np.ndarray:
            scores = ce.predict(prepare_pairs(items, cfg.align_pairs, cfg.pair_view), batch_size=16, show_progress_bar=False)
            return np.asarray(scores, dtype=np.float64).reshape(-1)

        cands = rerank_candidates(vdata, vemb, score_pairs, float(floor), k=cfg.rerank_k)
        after = brief(tune_rerank(vdata, cands)["validation"])
        eval_seconds = max(eval_seconds, timer.elapsed() - t0)
        say(summary_line("validation before (bi-encoder alone)", before))
        say(summary_line("validation after  (rerank)", after) + f"; {after.get('n_scored', 0)} pairs scored")
    losses = loop.losses
    k = max(1, min(20, len(losses) // 5))
    report = {
        "kind": "crossencoder", "out": str(cfg.out), "base": base or "packaged all-MiniLM-L6-v2",
        "candidates": cfg.candidates or "packaged all-MiniLM-L6-v2", "rerank_floor": floor,
        "data": {"train": train.stats(), "validation": val.stats(), **train.info}, "pairs": pairs.info,
        "steps": loop.step, "total_steps": loop.total_steps, "stopped": loop.stopped, "resumed_from": loop.resumed_from,
        "loss_first": float(np.mean(losses[:k])) if losses else None,
        "loss_last": float(np.mean(losses[-k:])) if losses else None,
        "validation_before": before, "validation_after": after,
        "seconds_train": round(loop.seconds, 1), "seconds_eval": round(eval_seconds, 1),
        "seconds_total": round(timer.elapsed(), 1), "align_pairs": cfg.align_pairs,
        "pair_view": cfg.pair_view, "mine": mine,
        "settings": {k2: v for k2, v in vars(cfg).items() if k2 != "extra"}, "complete": True,
    }
    write_report(cfg.out, report)
    say(f"{loop.step}/{loop.total_steps} steps ({loop.stopped}) in {loop.seconds / 60:.1f} min -> {cfg.out}")
    return report


__all__ = ["DEFAULT_HEAD_LR", "DEFAULT_LR", "DEFAULT_MINE", "DEFAULT_PAIR_LENGTH", "load_cross_encoder", "train_crossencoder"]
