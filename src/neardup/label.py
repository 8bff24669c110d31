"""Labelling candidate pairs by hand: which pairs to show, and the file the answers go to.

Owns drawing a sample of a corpus's candidate pairs worth a person's time (most near the method's
threshold, where a model's mistakes are, the rest spread over the other candidates) and the pair-label
file (``a, b, label, score``: the format ``neardup eval``, ``tune`` and ``train --data`` read); must
not prompt or print (:mod:`neardup.cli.label`) or train anything.

The file is appended one answer at a time (flushed and synced), so a session stopped at any point
loses nothing and the next one skips the pairs already answered. An existing file that is not a pair-label
file is never appended to; one started afresh (``--overwrite``) is replaced by the first answer.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from neardup.config import DedupConfig
from neardup.io.read import Corpus

__all__ = ["NEAR_SHARE", "LabelFile", "Pair", "sample_pairs"]

#: Share of the sample drawn from the pairs closest to the threshold (the rest: uniform over the others).
NEAR_SHARE = 0.5


@dataclass(frozen=True)
class Pair:
    """A candidate pair to label: positions in the corpus, ids and the method's score."""

    left: int
    right: int
    a: str
    b: str
    score: float


def sample_pairs(corpus: Corpus, config: DedupConfig, n: int, seed: int = 0, floor: float = 0.5,
                 progress: bool = False) -> tuple[list[Pair], float]:
    """Up to ``n`` candidate pairs of ``corpus`` under ``config`` to label, and the threshold used.

    Candidates scoring at least ``floor`` x the threshold are eligible; :data:`NEAR_SHARE` of the sample
    is drawn (seeded) from the ``2n`` eligible pairs closest to the threshold, the rest uniformly from the
    others, so both sides of the threshold are asked about. Returned in a seeded random order.

    >>> texts = ["the cat sat on the mat today in town", "the cat sat on the mat today in the town",
    ...          "a dog ran far away from home and back", "a dog ran far away from home and back again"]
    >>> pairs, t = sample_pairs(Corpus.from_texts(texts), DedupConfig(method="minhash"), n=5)
    >>> sorted((p.a, p.b) for p in pairs)
    [('0', '1'), ('2', '3')]
    """
    from neardup.pipeline import candidate_pairs, prepare

    prep = prepare(corpus, config, progress=progress)
    config = prep.config
    left, right, scores, _ = candidate_pairs(prep, config)
    t = float(config.threshold)
    ok = np.flatnonzero(scores >= floor * t)
    rng = random.Random(seed)
    near_order = ok[np.argsort(np.abs(scores[ok] - t), kind="stable")]
    n_near = min(int(round(n * NEAR_SHARE)), near_order.size)
    near = rng.sample(near_order[: 2 * n].tolist(), min(n_near, min(2 * n, near_order.size)))
    taken = set(near)
    rest = [int(i) for i in ok.tolist() if int(i) not in taken]
    far = rng.sample(rest, min(n - len(near), len(rest)))
    chosen = near + far
    rng.shuffle(chosen)
    ids = corpus.ids
    out = [Pair(int(left[i]), int(right[i]), ids[int(left[i])], ids[int(right[i])], float(scores[i])) for i in chosen]
    return out, t


class LabelFile:
    """A pair-label JSONL file answered into one line at a time; ``done`` holds the pairs already in it.

    An existing file must be a pair-label file (every record with ``a``, ``b`` and ``label``), else an
    :class:`~neardup.io.write.OutputError` naming it; with ``fresh`` it is started over instead: replaced
    (atomically) by the first answer, so a session that answers nothing leaves it as it was.
    """

    def __init__(self, path: str | os.PathLike[str], fresh: bool = False) -> None:
        self.path = Path(path)
        self.done: set[frozenset[str]] = set()
        self._fresh = fresh and self.path.exists()
        if self.path.exists() and not fresh:
            for rec in self._checked_records():
                self.done.add(frozenset((str(rec["a"]), str(rec["b"]))))

    def _checked_records(self) -> Iterator[dict[str, object]]:
        """The records of the existing file, each with ``a``, ``b`` and ``label``."""
        from neardup.io.read import InputError, iter_jsonl
        from neardup.io.write import OutputError

        def refuse(why: str) -> OutputError:
            return OutputError(f"{self.path} exists and is not a pair-label file ({why}): give --overwrite to "
                               "replace it")

        try:
            for line, rec in iter_jsonl(self.path):
                missing = [key for key in ("a", "b", "label") if key not in rec]
                if missing:
                    raise refuse(f"line {line} has no {missing[0]!r}")
                yield rec
        except InputError as exc:
            raise refuse(f"line {exc.line}: {exc.reason}" if exc.line is not None else exc.reason) from None

    def _records(self) -> Iterator[dict[str, object]]:
        from neardup.io.read import iter_jsonl

        for _, rec in iter_jsonl(self.path):
            yield rec

    def counts(self) -> tuple[int, int]:
        """(pairs answered, of them duplicates)."""
        if self._fresh or not self.path.exists():
            return 0, 0
        recs = list(self._records())
        return len(recs), sum(1 for r in recs if r.get("label") in (1, True))

    def add(self, pair: Pair, label: bool, reason: str | None = None) -> None:
        """Append one answer (flushed and synced: a stopped session keeps every answer given)."""
        rec: dict[str, object] = {"a": pair.a, "b": pair.b, "label": int(label), "score": round(pair.score, 4)}
        if reason:
            rec["reason"] = reason
        line = json.dumps(rec, ensure_ascii=False) + "\n"
        if self._fresh:  # the first answer of a file started over replaces it
            from neardup.io.write import atomic_path

            with atomic_path(self.path) as tmp:
                tmp.write_text(line, encoding="utf-8")
            self._fresh = False
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
        self.done.add(frozenset((pair.a, pair.b)))
