"""The evidence stage of a chunked run (local or Ray): each verified pair's views and shared passages,
written as ``evidence.parquet`` in pair order.

Owns getting the texts back in bounded memory and scheduling the evidence of pairs on the worker
processes; must not find passages (:mod:`neardup.verify.passages`), build evidence rows
(:mod:`neardup.evidence`) or decide pairs.

The map stage keeps no text, so the input is read again (as :mod:`neardup.io.keep` does; of a JSONL file,
only the lines of the documents in pairs are parsed) and the texts of the documents in pairs, and only
those, are written to a text store in the work directory (by a worker, begun as soon as the pairs are
known, while this process clusters and writes the outputs): their UTF-8 bytes one after the other
(``texts.bin``) and where each starts (``text_offsets.npy``), each text read back by one positioned read
(not a memory map: pairs touch the store at random, and a map would keep every touched folio of it in a
worker's resident set, 365 MB a worker for the word path at a million stories). Pairs are then cut into
chunks (two or more per worker, at most :data:`PAIRS_PER_TASK`); a worker computes a chunk's rows (texts
read from the store) into ``evidence/PPPPPP.parquet``, and the parts are streamed into the output in order.
Memory: one chunk's rows per worker (aligned a block at a time, :func:`neardup.evidence.evidence_table`)
and an offset per paired document.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from neardup.arrays import distinct
from neardup.engine.workdir import load_array, save_array
from neardup.evidence import evidence_table, write_evidence
from neardup.io.arrow import numpy_of
from neardup.io.parquet import read_parquet
from neardup.io.read import texts_at
from neardup.io.write import atomic_path
from neardup.results import EVIDENCE_FILE

if TYPE_CHECKING:
    from neardup.engine.sharded import ShardedRun

#: Pairs whose evidence one task computes (at most; fewer, so every worker gets a few tasks), and the
#: fewest pairs worth sending to the workers (fewer are done in this process): see :func:`task_count`.
PAIRS_PER_TASK = 20_000
MIN_PAIRS_PER_TASK = 10_000


class TextStore:
    """The texts of some documents (sorted indices ``docs``), read back by document index."""

    def __init__(self, root: str | Path) -> None:
        r = Path(root)
        self.docs = load_array(r / "text_docs.npy", mmap=False)
        self.offsets = load_array(r / "text_offsets.npy", mmap=False)
        self._file = open(r / "texts.bin", "rb")

    def __call__(self, doc: int) -> str:
        """The text of document ``doc`` (one of ``docs``)."""
        return self.texts(np.array([doc], dtype=np.int64))[0]

    def texts(self, docs: np.ndarray) -> list[str]:
        """The texts of documents ``docs`` (ascending, each one of :attr:`docs`): found in the index at once,
        each read by one positioned read."""
        docs = np.asarray(docs, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.docs, docs), max(self.docs.size - 1, 0))
        held = self.docs[at] == docs if self.docs.size else np.zeros(docs.size, dtype=bool)
        if not held.all():
            raise KeyError(f"{self._file.name}: no text of documents {docs[~held][:5].tolist()}")
        fd, out = self._file.fileno(), []
        for doc, lo, hi in zip(docs.tolist(), self.offsets[at].tolist(), self.offsets[at + 1].tolist()):
            data = os.pread(fd, hi - lo, lo)
            if len(data) != hi - lo:
                raise RuntimeError(f"{self._file.name}: truncated (text of document {doc} at bytes {lo}:{hi})")
            out.append(data.decode("utf-8", "surrogatepass"))
        return out

    def close(self) -> None:
        """Release the file."""
        self._file.close()


def write_text_store(run: ShardedRun, n_shards: int, docs: np.ndarray, root: Path) -> None:
    """Read the input again and write the texts of documents ``docs`` (sorted indices) to a store in
    ``root``: only the records at their input lines (the map stage recorded them) are parsed."""
    write_texts(str(root), run.input, input_lines(run, n_shards, docs), docs, run.read.text_field)


def input_lines(run: ShardedRun, n_shards: int, docs: np.ndarray) -> np.ndarray:
    """The input lines of documents ``docs`` (sorted indices), as the map stage recorded them: a shard's
    column at a time."""
    lines = np.empty(docs.size, dtype=np.int64)
    bounds = np.cumsum([0, *run.shard_sizes()[:n_shards]])
    cut = np.searchsorted(docs, bounds)
    for i in range(n_shards):
        if cut[i + 1] > cut[i]:
            column = numpy_of(read_parquet(run.wd.shard(i, "ids.parquet"), ["line"])["line"])
            lines[cut[i] : cut[i + 1]] = column[docs[cut[i] : cut[i + 1]] - bounds[i]]
    return lines


def write_texts(root: str, source: str | os.PathLike[str], lines: np.ndarray, docs: np.ndarray,
                text_field: str) -> None:
    """Worker task (or this process's): the texts of documents ``docs`` (sorted indices), read from the
    input ``source`` at ``lines``, written to the text store in ``root``."""
    store = Path(root)
    store.mkdir(parents=True, exist_ok=True)
    offsets = np.zeros(docs.size + 1, dtype=np.int64)
    k = 0
    with atomic_path(store / "texts.bin", durable=False) as tmp, open(tmp, "wb") as fh:
        for k, text in enumerate(texts_at(source, lines.tolist(), text_field), start=1):
            data = text.encode("utf-8", "surrogatepass")
            fh.write(data)
            offsets[k] = offsets[k - 1] + len(data)
    if k != docs.size:
        raise RuntimeError(f"the input changed during the run: {docs.size - k} documents in pairs not found again")
    save_array(store / "text_offsets.npy", offsets)
    save_array(store / "text_docs.npy", docs)


def start_text_store(run: ShardedRun, n_shards: int, left: np.ndarray, right: np.ndarray) -> Future[None] | None:
    """The evidence's text store of the verified pairs ``left``, ``right``, begun in a worker process, so
    that it is written while this process clusters and writes the outputs (the workers idle then); None
    where there is nothing to begin (no pairs, one worker that is this process, or a resumed run that has
    the store), and :func:`write_run_evidence` writes it itself. :func:`finish_text_store` waits for it."""
    pool = run.workers()
    if run.wd.done("texts") or left.size == 0 or not isinstance(pool, ProcessPoolExecutor):
        return None
    docs = distinct(np.concatenate([left, right])).astype(np.int64)
    return pool.submit(write_texts, str(run.wd.root / "evidence"), run.input, input_lines(run, n_shards, docs), docs,
                       run.read.text_field)


def evidence_part(root: str, part: int, left_ids: list[str], right_ids: list[str], left: np.ndarray,
                  right: np.ndarray, scores: np.ndarray, views: list[tuple[str, np.ndarray]]) -> int:
    """Worker task: the evidence rows of one chunk of pairs, into ``evidence/PPPPPP.parquet``; returns the rows."""
    out = Path(root) / "evidence" / f"{part:06d}.parquet"
    if out.exists():  # resumed
        return len(left_ids)
    store = TextStore(Path(root) / "evidence")
    try:
        table = evidence_table(left_ids, right_ids, left, right, scores, views, store.texts)
    finally:
        store.close()
    with atomic_path(out, durable=False) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    return table.num_rows


def task_count(n_pairs: int, workers: int) -> int:
    """Chunks the evidence of ``n_pairs`` pairs is cut into: one (done in the calling process) below
    :data:`MIN_PAIRS_PER_TASK`, else at least two per worker and at most :data:`PAIRS_PER_TASK` pairs each, a
    multiple of the workers, so that no worker is left computing a last chunk alone (30k pairs on two workers:
    four chunks of 7.5k, not three of 10k, whose last one ran alone).

    >>> task_count(5_000, 2), task_count(29_888, 2), task_count(188_404, 2), task_count(188_404, 3)
    (1, 4, 10, 12)
    """
    if n_pairs < MIN_PAIRS_PER_TASK:
        return 1
    workers = max(1, workers)
    count = max(2 * workers, -(-n_pairs // PAIRS_PER_TASK))
    return -(-count // workers) * workers


def finish_text_store(run: ShardedRun, store: Future[None] | None) -> None:
    """Wait for the text store :func:`start_text_store` began (a no-op for None), and mark it written."""
    if store is not None:
        store.result()
        run.wd.mark("texts")


def write_run_evidence(run: ShardedRun, n_shards: int, left: np.ndarray, right: np.ndarray, scores: np.ndarray) -> None:
    """The evidence stage: ``evidence.parquet`` of the verified pairs (sorted, as in ``pairs.parquet``); the
    text store written here unless it was (:func:`finish_text_store`)."""
    t0 = time.perf_counter()
    root = run.wd.root / "evidence"
    views = run.method.views(run.representation(), left, right, scores)
    docs = distinct(np.concatenate([left, right])).astype(np.int64)
    if not run.wd.done("texts"):
        write_text_store(run, n_shards, docs, root)
        run.wd.mark("texts")
    names = run.ids_for(n_shards, docs)
    count = task_count(left.size, run.plan.workers)
    per_task = max(1, -(-left.size // count))
    bar = run.bar(left.size, "evidence", "pair")

    def task(part: int) -> tuple[Any, ...]:
        sel = slice(part * per_task, (part + 1) * per_task)
        return (str(run.wd.root), part, names.take(left[sel]).to_pylist(), names.take(right[sel]).to_pylist(),
                left[sel], right[sel], scores[sel], [(name, np.asarray(v)[sel]) for name, v in views])

    def parts() -> Iterator[pa.Table]:
        """Each chunk's rows in order, as soon as it is done: the output is written while the workers compute
        the next chunks (written after the last, the 30k pairs of 200k stories kept a core idle 0.17 s)."""
        if count == 1:  # one task: here, without starting worker processes
            bar.update(evidence_part(*task(0)))
            yield read_parquet(root / f"{0:06d}.parquet")
            return
        pool = run.workers()
        pending: deque[Future[int]] = deque()  # a few tasks in flight per worker: a few chunks' ids held at a time
        for part in range(count):
            while len(pending) < 2 * run.plan.workers and part + len(pending) < count:
                pending.append(pool.submit(evidence_part, *task(part + len(pending))))
            bar.update(pending.popleft().result())
            yield read_parquet(root / f"{part:06d}.parquet")

    write_evidence(run.outdir / EVIDENCE_FILE, parts(), run_id=run.run_id)
    bar.close()
    run.timed("evidence", t0)


__all__ = ["MIN_PAIRS_PER_TASK", "PAIRS_PER_TASK", "TextStore", "evidence_part", "finish_text_store", "input_lines",
           "start_text_store", "task_count", "write_run_evidence", "write_text_store", "write_texts"]
