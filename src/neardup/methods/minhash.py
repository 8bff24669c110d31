"""MinHash: shingles, seeded MinHash signatures, LSH bands (or the k-hashes / c-collisions rule), and an
exact (by default IDF-weighted overlap) score of every candidate: neardup's default method.

Owns MinHash's settings resolved once (bands and rows, collision count), its keys and bucket rules; must
not schedule work or compute signatures itself (:mod:`neardup.represent.minhash`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np

from neardup.candidates.lsh import band_bucket_pairs, band_keys, collision_bucket_pairs, count_lsh_pairs, lsh_plan
from neardup.cluster import passes
from neardup.config import ConfigError, DedupConfig
from neardup.methods import register
from neardup.methods.base import KeyedMethod, Representation
from neardup.represent import minhash
from neardup.text.shingle import ShingleSets

#: Jaccard levels ``neardup tune`` derives LSH bands for, and collision counts (as fractions of num_perm).
LSH_THRESHOLDS: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
#: LSH thresholds a candidate budget chooses from (those at or above the configured one), loosest first.
LSH_LADDER: tuple[float, ...] = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8)
#: Documents (a seeded sample of the corpus) among all of whose pairs the candidate rate of a banding is counted:
#: 50M pairs. The plan used to draw 20k random pairs, which met a budget's rate (5 a document is 5e-5 of the pairs at
#: 200k documents, 1e-5 at 1M) once or not at all: the planned level turned on one or two chance collisions.
PLAN_DOCS = 10_000
#: Candidate pairs a budget always allows in all (a small corpus is worth every pair it has).
PLAN_FLOOR = 500_000
#: Candidate pairs the cap (``max_candidates_per_doc``) always allows in all.
CAP_FLOOR = 1_000_000
MIN_COLLISIONS_FRACTIONS: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5)
#: The collisions rule stops where more than this share of the documents' signature values are held by more than
#: ``max_bucket`` documents (uncounted): see :meth:`MinHash.check_buckets`.
MAX_UNCOUNTED = 0.2
#: Under ``greedy`` (longest kept first), LSH buckets of more documents than this are stars on their longest one:
#: the cost of a bucket of copies grows with its documents. Smaller buckets stay whole: at 2, 4 and 8 a copy whose
#: buckets with its kept document all hold a longer chance collision lost its pair (one removal fewer under
#: adversarial-spam and nlpaug-heavy noise on the labelled days); at 16 the days' results equal whole buckets'
#: (``python benchmarks/bench_decisions.py --presets all``).
GREEDY_STAR_ABOVE = 16
#: Why the collisions rule does not suit character n-grams, and what to use: the end of its errors.
_CHAR_COLLISIONS = ("the least hashes of character n-grams are common n-grams, shared by many documents: use word "
                    "n-grams (--word-ngrams) or the LSH rule (--rule lsh)")
#: Candidate budget of character shingles when none is set (pairs per document; see
#: ``MinHashConfig.candidates_per_doc``): their n-grams are shared across a corpus far more than word n-grams,
#: so bands for the LSH threshold of words would propose most pairs of a large one (20k news stories: 2.2M
#: candidates at 0.2; 200k stories: 0.45M candidates at the planned 0.35, against more than 14 minutes
#: without). A small corpus keeps every pair it has (:data:`PLAN_FLOOR`); a larger value lifts the budget.
#: The 200k and 1M news corpora of docs/speed.md propose 2.2 and 12.4 a document at 0.35, 81 and 442 at 0.3:
#: 20 keeps the level both always ran at. (It was 5, which the plan's 20k random pairs let 1M exceed by chance;
#: counted exactly, 5 would take 1M to 0.45, 24% fewer verified pairs.)
CHAR_CANDIDATES_PER_DOC = 20.0
#: Character shingles: candidates are verified when their MinHash-estimated overlap reaches this fraction
#: of the threshold (``MinHashConfig.estimate_floor``), when none is set. It was 0.3 (on the scale bench's 20k
#: stories that skipped 88% of the candidates and none of the verified pairs). 0.4 verifies 45% fewer of 200k
#: news stories' candidates (146,670 -> 80,550) and finds the same 29,888 pairs (0.5: 2 fewer); on the three
#: labelled days under ten noise models at thresholds 0.4 and 0.6 it finds the same 859 and 349 pairs as 0.3
#: (``benchmarks/bench_estimate_floor.py``), and every ARI of the quality bench is the same.
CHAR_ESTIMATE_FLOOR = 0.4


def default_min_collisions(threshold: float, num_perm: int) -> int:
    """Collision count of ``rule="collisions"`` when none is given: half the expected count at the threshold.

    >>> default_min_collisions(0.5, 128)
    32
    """
    return max(2, int(round(0.5 * threshold * num_perm)))


@register
class MinHash(KeyedMethod):
    """Word 4-grams (by default), 128 MinHash permutations, LSH bands derived for Jaccard 0.2, candidates
    verified by the IDF-weighted overlap coefficient at 0.45.

    >>> m = MinHash(DedupConfig())
    >>> m.params(), m.n_tables()
    ({'bands': 28, 'rows': 2}, 28)
    >>> MinHash(DedupConfig().replace(minhash__rule="collisions")).params()
    {'min_collisions': 29}
    """

    name = "minhash"
    default_threshold = 0.45

    @classmethod
    def unit_defaults(cls, char: bool) -> dict[str, Any]:
        """Character shingles take a candidate budget and an estimate floor (their candidates stay bounded).

        >>> char = DedupConfig(method="minhash").replace(shingle__char=True)
        >>> char.minhash.candidates_per_doc, char.minhash.estimate_floor
        (20.0, 0.4)
        >>> char.replace(shingle__char=False).minhash.estimate_floor
        """
        if not char:
            return {}
        return {"minhash__candidates_per_doc": CHAR_CANDIDATES_PER_DOC, "minhash__estimate_floor": CHAR_ESTIMATE_FLOOR}

    def __init__(self, config: DedupConfig) -> None:
        super().__init__(config)
        mh = config.minhash
        self.num_perm, self.seed, self.rule, self.max_bucket = mh.num_perm, mh.seed, mh.rule, mh.max_bucket
        self.bands = self.rows = 0
        if mh.rule == "lsh":
            self.bands, self.rows = lsh_plan(mh, self.threshold)
        else:
            self.min_shared = mh.min_collisions or default_min_collisions(self.threshold, mh.num_perm)
            self.max_key_docs = mh.max_bucket
        self.scores_from = "sketch" if self.score_name == "none" else "sets"
        #: The candidate pairs a document the plan counted at its level (scaled from its sample to the corpus),
        #: reported with the run's parameters; None where no budget planned.
        self.planned_per_doc: float | None = None

    def sketch(self, sets: ShingleSets) -> np.ndarray:
        return minhash.signatures(sets, self.num_perm, self.seed)

    def representation_key(self) -> tuple[Any, ...]:
        return (*super().representation_key(), self.num_perm, self.seed)

    def plan(self, rep: Representation) -> MinHash:
        """With a candidate budget, the loosest LSH threshold of :data:`LSH_LADDER` (no looser than the
        configured one) whose bands make pairs of this corpus collide at most ``candidates_per_doc`` times per
        document, or :data:`PLAN_FLOOR` times in all if that is more (counted by :meth:`level_rates`); the count
        at the level taken is reported with the run's parameters (``planned_candidates_per_doc``: where no level
        fits, a first count above the budget)."""
        mh = self.config.minhash
        if self.rule == "collisions" and rep.sketch is not None:
            self.check_buckets(rep)
        if self.rule != "lsh" or mh.candidates_per_doc is None or mh.bands is not None or rep.sketch is None:
            return self
        n_docs = int(np.count_nonzero(~rep.empty))
        chosen, per_doc = mh.lsh_threshold, None
        if n_docs > 2:
            allowed = max(mh.candidates_per_doc * n_docs, PLAN_FLOOR) / n_docs  # pairs a document
            for chosen, _, _, per_doc in self.level_rates(rep, limit=allowed):
                if per_doc <= allowed:
                    break
        planned = MinHash(dataclasses.replace(self.config, minhash=dataclasses.replace(mh, lsh_threshold=chosen)))
        planned.planned_per_doc = per_doc
        return planned

    def check_buckets(self, rep: Representation) -> None:
        """The collisions rule counts only the signature values held by at most ``max_bucket`` documents: stop,
        naming the cause and what to change, where more than :data:`MAX_UNCOUNTED` of the documents' values are
        held by more, which would leave most pairs' collisions uncounted (news stories' character
        5-grams: 5% at 2k stories, 44% at 20k, 77% at 200k; word 4-grams: 0.3% at 200k). Estimated on
        :data:`PLAN_DOCS` seeded documents, a value held by ``k`` of them counting as held by ``k`` times the
        corpus's share of them."""
        n_docs, sketch = self._plan_sample(rep)
        if n_docs <= self.max_bucket:
            return
        scale = n_docs / sketch.shape[0]
        uncounted = 0
        for t in range(sketch.shape[1]):
            _, inverse, counts = np.unique(sketch[:, t], return_inverse=True, return_counts=True)
            uncounted += int(np.count_nonzero(counts[inverse] * scale > self.max_bucket))
        share = uncounted / sketch.size
        if share > MAX_UNCOUNTED:
            remedy = _CHAR_COLLISIONS if self.config.shingle.char else \
                "raise minhash.max_bucket or use the LSH rule (--rule lsh)"
            raise ConfigError(
                f"method {self.name}: {share:.0%} of the signature values of these {n_docs:,} documents are held "
                f"by more than minhash.max_bucket ({self.max_bucket}) documents, so the collisions rule would "
                f"count few of any pair's collisions; {remedy}")

    def _plan_sample(self, rep: Representation) -> tuple[int, np.ndarray]:
        """The documents with shingles, counted, and the signatures of :data:`PLAN_DOCS` of them drawn with the
        seed (all of a smaller corpus), read in order from the (memory-mapped) signatures: what the plan and
        the collisions rule's check count on."""
        assert rep.sketch is not None, "a representation without signatures"
        docs = np.flatnonzero(~rep.empty)
        n_docs = docs.size
        if n_docs > PLAN_DOCS:
            docs = np.sort(np.random.default_rng(self.seed).choice(docs, PLAN_DOCS, replace=False))
        return n_docs, np.asarray(rep.sketch[docs])

    def level_rates(self, rep: Representation, limit: float | None = None) -> Iterator[tuple[float, int, int, float]]:
        """Each LSH level a budget may plan (:data:`LSH_LADDER` from the configured one, loosest first): the
        level, its bands and rows, and the candidate pairs a document its bands propose in this corpus, counted
        among all pairs of :data:`PLAN_DOCS` seeded documents (all of a smaller corpus), buckets linked as the
        candidates stage links them. ``limit`` (pairs a document): a count may stop at a first figure above it."""
        mh = self.config.minhash
        n_docs, sketch = self._plan_sample(rep)
        if n_docs < 2:
            return
        m = sketch.shape[0]
        scale = (n_docs - 1) / (m * (m - 1))  # a counted pair, in pairs a document of the corpus
        for lt in [x for x in LSH_LADDER if x >= mh.lsh_threshold - 1e-9] or [mh.lsh_threshold]:  # only tightens
            bands, rows = lsh_plan(dataclasses.replace(mh, bands=None, rows=None, lsh_threshold=lt), lt)
            count = count_lsh_pairs(sketch, bands, rows, self.max_bucket, None if limit is None else limit / scale)
            yield lt, bands, rows, count * scale

    def candidate_cap(self, n_docs: int) -> int | None:
        per_doc = self.config.minhash.max_candidates_per_doc
        return None if per_doc is None else max(CAP_FLOOR, int(per_doc * n_docs))

    def candidate_remedy(self) -> str:
        if self.rule == "lsh":
            return ("choose stricter candidates (a higher lsh_threshold, or bands and rows), a candidate budget "
                    "(minhash.candidates_per_doc), or raise minhash.max_candidates_per_doc")
        why = (f"the collisions rule pairs every two documents sharing a signature value held by at most "
               f"minhash.max_bucket ({self.max_bucket}) documents")
        if self.config.shingle.char:
            return f"{why}, and {_CHAR_COLLISIONS}"
        return f"{why}: lower max_bucket, use the LSH rule (--rule lsh), or raise minhash.max_candidates_per_doc"

    def n_tables(self) -> int:
        return self.bands if self.rule == "lsh" else self.num_perm

    def table_keys(self, rep: Representation, docs: np.ndarray, tables: range) -> np.ndarray:
        assert rep.sketch is not None
        t0, t1 = tables.start, tables.stop
        if self.rule == "lsh":
            return band_keys(np.asarray(rep.sketch[docs, t0 * self.rows : t1 * self.rows]), t1 - t0, self.rows,
                             first_band=t0)
        return np.asarray(rep.sketch[docs, t0:t1]).astype(np.uint64)

    def bucket_pairs(self, keys: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.rule == "lsh":
            return band_bucket_pairs(keys, docs, self.max_bucket)
        return collision_bucket_pairs(keys, docs, self.max_bucket)

    @property
    def reads_representation(self) -> bool:  # type: ignore[override]
        """Under ``greedy`` with the ``longest`` policy, LSH buckets are stars centred on their longest document
        (:meth:`table_pairs`), which reads the texts' lengths."""
        return self._centres_on_longest()

    def _centres_on_longest(self) -> bool:
        cluster = self.config.cluster
        return (self.rule == "lsh" and cluster.algorithm in (None, "greedy") and cluster.representative == "longest"
                and cluster.representative_field is None)

    def table_pairs(self, rep: Representation, keys: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`bucket_pairs`; under one decision per document (``greedy``, longest kept first) every bucket of
        more than :data:`GREEDY_STAR_ABOVE` documents is a star on its longest document (ties: the first): a
        document is removed only as a copy of a kept one, and the longest document of a bucket of copies is the
        one kept, so each copy is verified against it rather than against every other copy (a bucket of k
        copies costs k - 1 pairs, not k(k - 1)/2: work grows with documents, not with the pairs of a cluster)."""
        if not self._centres_on_longest():
            return self.bucket_pairs(keys, docs)
        return band_bucket_pairs(keys, docs, min(self.max_bucket, GREEDY_STAR_ABOVE),
                                 centre_rank=-np.asarray(rep.lengths)[docs])

    def score_sketches(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.mean(a == b, axis=1)

    def keep_candidates(self, a: np.ndarray, b: np.ndarray, sizes_a: np.ndarray | None = None,
                        sizes_b: np.ndarray | None = None) -> np.ndarray | None:
        """With ``minhash.estimate_floor``: the pairs whose estimated unweighted score reaches that fraction
        of the threshold (an overlap score: estimated from the Jaccard estimate and the set sizes,
        ``J (|A| + |B|) / ((1 + J) min(|A|, |B|))``)."""
        if not self._screens(sizes_a, sizes_b):
            return None
        return self._estimate_passes(np.mean(a == b, axis=1), sizes_a, sizes_b)

    def keep_rows(self, rows: np.ndarray, ia: np.ndarray, ib: np.ndarray, sizes_a: np.ndarray | None = None,
                  sizes_b: np.ndarray | None = None) -> np.ndarray | None:
        if not self._screens(sizes_a, sizes_b):
            return None
        return self._estimate_passes(minhash.agreement(rows, ia, ib), sizes_a, sizes_b)

    def _screens(self, sizes_a: np.ndarray | None, sizes_b: np.ndarray | None) -> bool:
        return self.config.minhash.estimate_floor is not None and self.scores_from == "sets" \
            and sizes_a is not None and sizes_b is not None

    def _estimate_passes(self, j: np.ndarray, sizes_a: Any, sizes_b: Any) -> np.ndarray:
        """The screen of :meth:`keep_candidates`, given the pairs' Jaccard estimates ``j``."""
        floor = self.config.minhash.estimate_floor
        assert floor is not None
        if self.score_name.endswith("overlap"):
            sa, sb = np.asarray(sizes_a, dtype=np.float64), np.asarray(sizes_b, dtype=np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                j = np.where(np.minimum(sa, sb) > 0, j * (sa + sb) / ((1 + j) * np.minimum(sa, sb)), 0.0)
        return passes(j, floor * self.threshold)

    def params(self) -> dict[str, Any]:
        if self.rule == "lsh":
            per_doc = self.planned_per_doc
            planned = {} if per_doc is None else {"planned_candidates_per_doc": round(per_doc, 3)}
            return {"bands": self.bands, "rows": self.rows, **planned}
        return {"min_collisions": self.min_shared}

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["minhash"]["algorithm"] = minhash.ALGORITHM
        return out

    def tuning_settings(self) -> list[dict[str, Any]]:
        if self.config.minhash.bands is not None:
            return [{}]
        settings: list[dict[str, Any]] = [{"minhash__rule": "lsh", "minhash__lsh_threshold": t} for t in LSH_THRESHOLDS]
        if self.config.shingle.char:  # the collisions rule's buckets of character n-grams: candidate_remedy
            return settings
        counts = sorted({max(2, int(round(f * self.num_perm))) for f in MIN_COLLISIONS_FRACTIONS})
        return settings + [{"minhash__rule": "collisions", "minhash__min_collisions": c} for c in counts]
