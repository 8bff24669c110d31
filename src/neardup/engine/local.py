"""The chunked engine on one machine: a corpus larger than memory, streamed, on every core, resumable.

Owns scheduling the map stage and a keyed method's candidate and verify stages on worker processes,
within the memory plan (:mod:`neardup.engine.plan`); must not implement a stage: workers run the tasks
of :mod:`neardup.engine.tasks`, which call the method's own operations, so the output equals the
in-memory run's exactly. The stages, checkpoints and outputs are those of :mod:`neardup.engine.sharded`.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from neardup.calibrate import SAMPLE_DOCS
from neardup.calibrate_scores import sample_codes
from neardup.config import DedupConfig, EngineConfig, ReadConfig
from neardup.engine.plan import (codes_per_pass, held_chars, key_partitions, pair_partitions, runs_inline,
                                  tables_per_pass, weights_beside_candidates)
from neardup.engine.processes import start_server, start_workers
from neardup.engine.sharded import ShardedRun, ShardJoin
from neardup.cluster import roots_of
from neardup.engine.tasks import (ORDER_FILES, later_ends, map_shard, sample_partition, score_unscreened, table_keys,
                                  verify_partition)
from neardup.engine.tiles import pair_partition, partition_count, tiles_for_run
from neardup.engine.workdir import load_array, save_array, save_npz
from neardup.io.read import Document, InputError
from neardup.methods.base import KeyedMethod


#: Candidate codes the candidates stage buffers before it writes them (about 24 MB with their partitions and
#: their sort; a constant, so that a resumed run flushes where the stopped one did, whatever its limit). At 200k
#: stories one write per partition for the 32 tables, where a write per table and partition (576 files) took
#: 0.4 s of the process that finds them.
SPILL_CODES = 1 << 20


class LocalRun(ShardedRun):
    """One chunked run on this machine (see :mod:`neardup.engine.sharded` for the stages)."""

    engine_name = "local"

    def map(self) -> int:
        """Stage 1: each batch represented by a worker process and written as a shard; returns the shard count."""
        t0 = time.perf_counter()
        bar = self.read_bar()
        n_shards = 0
        pending: list[tuple[int, Future[dict[str, Any]]]] = []
        join = ShardJoin(self.wd)  # the join made as shards come back, in order (stage 2 names the files)
        # The join's copies run in a thread of their own, in order: the kernel copies (the lock released) while
        # this thread reads, which is what the map stage waits on (at 200k stories the copies took a third of it).
        joining = ThreadPoolExecutor(1, thread_name_prefix="neardup-join")
        joins: list[Future[None]] = []

        def join_upto(upto: int) -> None:
            joins.append(joining.submit(join.catch_up, upto))
            while joins and joins[0].done():
                joins.pop(0).result()  # a failed copy's error, raised here

        def collect() -> None:
            index, fut = pending.pop(0)
            bar.update(fut.result()["n"])
            join_upto(index + 1)

        try:
            batches = self.batches()
            ahead = self.small_input(batches)
            pool = self.workers()
            self.read_while_workers_start(pool, batches, ahead)
            for index, batch in enumerate(itertools.chain(ahead, batches)):
                n_shards = index + 1
                if self.wd.shard_done(index):
                    bar.update(len(batch))
                    join_upto(index + 1)
                    continue
                pending.append((index, pool.submit(map_shard, index, [d.id for d in batch], [d.text for d in batch],
                                                   [d.line for d in batch], self.config, str(self.wd.root),
                                                   self.read.max_chars, self.field_values(batch))))
                while len(pending) >= self.plan.in_flight:
                    collect()
            while pending:
                collect()
            for done in joins:
                done.result()
        finally:
            joining.shutdown(wait=True, cancel_futures=True)
        bar.close()
        if n_shards == 0:
            raise InputError(self.input, None, "no documents found (empty input)")
        self.timed("map", t0)
        return n_shards

    def _sample_texts(self, path: str | os.PathLike[str]) -> list[str]:
        """The calibration's sample; an input that fills it (2,000 documents) starts the fork server now, so
        that its loading (about 0.9 s) overlaps the calibration instead of delaying the first worker."""
        texts = super()._sample_texts(path)
        if len(texts) >= SAMPLE_DOCS and self._workers_automatic():
            start_server()
        return texts

    def _workers_automatic(self) -> bool:
        """Whether this run decides for itself between worker processes and this process alone."""
        return self.engine.workers == 0 and self.plan.workers > 1

    def small_input(self, batches: Iterator[list[Document]]) -> list[list[Document]]:
        """With the worker count automatic: the input's first batches, read until it is known not to be small
        (:func:`~neardup.engine.plan.runs_inline`); if it ended first, the whole run takes one worker, this
        process (the same output: only the partition counts follow the worker count). The fork server is
        started once the input fills a batch (or the calibration's sample), so its loading overlaps the reading
        ahead."""
        if not self._workers_automatic():
            return []
        ahead: list[list[Document]] = []
        docs = chars = 0
        for batch in batches:
            if not ahead and len(batch) >= self.plan.batch_docs:
                start_server()
            ahead.append(batch)
            docs += len(batch)
            chars += sum(len(d.text) for d in batch)
            if not runs_inline(docs, chars, self.engine.memory_limit):
                return ahead
        self.plan = dataclasses.replace(self.plan, workers=1)
        return ahead

    def read_while_workers_start(self, pool: Any, batches: Iterator[list[Document]],
                                 ahead: list[list[Document]]) -> None:
        """Start the pool's workers (:func:`~neardup.engine.processes.start_workers`) and read on into ``ahead``
        while they start, as far as its texts stay within :func:`~neardup.engine.plan.held_chars` (what a small
        input holds, :func:`~neardup.engine.plan.runs_inline`): a worker's start waits for the fork server's loading,
        and this process waited with it (at 200k stories, 0.4-0.7 s with a core idle)."""
        starting = start_workers(pool, self.plan.workers)
        if starting is None:
            return
        try:
            chars = sum(len(d.text) for batch in ahead for d in batch)
            while starting.is_alive() and chars <= held_chars(self.engine.memory_limit):
                batch = next(batches, None)
                if batch is None:
                    break
                ahead.append(batch)
                chars += sum(len(d.text) for d in batch)
        finally:
            starting.join()

    def keyed_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # The key rows are sorted in this process while the workers idle: workers that still hold more than a
        # tenth of the limit from the map stage are stopped (at 10M stories they held 690 MB of the 1.9 GB peak).
        self.make_room(int(self.engine.memory_limit * 0.4))
        beside = self.weights_alongside()
        self.counts.update(weights_beside_candidates=beside)
        if not beside:
            return self.verify(self.candidates())
        # The weights (stage 3, in the workers) while this process finds the candidates (stage 4a, in a thread:
        # NumPy's sorts and the spills' writes release the lock): each stage alone leaves a core idle.
        stop = threading.Event()
        found: dict[str, Any] = {}

        def find() -> None:
            try:
                found["parts"] = self.candidates(stop)
            except BaseException as exc:  # handed to the calling thread, which raises it
                found["error"] = exc

        thread = threading.Thread(target=find, name="neardup-candidates", daemon=True)
        thread.start()
        try:
            self.weights()
            thread.join()
        except BaseException:
            stop.set()  # the thread stops before its next table
            thread.join()
            raise
        if "error" in found:
            raise found["error"]
        return self.verify(found["parts"])

    def weights_alongside(self) -> bool:
        """Whether the weights stage runs while this process finds the candidates: both stages still to do,
        two or more worker processes, and the two within the memory plan together
        (:func:`~neardup.engine.plan.weights_beside_candidates`); larger runs take them one after the other."""
        if self.plan.workers < 2 or not self.method.weighted() or self.wd.done("weights") \
                or self.wd.done("candidates"):
            return False
        return weights_beside_candidates(self.key_rows(), int(self.representation().sets.values.shape[0]),
                                         self.engine.memory_limit)

    def key_rows(self) -> int:
        """The key rows of every table of the candidates stage (a keyed method's documents with shingles)."""
        method, rep = self.method, self.representation()
        assert isinstance(method, KeyedMethod)
        return int(method.key_counts(rep, np.flatnonzero(~rep.empty)).sum())

    def spill(self, left: np.ndarray, right: np.ndarray, tag: str, n: int, parts: int) -> None:
        """Buffer one table's candidate pairs as codes ``left * n + right`` with their pair partition (by the
        tile of ``left``, so each partition's verification reads one left tile); :meth:`flush_spills` writes
        them, when the buffer holds :data:`SPILL_CODES` codes and at the end of each group of tables."""
        if left.size == 0:
            return
        self._spilled.append((tag, left.astype(np.int64) * n + right, pair_partition(left, self._tiles, parts)))
        self._spilled_codes += left.size
        if self._spilled_codes >= SPILL_CODES:
            self.flush_spills(parts)

    def flush_spills(self, parts: int) -> None:
        """Write the buffered codes, a file for each partition that has some, named by the first table
        buffered (the same names when a resumed run redoes the group of tables)."""
        if not self._spilled:
            return
        tag = self._spilled[0][0]
        codes = np.concatenate([c for _, c, _ in self._spilled])
        part = np.concatenate([q for _, _, q in self._spilled])
        self._spilled, self._spilled_codes = [], 0
        order = np.argsort(part, kind="stable")
        codes = codes[order]
        bounds = np.searchsorted(part[order], np.arange(parts + 1))
        for p in np.flatnonzero(np.diff(bounds)).tolist():
            save_array(self.wd.pairs / f"{p:03d}-{tag}.npy", codes[bounds[p] : bounds[p + 1]])

    def candidates(self, stop: threading.Event | None = None) -> int:
        """Stage 4a: the method's key tables a group at a time (hash partitions of a large table's keys),
        each table's buckets turned into pairs and spilled to disk by pair partition (repeats are removed,
        or counted, when a partition is verified); returns the partition count. ``stop``: when set, the
        stage ends before its next table (:class:`InterruptedError`); a resumed run redoes the group of
        tables it was in."""
        method = self.method
        assert isinstance(method, KeyedMethod)
        rep = self.representation()
        n = len(rep)
        limit, workers = self.engine.memory_limit, self.plan.workers
        self._tiles = tiles_for_run(self.wd.root, np.asarray(rep.sets.offsets), limit, workers, method.score_name)
        parts = partition_count(pair_partitions(n, limit, workers), self._tiles)
        self.counts.update(tiles=len(self._tiles) - 1)
        if self.wd.done("candidates"):
            return int(load_array(self.wd.root / "parts.npy", mmap=False)[0])
        t0 = time.perf_counter()
        docs = np.flatnonzero(~rep.empty).astype(np.int64)
        self._spilled: list[tuple[str, np.ndarray, np.ndarray]] = []  # spill's buffer: (tag, codes, partitions)
        self._spilled_codes = 0
        tables = method.n_tables()
        rows_per_table = self.key_rows() // max(1, tables)
        key_parts = key_partitions(rows_per_table, limit)
        group = tables_per_pass(rows_per_table, limit) if key_parts == 1 else 1
        bar = self.bar(tables, "candidates", "table")
        found = 0
        for first in range(0, tables, group):
            span = range(first, min(tables, first + group))
            for p in range(key_parts):
                if not self.wd.done(f"keys-t{first:05d}p{p:04d}") and docs.size >= 2:
                    for t, keys, key_docs in table_keys(method, rep, docs, span, p, key_parts):
                        if stop is not None and stop.is_set():
                            raise InterruptedError("the candidates stage was stopped")
                        left, right = method.table_pairs(rep, keys, key_docs)
                        found += left.size
                        method.check_candidates(found, docs.size)
                        self.spill(left, right, f"t{t:05d}p{p:04d}", n, parts)
                        bar.update(1 / key_parts)
                    self.flush_spills(parts)
                    self.wd.mark(f"keys-t{first:05d}p{p:04d}")
                else:
                    bar.update(len(span) / key_parts)
        bar.close()
        save_array(self.wd.root / "parts.npy", np.array([parts]))
        self.wd.mark("candidates")
        self.timed("candidates", t0)
        return parts

    def verify(self, parts: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stage 4b: de-duplicate (or count) and score each partition of candidates in the worker processes;
        keep those over the threshold. Each partition's result is its own checkpoint."""
        path = self.wd.root / "verified.npz"
        self.score_threshold(lambda k: self.sample_candidates(parts, k))  # auto: the threshold its scores call for
        if not self.wd.done("verify"):
            self.weights()  # stage 3, before the workers need it (timed on its own)
            t0 = time.perf_counter()
            sets = self.representation().sets
            n = len(sets)
            bar = self.bar(parts, "verifying", "part")
            self.make_room(min(int(sets.values.shape[0]) * 16, int(self.engine.memory_limit * 0.45)))
            pool = self.workers()
            max_codes = codes_per_pass(self.engine.memory_limit, self.plan.workers)
            root = str(self.wd.root)

            def each_part(task: Any, *args: Any) -> list[Any]:
                return [f.result() for f in [pool.submit(task, root, p, n, self.config, max_codes, *args)
                                             for p in range(parts)]]

            if self.ceiling is None:
                n_candidates = sum(each_part(verify_partition, self.floor))
                bar.update(parts)
                done = [np.load(self.wd.pairs / f"verified-{p:03d}.npz") for p in range(parts)]
            else:  # greedy's two passes: the pairs a root comes first in, then those its settled copies leave
                self.write_order(n)
                n_candidates = sum(each_part(later_ends))
                save_array(self.wd.root / ORDER_FILES[1],
                           roots_of(n, np.concatenate([load_array(self.wd.pairs / f"later-{p:03d}.npy", mmap=False)
                                                       for p in range(parts)])))
                each_part(verify_partition, self.floor, 1)
                bar.update(parts / 2)
                first = [np.load(self.wd.pairs / f"verified-{p:03d}-1.npz") for p in range(parts)]
                self.write_settled(n, first)
                each_part(verify_partition, self.floor, 2)
                done = first + [np.load(self.wd.pairs / f"verified-{p:03d}-2.npz") for p in range(parts)]
                bar.update(parts / 2)
            bar.close()
            left = np.concatenate([d["left"] for d in done])
            right = np.concatenate([d["right"] for d in done])
            score = np.concatenate([d["score"] for d in done])
            n_scored = sum(int(d["n_candidates"][0]) for d in done)
            order = np.lexsort((right, left))
            save_npz(path, left=left[order], right=right[order], score=score[order],
                     n_candidates=np.array([n_candidates]), n_scored=np.array([n_scored]))
            self.wd.mark("verify")
            self.timed("verify", t0)
        data = np.load(path)
        self.counts["n_candidates"] = int(data["n_candidates"][0])
        self.counts["n_scored"] = int(data["n_scored"][0])
        return data["left"], data["right"], data["score"]

    def sample_candidates(self, parts: int, k: int) -> np.ndarray:
        """At most ``k`` distinct candidate codes, the bottom of :func:`~neardup.calibrate_scores.sample_codes` over
        every partition (each sampled in a worker, as it is read to be verified)."""
        pool, root = self.workers(), str(self.wd.root)
        max_codes = codes_per_pass(self.engine.memory_limit, self.plan.workers)
        got = [f.result() for f in [pool.submit(sample_partition, root, p, max_codes, self.method.min_shared, k)
                                    for p in range(parts)]]
        return sample_codes(np.concatenate(got), k) if got else np.empty(0, dtype=np.int64)


    def score_sample(self, codes: np.ndarray, n: int) -> np.ndarray:
        """The sample's scores, a share of the pairs in each worker."""
        pool, root = self.workers(), str(self.wd.root)
        spans = np.array_split(codes, max(1, self.plan.workers))
        got = [f.result() for f in [pool.submit(score_unscreened, root, c, n, self.config) for c in spans]]
        return np.concatenate(got) if got else np.empty(0, dtype=np.float64)


def run_chunked(input_path: str | os.PathLike[str], outdir: str | os.PathLike[str], config: DedupConfig,
                engine: EngineConfig | None = None, read: ReadConfig | None = None) -> dict[str, Any]:
    """De-duplicate a file in bounded memory on this machine; writes OUTDIR like :meth:`DedupResult.write`.

    Returns the summary.
    """
    return LocalRun(input_path, outdir, config, engine, read).run()


__all__ = ["SPILL_CODES", "LocalRun", "run_chunked"]
