"""The chunked engine on one machine: a corpus larger than memory, streamed, on every core, resumable.

Owns scheduling the map stage and a keyed method's candidate and verify stages on worker processes,
within the memory plan (:mod:`neardup.engine.plan`); must not implement a stage: workers run the tasks
of :mod:`neardup.engine.tasks`, which call the method's own operations, so the output equals the
in-memory run's exactly. The stages, checkpoints and outputs are those of :mod:`neardup.engine.sharded`.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import Future
from typing import Any

import numpy as np

from neardup.config import DedupConfig, EngineConfig, ReadConfig
from neardup.engine.plan import codes_per_pass, key_partitions, pair_partitions, tables_per_pass
from neardup.engine.sharded import ShardedRun
from neardup.engine.tasks import candidate_group, map_shard, verify_partition
from neardup.engine.tiles import partition_count, tiles_for_run
from neardup.engine.workdir import load_array, save_array, save_npz
from neardup.io.read import InputError
from neardup.methods.base import KeyedMethod


class LocalRun(ShardedRun):
    """One chunked run on this machine (see :mod:`neardup.engine.sharded` for the stages)."""

    engine_name = "local"

    def map(self) -> int:
        """Stage 1: each batch represented by a worker process and written as a shard; returns the shard count."""
        t0 = time.perf_counter()
        bar = self.bar(None, "reading + representing")
        n_shards = 0
        pending: list[Future[dict[str, Any]]] = []
        pool = self.workers()
        for index, batch in enumerate(self.batches()):
            n_shards = index + 1
            if self.wd.shard_done(index):
                bar.update(len(batch))
                continue
            pending.append(pool.submit(map_shard, index, [d.id for d in batch], [d.text for d in batch],
                                       [d.line for d in batch], self.config, str(self.wd.root), self.read.max_chars,
                                       self.field_values(batch)))
            while len(pending) >= self.plan.in_flight:
                bar.update(pending.pop(0).result()["n"])
        for fut in pending:
            bar.update(fut.result()["n"])
        bar.close()
        if n_shards == 0:
            raise InputError(self.input, None, "no documents found (empty input)")
        self.timed("map", t0)
        return n_shards

    def keyed_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.verify(self.candidates())

    def candidates(self) -> int:
        """Stage 4a: the method's key tables a group at a time (hash partitions of a large table's keys), in
        the worker processes: each table's buckets turned into pairs and spilled to disk by pair partition
        (repeats are removed, or counted, when a partition is verified); returns the partition count."""
        method = self.method
        assert isinstance(method, KeyedMethod)
        rep = self.representation()
        n = len(rep)
        limit, workers = self.engine.memory_limit, self.plan.workers
        tiles = tiles_for_run(self.wd.root, np.asarray(rep.sets.offsets), limit, workers, method.score_name)
        parts = partition_count(pair_partitions(n, limit, workers), tiles)
        self.counts.update(tiles=len(tiles) - 1)
        if self.wd.done("candidates"):
            return int(load_array(self.wd.root / "parts.npy", mmap=False)[0])
        t0 = time.perf_counter()
        docs = np.flatnonzero(~rep.empty).astype(np.int64)
        tables = method.n_tables()
        rows_per_table = int(method.key_counts(rep, docs).sum()) // max(1, tables)
        # Each worker sorts the key rows of its group: the plan's share of the limit, split between them.
        key_parts = key_partitions(rows_per_table, limit, concurrent=workers)
        group = tables_per_pass(rows_per_table, limit // workers) if key_parts == 1 else 1
        self.make_room(int(limit * 0.4))
        bar = self.bar(tables, "candidates", "table")
        todo = [(first, min(tables, first + group), p) for first in range(0, tables, group) for p in range(key_parts)]
        bar.update(sum((last - first) / key_parts for first, last, p in todo if self.wd.done(f"keys-t{first:05d}p{p:04d}")))
        todo = [t for t in todo if not self.wd.done(f"keys-t{t[0]:05d}p{t[2]:04d}")] if docs.size >= 2 else []
        pool = self.workers()
        found = 0
        pending: list[tuple[Future[int], int]] = []
        for first, last, p in todo:  # a few groups in flight, each told how many candidates came before it
            pending.append((pool.submit(candidate_group, str(self.wd.root), self.config, first, last, p, key_parts,
                                        parts, found), last - first))
            while len(pending) >= self.plan.in_flight:
                found = self._group_done(pending.pop(0), found, docs.size, bar, key_parts)
        for item in pending:
            found = self._group_done(item, found, docs.size, bar, key_parts)
        bar.close()
        save_array(self.wd.root / "parts.npy", np.array([parts]))
        self.wd.mark("candidates")
        self.timed("candidates", t0)
        return parts

    def _group_done(self, item: tuple[Future[int], int], found: int, n_docs: int, bar: Any, key_parts: int) -> int:
        """Wait for one candidate group; the candidates found so far (held to the method's cap)."""
        fut, width = item
        found += fut.result()
        self.method.check_candidates(found, n_docs)
        bar.update(width / key_parts)
        return found

    def verify(self, parts: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stage 4b: de-duplicate (or count) and score each partition of candidates in the worker processes;
        keep those over the threshold. Each partition's result is its own checkpoint."""
        path = self.wd.root / "verified.npz"
        if not self.wd.done("verify"):
            self.weights()  # stage 3, before the workers need it (timed on its own)
            t0 = time.perf_counter()
            sets = self.representation().sets
            n = len(sets)
            bar = self.bar(parts, "verifying", "part")
            self.make_room(min(int(sets.values.shape[0]) * 16, int(self.engine.memory_limit * 0.45)))
            pool = self.workers()
            max_codes = codes_per_pass(self.engine.memory_limit, self.plan.workers)
            for fut in [pool.submit(verify_partition, str(self.wd.root), p, n, self.config, max_codes)
                        for p in range(parts)]:
                fut.result()
                bar.update(1)
            bar.close()
            done = [np.load(self.wd.pairs / f"verified-{p:03d}.npz") for p in range(parts)]
            left = np.concatenate([d["left"] for d in done])
            right = np.concatenate([d["right"] for d in done])
            score = np.concatenate([d["score"] for d in done])
            n_candidates = sum(int(d["n_candidates"][0]) for d in done)
            order = np.lexsort((right, left))
            save_npz(path, left=left[order], right=right[order], score=score[order],
                     n_candidates=np.array([n_candidates]))
            self.wd.mark("verify")
            self.timed("verify", t0)
        data = np.load(path)
        self.counts["n_candidates"] = int(data["n_candidates"][0])
        return data["left"], data["right"], data["score"]


def run_chunked(input_path: str | os.PathLike[str], outdir: str | os.PathLike[str], config: DedupConfig,
                engine: EngineConfig | None = None, read: ReadConfig | None = None) -> dict[str, Any]:
    """De-duplicate a file in bounded memory on this machine; writes OUTDIR like :meth:`DedupResult.write`.

    Returns the summary.
    """
    return LocalRun(input_path, outdir, config, engine, read).run()


__all__ = ["LocalRun", "run_chunked"]
