"""The online near-duplicate detector: one document in, "original" or "duplicate of X" out, at once.

Owns the settings (:class:`OnlineConfig`), the per-document decision, canonical originals,
re-submission and deletion rules; must not know SQL (see store.py) or HTTP (see service.py).

Methods (``OnlineConfig.method``), both verified the same way (see verify.py):

* ``auto`` - the calibrated default (see :mod:`neardup.online.calibrate`): a new store profiles its
  first documents (:func:`neardup.calibrate.profile`) and gets ``minhash`` with word or character
  shingles and thresholds for that noise; the choice is recorded in the store, so every later process
  (and a store built before calibration existed) keeps the store's own settings;
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
* a registered batch method with look-up keys and an unweighted score (``exact``, ``simhash``, ...:
  :func:`~neardup.online.settings.batch_method_problem`), by its name: its own representation, keys and pair
  score (:class:`~neardup.online.candidates.MethodStep`), cut at its threshold; its batch settings are
  ``OnlineConfig.batch``.

Shingles (``char``): word n-grams (default n = 3) or character n-grams of the normalized text
(default n = 5, :data:`CHAR_LSH_THRESHOLD` 0.3 for the LSH bands: character shingles share common
n-grams, so word-level bands (0.2) would propose a large share of the stored documents: on one Reuters
day, character 4-grams at 0.2 made 23% of the stored stories candidates, 5-grams at 0.3 0.45%), computed by the batch
pipeline's shingling (:mod:`neardup.text.shingle`); both methods take either.

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
* what a document may hold: an ``id`` (a string, or an integer taken as its decimal string) of 1 to
  1024 characters, a ``text`` string, and metadata that JSON can write back as it came: strings of
  valid Unicode, finite numbers (no NaN or Infinity), integers of at most :data:`MAX_INT_DIGITS` digits,
  nested at most :data:`MAX_DEPTH` levels; and, in a store that cannot hold it (PostgreSQL), no NUL
  character (U+0000) in the id, the text or the metadata. Anything else is an :class:`InvalidDocument`
  naming the field, and nothing is stored.

Thread-safety: the settings a ``method="auto"`` detector resolves on its first documents (config,
candidate step and preparer) are built together and published as one object (:class:`Resolved`), under
the lock; a reader takes that object once, so no thread ever sees a config without its preparer.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import threading
import time
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from neardup.cluster import passes
from neardup.config import ConfigError
from neardup.io.read import text_problem
from neardup.online.candidates import CandidateStep, MethodStep, MinHashStep, Probe, SketchStep
from neardup.online.features import (
    DocFeatures,
    featurize,
    n_units,
    pack,
    prefix_fraction,
    sentence_sequences,
    unpack,
)
from neardup.online.settings import (  # noqa: F401 - re-exported: the settings belong to the detector's API
    CALIBRATED,
    CHAR_LSH_THRESHOLD,
    DEFAULT_METHOD,
    MINHASH_SETTINGS,
    ONLINE_METHODS,
    OURS,
    SEED_DEFAULTS,
    UNIT_DEFAULTS,
    OnlineConfig,
    _check,
)
from neardup.online.store import DocRecord, Store, count_votes
from neardup.online.verify import Scored, choose, evidence, prefix_of, update_reason
from neardup.online.verify import overlap as overlap_score


MAX_DEPTH = 64  # levels of lists and objects inside one metadata field
MAX_INT_DIGITS = 4300  # Python's default limit on converting integers to text (longer ones cannot be written)
MAX_ID_CHARS = 1024
_INT_LIMIT = 10 ** MAX_INT_DIGITS
_ID_INT_LIMIT = 10 ** MAX_ID_CHARS


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


def make_step(config: OnlineConfig) -> CandidateStep:
    """The candidate step a config names.

    >>> make_step(OnlineConfig()).name
    'sketch'
    """
    config._need_resolved()
    if config.batch is not None:  # a registered batch method with look-up keys (exact, simhash, ...)
        return MethodStep(config.batch, max_bucket=config.max_bucket)
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

    def __init__(self, config: OnlineConfig, step: CandidateStep, holds_nul: bool = True) -> None:
        self.config = config
        self.step = step
        self.holds_nul = holds_nul  # False: refuse U+0000 (the store cannot hold it)

    def one(self, doc_id: Any, text: Any, metadata: Mapping[str, Any] | None = None,
            index: int | None = None) -> PreparedDoc:
        """One document (``index``: its place in a batch, named by errors)."""
        if problem := id_problem(doc_id):
            raise InvalidDocument(problem, "id", index)
        doc_id = str(doc_id)
        if not isinstance(text, str):
            raise InvalidDocument(f"must be a string, got {type(text).__name__}", "text", index)
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InvalidDocument(f"must be an object, got {type(metadata).__name__}", "metadata", index)
        for name, value in (("id", doc_id), ("text", text), *(metadata or {}).items()):
            if problem := value_problem(name, self.holds_nul) or value_problem(value, self.holds_nul):
                raise InvalidDocument(problem, str(name), index)
        features = featurize(text, self.config.n, self.config.normalize, bool(self.config.char))
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


def _texts_of(docs: Iterable[DocItem]) -> list[str]:
    """The texts of a batch's items that have one (what calibration profiles)."""
    out = []
    for item in docs:
        text = item.get("text") if isinstance(item, Mapping) else (item[1] if len(item) > 1 else None)
        if isinstance(text, str):
            out.append(text)
    return out


def id_problem(doc_id: Any) -> str | None:
    """Why ``doc_id`` cannot be an id (a string or an integer of 1 to 1024 characters), or None.

    >>> id_problem(7), id_problem(""), id_problem(True)
    (None, 'must be 1 to 1024 characters', 'must be a string or integer, got bool')
    >>> id_problem(10 ** 5000)  # never turned into text: Python refuses more than 4300 digits
    'must be 1 to 1024 characters (an integer of more than 1024 digits)'
    """
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):
        return f"must be a string or integer, got {type(doc_id).__name__}"
    if isinstance(doc_id, int) and abs(doc_id) >= _ID_INT_LIMIT:
        return f"must be 1 to {MAX_ID_CHARS} characters (an integer of more than {MAX_ID_CHARS} digits)"
    if not 0 < len(str(doc_id)) <= MAX_ID_CHARS:
        return f"must be 1 to {MAX_ID_CHARS} characters"
    return None


def value_problem(value: Any, holds_nul: bool = True, depth: int = 0) -> str | None:
    """Why a value (or a string, number, list or object inside it) cannot be stored and read back as it
    came, or None: a lone surrogate, a NUL where the store cannot hold one, NaN or Infinity, an integer
    of more than :data:`MAX_INT_DIGITS` digits, lists or objects nested over :data:`MAX_DEPTH` levels.

    >>> value_problem({"a": [1, 2.5, "x"]}) is None
    True
    >>> value_problem(float("nan"))
    'must be a finite number, got nan (NaN and Infinity are not JSON)'
    >>> value_problem("a\\x00b", holds_nul=False)
    'holds a NUL character (U+0000) at character 1: the store cannot hold it (PostgreSQL text and JSON cannot)'
    """
    if isinstance(value, str):
        if not holds_nul and "\x00" in value:
            return (f"holds a NUL character (U+0000) at character {value.index(chr(0))}: "
                    "the store cannot hold it (PostgreSQL text and JSON cannot)")
        return text_problem(value)
    if isinstance(value, float):
        return None if math.isfinite(value) else f"must be a finite number, got {value} (NaN and Infinity are not JSON)"
    if isinstance(value, int):
        return None if abs(value) < _INT_LIMIT else f"integer of more than {MAX_INT_DIGITS} digits: too large"
    if isinstance(value, (Mapping, list, tuple)):
        if depth >= MAX_DEPTH:
            return f"lists and objects nested more than {MAX_DEPTH} levels deep"
        items = value.items() if isinstance(value, Mapping) else ((None, v) for v in value)
        for k, v in items:
            if problem := value_problem(k, holds_nul) or value_problem(v, holds_nul, depth + 1):
                return problem
    return None


@dataclass(frozen=True)
class Resolved:
    """The settings a detector uses and what is built from them: published together, as one object."""

    config: OnlineConfig
    step: CandidateStep
    preparer: Preparer


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
        self.requested = config or OnlineConfig()
        self._custom_step = step
        self._resolved: Resolved | None = None  # set once, as one object, when the settings are resolved
        self.calibration: dict[str, Any] | None = None
        self._lock = threading.RLock()
        self.latencies: deque[float] = deque(maxlen=latency_window)
        self.stats = {"added": 0, "duplicates": 0, "resubmitted": 0, "conflicts": 0, "deleted": 0}
        if self.requested.resolved:
            self._use(self.requested)
        else:
            with self._lock, self.store.transaction():
                self._adopt_stored()

    # -- settings -------------------------------------------------------------------------------

    @property
    def needs_calibration(self) -> bool:
        """True while a ``method="auto"`` detector's store holds no settings yet: the first documents
        added (or :meth:`calibrate`) choose them."""
        return self._resolved is None

    @property
    def config(self) -> OnlineConfig:
        """The settings in use (the requested ones until a ``method="auto"`` detector is calibrated)."""
        resolved = self._resolved
        return self.requested if resolved is None else resolved.config

    @property
    def step(self) -> CandidateStep | None:
        """The candidate step (None until the settings are resolved)."""
        resolved = self._resolved
        return None if resolved is None else resolved.step

    @property
    def preparer(self) -> Preparer | None:
        """Checks and featurizes documents with these settings (None until they are resolved)."""
        resolved = self._resolved
        return None if resolved is None else resolved.preparer

    def _use(self, config: OnlineConfig) -> None:
        """Build the step and preparer of ``config``, check it against the store, then publish all three
        in one assignment (readers outside the lock see the old state or the whole new one)."""
        step = self._custom_step or make_step(config)
        resolved = Resolved(config, step, Preparer(config, step, holds_nul=self.store.holds_nul))
        self._check_settings(config)
        self._resolved = resolved

    def _ready(self, texts: Iterable[str]) -> Resolved:
        """The resolved settings, calibrating on ``texts`` first if there are none yet (double-checked:
        a look without the lock, then :meth:`calibrate` looks again under it)."""
        resolved = self._resolved
        if resolved is None:
            self.calibrate(texts)
            resolved = self._resolved
            assert resolved is not None
        return resolved

    def _adopt_stored(self) -> bool:
        """Use the settings the store holds (its calibration, or what it was built with), if any."""
        from neardup.online.calibrate import apply, stored_choice

        meta = self.store.read_meta()
        choice = stored_choice(meta, self.store.counts()["documents"] > 0)
        if choice is None:
            return False
        self._use(apply(self.requested, choice))
        if "calibration" in meta:
            self.calibration = json.loads(meta["calibration"])
        return True

    def calibrate(self, texts: Iterable[str]) -> dict[str, Any] | None:
        """Resolve ``method="auto"`` on ``texts`` (the first documents; :mod:`neardup.online.calibrate`)
        and record the choice in the store; a store that already holds settings keeps them. Returns the
        calibration record ``{"profile", "choice"}`` (None for a detector with explicit settings)."""
        from neardup.online.calibrate import resolve

        with self._lock:
            if not self.needs_calibration:
                return self.calibration
            with self.store.transaction():
                if not self._adopt_stored():  # another process may have calibrated the store meanwhile
                    config, record = resolve(self.requested, texts)
                    self.store.write_meta("calibration", json.dumps(record, sort_keys=True))
                    self._use(config)
                    self.calibration = record
        return self.calibration

    def _check_settings(self, config: OnlineConfig) -> None:
        wanted = config.key_settings()
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
            self.store.write_meta("config", json.dumps(config.to_dict(), sort_keys=True))

    # -- adding ---------------------------------------------------------------------------------

    def add(self, doc_id: str, text: str, metadata: Mapping[str, Any] | None = None) -> Answer:
        """Decide whether ``text`` duplicates a stored document, store it, and answer.

        The answer is returned only after the document is durably stored.
        """
        t0 = time.perf_counter()
        resolved = self._ready([text] if isinstance(text, str) else [])
        return self._add([resolved.preparer.one(doc_id, text, metadata)], t0)[0]

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
        resolved = self._resolved
        if resolved is None:
            docs = list(docs)
            resolved = self._ready(_texts_of(docs))
        return self._add(resolved.preparer(docs), t0)

    def add_prepared(self, prepared: Iterable[PreparedDoc]) -> list[Answer]:
        """:meth:`add_many` of documents already prepared by a :class:`Preparer` with this detector's
        settings (e.g. on another process)."""
        _check(not self.needs_calibration, "documents prepared before the detector was calibrated: call "
                                           "Detector.calibrate(first texts) first (method 'auto')")
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
        if isinstance(self.step, MethodStep):
            return self._decide_method(prep, batch, self.step)
        feats = prep.features
        match: Scored | None = None
        updated: Scored | None = None
        records: dict[int, DocRecord] = {}
        prefixes: dict[int, np.ndarray] = {}
        if not feats.empty:
            ranked = self.step.candidates(prep.probe, batch, cfg.top_candidates)
            records = batch.fetch([s for s, _ in ranked])
            new_prefix = prefix_of(feats.seq, feats.n_tokens, cfg.n, cfg.f, cfg.f_short, cfg.short_len, cfg.char)
            scored = []
            stored = {}
            for seq, votes in ranked:
                rec = records.get(seq)
                if rec is None or rec.features is None:
                    continue  # deleted meanwhile (an external index may lag)
                old = stored[seq] = unpack(rec.features)
                prefixes[seq] = prefix_of(old.seq, old.n_tokens, cfg.n, cfg.f, cfg.f_short, cfg.short_len, cfg.char)
                scored.append(Scored(seq, votes, overlap_score(new_prefix, prefixes[seq])))
            if cfg.update_rule:
                sentences: list[np.ndarray] | None = None
                for cand in scored:
                    if passes(cand.score, cfg.r_overlap):
                        if sentences is None:
                            sentences = sentence_sequences(prep.text, cfg.n, cfg.update_sentence_tokens,
                                                           cfg.normalize, cfg.char) if cfg.update_min_sentences else []
                        cand.update = update_reason(feats, sentences, stored[cand.seq], cfg.update_min_numbers,
                                                    cfg.update_min_sentences, cfg.update_sentence_shared)
            match, updated = choose(scored, cfg.r_overlap)
        if match is not None:
            old_rec = records[match.seq]
            ev = evidence(feats.units, feats.seq, _prefix_len(feats, cfg), prefixes[match.seq], cfg.n,
                          cfg.evidence_snippets, char=bool(cfg.char))
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

    def _decide_method(self, prep: PreparedDoc, batch: _Batch, step: MethodStep) -> DocRecord:
        """:meth:`_decide` for a batch method: its ``top_candidates`` best candidates scored by the method's own
        pair score against their stored representations, cut at the method's threshold
        (:func:`neardup.cluster.passes`); the best passing one (ties: the one ranked first) is the match, and
        the evidence is the method's label (e.g. ``identical normalized text``)."""
        cfg = self.config
        match: tuple[DocRecord, float] | None = None
        if prep.probe.keys.size:
            ranked = step.candidates(prep.probe, batch, cfg.top_candidates)
            records = batch.fetch([s for s, _ in ranked])
            found = [rec for s, _ in ranked if (rec := records.get(s)) is not None and rec.features is not None]
            for rec, score in zip(found, step.score(prep.probe, [rec.features for rec in found])):
                if passes(score, step.threshold) and (match is None or score > match[1]):
                    match = (rec, float(score))
        if match is not None:
            old_rec, score = match
            rec = DocRecord(seq=0, id=prep.doc_id, status="duplicate", original_id=old_rec.original_id,
                            matched_id=old_rec.id, score=round(score, 6), evidence=[step.label],
                            update_of=None, metadata=prep.metadata, text_hash=prep.text_hash)
        else:
            rec = DocRecord(seq=0, id=prep.doc_id, status="original", original_id=prep.doc_id,
                            metadata=prep.metadata, text_hash=prep.text_hash)
        rec.text = prep.text if cfg.store_text else None
        rec.features = step.pack(prep.probe)
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
            if (step := self.step) is not None:
                step.on_removed(rec.seq)
            self.stats["deleted"] += 1
        return Deleted(id=doc_id, was_original=rec.is_original, promoted_id=promoted, repointed=repointed)

    def check(self) -> None:
        """Raise :class:`~neardup.online.store.StoreError` unless the store answers its health check."""
        with self._lock:
            self.store.check()

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
    units = n_units(feats.seq, feats.n_tokens, feats.n, feats.char)
    return max(int(np.ceil(frac * units)) - cfg.n + 1, 1)


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
