"""Labelled training (or test) clusters from unlabelled text, made by the noise generator.

Owns turning clean source texts into clusters of (source + noisy copies) plus hard negatives; must not
implement noise ops (see :mod:`neardup.synth`) or train anything.

Each source text becomes a cluster: the text itself and ``copies`` noisy copies (each copy draws one
preset from :data:`TRAIN_PRESET_MIX`, so a cluster mixes OCR, aggregator re-publication, typos and
spam evasion). With probability ``p_hard`` the source also gets a hard negative
(:func:`neardup.synth.negatives.make_hard_negative`: the kinds of ``hard_kinds`` in turn, by default
``update``, ``same_event_rewrite`` and ``template_sibling``, optionally ``entity_swap``, the near template
sibling; the rewrite pool is other sources), itself noised with probability 0.5 so
that "clean" never means "negative". A hard negative is its own cluster (NOT a duplicate of its
source) but belongs to its source's *group*: a train/validation split moves a whole group, so a
document, its copies and its hard negatives always land on the same side. With ``p_singleton`` a
source gets no copies (a singleton, as in real collections).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from neardup.synth import ALL_HARD_NEGATIVE_KINDS, HARD_NEGATIVE_KINDS, apply_noise, derive_seed, make_hard_negative

#: Presets a noisy copy draws from, with weights (heavier OCR and aggregator edits are the common case).
TRAIN_PRESET_MIX: tuple[tuple[str, float], ...] = (
    ("ocr-1930s", 2.0), ("ocr-1970s", 1.0), ("ocr-medium", 1.0), ("ocr-heavy", 0.5),
    ("web-aggregator", 2.0), ("typos", 1.0), ("adversarial-spam", 1.0), ("clean", 0.5),
)


@dataclass(frozen=True)
class SyntheticConfig:
    """How many copies and hard negatives each source gets.

    ``copies``: (min, max) noisy copies per source (uniform); ``p_hard``: probability of one hard
    negative per source; ``p_singleton``: probability a source gets no copies; ``pool_size``: texts in
    the ``same_event_rewrite`` pool; ``hard_kinds``: the hard-negative kinds, taken in turn.
    """

    copies: tuple[int, int] = (1, 3)
    p_hard: float = 0.7
    p_singleton: float = 0.0
    pool_size: int = 30
    presets: tuple[tuple[str, float], ...] = TRAIN_PRESET_MIX
    hard_kinds: tuple[str, ...] = HARD_NEGATIVE_KINDS

    def __post_init__(self) -> None:
        bad = [k for k in self.hard_kinds if k not in ALL_HARD_NEGATIVE_KINDS]
        if bad or not self.hard_kinds:
            raise ValueError(f"hard_kinds must be a non-empty list of {', '.join(ALL_HARD_NEGATIVE_KINDS)}; "
                             f"got {', '.join(self.hard_kinds) or 'none'}")
        lo, hi = self.copies
        if not 1 <= lo <= hi:
            raise ValueError(f"copies must be (min, max) with 1 <= min <= max, got {self.copies!r}")
        for name in ("p_hard", "p_singleton"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {value!r}")


def make_clusters(ids: Sequence[str], texts: Sequence[str], seed: int = 0,
                  config: SyntheticConfig | None = None, tag: str = "train",
                  groups: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Records ``{id, text, cluster, group, source_id, role, ops}`` for every source, copy and hard negative.

    ``cluster`` is the duplicate identity (a hard negative has its own), ``group`` the split unit
    (the source id, or ``groups[i]`` for the i-th source when given: sources that must stay on one side
    of a split, e.g. real neighbours, share one). Deterministic for a given seed and input.

    >>> recs = make_clusters(["a"], ["The cat sat on the mat. It was 5 pm in London."], seed=0,
    ...                      config=SyntheticConfig(copies=(2, 2), p_hard=1.0))
    >>> [r["role"] for r in recs], len({r["cluster"] for r in recs})
    (['original', 'copy', 'copy', 'hard_negative'], 2)
    """
    cfg = config or SyntheticConfig()
    names = [p for p, _ in cfg.presets]
    weights = [w for _, w in cfg.presets]
    rng = random.Random(derive_seed(seed, "synthetic", tag))
    out: list[dict[str, Any]] = []
    n_hard = 0
    if groups is not None and len(groups) != len(ids):
        raise ValueError(f"groups must have one entry per source ({len(ids)}), got {len(groups)}")
    for pos, (sid, text) in enumerate(zip(ids, texts)):
        base = str(sid)
        group = base if groups is None else str(groups[pos])
        single = rng.random() < cfg.p_singleton
        k = 0 if single else rng.randint(cfg.copies[0], cfg.copies[1])
        out.append({"id": base, "text": text, "cluster": base, "group": group, "source_id": base,
                    "role": "original", "ops": []})
        for j in range(k):
            preset = rng.choices(names, weights)[0]
            rid = f"{base}~{j + 1}"
            noisy = apply_noise(text, preset, seed, doc_id=rid)
            out.append({"id": rid, "text": noisy.text, "cluster": base, "group": group, "source_id": base,
                        "role": "copy", "ops": [preset] + noisy.ops})
        if rng.random() < cfg.p_hard:
            kind = cfg.hard_kinds[n_hard % len(cfg.hard_kinds)]
            n_hard += 1
            rid = f"{base}~hn"
            pool: list[str] = []
            if kind == "same_event_rewrite" and len(texts) > 1:
                picks = rng.sample(range(len(texts)), min(cfg.pool_size, len(texts)))
                pool = [texts[i] for i in picks if texts[i] != text]
            hard = make_hard_negative(text, kind, seed, pool=pool, doc_id=rid)
            hard_text, ops = hard.text, ["hard_negative:" + "+".join(hard.ops)]
            if rng.random() < 0.5:
                preset = rng.choices(names, weights)[0]
                noisy = apply_noise(hard_text, preset, seed, doc_id=rid)
                hard_text, ops = noisy.text, ops + [preset] + noisy.ops
            out.append({"id": rid, "text": hard_text, "cluster": rid, "group": group, "source_id": base,
                        "role": "hard_negative", "ops": ops})
    return out


__all__ = ["TRAIN_PRESET_MIX", "SyntheticConfig", "make_clusters"]
