"""Fine-tune a sentence-transformers bi-encoder for near-duplicate detection on the corpus at hand.

Owns the bi-encoder losses and the ``neardup train biencoder`` job: data -> split by cluster -> pairs
(with hard negatives) -> AdamW with warm-up -> checkpoints -> a model folder that
``--method biencoder --model DIR`` loads, with validation ARI (tuned threshold) before and after.

Losses (``loss``):

* ``online-contrastive`` (default; NEWS-COPY's best bi-encoder): sentence-transformers'
  ``OnlineContrastiveLoss`` with cosine distance and margin 0.2 on (a, b, label) pairs: in each
  batch only the hard positives (farther than the closest negative) and hard negatives (closer than
  the farthest positive) contribute.
* ``mnrl``: ``MultipleNegativesRankingLoss`` on (anchor, positive, hard negative) triplets; the other
  rows of the batch are extra negatives (rows are ordered so a batch rarely holds one cluster twice).
* ``supcon``: supervised contrastive loss (Khosla et al. 2020, temperature 0.1) over batches of whole
  clusters plus their hard negatives: every other member of an anchor's cluster is a positive.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from neardup.train.common import (Timer, TrainConfig, atomic_save, brief, mined_pairs, pair_batches, prepare_data,
                                  read_report, run_job, seed_torch, summary_line, supcon_batches, triplets,
                                  write_report)
from neardup.train.dataset import TrainingSet
from neardup.train.loop import LoopConfig, run_loop
from neardup.train.pairs import build_pairs

#: AdamW peak learning rate of the bi-encoder (NEWS-COPY's setting).
DEFAULT_LR = 2e-5
#: Hard-negative mining when ``--mine`` is not given: MinHash's close pairs with different labels.
DEFAULT_MINE = "minhash"


def load_sentence_transformer(path: str | None) -> Any:
    """A ``SentenceTransformer`` from a local folder (default: the packaged all-MiniLM-L6-v2), on CPU."""
    from neardup.represent.transformer import load_local_model

    return load_local_model("SentenceTransformer", path, what="base model")


def _st_losses() -> Any:
    try:
        from sentence_transformers.sentence_transformer import losses
    except ImportError:  # older layout
        from sentence_transformers import losses  # type: ignore[no-redef]
    return losses


def features(model: Any, texts: list[str]) -> dict[str, Any]:
    """Tokenised inputs for ``model`` (truncated to its ``max_seq_length``)."""
    fn = getattr(model, "preprocess", None) or model.tokenize
    return fn(texts)


def embed_train(model: Any, texts: list[str]) -> Any:
    """Sentence embeddings with gradients (training mode)."""
    return model(features(model, texts))["sentence_embedding"]


def supcon_loss(emb: Any, labels: Any, temperature: float = 0.1) -> Any:
    """Supervised contrastive loss: mean over anchors with a positive of -mean log p(positive | anchor).

    >>> import torch
    >>> e = torch.nn.functional.normalize(torch.tensor([[1.0, 0], [1, 0.1], [0, 1], [0.1, 1]]), dim=1)
    >>> good = supcon_loss(e, torch.tensor([0, 0, 1, 1])); bad = supcon_loss(e, torch.tensor([0, 1, 0, 1]))
    >>> bool(good < bad)
    True
    """
    import torch

    z = torch.nn.functional.normalize(emb, dim=-1)
    sim = z @ z.T / temperature
    n = sim.size(0)
    eye = torch.eye(n, dtype=torch.bool, device=sim.device)
    sim = sim.masked_fill(eye, float("-inf"))
    log_prob = sim - torch.logsumexp(sim, dim=1, keepdim=True)
    pos = (labels[:, None] == labels[None, :]) & ~eye
    n_pos = pos.sum(1)
    has = n_pos > 0
    if not bool(has.any()):
        return (emb * 0.0).sum()
    per = log_prob.masked_fill(~pos, 0.0).sum(1)[has] / n_pos[has]
    return -per.mean()


def make_loss_fn(cfg: TrainConfig, model: Any, train: TrainingSet, pairs: Any) -> tuple[list[Any], Callable[[Any], Any], Any]:
    """(batches, loss_fn(batch), fingerprint array) for ``cfg.loss``."""
    import torch

    texts = train.texts
    losses = _st_losses()
    if cfg.loss == "online-contrastive":
        crit = losses.OnlineContrastiveLoss(model, distance_metric=losses.SiameseDistanceMetric.COSINE_DISTANCE,
                                            margin=cfg.margin)
        batches = pair_batches(len(pairs), cfg.batch_size, cfg.epochs, cfg.steps, cfg.seed)

        def fn(rows: np.ndarray) -> Any:
            a = [texts[i] for i in pairs.a[rows]]
            b = [texts[i] for i in pairs.b[rows]]
            lab = torch.as_tensor(pairs.label[rows], dtype=torch.long)
            return crit([features(model, a), features(model, b)], lab)

        arr = np.stack([pairs.a, pairs.b, pairs.label])
        return batches, fn, arr
    if cfg.loss == "mnrl":
        crit = losses.MultipleNegativesRankingLoss(model)
        trip = np.array(triplets(train, pairs, cfg.seed), dtype=np.int64).reshape(-1, 3)
        # keep the round-robin order (consecutive rows come from different clusters); epochs repeat it
        n = len(trip)
        one = [np.arange(lo, min(lo + cfg.batch_size, n)) for lo in range(0, n, cfg.batch_size)]
        one = [b for b in one if b.size >= 2]
        want = cfg.steps if cfg.steps is not None else cfg.epochs * len(one)
        batches = [one[i % len(one)] for i in range(want)] if one else []

        def fn(rows: np.ndarray) -> Any:
            cols = [[texts[i] for i in trip[rows, c]] for c in range(3)]
            return crit([features(model, c) for c in cols], torch.zeros(len(rows), dtype=torch.long))

        return batches, fn, trip
    sbatches = supcon_batches(train, pairs, cfg.batch_size, cfg.epochs, cfg.steps, cfg.seed)

    def fn_sc(batch: tuple[np.ndarray, np.ndarray]) -> Any:
        docs, labels = batch
        emb = embed_train(model, [texts[i] for i in docs])
        return supcon_loss(emb, torch.as_tensor(labels), cfg.temperature)

    arr = np.concatenate([np.concatenate([d, lab]) for d, lab in sbatches]) if sbatches else np.empty(0, np.int64)
    return sbatches, fn_sc, arr


def validate(model: Any, val: TrainingSet, cfg: TrainConfig) -> dict[str, Any]:
    """Validation ARI at the best threshold (neardup's own sweep), the model encoding as the pipeline does."""
    from neardup.train.evaluate import encode_texts, tune_biencoder

    data = val.labelled("validation")
    emb = encode_texts(model, data.corpus.texts, max_tokens=cfg.eval_max_tokens or cfg.max_seq_length,
                       progress=False)
    return tune_biencoder(data, emb, k=cfg.eval_k)["validation"]


def train_biencoder(cfg: TrainConfig, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the whole job; returns (and writes to ``<out>/train_report.json``) the report."""
    return run_job(cfg, log, _train_biencoder)


def _train_biencoder(cfg: TrainConfig, say: Callable[[str], None]) -> dict[str, Any]:
    timer = Timer(cfg.max_minutes)
    train, val = prepare_data(cfg, say)
    seed_torch(cfg.seed)
    model = load_sentence_transformer(cfg.base)
    base_len = model.max_seq_length
    previous = read_report(cfg.out) if cfg.resume else None
    before = previous.get("validation_before") if previous else None
    eval_seconds = 0.0
    if cfg.evaluate and before is None:
        t0 = timer.elapsed()
        before = brief(validate(model, val, cfg))
        eval_seconds = timer.elapsed() - t0
    elif previous:
        eval_seconds = float(previous.get("seconds_eval", 0.0))
    if cfg.evaluate:
        say(summary_line("validation before", before))
        write_report(cfg.out, {"kind": "biencoder", "validation_before": before, "seconds_eval": round(eval_seconds, 1),
                               "complete": False})
    model.max_seq_length = cfg.max_seq_length

    def encode(texts: list[str]) -> np.ndarray:
        from neardup.train.evaluate import encode_texts

        return encode_texts(model, texts, max_tokens=cfg.max_seq_length)

    mined = mined_pairs(cfg, train, encode, say, cfg.mine or DEFAULT_MINE)
    pairs = build_pairs(train, cfg.neg_per_pos, cfg.hard_fraction, mined, cfg.max_pos_per_cluster, cfg.max_pairs,
                        cfg.seed, cfg.self_pairs)
    c = pairs.info["counts"]
    say(f"pairs: {c['positive']} positive, {c['hard']} generated/labelled hard + {c['mined']} mined hard + "
        f"{c['random']} random negatives (hard share {pairs.info['hard_fraction_realised']:.2f}, "
        f"target {cfg.hard_fraction:.2f})")
    batches, loss_fn, arr = make_loss_fn(cfg, model, train, pairs)
    fingerprint = cfg.fingerprint(arr)
    deadline = None
    if timer.deadline is not None:
        deadline = timer.deadline - (1.2 * eval_seconds if cfg.evaluate else 0.0) - 15.0
    loop = run_loop(model, batches, loss_fn,
                    LoopConfig(out=cfg.out, lr=cfg.lr or DEFAULT_LR, weight_decay=cfg.weight_decay, warmup=cfg.warmup,
                               checkpoint_every=cfg.checkpoint_every, resume=cfg.resume, deadline=deadline,
                               stop_at_step=cfg.stop_at_step, progress=cfg.progress, desc=f"biencoder {cfg.loss}"),
                    fingerprint)
    model.max_seq_length = base_len
    atomic_save(lambda d: model.save(d), cfg.out)
    after = None
    if cfg.evaluate and loop.stopped != "interrupted":  # Ctrl-C/SIGTERM: save and stop, no evaluation
        t0 = timer.elapsed()
        after = brief(validate(model, val, cfg))
        eval_seconds = max(eval_seconds, timer.elapsed() - t0)
        say(summary_line("validation before", before))
        say(summary_line("validation after ", after))
    first = loop.losses[: max(1, min(20, len(loop.losses) // 5))]
    last = loop.losses[-max(1, min(20, len(loop.losses) // 5)):]
    report = {
        "kind": "biencoder", "out": str(cfg.out), "base": cfg.base or "packaged all-MiniLM-L6-v2", "loss": cfg.loss,
        "data": {"train": train.stats(), "validation": val.stats(), **train.info},
        "pairs": pairs.info, "steps": loop.step, "total_steps": loop.total_steps, "stopped": loop.stopped,
        "resumed_from": loop.resumed_from, "loss_first": float(np.mean(first)) if loop.losses else None,
        "loss_last": float(np.mean(last)) if loop.losses else None,
        "validation_before": before, "validation_after": after,
        "seconds_train": round(loop.seconds, 1), "seconds_eval": round(eval_seconds, 1),
        "seconds_total": round(timer.elapsed(), 1),
        "settings": {k: v for k, v in vars(cfg).items() if k not in ("extra",)}, "complete": True,
    }
    write_report(cfg.out, report)
    say(f"{loop.step}/{loop.total_steps} steps ({loop.stopped}) in {loop.seconds / 60:.1f} min -> {cfg.out}")
    return report


__all__ = ["DEFAULT_MINE", "embed_train", "features", "load_sentence_transformer", "make_loss_fn", "supcon_loss", "train_biencoder",
           "validate"]
