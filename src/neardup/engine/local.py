"""Run the pipeline over a corpus larger than memory: streamed, chunked, on every core, resumable.

Owns scheduling the stages over shards on disk and the memory plan; must not implement a stage
(it calls the same normalize/shingle/sketch/candidate/verify/cluster functions as :mod:`neardup.pipeline`,
so its output equals the in-memory run's exactly).

Stages and their checkpoints (see :mod:`neardup.engine.workdir`):

1. ``map``: documents are read in batches; each batch is normalized, shingled and sketched in a
   worker process and written as a shard. Texts are never held beyond their batch.
2. ``join``: the shards' arrays are concatenated into single files, memory-mapped from then on.
3. ``weights``: document frequencies of shingles (for IDF-weighted scores), one hash partition at a time.
4. ``candidates``: LSH bands a few at a time (or signature positions, shingle partitions, SimHash
   tables); pairs are spilled to disk by partition.
5. ``verify``: each partition of candidate pairs is de-duplicated and scored exactly.
6. ``cluster`` and write: union-find on the verified pairs; outputs streamed shard by shard.

Memory is planned from ``memory_limit``: batch size, bands per pass, and partitions are chosen so
that the whole process tree stays under it (the plan is in ``summary.json``).
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import re
import time
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from neardup.candidates.buckets import pairs_from_keys
from neardup.candidates.hamming import hamming_pairs
from neardup.candidates.lsh import band_keys, optimal_bands_rows
from neardup.cluster import Clusters, cluster_pairs
from neardup.config import ConfigError, DedupConfig, config_to_dict
from neardup.engine.tiles import (load_tiles, pair_partition, partition_count, read_rows, score_tiled,
                                  tiles_for_run)
from neardup.engine.workdir import WorkDir, file_fingerprint, load_array, release, save_array, trim_heap
from neardup.io.read import DEFAULT_MAX_CHARS, InputError, is_url, iter_documents, iter_records, source_exists
from neardup.io.write import atomic_path, write_json
from neardup.pipeline import default_min_collisions, represent_batch
from neardup.represent import simhash
from neardup.text.shingle import ShingleSets
from neardup.verify.overlap import doc_weight_totals

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1e3, "kb": 1e3, "kib": 2**10, "m": 1e6, "mb": 1e6, "mib": 2**20,
          "g": 1e9, "gb": 1e9, "gib": 2**30, "t": 1e12, "tb": 1e12, "tib": 2**40}
# Measured working set of the map stage per document (text, tokens, shingle arrays), bytes.
_BYTES_PER_DOC_IN_FLIGHT = 24_000
_BASE_PROCESS_BYTES = 120 * 2**20  # interpreter + NumPy + PyArrow, per process


def parse_size(text: str | int) -> int:
    """Bytes from a size such as ``"1GB"``, ``"512MiB"`` or ``2000000``.

    >>> parse_size("1.5GB"), parse_size("512MiB")
    (1500000000, 536870912)
    """
    if isinstance(text, int):
        return text
    m = _SIZE_RE.match(text)
    if not m or (m.group(2) or "").lower() not in _UNITS:
        raise ConfigError(f"memory limit must look like 1GB, 512MB or 2GiB, got {text!r}")
    return int(float(m.group(1)) * _UNITS[(m.group(2) or "").lower()])


@dataclass(frozen=True)
class EngineConfig:
    """How a chunked run executes (not what it computes: that is :class:`DedupConfig`)."""

    memory_limit: int = 2 * 2**30
    workers: int = 0
    work_dir: str | None = None
    resume: bool = False
    keep_work: bool = False
    progress: bool = True
    batch_docs: int | None = None

    def __post_init__(self) -> None:
        if self.memory_limit < 256 * 2**20:
            raise ConfigError(f"memory limit must be at least 256MB, got {self.memory_limit} bytes")
        if self.workers < 0:
            raise ConfigError(f"workers must be >= 0 (0 = all cores), got {self.workers}")

    @property
    def n_workers(self) -> int:
        """Worker processes for the map stage (0 means one per core)."""
        return self.workers or (os.cpu_count() or 1)


@dataclass(frozen=True)
class Plan:
    """The memory plan: sizes chosen so the process tree stays under the limit."""

    batch_docs: int
    in_flight: int
    workers: int


def make_plan(engine: EngineConfig) -> Plan:
    """Choose batch size and parallelism for the map stage from the memory limit.

    >>> make_plan(EngineConfig(memory_limit=parse_size("4GB"), workers=2)).batch_docs
    2500
    """
    workers = engine.n_workers
    budget = engine.memory_limit - _BASE_PROCESS_BYTES * (workers + 1)
    budget = max(budget, 64 * 2**20)
    in_flight = workers + 1
    batch = int(budget * 0.5 / in_flight / _BYTES_PER_DOC_IN_FLIGHT)
    # Capped at 2,500 documents: smaller batches keep every worker busy (measured faster at 20k docs).
    batch = engine.batch_docs or min(max(batch // 500 * 500, 500), 2500)
    return Plan(batch_docs=batch, in_flight=in_flight, workers=workers)


def _map_shard(index: int, ids: list[str], texts: list[str], lines: list[int], config: DedupConfig,
               root: str, max_chars: int) -> dict[str, Any]:
    """Worker: normalize, shingle and sketch one batch; write it as shard ``index``."""
    wd = WorkDir(root)
    t0 = time.perf_counter()
    sets, sketch = represent_batch(texts, config, max_chars)
    if sketch is None:
        sketch = np.zeros(len(sets), dtype=np.uint8)
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    save_array(wd.shard(index, "values.npy"), sets.values)
    save_array(wd.shard(index, "offsets.npy"), sets.offsets)
    save_array(wd.shard(index, "sketch.npy"), sketch)
    table = pa.table({"id": pa.array(ids, pa.string()), "length": pa.array(lengths),
                      "line": pa.array(lines, pa.int64())})
    with atomic_path(wd.shard(index, "ids.parquet"), durable=False) as tmp:
        pq.write_table(table, tmp)
    n_empty = sum(1 for t in texts if not t.strip())
    n_truncated = sum(1 for t in texts if len(t) > max_chars)
    with atomic_path(wd.shard(index, "done"), durable=False) as tmp:
        tmp.write_text(f"{len(ids)} {n_empty} {n_truncated}\n")
    trim_heap()
    return {"index": index, "n": len(ids), "seconds": time.perf_counter() - t0}


def _verify_part(root: str, part: int, n: int, config: DedupConfig, max_codes: int) -> int:
    """Worker: verify candidate partition ``part`` (its spilled pair files) into ``verified-NNN.npz``.

    When the partition holds more than ``max_codes`` candidate codes (repeats included), it is verified
    in several passes over the files, each taking the codes with one value of ``code % passes``
    (repeats of a pair always fall in the same pass), so memory stays bounded by ``max_codes`` whatever
    the number of candidates. Returns the number of distinct candidates; a partition already verified
    is skipped (resume).
    """
    wd = WorkDir(root)
    out = wd.pairs / f"verified-{part:03d}.npz"
    if out.exists():
        return int(np.load(out)["n_candidates"][0])
    files = sorted(wd.pairs.glob(f"{part:03d}-*.npy"))
    total = sum(int(load_array(f).shape[0]) for f in files)
    passes = max(1, math.ceil(total / max(1, max_codes)))
    lefts, rights, scores, n_candidates = [], [], [], 0
    for sub in range(passes):
        chunk = []
        for f in files:
            codes = load_array(f, mmap=False)
            chunk.append(codes[codes % passes == sub] if passes > 1 else codes)
        codes = np.unique(np.concatenate(chunk)) if chunk else np.empty(0, dtype=np.int64)
        del chunk
        left, right, score, count = score_codes(root, codes, n, config)
        lefts.append(left)
        rights.append(right)
        scores.append(score)
        n_candidates += count
    _save_npz(out, left=np.concatenate(lefts), right=np.concatenate(rights), score=np.concatenate(scores),
              n_candidates=np.array([n_candidates]))
    del lefts, rights, scores
    trim_heap()
    return n_candidates


def _weights_part(root: str, part: int, parts: int, idf_power: float, span: int = 1 << 20) -> None:
    """Worker: IDF weights of the values in hash partition ``part``, written in place into
    ``weights.npy.tmp`` (partitions are disjoint sets of positions, so workers never overlap).
    Writes go ``span`` file positions at a time, each block's mapped pages dropped after it."""
    n = len(np.load(Path(root) / "offsets.npy", mmap_mode="r")) - 1
    vals, pos = _partition(Path(root) / "values.npy", part, parts)
    if vals.size:
        _, inverse, counts = np.unique(vals, return_inverse=True, return_counts=True)
        weights = np.log((n + 1) / counts[inverse]) ** idf_power
        del vals, inverse, counts
        out = np.load(Path(root) / "weights.npy.tmp", mmap_mode="r+")
        cuts = np.searchsorted(pos, np.arange(0, int(pos[-1]) + 1 + span, span))
        for lo, hi in zip(cuts[:-1], cuts[1:]):  # positions ascend: each block dirties one span of the file
            if hi > lo:
                out[pos[lo:hi]] = weights[lo:hi]
                release(out)
        out.flush()
    trim_heap()


def score_codes(root: str, codes: np.ndarray, n: int, config: DedupConfig,
                max_hamming: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Verify distinct candidate pairs, given as codes ``left * n + right``, against the joined arrays
    of the work directory ``root``; returns the pairs whose score passes the threshold, and the number
    of candidates (after the Hamming filter).

    Shared by the local and the Ray engine. Set scores read two document tiles at a time
    (:mod:`neardup.engine.tiles`), so memory stays bounded. ``max_hamming`` additionally filters
    SimHash pairs by Hamming distance (candidates from table buckets may exceed it).
    """
    left, right = codes // n, codes % n
    cfg = config
    if cfg.method == "simhash" or cfg.verify.score == "none":
        sketch = load_array(os.path.join(root, "sketch.npy"))
        a, b = np.asarray(sketch[left]), np.asarray(sketch[right])
        if cfg.method == "simhash":
            if max_hamming is not None:
                near = simhash.hamming(a, b) <= max_hamming if left.size else np.zeros(0, dtype=bool)
                left, right, a, b = left[near], right[near], a[near], b[near]
            s = simhash.similarity(a, b)
        else:
            s = np.mean(a == b, axis=1) if left.size else np.empty(0)
    else:
        weighted = cfg.verify.score.startswith("weighted-")
        totals = load_array(os.path.join(root, "totals.npy"), mmap=False) if weighted else None
        s = score_tiled(root, left, right, cfg.verify.score, load_tiles(root), totals)
    keep = s >= float(cfg.threshold) - 1e-12
    return left[keep], right[keep], s[keep], int(left.size)


def joined_sets(root: str | os.PathLike[str]) -> ShingleSets:
    """The shingle sets of a work directory after the join stage (values memory-mapped)."""
    return ShingleSets(load_array(Path(root) / "values.npy"), load_array(Path(root) / "offsets.npy", mmap=False))


def _save_npz(path: Path, **arrays: np.ndarray) -> None:
    with atomic_path(path, durable=False) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)


def process_pool(workers: int) -> ProcessPoolExecutor:
    """Worker processes for CPU-bound work, started by a fork server: never a plain fork of this
    process, whose thread pools (rensa's, FAISS's, onnxruntime's) would be dead in the child and
    deadlock it. As with any ``multiprocessing`` use, a script that calls it (or the chunked engine)
    must guard its entry point with ``if __name__ == "__main__":``.
    """
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("forkserver"))


def _pool(workers: int) -> ProcessPoolExecutor | _InlineExecutor:
    """The chunked engine's workers (:func:`process_pool`); one worker runs inline."""
    return _InlineExecutor() if workers <= 1 else process_pool(workers)


def _batches(path: str | Path, text_field: str, id_field: str, on_error: str, batch_docs: int,
             skipped: list[dict[str, Any]]) -> Iterator[tuple[list[str], list[str], list[int]]]:
    ids: list[str] = []
    texts: list[str] = []
    lines: list[int] = []
    records = iter_records(path, [id_field, text_field])
    for doc in iter_documents(records, str(path), text_field, id_field, on_error, skipped, id_hashes=True):
        ids.append(doc.id)
        texts.append(doc.text)
        lines.append(doc.line)
        if len(ids) >= batch_docs:
            yield ids, texts, lines
            ids, texts, lines = [], [], []
    if ids:
        yield ids, texts, lines


class ChunkedRun:
    """One chunked run of a :class:`DedupConfig` over an input file, in a work directory."""

    def __init__(self, input_path: str | os.PathLike[str], outdir: str | os.PathLike[str], config: DedupConfig,
                 engine: EngineConfig | None = None, text_field: str = "text", id_field: str = "id",
                 on_error: str = "raise", max_chars: int = DEFAULT_MAX_CHARS) -> None:
        self.input: str | Path = input_path if is_url(input_path) else Path(input_path)  # type: ignore[assignment]
        self.outdir = Path(outdir)
        self.config = config
        self.engine = engine or EngineConfig()
        self.text_field, self.id_field, self.on_error, self.max_chars = text_field, id_field, on_error, max_chars
        self.wd = WorkDir(self.engine.work_dir or self.outdir / ".neardup-work")
        self.plan = make_plan(self.engine)
        self.timings: dict[str, float] = {}
        self.counts: dict[str, Any] = {}
        self.skipped: list[dict[str, Any]] = []
        self._pool: ProcessPoolExecutor | _InlineExecutor | None = None

    # ---- helpers -------------------------------------------------------------------------
    def workers(self) -> ProcessPoolExecutor | _InlineExecutor:
        """The run's worker processes: started on first use, shared by the stages, stopped by :meth:`close`."""
        if self._pool is None:
            self._pool = _pool(self.plan.workers)
        return self._pool

    def make_room(self, need: int) -> None:
        """Before a stage that will need about ``need`` bytes in its workers: replace the workers when
        what they still hold from earlier stages (memory the allocators keep for reuse, measured from
        ``/proc``) plus ``need`` would pass half the memory limit. Fresh workers cost about half a
        second, so small runs keep theirs."""
        pool = self._pool
        if isinstance(pool, ProcessPoolExecutor):
            held = sum(_resident_bytes(pid) for pid in list(getattr(pool, "_processes", {}) or {}))
            if held + need > self.engine.memory_limit * 0.5:
                self.close()

    def close(self) -> None:
        """Stop the worker processes (a no-op when none were started)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def _bar(self, total: int | None, desc: str, unit: str = "doc") -> tqdm:
        return tqdm(total=total, desc=desc, unit=unit, disable=not self.engine.progress, leave=False)

    def _timed(self, name: str, t0: float) -> None:
        self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - t0
        trim_heap()  # each stage ends with its temporaries handed back, not kept for the next

    def manifest(self) -> dict[str, Any]:
        """What identifies this run for ``--resume``."""
        return {"input": file_fingerprint(self.input), "config": config_to_dict(self.config),
                "text_field": self.text_field, "id_field": self.id_field, "on_error": self.on_error,
                "max_chars": self.max_chars, "batch_docs": self.plan.batch_docs}

    # ---- stages --------------------------------------------------------------------------
    def map(self) -> int:
        """Stage 1: shards of normalized, shingled, sketched documents. Returns the shard count."""
        t0 = time.perf_counter()
        if not source_exists(self.input):
            raise InputError(self.input, None, "no such file or folder")
        bar = self._bar(None, "reading + shingling")
        n_shards = 0
        pending: list[Future[dict[str, Any]]] = []
        pool = self.workers()
        for index, (ids, texts, lines) in enumerate(_batches(self.input, self.text_field, self.id_field,
                                                             self.on_error, self.plan.batch_docs, self.skipped)):
            n_shards = index + 1
            if self.wd.shard_done(index):
                bar.update(len(ids))
                continue
            pending.append(pool.submit(_map_shard, index, ids, texts, lines, self.config, str(self.wd.root),
                                       self.max_chars))
            while len(pending) >= self.plan.in_flight:
                bar.update(pending.pop(0).result()["n"])
        for fut in pending:
            bar.update(fut.result()["n"])
        bar.close()
        if n_shards == 0:
            raise InputError(self.input, None, "no documents found (empty input)")
        self._timed("map", t0)
        return n_shards

    def join(self, n_shards: int) -> None:
        """Stage 2: concatenate shard arrays into single memory-mappable files."""
        if self.wd.done("join"):
            return
        t0 = time.perf_counter()
        counts = [[int(x) for x in self.wd.shard(i, "done").read_text().split()] for i in range(n_shards)]
        sizes = [c[0] for c in counts]
        n_values = sum(int(load_array(self.wd.shard(i, "values.npy")).shape[0]) for i in range(n_shards))
        n = sum(sizes)
        first = load_array(self.wd.shard(0, "sketch.npy"))
        values = np.lib.format.open_memmap(self.wd.root / "values.npy.tmp", mode="w+", dtype=np.uint64,
                                           shape=(n_values,))
        sketch = np.lib.format.open_memmap(self.wd.root / "sketch.npy.tmp", mode="w+", dtype=first.dtype,
                                           shape=(n,) + first.shape[1:])
        offsets = np.zeros(n + 1, dtype=np.int64)
        lengths = np.zeros(n, dtype=np.int64)
        doc, val = 0, 0
        for i in range(n_shards):
            v = load_array(self.wd.shard(i, "values.npy"))
            o = load_array(self.wd.shard(i, "offsets.npy"), mmap=False)
            s = load_array(self.wd.shard(i, "sketch.npy"))
            k = sizes[i]
            values[val : val + v.shape[0]] = v
            sketch[doc : doc + k] = s
            values.flush()
            sketch.flush()
            release(values, sketch, v, s)
            offsets[doc + 1 : doc + k + 1] = o[1:] + val
            lengths[doc : doc + k] = pq.read_table(self.wd.shard(i, "ids.parquet"), columns=["length"])["length"].to_numpy()
            doc += k
            val += v.shape[0]
        values.flush()
        sketch.flush()
        del values, sketch
        os.replace(self.wd.root / "values.npy.tmp", self.wd.root / "values.npy")
        os.replace(self.wd.root / "sketch.npy.tmp", self.wd.root / "sketch.npy")
        save_array(self.wd.root / "offsets.npy", offsets)
        save_array(self.wd.root / "lengths.npy", lengths)
        write_json(self.wd.root / "shards.json", {"sizes": sizes, "n_empty": sum(c[1] for c in counts),
                                                  "n_truncated": sum(c[2] for c in counts)})
        self.wd.mark("join")
        self._timed("join", t0)

    def sets(self) -> ShingleSets:
        """The joined shingle sets, memory-mapped."""
        return joined_sets(self.wd.root)

    def _value_partitions(self, n_values: int, concurrent: int = 1) -> int:
        # np.unique on a partition needs about 40 bytes a value; ``concurrent`` partitions at a time.
        need = n_values * 40 * concurrent / (self.engine.memory_limit * 0.3)
        return max(1, 2 ** math.ceil(math.log2(max(1, need, concurrent))))

    def weights(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Stage 3: IDF weights aligned with the values (hash partitions of the values, in the worker
        processes), and per-document totals (weighted scores only)."""
        cfg = self.config
        if not cfg.verify.score.startswith("weighted-") or cfg.method == "simhash":
            return None
        path = self.wd.root / "weights.npy"
        if not self.wd.done("weights"):
            t0 = time.perf_counter()
            sets = self.sets()
            n_values = sets.values.shape[0]
            workers = self.plan.workers
            parts = self._value_partitions(n_values, workers)
            tmp = self.wd.root / "weights.npy.tmp"
            np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float64, shape=(n_values,)).flush()
            self.make_room(min(n_values * 40, int(self.engine.memory_limit * 0.3)))
            pool = self.workers()
            for fut in [pool.submit(_weights_part, str(self.wd.root), p, parts, cfg.verify.idf_power)
                        for p in range(parts)]:
                fut.result()
            out = load_array(tmp)
            totals = doc_weight_totals(sets, out, after_block=lambda: release(out, sets.values))
            del out
            os.replace(tmp, path)
            save_array(self.wd.root / "totals.npy", totals)
            self.wd.mark("weights")
            self._timed("weights", t0)
        return load_array(path), load_array(self.wd.root / "totals.npy", mmap=False)

    def _spill(self, left: np.ndarray, right: np.ndarray, tag: str, n: int, parts: int) -> None:
        """Write candidate pairs as codes ``left * n + right``, split by the tile of ``left``, so each
        partition's verification reads one left tile."""
        if left.size == 0:
            return
        codes = left.astype(np.int64) * n + right
        part = pair_partition(left, self._tiles, parts)
        for p in range(parts):
            sel = codes[part == p]
            if sel.size:
                save_array(self.wd.pairs / f"{p:03d}-{tag}.npy", sel)

    def candidates(self) -> int:
        """Stage 4: candidate pairs spilled to disk by partition; returns the partition count."""
        cfg = self.config
        sketch = load_array(self.wd.root / "sketch.npy")
        sets = self.sets()
        n = len(sets)
        # Pair partitions: about 40 bytes a candidate pair while de-duplicating and verifying, with one
        # partition in each worker at a time; at least one partition per worker.
        workers = self.plan.workers
        parts = max(workers, int(math.ceil(n * 16 * 40 * workers / (self.engine.memory_limit * 0.3))))
        self.make_room(int(self.engine.memory_limit * 0.25))  # the band keys, in this process
        self._tiles = tiles_for_run(self.wd.root, sets.offsets, self.engine.memory_limit, self.plan.workers,
                                    cfg.verify.score)
        parts = partition_count(parts, self._tiles)
        self.counts.update(tiles=len(self._tiles) - 1)
        if self.wd.done("candidates"):
            return self._parts_written()
        t0 = time.perf_counter()
        empty = np.asarray(sets.sizes == 0)
        docs = np.flatnonzero(~empty).astype(np.int64)
        if cfg.method == "minhash":
            mh = cfg.minhash
            if mh.rule == "lsh":
                bands, rows = lsh_bands_rows(cfg)
                self.counts.update(bands=bands, rows=rows)
                # Keys of a few bands at a time: 8 bytes a document per band, times ~4 while sorting.
                per_pass = max(1, int(self.engine.memory_limit * 0.25 / max(1, docs.size * 8 * 4)))
                bar = self._bar(bands, "LSH bands", "band")
                for b0 in range(0, bands, per_pass):
                    b1 = min(bands, b0 + per_pass)
                    if self.wd.done(f"bands-{b0}"):
                        bar.update(b1 - b0)
                        continue
                    keys = np.empty((docs.size, b1 - b0), dtype=np.uint64)
                    for lo in range(0, docs.size, 1 << 16):
                        rows_sig = np.asarray(sketch[docs[lo : lo + (1 << 16)], b0 * rows : b1 * rows])
                        keys[lo : lo + (1 << 16)] = band_keys(rows_sig, b1 - b0, rows)
                        release(sketch)
                    for j in range(b1 - b0):  # each band is bucketed on its own, as in lsh_pairs
                        left, right = pairs_from_keys(keys[:, j], docs, star_above=mh.max_bucket)
                        self._spill(left, right, f"b{b0 + j:05d}", n, parts)
                        bar.update(1)
                    self.wd.mark(f"bands-{b0}")
                bar.close()
            else:
                c = min_collisions_for(cfg)
                self.counts.update(min_collisions=c)
                lefts, rights = [], []
                for j in range(mh.num_perm):
                    col = np.asarray(sketch[docs, j]).astype(np.uint64)
                    left, right = pairs_from_keys(col, docs, max_group=mh.max_bucket, unique=False)
                    lefts.append(left)
                    rights.append(right)
                from neardup.candidates.buckets import count_pairs

                left, right, counts = count_pairs(np.concatenate(lefts), np.concatenate(rights))
                keep = counts >= c
                self._spill(left[keep], right[keep], "collisions", n, parts)
        elif cfg.method == "ngram":
            vparts = self._value_partitions(sets.values.shape[0])
            for p in range(vparts):
                vals, pos = _partition(self.wd.root / "values.npy", p, vparts)
                doc_of = np.searchsorted(sets.offsets, pos, side="right") - 1
                left, right = pairs_from_keys(vals, doc_of, max_group=cfg.ngram.max_df)
                self._spill(left, right, f"v{p:04d}", n, parts)
        else:
            max_distance = max_hamming_for(cfg)
            self.counts.update(max_hamming=max_distance)
            left, right, _ = hamming_pairs(np.asarray(sketch), max_distance, exclude=empty,
                                           max_tables=cfg.simhash.max_tables)
            self._spill(left, right, "simhash", n, parts)
        save_array(self.wd.root / "parts.npy", np.array([parts]))
        self.wd.mark("candidates")
        self._timed("candidates", t0)
        return parts

    def _parts_written(self) -> int:
        return int(load_array(self.wd.root / "parts.npy", mmap=False)[0])

    def verify(self, parts: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stage 5: de-duplicate and score each partition of candidates in the worker processes; keep
        those over the threshold. Each partition's result is its own checkpoint."""
        path = self.wd.root / "verified.npz"
        if not self.wd.done("verify"):
            self.weights()  # stage 3, before the workers need it (timed on its own)
            t0 = time.perf_counter()
            n = len(self.sets())
            bar = self._bar(parts, "verifying", "part")
            self.make_room(min(int(self.sets().values.shape[0]) * 16, int(self.engine.memory_limit * 0.45)))
            pool = self.workers()
            # About 64 bytes a candidate code while de-duplicating and scoring (measured), one
            # partition per worker, beside its two tiles (a fifth of the limit) and the process itself.
            max_codes = int(self.engine.memory_limit * 0.25 / max(1, self.plan.workers) / 64)
            for fut in [pool.submit(_verify_part, str(self.wd.root), p, n, self.config, max_codes)
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
            _save_npz(path, left=left[order], right=right[order], score=score[order],
                      n_candidates=np.array([n_candidates]))
            self.wd.mark("verify")
            self._timed("verify", t0)
        data = np.load(path)
        self.counts["n_candidates"] = int(data["n_candidates"][0])
        return data["left"], data["right"], data["score"]

    def _ids_for(self, n_shards: int, wanted: np.ndarray) -> dict[int, str]:
        """Ids of the documents at the (sorted) global indices ``wanted``."""
        out: dict[int, str] = {}
        sizes = self._sizes()
        start = 0
        for i in range(n_shards):
            end = start + sizes[i]
            sel = wanted[(wanted >= start) & (wanted < end)]
            if sel.size:
                ids = pq.read_table(self.wd.shard(i, "ids.parquet"), columns=["id"])["id"].to_pylist()
                for g in sel.tolist():
                    out[g] = ids[g - start]
            start = end
        return out

    def _shards_info(self) -> dict[str, Any]:
        return json.loads((self.wd.root / "shards.json").read_text())

    def _sizes(self) -> list[int]:
        return self._shards_info()["sizes"]

    def write(self, n_shards: int, clusters: Clusters, left: np.ndarray, right: np.ndarray,
              scores: np.ndarray) -> None:
        """Stage 6 output: clusters.parquet and pairs.parquet, streamed shard by shard, atomically."""
        reps = np.unique(clusters.labels[clusters.sizes > 1])
        names = self._ids_for(n_shards, np.unique(np.concatenate([reps, left, right])))
        self.outdir.mkdir(parents=True, exist_ok=True)
        schema = pa.schema([("id", pa.string()), ("cluster", pa.string()), ("cluster_size", pa.int64()),
                            ("is_representative", pa.bool_()), ("oversized", pa.bool_())])
        with atomic_path(self.outdir / "clusters.parquet") as tmp:
            with pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
                start = 0
                for i, size in enumerate(self._sizes()):
                    ids = pq.read_table(self.wd.shard(i, "ids.parquet"), columns=["id"])["id"].to_pylist()
                    lab = clusters.labels[start : start + size]
                    sz = clusters.sizes[start : start + size]
                    cluster_names = [ids[k] if sz[k] == 1 else names[int(lab[k])] for k in range(size)]
                    writer.write_table(pa.table({
                        "id": pa.array(ids, pa.string()), "cluster": pa.array(cluster_names, pa.string()),
                        "cluster_size": pa.array(sz.astype(np.int64)),
                        "is_representative": pa.array(lab == np.arange(start, start + size)),
                        "oversized": pa.array(clusters.oversized[start : start + size]),
                    }, schema=schema))
                    start += size
        from neardup.io.write import write_table

        write_table(self.outdir / "pairs.parquet", {
            "left": [names[int(i)] for i in left], "right": [names[int(i)] for i in right],
            "score": scores.astype(np.float64)})

    def map_or_clean(self, outdir_existed: bool) -> int:
        """The map stage; on bad input remove this run's traces (it is not an interruption to resume)."""
        try:
            return self.map()
        except InputError:
            self.wd.clean()
            if not outdir_existed and self.outdir.exists() and not any(self.outdir.iterdir()):
                self.outdir.rmdir()
            raise

    def run(self) -> dict[str, Any]:
        """All stages; returns the summary (also written to ``summary.json``)."""
        t_start = time.perf_counter()
        outdir_existed = self.outdir.exists()
        if not source_exists(self.input):
            raise InputError(self.input, None, "no such file or folder")
        resumed = self.wd.prepare(self.manifest(), self.engine.resume)
        try:
            n_shards = self.map_or_clean(outdir_existed)
            self.join(n_shards)
            parts = self.candidates()
            left, right, scores = self.verify(parts)
        finally:
            self.close()
        t0 = time.perf_counter()
        lengths = load_array(self.wd.root / "lengths.npy", mmap=False)
        clusters = cluster_pairs(lengths.size, left, right, scores, lengths, self.config.cluster)
        self._timed("cluster", t0)
        t0 = time.perf_counter()
        self.write(n_shards, clusters, left, right, scores)
        self._timed("write", t0)
        summary = self._summary(clusters, left.size, n_shards, resumed, time.perf_counter() - t_start)
        write_json(self.outdir / "summary.json", summary)
        if not self.engine.keep_work:
            self.wd.clean()
        return summary

    def _summary(self, clusters: Clusters, n_pairs: int, n_shards: int, resumed: bool, seconds: float) -> dict[str, Any]:
        n = clusters.labels.size
        reps = clusters.is_representative
        multi = np.flatnonzero(reps & (clusters.sizes > 1))
        largest = multi[np.lexsort((multi, -clusters.sizes[multi]))][:10]
        names = self._ids_for(n_shards, np.sort(largest))
        params = config_to_dict(self.config)
        params.update({k: v for k, v in self.counts.items() if k not in ("n_candidates", "tiles")})
        return {
            "input": str(self.input),
            "n_docs": int(n),
            "n_clusters": int(reps.sum()),
            "n_duplicate_clusters": int(multi.size),
            "n_duplicates": int(n - reps.sum()),
            "duplicate_ratio": float((n - reps.sum()) / n) if n else 0.0,
            "n_pairs": int(n_pairs),
            "n_candidates": self.counts.get("n_candidates"),
            "n_empty_docs": self._shards_info()["n_empty"],
            "n_truncated_docs": self._shards_info()["n_truncated"],
            "n_skipped_records": len(self.skipped),
            "skipped_records": self.skipped[:100],
            "n_oversized_clusters": int((reps & clusters.oversized).sum()),
            "largest_clusters": [{"cluster": names[int(i)], "size": int(clusters.sizes[i]),
                                  "oversized": bool(clusters.oversized[i])} for i in largest],
            "params": params,
            "engine": {**asdict(self.engine), "plan": asdict(self.plan), "shards": n_shards,
                       "tiles": self.counts.get("tiles"), "resumed": resumed},
            "timings": {k: round(v, 4) for k, v in self.timings.items()} | {"total": round(seconds, 4)},
            "docs_per_second": round(n / seconds, 1) if seconds > 0 else None,
        }


def lsh_bands_rows(config: DedupConfig) -> tuple[int, int]:
    """(bands, rows) of a MinHash LSH run: the configured ones, else the optimum for the LSH threshold."""
    mh = config.minhash
    if mh.bands is not None and mh.rows is not None:
        return mh.bands, mh.rows
    return optimal_bands_rows(mh.lsh_threshold or float(config.threshold), mh.num_perm)


def min_collisions_for(config: DedupConfig) -> int:
    """Shared signature positions a pair needs under the MinHash ``collisions`` rule."""
    mh = config.minhash
    return mh.min_collisions or default_min_collisions(float(config.threshold), mh.num_perm)


def max_hamming_for(config: DedupConfig) -> int:
    """Largest SimHash Hamming distance that can still reach the threshold."""
    return int(math.floor((1.0 - float(config.threshold)) * simhash.BITS + 1e-9))


def _partition(path: str | os.PathLike[str], part: int, parts: int,
               block: int = 1 << 22) -> tuple[np.ndarray, np.ndarray]:
    """The values of the ``.npy`` file ``path`` whose top bits equal ``part`` (of a power-of-two
    ``parts``), with their positions; the file is read block by block (plain reads, no mapping)."""
    shift = np.uint64(64 - int(math.log2(parts))) if parts > 1 else None
    total = int(np.load(path, mmap_mode="r").shape[0])
    chunks, positions = [], []
    for lo in range(0, total, block):
        v = read_rows(path, lo, min(total, lo + block))
        mask = (v >> shift) == part if shift is not None else np.ones(v.size, dtype=bool)
        chunks.append(v[mask])
        positions.append(np.flatnonzero(mask) + lo)
    if not chunks:
        return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64)
    return np.concatenate(chunks), np.concatenate(positions)


def _resident_bytes(pid: int) -> int:
    """Resident memory of process ``pid`` (0 where ``/proc`` is not available)."""
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class _InlineExecutor:
    """A ProcessPoolExecutor stand-in that runs tasks in this process (one worker)."""

    def __enter__(self) -> _InlineExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def submit(self, fn: Any, *args: Any) -> Future[Any]:
        fut: Future[Any] = Future()
        fut.set_result(fn(*args))
        return fut

    def shutdown(self) -> None:
        return None


def run_chunked(input_path: str | os.PathLike[str], outdir: str | os.PathLike[str], config: DedupConfig,
                engine: EngineConfig | None = None, **read_options: Any) -> dict[str, Any]:
    """De-duplicate a file in bounded memory; writes OUTDIR like :meth:`DedupResult.write`.

    Returns the summary. ``read_options``: ``text_field``, ``id_field``, ``on_error``, ``max_chars``.
    """
    return ChunkedRun(input_path, outdir, config, engine, **read_options).run()
