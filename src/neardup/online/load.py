"""Bulk loading of a document file into an online store: ``neardup online load``.

Owns reading the input in batches, preparing them on worker processes while the detector decides
earlier ones, error handling per record, progress and the load summary; must not decide duplicates
(it calls :class:`neardup.online.detector.Detector`) or know SQL.

Each batch is one transaction, decided exactly as one ``add`` per document would be, in file order.
A load that stops part way (killed, or an error) keeps every batch committed before it; running it
again re-sends those documents, which the detector answers from the store (same id and text:
``resubmitted``, nothing written), so a re-run finishes the job without duplicating anything.
Records other than ``id`` and ``text`` fields are kept as the document's metadata. A new store of a
``method="auto"`` detector is calibrated on the file's first documents (:meth:`Detector.calibrate`).
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future
from itertools import chain
from typing import Any

from neardup.config import ReadConfig
from neardup.io.read import Document, InputError, iter_batches
from neardup.online.detector import ConflictError, Detector, InvalidDocument, PreparedDoc
from neardup.progress import progress_bar

DEFAULT_BATCH = 500


def _items(batch: list[Document]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(d.id, d.text, d.extra or {}) for d in batch]


def load(detector: Detector, path: str | os.PathLike[str], read: ReadConfig | None = None,
         batch_size: int = DEFAULT_BATCH, workers: int = 0, progress: bool = True, **fields: Any) -> dict[str, Any]:
    """Add every document of ``path`` (JSONL(.gz), Parquet, CSV, .txt folder) to ``detector``'s store.

    ``read`` (or its fields as keywords: ``text_field``, ``id_field``, ``on_error``) says which fields
    hold the id and text (the others are kept as metadata) and what a bad record does. ``workers`` > 0 prepares batches (normalize, shingle, sketch) on that many worker
    processes while this process decides; 0 does everything here. ``on_error="skip"`` skips bad records
    and ids stored with another text (listed in the summary) instead of stopping at the first. Returns
    counts, timing and the store's totals.

    >>> import json, os, tempfile
    >>> from neardup.online.store import MemoryStore
    >>> path = os.path.join(tempfile.mkdtemp(), "docs.jsonl")
    >>> with open(path, "w") as fh:
    ...     for i, t in enumerate(["the cat sat on the mat today", "The cat sat on the mat, today!"]):
    ...         _ = fh.write(json.dumps({"id": i, "text": t, "source": "x"}) + "\\n")
    >>> out = load(Detector(MemoryStore()), path, progress=False)
    >>> out["added"], out["duplicates"], out["resubmitted"]
    (2, 1, 0)
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if workers < 0:
        raise ValueError(f"workers must be >= 0, got {workers}")
    read = (read or ReadConfig()).replace(**fields)
    run = _Load(detector, path, {"id": read.id_field, "text": read.text_field}, read.on_error)
    batches = iter_batches(path, read, batch_size, run.skipped, extra=True)
    if detector.needs_calibration:  # a new store with method auto: profile the file's first documents
        batches = _calibrate(detector, batches)
        run.preparer = detector.preparer
    t0 = time.perf_counter()
    with progress_bar(progress, desc="loading", unit=" docs", mininterval=1.0) as run.bar:
        if not workers:
            for batch in batches:
                run.decide(batch, run.prepare(batch))
        else:
            from neardup.engine.processes import process_pool

            pending: deque[tuple[list[Document], Future[list[PreparedDoc]]]] = deque()
            with process_pool(workers) as pool:
                for batch in batches:
                    pending.append((batch, pool.submit(run.preparer, _items(batch))))
                    while len(pending) > workers:  # every worker stays one batch ahead
                        run.decide(*run.result(*pending.popleft()))
                while pending:
                    run.decide(*run.result(*pending.popleft()))
    seconds = time.perf_counter() - t0
    return {"input": str(path), "store": detector.store.location, "method": detector.config.method,
            **run.counts, "skipped": len(run.skipped), "skipped_records": run.skipped[:100],
            "seconds": round(seconds, 3), "docs_per_second": round(run.counts["read"] / seconds, 1) if seconds else 0.0,
            "batch_size": batch_size, "workers": workers, "store_counts": detector.counts()}


def _calibrate(detector: Detector, batches: Iterator[list[Document]]) -> Iterator[list[Document]]:
    """Calibrate ``detector`` on the first :data:`~neardup.calibrate.SAMPLE_DOCS` documents; the batches
    read for it are given back first."""
    from neardup.calibrate import SAMPLE_DOCS

    head: list[list[Document]] = []
    for batch in batches:
        head.append(batch)
        if sum(map(len, head)) >= SAMPLE_DOCS:
            break
    detector.calibrate([d.text for batch in head for d in batch])
    return chain(head, batches)


class _Load:
    """The state of one load: counts, skipped records, and how a bad record is reported or dropped."""

    def __init__(self, detector: Detector, path: str | os.PathLike[str], fields: dict[str, str],
                 on_error: str) -> None:
        self.detector, self.preparer = detector, detector.preparer
        self.path, self.fields, self.on_error = path, fields, on_error
        self.skipped: list[dict[str, Any]] = []
        self.counts = {"read": 0, "added": 0, "duplicates": 0, "resubmitted": 0}
        self.bar: Any = None

    def prepare(self, batch: list[Document]) -> list[PreparedDoc]:
        """Prepare a batch here; an invalid document is an :class:`InputError` (or, skipping, left out)."""
        while True:
            try:
                return self.preparer(_items(batch))
            except InvalidDocument as exc:
                self.bad(batch, exc.index, self.fields.get(exc.field, exc.field), exc.reason)

    def result(self, batch: list[Document], fut: Future[list[PreparedDoc]]) -> tuple[list[Document], list[PreparedDoc]]:
        """A batch prepared by a worker (prepared again here when it holds an invalid document)."""
        try:
            return batch, fut.result()
        except InvalidDocument:
            return batch, self.prepare(batch)

    def decide(self, batch: list[Document], prepared: list[PreparedDoc]) -> None:
        """One transaction; an id stored with another text is an :class:`InputError` (or, skipping, left out)."""
        while True:
            try:
                answers = self.detector.add_prepared(prepared)
                break
            except ConflictError as exc:
                i = exc.index or 0
                self.bad(batch, i, self.fields["id"], f"id {exc.doc_id!r} is already stored with a different text")
                del prepared[i]
                for j, p in enumerate(prepared):
                    p.index = j
        for answer in answers:
            if answer.created:
                self.counts["added"] += 1
                self.counts["duplicates"] += answer.is_duplicate
            else:
                self.counts["resubmitted"] += 1
        self.counts["read"] += len(batch)
        self.bar.update(len(batch))
        self.bar.set_postfix(duplicates=self.counts["duplicates"], refresh=False)

    def bad(self, batch: list[Document], index: int | None, field: str, reason: str) -> None:
        """Raise the error naming file, line and field, or (skipping) record it and drop the document."""
        i = index or 0
        err = InputError(self.path, batch[i].line, reason, field)
        if self.on_error != "skip":
            raise err
        self.skipped.append({"line": batch[i].line, "error": str(err)})
        del batch[i]
