"""Settings and helpers shared by the bi-encoder and cross-encoder trainers.

Owns :class:`TrainConfig` (every option of ``neardup train``), preparing the split and the pairs, batch
plans, the run fingerprint, atomic model saving and the report file; must not define a model or a loss.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import random
import shutil
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from neardup.synth import derive_seed
from neardup.train.dataset import TrainingSet, split_by_cluster
from neardup.train.loop import TrainError, latest_checkpoint
from neardup.train.mining import MINERS, mine_hard_negatives
from neardup.train.neighbours import NEIGHBOUR_BAND, NEIGHBOUR_MAX
from neardup.train.pairs import HARD_FRACTION, PairSet
from neardup.train.sources import load_labelled_sets, load_training_set
from neardup.train.synthetic import SyntheticConfig

LOSSES: tuple[str, ...] = ("online-contrastive", "mnrl", "supcon")
#: Negatives per positive and their hard share when none are given: ``(neg_per_pos, hard_fraction)`` for
#: labelled data (real template siblings, same-event reports and updates to draw on: two hard-heavy negatives
#: a positive lifted the fine-tuned bi-encoder, rerank and the hybrid on the three labelled Reuters days,
#: docs/training.md) and for ``--synthetic`` (the NEWS-COPY mix, one negative a positive, two thirds hard).
NEGATIVES: dict[bool, tuple[float, float]] = {False: (2.0, 0.8), True: (1.0, HARD_FRACTION)}
REPORT_FILE = "train_report.json"


@dataclass
class TrainConfig:
    """Everything one ``neardup train`` run needs (see ``neardup train biencoder --help``)."""

    data: str | tuple[str, ...]  # several: labelled files (days) trained on together
    out: str
    synthetic: bool = False
    val_data: tuple[str, ...] | None = None  # labelled files validated on (instead of a split of data)
    copies: int = 0  # labelled data: generator-made noisy copies of every document, in its cluster
    docs: str | None = None
    text_field: str = "text"
    id_field: str = "id"
    base: str | None = None
    loss: str = "online-contrastive"
    margin: float = 0.2
    temperature: float = 0.1
    epochs: int = 1
    steps: int | None = None
    batch_size: int = 16
    lr: float | None = None  # None: 2e-5 (bi-encoder), 3e-5 (cross-encoder)
    head_lr: float | None = None
    warmup: float = 0.1
    weight_decay: float = 0.01
    max_seq_length: int = 128
    max_minutes: float | None = None
    resume: bool = False
    checkpoint_every: int = 50
    val_fraction: float = 0.15
    neg_per_pos: float | None = None  # None: NEGATIVES[synthetic] (filled in on construction)
    hard_fraction: float | None = None  # None: NEGATIVES[synthetic]
    mine: str | None = None  # None: DEFAULT_MINE of the trainer (bi-encoder: minhash; cross-encoder: encoder)
    mine_k: int = 5
    max_sources: int | None = 300
    neighbours: float = 0.0  # with synthetic: share of sources drawn with their real neighbours (0 = off)
    neighbour_band: tuple[float, float] = NEIGHBOUR_BAND
    neighbour_max: int = NEIGHBOUR_MAX
    hard_kinds: tuple[str, ...] | None = None  # with synthetic: generated hard-negative kinds (None: SyntheticConfig's)
    max_pairs: int | None = None
    max_pos_per_cluster: int = 10
    self_pairs: bool = True  # labelled data with copies: a document and its own noisy copy are a positive pair
    exclude: tuple[str, ...] = ()
    seed: int = 0
    evaluate: bool = True
    eval_max_tokens: int | None = None  # None: max_seq_length (a bi-encoder is applied as it was trained)
    eval_k: int = 100
    candidates: str | None = None
    rerank_k: int = 20
    rerank_floor: float | None = None
    align_pairs: bool = True  # cross-encoder: cut pairs so both sides start on the same passage (align_pair)
    pair_view: str = "text"  # cross-encoder: "text" (both texts) or "diff" (what each lacks of the other: diff_pair)
    threads: int | None = None
    progress: bool = True
    stop_at_step: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from neardup.config import ConfigError

        def check(cond: bool, msg: str) -> None:
            if not cond:
                raise ConfigError(msg)

        if isinstance(self.data, (list, tuple)):
            self.data = tuple(str(d) for d in self.data)
            check(len(self.data) >= 1, "--data: give at least one file")
            if len(self.data) == 1:  # one file: the same settings (and fingerprint) as before several existed
                self.data = self.data[0]
        if self.val_data is not None:
            self.val_data = tuple(str(d) for d in ([self.val_data] if isinstance(self.val_data, str) else self.val_data))
        check(not (self.synthetic and isinstance(self.data, tuple)), "--synthetic reads one --data file")
        check(not (self.synthetic and (self.val_data or self.copies)),
              "--val-data and --noisy-copies apply to labelled data, not --synthetic (which makes its own copies)")
        check(isinstance(self.copies, int) and 0 <= self.copies <= 10, f"--noisy-copies must be in 0..10, got {self.copies!r}")
        check(self.self_pairs or (self.copies and not self.synthetic),
              "--no-self-pairs applies to labelled data with --noisy-copies")
        check(self.loss in LOSSES, f"--loss must be one of {', '.join(LOSSES)}, got {self.loss!r}")
        check(self.mine is None or self.mine in MINERS, f"--mine must be one of {', '.join(MINERS)}, got {self.mine!r}")
        check(self.batch_size >= 2, f"--batch-size must be >= 2, got {self.batch_size}")
        check(self.epochs >= 1, f"--epochs must be >= 1, got {self.epochs}")
        check(self.steps is None or self.steps >= 1, f"--steps must be >= 1, got {self.steps}")
        check(self.lr is None or self.lr > 0, f"--lr must be > 0, got {self.lr}")
        check(self.head_lr is None or self.head_lr > 0, f"--head-lr must be > 0, got {self.head_lr}")
        check(0 <= self.warmup < 1, f"--warmup must be in [0, 1), got {self.warmup}")
        check(8 <= self.max_seq_length <= 512, f"--max-seq-length must be in 8..512, got {self.max_seq_length}")
        check(self.max_minutes is None or self.max_minutes > 0, f"--max-minutes must be > 0, got {self.max_minutes}")
        check(0 < self.val_fraction < 1, f"--val-fraction must be in (0, 1), got {self.val_fraction}")
        neg_per_pos, hard_fraction = NEGATIVES[bool(self.synthetic)]
        self.neg_per_pos = neg_per_pos if self.neg_per_pos is None else self.neg_per_pos
        self.hard_fraction = hard_fraction if self.hard_fraction is None else self.hard_fraction
        check(0 <= self.hard_fraction <= 1, f"--hard-fraction must be in [0, 1], got {self.hard_fraction}")
        check(self.neg_per_pos >= 0, f"--neg-per-pos must be >= 0, got {self.neg_per_pos}")
        check(self.max_sources is None or self.max_sources >= 2, "--max-sources must be >= 2")
        check(0 <= self.neighbours <= 1, f"--neighbours must be a fraction in [0, 1], got {self.neighbours}")
        check(len(self.neighbour_band) == 2 and 0 <= self.neighbour_band[0] < self.neighbour_band[1] <= 1,
              f"neighbour_band must be (lo, hi) with 0 <= lo < hi <= 1, got {self.neighbour_band}")
        check(self.neighbour_max >= 1, f"neighbour_max must be >= 1, got {self.neighbour_max}")
        check(self.neighbours == 0 or self.synthetic, "--neighbours needs --synthetic")
        check(self.hard_kinds is None or self.synthetic, "--hard-kinds needs --synthetic")
        if self.hard_kinds is not None:
            try:
                self.synthetic_config()
            except ValueError as e:
                raise ConfigError(f"--hard-kinds: {e}") from None
        check(self.checkpoint_every >= 0, "--checkpoint-every must be >= 0")
        check(self.rerank_floor is None or -1 <= self.rerank_floor <= 1, "--rerank-floor must be in [-1, 1]")
        from neardup.verify.crossencoder import PAIR_VIEWS

        check(self.pair_view in PAIR_VIEWS, f"--pair-view must be {' or '.join(PAIR_VIEWS)}, got {self.pair_view!r}")

    def synthetic_config(self) -> SyntheticConfig | None:
        """How ``--synthetic`` makes clusters, when an option departs from :class:`SyntheticConfig`'s defaults."""
        return None if self.hard_kinds is None else SyntheticConfig(hard_kinds=tuple(self.hard_kinds))

    def fingerprint(self, *arrays: np.ndarray, extra: dict[str, Any] | None = None) -> str:
        """Hash of everything that decides the batches and the schedule (not budget, resume or output).

        ``extra``: settings a trainer resolves itself (hashed only when given, so runs that did not have
        them keep their fingerprint)."""
        skip = {"out", "max_minutes", "resume", "checkpoint_every", "evaluate", "eval_max_tokens", "eval_k",
                "progress", "stop_at_step", "threads", "candidates", "rerank_k", "rerank_floor", "extra",
                "align_pairs", "pair_view"}  # only the cross-encoder reads them, and passes them in ``extra``
        if not self.neighbours:  # off: the same fingerprint as before the option existed
            skip |= {"neighbours", "neighbour_band", "neighbour_max"}
        if self.hard_kinds is None:  # likewise
            skip.add("hard_kinds")
        if self.val_data is None:
            skip.add("val_data")
        if not self.copies:
            skip.add("copies")
        if self.self_pairs:  # the default: the same fingerprint as before the option existed
            skip.add("self_pairs")
        d = {k: v for k, v in dataclasses.asdict(self).items() if k not in skip}
        if d.get("mine") is None:  # the trainer's default; the mined pairs themselves are hashed with the arrays
            d["mine"] = "minhash"
        d.update(extra or {})
        h = hashlib.blake2b(json.dumps(d, sort_keys=True, default=str).encode(), digest_size=16)
        for a in arrays:
            h.update(np.ascontiguousarray(a).tobytes())
        return h.hexdigest()


class Timer:
    """Wall-clock budget of one command (``--max-minutes``)."""

    def __init__(self, max_minutes: float | None) -> None:
        self.start = time.time()
        self.deadline = self.start + max_minutes * 60.0 if max_minutes else None

    def elapsed(self) -> float:
        return time.time() - self.start

    def left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.time()


def prepare_data(cfg: TrainConfig, say: Callable[[str], None]) -> tuple[TrainingSet, TrainingSet]:
    """Load the training set and split it by cluster (or read the validation files); refuses a training
    set without positives."""
    if cfg.synthetic:
        assert isinstance(cfg.data, str)
        ts = load_training_set(cfg.data, synthetic=True, docs=cfg.docs, text_field=cfg.text_field,
                               id_field=cfg.id_field, max_sources=cfg.max_sources, seed=cfg.seed,
                               exclude=cfg.exclude, log=say, neighbours=cfg.neighbours,
                               neighbour_band=tuple(cfg.neighbour_band), neighbour_max=cfg.neighbour_max,
                               synthetic_config=cfg.synthetic_config())
    else:
        paths = [cfg.data] if isinstance(cfg.data, str) else list(cfg.data)
        ts = load_labelled_sets(paths, copies=cfg.copies, seed=cfg.seed, tag="train", docs=cfg.docs,
                                text_field=cfg.text_field, id_field=cfg.id_field, exclude=cfg.exclude, log=say)
    if cfg.val_data:
        train = ts
        val = load_labelled_sets(list(cfg.val_data), copies=cfg.copies, seed=cfg.seed, tag="validation",
                                 text_field=cfg.text_field, id_field=cfg.id_field, log=say)
        where = "validation files " + ", ".join(cfg.val_data)
    else:
        train, val = split_by_cluster(ts, cfg.val_fraction, cfg.seed)
        where = "split by cluster"
    st, sv = train.stats(), val.stats()
    say(f"data: {st['n_docs']} train docs ({st['n_duplicate_clusters']} duplicate clusters), "
        f"{sv['n_docs']} validation docs ({sv['n_duplicate_clusters']} duplicate clusters), {where}")
    if st["n_duplicate_clusters"] == 0:
        raise TrainError("the training split has no duplicate cluster: nothing to learn from "
                         "(use --synthetic for unlabelled text)")
    return train, val


def mined_pairs(cfg: TrainConfig, train: TrainingSet, encode: Callable[[list[str]], np.ndarray] | None,
                say: Callable[[str], None], mine: str) -> list[tuple[int, int]]:
    """Hard negatives mined on the training split by MinHash and/or ``encode`` (closest first); ``mine`` is
    ``cfg.mine`` resolved by the trainer."""
    methods = {"minhash": ["minhash"], "encoder": ["encoder"], "both": ["minhash", "encoder"], "none": []}[mine]
    out: list[tuple[int, int]] = []
    seen: set[tuple[int, int]] = set()
    for m in methods:
        t0 = time.time()
        left, right, _ = mine_hard_negatives(train.texts, train.clusters, m, k=cfg.mine_k,
                                             encode=encode if m == "encoder" else None)
        new = [(a, b) for a, b in zip(left.tolist(), right.tolist()) if (a, b) not in seen]
        seen.update(new)
        out += new
        say(f"mining ({m}): {len(new)} close pairs with different labels ({time.time() - t0:.0f}s)")
    return out


def pair_batches(n: int, batch_size: int, epochs: int, steps: int | None, seed: int) -> list[np.ndarray]:
    """Row indices per step: a seeded shuffle per epoch cut into batches (the last one kept if >= 2 rows);
    ``steps`` (when given) cycles epochs until that many batches exist.

    >>> [b.size for b in pair_batches(10, 4, 1, None, 0)]
    [4, 4, 2]
    """
    out: list[np.ndarray] = []
    epoch = 0
    while True:
        rng = np.random.default_rng(derive_seed(seed, "epoch", str(epoch)))
        perm = rng.permutation(n)
        for lo in range(0, n, batch_size):
            b = perm[lo : lo + batch_size]
            if b.size >= 2:
                out.append(b)
            if steps is not None and len(out) >= steps:
                return out
        epoch += 1
        if steps is None and epoch >= epochs:
            return out
        if n < 2:
            return out


def negatives_by_cluster(train: TrainingSet, pairs: PairSet) -> dict[str, list[int]]:
    """For each cluster, the documents that are its hard (explicit or mined) negatives."""
    out: dict[str, list[int]] = defaultdict(list)
    for a, b, lab, kind in zip(pairs.a.tolist(), pairs.b.tolist(), pairs.label.tolist(), pairs.kind):
        if lab == 0 and kind in ("hard", "mined"):
            out[train.clusters[a]].append(b)
            out[train.clusters[b]].append(a)
    return out


def triplets(train: TrainingSet, pairs: PairSet, seed: int) -> list[tuple[int, int, int]]:
    """(anchor, positive, negative) per positive pair: a hard negative of the anchor's cluster when there is
    one, else a random document of another cluster. Ordered round-robin over clusters, so a batch rarely
    holds two rows of one cluster (in-batch negatives must not be duplicates)."""
    rng = random.Random(derive_seed(seed, "triplets"))
    negs = negatives_by_cluster(train, pairs)
    n = len(train)
    by_cluster: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    for a, b, lab in zip(pairs.a.tolist(), pairs.b.tolist(), pairs.label.tolist()):
        if lab != 1:
            continue
        if rng.random() < 0.5:
            a, b = b, a
        c = train.clusters[a]
        if negs.get(c):
            neg = rng.choice(negs[c])
        else:
            neg = rng.randrange(n)
            for _ in range(50):
                if train.clusters[neg] != c:
                    break
                neg = rng.randrange(n)
        by_cluster[c].append((a, b, neg))
    keys = sorted(by_cluster)
    rng.shuffle(keys)
    out: list[tuple[int, int, int]] = []
    rnd = 0
    while True:
        added = False
        for k in keys:
            if rnd < len(by_cluster[k]):
                out.append(by_cluster[k][rnd])
                added = True
        if not added:
            return out
        rnd += 1


def supcon_batches(train: TrainingSet, pairs: PairSet, batch_size: int, epochs: int, steps: int | None,
                   seed: int, per_cluster: int = 4) -> list[tuple[np.ndarray, np.ndarray]]:
    """(document indices, cluster labels) per step: whole clusters (up to ``per_cluster`` members) plus one
    hard negative each, packed to ``batch_size`` documents."""
    negs = negatives_by_cluster(train, pairs)
    members: dict[str, list[int]] = defaultdict(list)
    for i, c in enumerate(train.clusters):
        members[c].append(i)
    multi = sorted(c for c, m in members.items() if len(m) > 1)
    lab = {c: i for i, c in enumerate(sorted(members))}
    out: list[tuple[np.ndarray, np.ndarray]] = []
    epoch = 0
    while True:
        rng = random.Random(derive_seed(seed, "supcon", str(epoch)))
        order = list(multi)
        rng.shuffle(order)
        docs: list[int] = []
        for c in order:
            m = list(members[c])
            rng.shuffle(m)
            add = m[:per_cluster]
            if negs.get(c):
                add.append(rng.choice(negs[c]))
            add = [d for d in add if d not in docs]
            if len(docs) + len(add) > batch_size and len(docs) >= 2:
                out.append((np.array(docs), np.array([lab[train.clusters[d]] for d in docs])))
                docs = []
                if steps is not None and len(out) >= steps:
                    return out
            docs += add[: batch_size]
        if len(docs) >= 2:
            out.append((np.array(docs), np.array([lab[train.clusters[d]] for d in docs])))
        if steps is not None and len(out) >= steps:
            return out[:steps]
        epoch += 1
        if (steps is None and epoch >= epochs) or not multi:
            return out


def atomic_save(save: Callable[[str], None], out: str | os.PathLike[str]) -> None:
    """Save a model folder into ``out`` without leaving it half-written: save into a temporary folder
    inside ``out``, then move each entry into place (``modules.json`` and ``config.json`` last, which is
    what loaders look for first). transformers' "Writing model shards" bar is kept off stderr, as its
    loading bars are (:func:`neardup.represent.transformer.quiet_loading`)."""
    from neardup.represent.transformer import quiet_loading

    dest = Path(out)
    dest.mkdir(parents=True, exist_ok=True)
    tmp = dest / f".saving-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    with quiet_loading():
        save(str(tmp))
    entries = sorted(tmp.iterdir(), key=lambda p: p.name in ("modules.json", "config.json"))
    for src in entries:
        target = dest / src.name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists() and src.is_dir():
            target.unlink()
        os.replace(src, target)
    shutil.rmtree(tmp, ignore_errors=True)


def write_report(out: str | os.PathLike[str], report: dict[str, Any]) -> None:
    """``<out>/train_report.json`` (atomically)."""
    from neardup.io.write import write_json

    write_json(Path(out) / REPORT_FILE, report)


def read_report(out: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The report of an earlier (possibly interrupted) run in ``out``."""
    p = Path(out) / REPORT_FILE
    if not p.exists():
        return None
    with open(p, encoding="utf-8") as fh:
        return json.load(fh)


def summary_line(name: str, m: dict[str, Any] | None) -> str:
    """One line of validation metrics."""
    if not m:
        return f"{name}: not evaluated"
    return (f"{name}: ARI {m['ari']:.4f} (P {m['precision']:.3f} R {m['recall']:.3f} F1 {m['f1']:.3f}) "
            f"at threshold {m['threshold']:.3f}")


def brief(metrics: dict[str, Any]) -> dict[str, Any]:
    """The metrics worth keeping in a report."""
    keys = ("ari", "precision", "recall", "f1", "threshold", "n_docs", "n_pred_pairs", "n_scored", "seconds_scoring")
    return {k: (round(float(v), 4) if isinstance(v, float) else v) for k, v in metrics.items() if k in keys}


def run_job(cfg: TrainConfig, log: Callable[[str], None] | None,
            job: Callable[[TrainConfig, Callable[[str], None]], dict[str, Any]]) -> dict[str, Any]:
    """Run a training job with torch's threads set for it and ``--resume`` checked (a checkpoint must exist)."""
    say = log or (lambda _m: None)
    with torch_threads(cfg.threads) as n:
        say(f"torch threads: {n}")
        if cfg.resume and latest_checkpoint(cfg.out) is None:
            raise TrainError(f"--resume: no checkpoint in {os.path.join(cfg.out, 'checkpoints')}")
        return job(cfg, say)


@contextlib.contextmanager
def torch_threads(threads: int | None) -> Iterator[int]:
    """Use :func:`set_threads` for the block, then restore torch's previous thread count."""
    import torch

    old = torch.get_num_threads()
    try:
        yield set_threads(threads)
    finally:
        torch.set_num_threads(old)


def seed_torch(seed: int) -> None:
    """Seed torch's generator from the run's seed before a model is built, so a new head's initial weights
    and the dropout masks are the same on every run of the same settings (not whatever the process drew
    before)."""
    import torch

    torch.manual_seed(derive_seed(seed, "torch") % (2**63))


def set_threads(threads: int | None) -> int:
    """Set torch's CPU threads: ``threads``, or (None) the cores not already busy (1-minute load average),
    at least 1. On a shared machine, threads that outnumber the free cores make every step several times
    slower (measured: 3x on a 2-core box with load 9), so the default backs off. Returns the number set."""
    import torch

    if not threads:
        cores = os.cpu_count() or 1
        try:
            busy = os.getloadavg()[0]
        except (AttributeError, OSError):
            busy = 0.0
        threads = max(1, min(torch.get_num_threads(), int(cores - busy + 0.5)))
    torch.set_num_threads(threads)
    return threads


__all__ = ["LOSSES", "REPORT_FILE", "Timer", "TrainConfig", "atomic_save", "brief", "mined_pairs", "negatives_by_cluster",
           "pair_batches", "prepare_data", "read_report", "seed_torch", "set_threads", "summary_line", "torch_threads", "supcon_batches", "triplets",
           "write_report"]
