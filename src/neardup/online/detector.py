"""The online near-duplicate detector: one document in, "original" or "duplicate of X" out, at once.

Owns the settings (:class:`OnlineConfig`), the per-document decision, canonical originals,
re-submission and deletion rules; must not know SQL (see store.py) or HTTP (see service.py).

Methods (``OnlineConfig.method``), both verified the same way (see verify.py):

* ``sketch`` - the seed method, reproduced faithfully: word n-gram shingles (n = 3), a sample of
  the first k = 1600 distinct shingles, a sketch of p = 20 values (each the minimum over the sample
  of the fingerprint XOR one of p fixed random numbers); stored documents whose sketches agree in
  more than t = 2 positions are candidates; the one with most agreements is verified by the n-gram
  overlap of the first fraction f of each document (f_short for documents under short_len tokens)
  against r_overlap. The paper gives ranges (f 0.4..1.0, r_overlap 0.2..0.5); the defaults read
  them as f = 0.4 for long documents, 1.0 for short ones, and r_overlap = 0.3.
* ``minhash`` - our candidate step: MinHash of the same sample with LSH bands, run by the batch
  method's own object (:class:`~neardup.methods.minhash.MinHash`) from the embedded
  :class:`~neardup.config.MinHashConfig` (bands derived from its ``lsh_threshold`` unless bands/rows
  are given).

Our further improvements are switches that work with either method: ``top_candidates`` > 1
verifies the best few candidates exactly and keeps the best score (the seed verifies one), and
``update_rule`` makes a candidate that differs in its numbers or gains sentences an *update*
(the new document is then a new original, and ``update_of`` names the earlier one).
:meth:`OnlineConfig.ours` gives our recommended settings.

Rules:

* canonical originals: a document matching a duplicate is linked to that duplicate's original;
  ``original_id`` is always an original (``matched_id`` names the document that matched);
* re-submitting an id with the same text (byte-identical) is idempotent: nothing is written and the
  stored answer (its current state) is returned with ``created = False``; with another text it is a
  :class:`ConflictError` and nothing changes. ``add_many`` is all-or-nothing;
* deleting a duplicate removes it; the documents that matched it keep their (canonical) original.
  Deleting an original removes it and promotes its earliest remaining duplicate to original (its
  score, match and evidence are cleared); every other duplicate is re-pointed to the promoted one.
  A deleted document is gone (text, keys): it can no longer be matched, and its id can be reused.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neardup.config import ConfigError, MinHashConfig, NormalizeConfig
from neardup.io.read import text_problem
from neardup.online.candidates import CandidateStep, MinHashStep, Probe, SketchStep, minhash_method
from neardup.online.features import DocFeatures, featurize, pack, prefix_fraction, sentence_sequences, unpack
from neardup.online.store import DocRecord, Store, count_votes
from neardup.online.verify import Scored, choose, evidence, prefix_of, update_reason
from neardup.online.verify import overlap as overlap_score
from neardup.represent.minhash import ALGORITHM as minhash_algorithm

ONLINE_METHODS: tuple[str, ...] = ("sketch", "minhash")
#: MinHash settings that may be given flat (``OnlineConfig(num_perm=64)``): they set the embedded ``minhash``.
MINHASH_SETTINGS: tuple[str, ...] = ("num_perm", "bands", "rows", "lsh_threshold")


class ConflictError(ValueError):
    """An id was re-submitted with a different text; nothing was changed."""

    def __init__(self, doc_id: str, index: int | None = None) -> None:
        where = f" (item {index})" if index is not None else ""
        super().__init__(f"id {doc_id!r}{where} is already stored with a different text; "
                         "delete it first or use a new id")
        self.doc_id = doc_id
        self.index = index


class DocumentNotFound(KeyError):
    """No stored document has this id."""

    def __init__(self, doc_id: str) -> None:
        super().__init__(doc_id)
        self.doc_id = doc_id

    def __str__(self) -> str:
        return f"no document with id {self.doc_id!r}"


class InvalidDocument(ValueError):
    """A submitted document lacks an id or text, or has the wrong type; names the field (and item)."""

    def __init__(self, message: str, field: str, index: int | None = None) -> None:
        where = f"item {index}: " if index is not None else ""
        super().__init__(f"{where}field {field!r}: {message}")
        self.field = field
        self.index = index
        self.reason = message

    def __reduce__(self) -> tuple[Any, ...]:  # crosses process boundaries intact (a bulk load's workers)
        return (type(self), (self.reason, self.field, self.index))


def _check(cond: bool, message: str) -> None:
    if not cond:
        raise ConfigError(message)


@dataclass(frozen=True, init=False)
class OnlineConfig:
    """Every setting of the online detector (defaults: the seed paper's method and values).

    The ``minhash`` method's signatures and bands are a :class:`~neardup.config.MinHashConfig` (its
    ``seed`` is this config's); its fields may be given flat: ``OnlineConfig(num_perm=64, bands=16, rows=4)``.

    >>> OnlineConfig().method, OnlineConfig(method="minhash").bands_rows(), OnlineConfig(num_perm=64).minhash.num_perm
    ('sketch', (28, 2), 64)
    >>> OnlineConfig(f=1.5)
    Traceback (most recent call last):
    ...
    neardup.config.ConfigError: f must be in (0, 1], got 1.5
    """

    method: str = "sketch"
    n: int = 3
    k_sample: int = 1600
    p: int = 20
    t: int = 2
    f: float = 0.4
    f_short: float = 1.0
    short_len: int = 100
    r_overlap: float = 0.3
    top_candidates: int = 1
    update_rule: bool = False
    update_min_numbers: int = 1
    update_min_sentences: int = 1
    update_sentence_tokens: int = 8
    update_sentence_shared: float = 0.2
    minhash: MinHashConfig = field(default_factory=MinHashConfig)
    min_bands: int = 1
    max_bucket: int = 1000
    seed: int = 1
    store_text: bool = True
    evidence_snippets: int = 5
    normalize: NormalizeConfig = field(default_factory=NormalizeConfig)

    def __init__(self, **settings: Any) -> None:
        flat = {k: settings.pop(k) for k in MINHASH_SETTINGS if k in settings}
        for f in dataclasses.fields(self):
            if f.name in settings:
                value = settings.pop(f.name)
            else:
                value = f.default_factory() if f.default is dataclasses.MISSING else f.default  # type: ignore[misc]
            object.__setattr__(self, f.name, value)
        _check(not settings, f"unknown online setting(s): {', '.join(sorted(settings))}")
        _check(isinstance(self.minhash, MinHashConfig), "minhash must be a MinHashConfig")
        object.__setattr__(self, "minhash", dataclasses.replace(self.minhash, seed=self.seed, **flat))
        self.__post_init__()

    def __post_init__(self) -> None:
        _check(self.method in ONLINE_METHODS, f"method must be one of {ONLINE_METHODS}, got {self.method!r}")
        _check(_is_int(self.n) and 1 <= self.n <= 16, f"n must be an integer in 1..16, got {self.n!r}")
        _check(_is_int(self.k_sample) and self.k_sample >= 1, f"k_sample must be an integer >= 1, got {self.k_sample!r}")
        _check(_is_int(self.p) and 1 <= self.p <= 256, f"p must be an integer in 1..256, got {self.p!r}")
        _check(_is_int(self.t) and 0 <= self.t < self.p, f"t must be an integer in 0..p-1 ({self.p - 1}), got {self.t!r}")
        for name in ("f", "f_short", "r_overlap"):
            value = getattr(self, name)
            _check(isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 1,
                   f"{name} must be in (0, 1], got {value!r}")
        _check(_is_int(self.short_len) and self.short_len >= 0, f"short_len must be an integer >= 0, got {self.short_len!r}")
        _check(_is_int(self.top_candidates) and 1 <= self.top_candidates <= 100,
               f"top_candidates must be an integer in 1..100, got {self.top_candidates!r}")
        _check(isinstance(self.update_rule, bool), f"update_rule must be true or false, got {self.update_rule!r}")
        for name in ("update_min_numbers", "update_min_sentences", "update_sentence_tokens"):
            _check(_is_int(getattr(self, name)) and getattr(self, name) >= 0,
                   f"{name} must be an integer >= 0, got {getattr(self, name)!r}")
        _check(0 <= self.update_sentence_shared < 1,
               f"update_sentence_shared must be in [0, 1), got {self.update_sentence_shared!r}")
        mh = self.minhash
        _check(mh.num_perm <= 1024, f"num_perm must be an integer in 2..1024, got {mh.num_perm!r}")
        _check(mh.rule == "lsh", f"the online minhash step uses LSH bands: minhash rule must be 'lsh', got {mh.rule!r}")
        _check(mh.lsh_threshold is not None, "lsh_threshold must be in (0, 1], got None")
        _check(_is_int(self.min_bands) and self.min_bands >= 1, f"min_bands must be an integer >= 1, got {self.min_bands!r}")
        _check(_is_int(self.max_bucket) and self.max_bucket >= 1, f"max_bucket must be an integer >= 1, got {self.max_bucket!r}")
        _check(_is_int(self.evidence_snippets) and self.evidence_snippets >= 0,
               f"evidence_snippets must be an integer >= 0, got {self.evidence_snippets!r}")
        _check(isinstance(self.normalize, NormalizeConfig), "normalize must be a NormalizeConfig")

    @classmethod
    def ours(cls, **changes: Any) -> OnlineConfig:
        """Our recommended settings: MinHash-LSH candidates, the top 5 verified exactly.

        n = 4, f = 0.6, r_overlap = 0.6 scored best on average over the Reuters day (both halves)
        and the noisy BBC stream (an in-sample choice over all of them; see the tune runs for
        validation -> test figures). The update rule (3 new numbers or 2 new sentences) is off: it
        gains ~0.07 F1 on the BBC stream, whose updates rewrite every figure, but costs recall on
        Reuters, where a corrected figure still makes a duplicate. Turn it on for update-heavy feeds.

        >>> OnlineConfig.ours().method, OnlineConfig.ours(update_rule=True).update_min_numbers
        ('minhash', 3)
        """
        base: dict[str, Any] = {"method": "minhash", "top_candidates": 5, "n": 4, "f": 0.6, "r_overlap": 0.6,
                                "lsh_threshold": 0.2, "update_rule": False, "update_min_numbers": 3,
                                "update_min_sentences": 2}
        base.update(changes)
        return cls(**base)

    def replace(self, **changes: Any) -> OnlineConfig:
        """A copy with some settings changed (validated again).

        >>> OnlineConfig().replace(t=3).t
        3
        """
        return dataclasses.replace(self, **changes)

    def bands_rows(self) -> tuple[int, int]:
        """The LSH (bands, rows) of the minhash method."""
        return minhash_method(self.minhash).bands, minhash_method(self.minhash).rows

    def key_settings(self) -> dict[str, Any]:
        """The settings the stored keys and verification data depend on (fixed for a store's life)."""
        out: dict[str, Any] = {"method": self.method, "n": self.n, "k_sample": self.k_sample, "seed": self.seed,
                               "normalize": dataclasses.asdict(self.normalize)}
        if self.method == "sketch":
            out["p"] = self.p
        else:
            out["num_perm"], (out["bands"], out["rows"]) = self.minhash.num_perm, self.bands_rows()
            out["minhash_algorithm"] = minhash_algorithm
        return out

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able settings."""
        return dataclasses.asdict(self)

    @classmethod
    def setting_names(cls) -> set[str]:
        """Every name a setting may be given by (fields, and the flat MinHash settings)."""
        return {f.name for f in dataclasses.fields(cls)} | set(MINHASH_SETTINGS)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OnlineConfig:
        """Inverse of :meth:`to_dict`; flat MinHash settings are accepted too (unknown keys are a ConfigError).

        >>> OnlineConfig.from_dict(OnlineConfig(t=4).to_dict()).t, OnlineConfig.from_dict({"bands": 8, "rows": 4}).bands_rows()
        (4, (8, 4))
        """
        unknown = set(data) - cls.setting_names()
        _check(not unknown, f"unknown online setting(s): {', '.join(sorted(unknown))}")
        values = dict(data)
        for name, kind in (("normalize", NormalizeConfig), ("minhash", MinHashConfig)):
            if isinstance(values.get(name), Mapping):
                try:
                    values[name] = kind(**values[name])
                except TypeError as exc:
                    raise ConfigError(f"{name}: {exc}") from None
        return cls(**values)


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def make_step(config: OnlineConfig) -> CandidateStep:
    """The candidate step a config names.

    >>> make_step(OnlineConfig()).name
    'sketch'
    """
    if config.method == "sketch":
        return SketchStep(p=config.p, k=config.k_sample, t=config.t, seed=config.seed, max_bucket=config.max_bucket)
    return MinHashStep(config.minhash, k=config.k_sample, min_bands=config.min_bands, max_bucket=config.max_bucket)


@dataclass
class Answer:
    """The detector's answer for one document.

    ``created`` is False when the id was already stored with the same text (idempotent replay).
    """

    id: str
    status: str
    original_id: str
    score: float | None
    evidence: list[str]
    latency_ms: float
    matched_id: str | None = None
    update_of: str | None = None
    created: bool = True

    @property
    def is_duplicate(self) -> bool:
        """True when the document was found to duplicate an earlier one."""
        return self.status == "duplicate"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return dataclasses.asdict(self)

    @classmethod
    def from_record(cls, rec: DocRecord, latency_ms: float = 0.0, created: bool = False) -> Answer:
        """The answer a stored record stands for."""
        return cls(id=rec.id, status=rec.status, original_id=rec.original_id, score=rec.score,
                   evidence=list(rec.evidence), latency_ms=latency_ms, matched_id=rec.matched_id,
                   update_of=rec.update_of, created=created)


@dataclass
class Cluster:
    """An original and its duplicates (arrival order)."""

    original_id: str
    members: list[DocRecord]

    def to_dict(self, with_text: bool = False) -> dict[str, Any]:
        """JSON-able form."""
        return {"original_id": self.original_id, "size": len(self.members),
                "members": [m.public(with_text=with_text) for m in self.members]}


@dataclass
class Deleted:
    """What a deletion did: the id removed, whether it was an original, and who was promoted."""

    id: str
    was_original: bool
    promoted_id: str | None
    repointed: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return dataclasses.asdict(self)


@dataclass
class PreparedDoc:
    """A document checked, featurized and probed (by :class:`Preparer`), ready to be decided."""

    doc_id: str
    text: str
    text_hash: str
    metadata: dict[str, Any]
    features: DocFeatures
    probe: Probe
    index: int | None


DocItem = Mapping[str, Any] | tuple[str, str] | tuple[str, str, Mapping[str, Any]]


class Preparer:
    """The half of adding that needs no store: check each document, featurize it, compute its keys.

    Picklable with the built-in candidate steps, so a bulk load can prepare batches on worker
    processes (:mod:`neardup.online.load`) while the detector decides earlier ones.

    >>> prep = Preparer(OnlineConfig(), make_step(OnlineConfig()))
    >>> [p.doc_id for p in prep([("a", "one two three four"), {"id": 7, "text": "five six seven"}])]
    ['a', '7']
    >>> prep([{"id": "x"}])
    Traceback (most recent call last):
    ...
    neardup.online.detector.InvalidDocument: item 0: field 'text': field required
    """

    def __init__(self, config: OnlineConfig, step: CandidateStep) -> None:
        self.config = config
        self.step = step

    def one(self, doc_id: Any, text: Any, metadata: Mapping[str, Any] | None = None,
            index: int | None = None) -> PreparedDoc:
        """One document (``index``: its place in a batch, named by errors)."""
        if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):
            raise InvalidDocument(f"must be a string or integer, got {type(doc_id).__name__}", "id", index)
        doc_id = str(doc_id)
        if not doc_id or len(doc_id) > 1024:
            raise InvalidDocument("must be 1 to 1024 characters", "id", index)
        if not isinstance(text, str):
            raise InvalidDocument(f"must be a string, got {type(text).__name__}", "text", index)
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InvalidDocument(f"must be an object, got {type(metadata).__name__}", "metadata", index)
        for name, value in (("id", doc_id), ("text", text), *(metadata or {}).items()):
            if problem := _not_text(name) or _not_text(value):
                raise InvalidDocument(problem, str(name), index)
        features = featurize(text, self.config.n, self.config.normalize)
        probe = self.step.probe(features)
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        return PreparedDoc(doc_id, text, digest, dict(metadata or {}), features, probe, index)

    def __call__(self, docs: Iterable[DocItem]) -> list[PreparedDoc]:
        """Every item of a batch: ``{"id", "text", "metadata"?}`` or ``(id, text[, metadata])``."""
        prepared = []
        for i, item in enumerate(docs):
            if isinstance(item, Mapping):
                for name in ("id", "text"):
                    if name not in item:
                        raise InvalidDocument("field required", name, i)
                prepared.append(self.one(item["id"], item["text"], item.get("metadata"), i))
            else:
                doc_id, text, *rest = item
                prepared.append(self.one(doc_id, text, rest[0] if rest else None, i))
        return prepared


def _not_text(value: Any) -> str | None:
    """Why a value (a string, or the strings inside a list or object) is not valid Unicode text, or None."""
    if isinstance(value, str):
        return text_problem(value)
    if isinstance(value, Mapping):
        return next((p for k, v in value.items() if (p := _not_text(k) or _not_text(v))), None)
    if isinstance(value, (list, tuple)):
        return next((p for v in value if (p := _not_text(v))), None)
    return None


class _Batch:
    """The store as one write transaction sees it: stored look-up keys read once, plus the documents
    decided so far in the transaction (not yet written).

    Answers ``lookup`` and ``fetch`` exactly as the store would if each document had been inserted
    when it was decided, so a batch decides as a sequence of single adds does.
    """

    def __init__(self, store: Store, per_key_limit: int) -> None:
        self.store = store
        self.limit = per_key_limit
        self.stored: dict[int, list[int]] = {}  # key -> stored seqs, newest first (at most `limit`)
        self.added: dict[int, list[int]] = defaultdict(list)  # key -> this batch's seqs, oldest first
        self.records: list[DocRecord] = []
        self.keys: list[np.ndarray] = []
        self.by_id: dict[str, DocRecord] = {}
        self.by_seq: dict[int, DocRecord] = {}
        self.fetched: dict[int, DocRecord] = {}

    def preload(self, keys: np.ndarray | set[int]) -> set[int]:
        """Read the stored buckets of the keys not read yet (one store call); returns the distinct keys."""
        distinct = keys if isinstance(keys, set) else set(keys.tolist())
        missing = [k for k in distinct if k not in self.stored]
        if missing:
            found = self.store.buckets(np.array(missing, dtype=np.int64), self.limit)
            for k in missing:
                self.stored[k] = found.get(k, [])
        return distinct

    def lookup(self, keys: np.ndarray, per_key_limit: int) -> dict[int, int]:
        """:meth:`Store.lookup` over the stored documents and this batch's."""
        limit = min(per_key_limit, self.limit)
        buckets = []
        for k in self.preload(keys):
            mine = self.added.get(k)
            bucket = mine[::-1] + self.stored[k] if mine else self.stored[k]
            buckets.append(bucket[:limit])
        return count_votes(buckets)

    def fetch(self, seqs: list[int]) -> dict[int, DocRecord]:
        """:meth:`Store.fetch` over the stored documents and this batch's (stored ones read once)."""
        need = [s for s in seqs if s not in self.by_seq and s not in self.fetched]
        if need:
            self.fetched.update(self.store.fetch(need))
        return {s: rec for s in seqs if (rec := self.by_seq.get(s) or self.fetched.get(s)) is not None}

    def add(self, rec: DocRecord, keys: np.ndarray) -> None:
        """A document decided in this batch (visible to the later ones)."""
        self.records.append(rec)
        self.keys.append(keys)
        self.by_id[rec.id] = rec
        self.by_seq[rec.seq] = rec
        for k in set(keys.tolist()):
            self.added[k].append(rec.seq)


class Detector:
    """Online near-duplicate detection over a :class:`~neardup.online.store.Store`.

    Thread-safe: writes are serialised (one document is decided against everything before it).

    >>> from neardup.online.store import MemoryStore
    >>> d = Detector(MemoryStore())
    >>> d.add("a", "Stocks rose sharply in Tokyo on Monday as exporters gained.").status
    'original'
    >>> ans = d.add("b", "stocks rose sharply in Tokyo on Monday, as exporters gained!")
    >>> ans.status, ans.original_id
    ('duplicate', 'a')
    """

    def __init__(self, store: Store, config: OnlineConfig | None = None, step: CandidateStep | None = None,
                 latency_window: int = 10_000) -> None:
        self.store = store
        self.config = config or OnlineConfig()
        self.step = step or make_step(self.config)
        self.preparer = Preparer(self.config, self.step)
        self._lock = threading.RLock()
        self.latencies: deque[float] = deque(maxlen=latency_window)
        self.stats = {"added": 0, "duplicates": 0, "resubmitted": 0, "conflicts": 0, "deleted": 0}
        self._check_settings()

    # -- settings -------------------------------------------------------------------------------

    def _check_settings(self) -> None:
        wanted = self.config.key_settings()
        with self._lock, self.store.transaction():
            meta = self.store.read_meta()
            stored = json.loads(meta["key_settings"]) if "key_settings" in meta else None
            if stored != wanted:
                if stored is not None and self.store.counts()["documents"] > 0:
                    diffs = [f"{k}={stored.get(k)!r} (this config: {wanted.get(k)!r})"
                             for k in sorted(set(stored) | set(wanted)) if stored.get(k) != wanted.get(k)]
                    raise ConfigError(f"{self.store.location}: the store was built with other settings: "
                                      f"{'; '.join(diffs)}. Use the same settings or a new store.")
                self.store.write_meta("key_settings", json.dumps(wanted, sort_keys=True))
            self.store.write_meta("config", json.dumps(self.config.to_dict(), sort_keys=True))

    # -- adding ---------------------------------------------------------------------------------

    def add(self, doc_id: str, text: str, metadata: Mapping[str, Any] | None = None) -> Answer:
        """Decide whether ``text`` duplicates a stored document, store it, and answer.

        The answer is returned only after the document is durably stored.
        """
        t0 = time.perf_counter()
        return self._add([self.preparer.one(doc_id, text, metadata)], t0)[0]

    def add_many(self, docs: Iterable[DocItem]) -> list[Answer]:
        """Add several documents in one transaction (all or nothing), in the given order.

        Each item is ``{"id", "text", "metadata"?}`` or ``(id, text[, metadata])``. An invalid item
        raises :class:`InvalidDocument` and a conflicting id :class:`ConflictError` (naming the item);
        nothing is stored then. Each document is decided against everything before it, earlier
        items of the batch included, exactly as by one :meth:`add` each; the batch only saves work
        (one read of the look-up keys, one write of the new rows). Each answer's latency is the
        time from the call to the commit.
        """
        t0 = time.perf_counter()
        return self._add(self.preparer(docs), t0)

    def add_prepared(self, prepared: Iterable[PreparedDoc]) -> list[Answer]:
        """:meth:`add_many` of documents already prepared by a :class:`Preparer` with this detector's
        settings (e.g. on another process)."""
        t0 = time.perf_counter()
        return self._add(list(prepared), t0)

    def _add(self, prepared: list[PreparedDoc], t0: float) -> list[Answer]:
        with self._lock:
            with self.store.transaction():
                answers = self._decide_batch(prepared)
            done = (time.perf_counter() - t0) * 1000
            for answer in answers:
                answer.latency_ms = done  # every answer of a batch waits for the batch's commit
                self._count(answer)
        return answers

    def _count(self, answer: Answer) -> None:
        if not answer.created:
            self.stats["resubmitted"] += 1
            return
        self.stats["added"] += 1
        self.stats["duplicates"] += answer.is_duplicate
        self.latencies.append(answer.latency_ms)

    def _decide_batch(self, prepared: list[PreparedDoc]) -> list[Answer]:
        """Decide and store ``prepared`` in order (inside the write transaction)."""
        existing = self.store.get_many([p.doc_id for p in prepared])
        fresh = [p for p in prepared if p.doc_id not in existing]
        batch = _Batch(self.store, getattr(self.step, "max_bucket", self.config.max_bucket))
        if fresh:
            batch.preload(np.concatenate([p.probe.keys for p in fresh]))
        seqs = iter(self.store.reserve(len({p.doc_id for p in fresh})) if fresh else ())
        answers = []
        for prep in prepared:
            earlier = existing.get(prep.doc_id) or batch.by_id.get(prep.doc_id)
            if earlier is not None:  # re-submitted, before or earlier in this batch
                if earlier.text_hash == prep.text_hash:
                    answers.append(Answer.from_record(earlier, created=False))
                    continue
                self.stats["conflicts"] += 1
                raise ConflictError(prep.doc_id, prep.index)
            rec = self._decide(prep, batch)
            rec.seq = next(seqs)
            batch.add(rec, prep.probe.keys)
            self.step.on_added(rec.seq, prep.probe)
            answers.append(Answer.from_record(rec, created=True))
        if batch.records:
            self.store.insert_many(batch.records, batch.keys)
        return answers

    def _decide(self, prep: PreparedDoc, batch: _Batch) -> DocRecord:
        """The record of a new document: a duplicate of the best verified candidate, or an original."""
        cfg = self.config
        feats = prep.features
        match: Scored | None = None
        updated: Scored | None = None
        records: dict[int, DocRecord] = {}
        prefixes: dict[int, np.ndarray] = {}
        if not feats.empty:
            ranked = self.step.candidates(prep.probe, batch, cfg.top_candidates)
            records = batch.fetch([s for s, _ in ranked])
            new_prefix = prefix_of(feats.seq, feats.n_tokens, cfg.n, cfg.f, cfg.f_short, cfg.short_len)
            scored = []
            stored = {}
            for seq, votes in ranked:
                rec = records.get(seq)
                if rec is None or rec.features is None:
                    continue  # deleted meanwhile (an external index may lag)
                old = stored[seq] = unpack(rec.features)
                prefixes[seq] = prefix_of(old.seq, old.n_tokens, cfg.n, cfg.f, cfg.f_short, cfg.short_len)
                scored.append(Scored(seq, votes, overlap_score(new_prefix, prefixes[seq])))
            if cfg.update_rule:
                sentences: list[np.ndarray] | None = None
                for cand in scored:
                    if cand.score >= cfg.r_overlap - 1e-12:
                        if sentences is None:
                            sentences = sentence_sequences(prep.text, cfg.n, cfg.update_sentence_tokens,
                                                           cfg.normalize) if cfg.update_min_sentences else []
                        cand.update = update_reason(feats, sentences, stored[cand.seq], cfg.update_min_numbers,
                                                    cfg.update_min_sentences, cfg.update_sentence_shared)
            match, updated = choose(scored, cfg.r_overlap)
        if match is not None:
            old_rec = records[match.seq]
            ev = evidence(feats.tokens, feats.seq, _prefix_len(feats, cfg), prefixes[match.seq], cfg.n,
                          cfg.evidence_snippets)
            rec = DocRecord(seq=0, id=prep.doc_id, status="duplicate", original_id=old_rec.original_id,
                            matched_id=old_rec.id, score=round(float(match.score), 6), evidence=ev,
                            update_of=None, metadata=prep.metadata, text_hash=prep.text_hash)
        else:
            rec = DocRecord(seq=0, id=prep.doc_id, status="original", original_id=prep.doc_id,
                            update_of=records[updated.seq].id if updated is not None else None,
                            metadata=prep.metadata, text_hash=prep.text_hash)
        rec.text = prep.text if cfg.store_text else None
        rec.features = pack(feats)
        return rec

    # -- reading and deleting -------------------------------------------------------------------

    def get(self, doc_id: str, with_text: bool = True) -> DocRecord | None:
        """The stored document (with its text when kept), or None.

        >>> from neardup.online.store import MemoryStore
        >>> Detector(MemoryStore()).get("nope") is None
        True
        """
        with self._lock:
            rec = self.store.get(doc_id, payload=with_text)
        if rec is not None:
            rec.features = rec.keys = None
        return rec

    def cluster(self, doc_id: str) -> Cluster:
        """The cluster of ``doc_id``'s canonical original: the original first, then its duplicates.

        A duplicate's id is resolved to its original. Raises :class:`DocumentNotFound`.
        """
        with self._lock:
            rec = self.store.get(doc_id)
            if rec is None:
                raise DocumentNotFound(doc_id)
            original = rec if rec.is_original else self.store.get(rec.original_id)
            if original is None:  # cannot happen while the invariants hold
                raise DocumentNotFound(rec.original_id)
            return Cluster(original.id, [original] + self.store.members(original.id))

    def delete(self, doc_id: str) -> Deleted:
        """Delete a document (see the module docstring for what happens to its duplicates).

        Raises :class:`DocumentNotFound`.
        """
        with self._lock:
            with self.store.transaction():
                rec = self.store.get(doc_id, payload=True)
                if rec is None:
                    raise DocumentNotFound(doc_id)
                self.store.remove(rec)
                promoted, repointed = None, 0
                if rec.is_original:
                    members = self.store.members(rec.id)
                    if members:
                        promoted = members[0].id
                        self.store.promote(promoted)
                        repointed = self.store.repoint(rec.id, promoted)
            self.step.on_removed(rec.seq)
            self.stats["deleted"] += 1
        return Deleted(id=doc_id, was_original=rec.is_original, promoted_id=promoted, repointed=repointed)

    def counts(self) -> dict[str, int]:
        """Stored ``documents``, ``originals`` and ``duplicates``."""
        with self._lock:
            return self.store.counts()

    def latency_summary(self) -> dict[str, float | int]:
        """p50/p95/p99/max of the recent per-document latencies (ms).

        >>> from neardup.online.store import MemoryStore
        >>> Detector(MemoryStore()).latency_summary()["count"]
        0
        """
        return latency_summary(list(self.latencies))

    def close(self) -> None:
        """Close the store."""
        with self._lock:
            self.store.close()


def _prefix_len(feats: DocFeatures, cfg: OnlineConfig) -> int:
    frac = prefix_fraction(feats.n_tokens, cfg.f, cfg.f_short, cfg.short_len)
    return max(int(np.ceil(frac * feats.n_tokens)) - cfg.n + 1, 1)


def latency_summary(values: list[float]) -> dict[str, float | int]:
    """Count, mean, p50, p95, p99 and max of latencies in ms.

    >>> latency_summary([1.0, 2.0, 3.0])["p50_ms"]
    2.0
    """
    if not values:
        return {"count": 0, "mean_ms": 0.0, "p50_ms": 0.0, "p95_ms": 0.0, "p99_ms": 0.0, "max_ms": 0.0}
    arr = np.asarray(values, dtype=np.float64)
    p50, p95, p99 = np.percentile(arr, [50, 95, 99])
    return {"count": int(arr.size), "mean_ms": round(float(arr.mean()), 3), "p50_ms": round(float(p50), 3),
            "p95_ms": round(float(p95), 3), "p99_ms": round(float(p99), 3), "max_ms": round(float(arr.max()), 3)}
