"""A run over shards in a work directory, shared by the chunked local engine and the Ray engine: the
stages both schedule the same way, and the order of all of them.

Owns the work directory's life (manifest, resume, clean-up), the join, the IDF weights, the in-memory
pairs of vector methods, clustering, the streamed outputs and the summary; must not implement a stage
(each is a method's operation or a task of :mod:`neardup.engine.tasks`). Subclasses schedule the map
stage and the keyed methods' candidates and verification (:meth:`ShardedRun.map`,
:meth:`ShardedRun.keyed_pairs`).

Stages and their checkpoints (see :mod:`neardup.engine.workdir`):

1. ``map``: documents are read in batches; each batch is represented (normalized, shingled, sketched,
   embedded) by the method in a worker and written as a shard. Texts are never held beyond their batch.
2. ``join``: the shards' arrays are concatenated into single files, memory-mapped from then on (and deleted
   from the shards); the local engine appends each shard as soon as it and those before it are mapped
   (:class:`ShardJoin`).
3. ``weights``: document frequencies of shingles (for IDF-weighted scores), counted in a hash table a
   worker and kept as a table of each distinct value's IDF weight, with each document's summed weight; or,
   where the distinct values do not fit, a weight for every value, one hash partition at a time.
4. ``candidates`` and ``verify``: for a keyed method, its key tables a few at a time (hash partitions of
   the keys when a table is large), pairs spilled to disk by partition, then each partition
   de-duplicated and scored in the workers; for a vector method, its neighbours and scores in this
   process over the joined vectors (which must fit in memory). For a configuration ``auto`` chose, between the
   two the threshold read from a sample of the candidate scores (:meth:`ShardedRun.score_threshold`).
5. ``cluster`` and write: clusters of the verified pairs; outputs streamed shard by shard, atomically, each
   tagged with the run's id (an earlier ``summary.json`` removed first; the new one written last).
6. ``evidence`` (unless turned off): each pair's views and shared passages (:mod:`neardup.engine.evidence`);
   its texts are read again by a worker while this process clusters and writes.
"""

from __future__ import annotations

import abc

import contextlib
import json
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from neardup import calibrate_scores, methods
from neardup.arrays import distinct
from neardup.calibrate import SAMPLE_DOCS, needs_corpus, resolve
from neardup.cluster import (Clusters, cluster_pairs, field_value, lazy_greedy, ordered, passes, policy_ranks,
                             score_ceiling, score_floor, settled_copies, verify_in_order, written_pairs)
from neardup.config import DedupConfig, EngineConfig, ReadConfig, config_to_dict
from neardup.engine.plan import BYTES_PER_COUNTED_VALUE, make_plan, split_size, table_bytes, weight_partitions
from neardup.engine.processes import InlineExecutor, pool_held_bytes, stop_pool, worker_pool
from neardup.engine.summary import ClusterCounts, build_summary
from neardup.engine.tasks import (ORDER_FILES, SPLIT_DIR, assemble_weights, count_values, idf_table, partition_frequencies,
                                  score_unscreened, split_values, weights_of_table, weights_partition)
from neardup.engine.workdir import (WorkDir, append_array_bytes, array_header, file_fingerprint, joined, load_array,
                                   npy_header_bytes, release, save_array, trim_heap, work_root)
from neardup.jit import pays
from neardup.io.arrow import arrow_array, numpy_of, with_nulls
from neardup.io.parquet import read_parquet
from neardup.io.read import Document, InputError, iter_batches, resolve_sources, source_exists
from neardup.io.sources import ReadMeter, Sources
from neardup.io.write import (CLUSTER_SCHEMA, SUMMARY_RUN_ID, atomic_path, begin_outputs, new_run_id, with_run_id, write_json,
                              write_table)
from neardup.methods.base import KeyedMethod, Representation
from neardup.progress import ReadBar, progress_bar
from neardup.results import SCORES_FILE
from neardup.verify.overlap import doc_weight_totals


#: The shards' arrays that the join concatenates (and then deletes from the shards: half the disk, and page
#: cache the kernel need not write back).
JOINED_ROWS = ("values.npy", "sketch.npy", "vectors.npy", "chunks.npy")
#: Bytes before a joined array's rows: its ``.npy`` header, written once they are counted (NumPy's own length
#: for any array of up to three dimensions).
JOIN_HEADER = 128


class ShardJoin:
    """The join of the shards' arrays (:data:`JOINED_ROWS`), made as the map stage goes: each shard's appended
    to the joined files (``NAME.tmp``) once it and every shard before it are done, then deleted from the
    shard. A few shards' pages are in the page cache twice at a time, not the corpus's: at 200k stories, copying
    the 80 shards' 1 GB after the map took 2.6-4.6 s of one core (pages the kernel had to find, on a
    virtual machine), against about a second for the same copy shard by shard, mostly while the workers map.

    ``join.json`` records the shards appended and the bytes of each array, written after each append and
    before the shard's copies are deleted: a resumed run appends again from there (over any bytes a killed
    append left). :meth:`finish` appends what is left (all of it, for an engine that does not call
    :meth:`catch_up`) and gives each file its header and final name.
    """

    def __init__(self, wd: WorkDir) -> None:
        self.wd = wd
        self.state_path = wd.root / "join.json"
        state = json.loads(self.state_path.read_text()) if self.state_path.exists() else {"next": 0, "arrays": {}}
        #: The first shard not yet appended.
        self.next: int = state["next"]
        #: Each joined array's dtype, shape after its first axis, and data bytes appended so far.
        self.arrays: dict[str, dict[str, Any]] = state["arrays"]
        #: The join stage is complete (a resumed run maps nothing and appends nothing).
        self.complete = wd.done("join")

    def catch_up(self, upto: int) -> None:
        """Append shards :attr:`next` to ``upto - 1``, in order, as far as they are done."""
        while not self.complete and self.next < upto and self.wd.shard_done(self.next):
            self._append(self.next)

    def _append(self, index: int) -> None:
        if index == 0:
            self.arrays = {}
            for name in JOINED_ROWS:
                if self.wd.shard(0, name).exists():
                    shape, _, dtype = array_header(self.wd.shard(0, name))
                    self.arrays[name] = {"dtype": dtype.str, "tail": list(shape[1:]), "bytes": 0}
        for name, info in self.arrays.items():
            tmp = self.wd.root / f"{name}.tmp"
            if index and (not tmp.exists() or tmp.stat().st_size < JOIN_HEADER + info["bytes"]):
                raise RuntimeError(f"{tmp}: shorter than the {info['bytes']} bytes joined into it; the work "
                                   "directory is damaged: run again without --resume")
            with open(tmp, "r+b" if index else "w+b") as dst:
                if not index:  # the header's bytes at once: a first shard with no rows (empty texts) appends none
                    dst.truncate(JOIN_HEADER)
                info["bytes"] += append_array_bytes(self.wd.shard(index, name), dst, JOIN_HEADER + info["bytes"],
                                                    check=self._like_first(name, index))
        self.next = index + 1
        with atomic_path(self.state_path, durable=False) as tmp_state:  # a checkpoint: the shards can be mapped again
            tmp_state.write_text(json.dumps({"next": self.next, "arrays": self.arrays}))
        for name in self.arrays:  # at once: the next shard's copy takes the pages these free
            self.wd.shard(index, name).unlink(missing_ok=True)

    def _like_first(self, name: str, index: int) -> Callable[[tuple[int, ...], np.dtype], None]:
        """A check that shard ``index``'s array ``name`` has the first shard's dtype and row shape."""
        info = self.arrays[name]

        def check(shape: tuple[int, ...], dtype: np.dtype) -> None:
            if dtype.str != info["dtype"] or list(shape[1:]) != info["tail"]:
                raise RuntimeError(f"joining {name}: shard {index} holds {dtype} {shape}, the first shard "
                                   f"{info['dtype']} (..., {info['tail']})")
        return check

    def finish(self, n_shards: int) -> list[str]:
        """Append the shards not yet appended, head each joined file and give it its name; returns the names."""
        self.catch_up(n_shards)
        if self.next < n_shards:
            raise RuntimeError(f"joining: shard {self.next} of {n_shards} is not complete")
        for name, info in self.arrays.items():
            tmp = self.wd.root / f"{name}.tmp"
            if not tmp.exists() and (self.wd.root / name).exists():  # named before a resumed run was stopped
                continue
            dtype = np.dtype(info["dtype"])
            rows = info["bytes"] // (dtype.itemsize * math.prod(info["tail"]))
            with open(tmp, "r+b") as fh:
                fh.write(npy_header_bytes(dtype, (rows, *info["tail"]), JOIN_HEADER))
                fh.truncate(JOIN_HEADER + info["bytes"])  # past it: what a killed append left
            os.replace(tmp, self.wd.root / name)
        # what a run killed between an append's checkpoint and its deletions left
        self.wd.discard(self.wd.shard(i, name) for i in range(n_shards) for name in self.arrays)
        return list(self.arrays)


class DocIds:
    """The ids of some documents (sorted global indices ``docs``) as one Arrow ``large_string`` array: about 16
    bytes a document beside the ids' characters, where a dict of Python strings held about 130 (380 MB for the
    2.9M documents in pairs of a 10M-story corpus, in the process that writes). Its 64-bit offsets hold any
    number of id characters; :meth:`take` answers in ``string`` pieces of at most ``piece`` ids, each far
    below ``string``'s 2 GiB of characters, so the output columns keep their type.

    >>> ids = DocIds(np.array([3, 7, 9]), [pa.array(["c"]), pa.array(["g", "i"])], piece=2)
    >>> ids.take(np.array([9, 3, 9])).to_pylist(), ids.take(np.array([9, 3, 9])).num_chunks
    (['i', 'c', 'i'], 2)
    """

    def __init__(self, docs: np.ndarray, chunks: list[pa.Array], piece: int = 1 << 20) -> None:
        """``chunks``: the ids of ``docs`` in order, as ``string`` arrays (one a shard)."""
        self.docs, self.piece = docs, piece
        self.ids = pa.concat_arrays([pa.nulls(0, pa.large_string()), *(c.cast(pa.large_string()) for c in chunks)])

    def take(self, index: np.ndarray) -> pa.ChunkedArray:
        """The ids of the documents ``index`` (each one of :attr:`docs`), in order."""
        at = np.searchsorted(self.docs, np.asarray(index, dtype=np.int64))
        return pa.chunked_array([self.ids.take(arrow_array(at[i : i + self.piece])).cast(pa.string())
                                 for i in range(0, at.size, self.piece)], pa.string())


def _even_spans(total: int, pieces: int) -> list[tuple[int, int]]:
    """``0:total`` cut into ``pieces`` spans of (nearly) equal length, the empty ones left out.

    >>> _even_spans(5, 2), _even_spans(1, 3)
    ([(0, 2), (2, 5)], [(0, 1)])
    """
    cuts = np.linspace(0, total, pieces + 1).astype(np.int64).tolist()
    return [(lo, hi) for lo, hi in zip(cuts[:-1], cuts[1:]) if hi > lo]


def _run_all(pool: Any, tasks: list[tuple[Any, ...]], bar: Any = None, sizes: list[int] | None = None) -> list[Any]:
    """Each task (a function and its arguments) submitted to ``pool`` at once; their results in order (``bar``
    advanced by each task's ``sizes`` entry, or 1, as it finishes)."""
    futures = [pool.submit(*task) for task in tasks]
    out = []
    for i, fut in enumerate(futures):
        out.append(fut.result())
        if bar is not None:
            bar.update(sizes[i] if sizes else 1)
    return out


class ShardedRun(abc.ABC):
    """One run of a :class:`DedupConfig` over an input file, in a work directory (see the module docstring)."""

    #: The engine's name in :class:`~neardup.config.EngineConfig`.
    engine_name = "local"

    def __init__(self, input_path: str | os.PathLike[str], outdir: str | os.PathLike[str], config: DedupConfig,
                 engine: EngineConfig | None = None, read: ReadConfig | None = None) -> None:
        self.read = read or ReadConfig()
        #: The input's files (several read as one, :mod:`neardup.io.sources`).
        self.input: Sources = resolve_sources(input_path, self.read.encoding)
        #: How far the map stage has read through the input's bytes (its progress bar's).
        self.meter = ReadMeter(self.input.total_bytes())
        self.outdir = Path(outdir)
        self.engine = (engine or EngineConfig()).replace(name=self.engine_name)
        self.plan = make_plan(self.engine)
        self.config = resolve(config, self._sample_texts(self.input)) if needs_corpus(config) else config
        self.method = methods.get(self.config)
        #: The lowest score the verify stage keeps (set once the method is planned: a share of its threshold).
        self.floor = 1.0
        self.ceiling: float | None = None  # greedy's score ceiling, where it verifies in its two passes
        self.wd = WorkDir(work_root(self.outdir, self.engine.work_dir))
        #: The id every output file of this run carries (:func:`~neardup.io.write.new_run_id`).
        self.run_id = new_run_id()
        self.timings: dict[str, float] = {}
        self.counts: dict[str, Any] = {}
        self.skipped: list[dict[str, Any]] = []
        self.scoring: dict[str, Any] = {}
        self._pool: ProcessPoolExecutor | InlineExecutor | None = None
        self._rep: Representation | None = None
        self._weights_bar: Any = None  # the weights stage's bar, while it runs
        #: What the summary calls the input: as named, a list for several (the API names records spooled from
        #: Python "<memory>").
        self.source_name: str | list[str] = self.input.name

    # ---- helpers -------------------------------------------------------------------------
    def _sample_texts(self, path: str | os.PathLike[str]) -> list[str]:
        """The texts of the input's first documents (those ``method="auto"`` is calibrated on)."""
        for batch in iter_batches(path, self.read.replace(on_error="skip"), SAMPLE_DOCS):
            return [doc.text for doc in batch]
        return []

    def workers(self) -> ProcessPoolExecutor | InlineExecutor:
        """This process's worker processes: started on first use, shared by the stages, stopped by :meth:`close`."""
        if self._pool is None:
            self._pool = worker_pool(self.plan.workers)  # the fork server has loaded the stages' tasks
        return self._pool

    def make_room(self, need: int) -> None:
        """Before a stage that will need about ``need`` bytes in its workers: replace the workers when
        what they still hold from earlier stages (memory the allocators keep for reuse, measured from
        ``/proc``) plus ``need`` would pass half the memory limit. Fresh workers cost about half a
        second, so small runs keep theirs."""
        if isinstance(self._pool, ProcessPoolExecutor):
            if pool_held_bytes(self._pool) + need > self.engine.memory_limit * 0.5:
                self.close()

    def close(self, now: bool = False) -> None:
        """Stop the worker processes (a no-op when none were started); ``now``: kill them (an interrupt)."""
        if self._pool is not None:
            stop_pool(self._pool, now)
            self._pool = None

    def bar(self, total: int | None, desc: str, unit: str = "doc", **kwargs: Any) -> Any:
        """A progress bar (silent unless the engine shows progress)."""
        return progress_bar(self.engine.progress, total=total, desc=desc, unit=unit, leave=False, **kwargs)

    def read_bar(self) -> ReadBar:
        """The map stage's bar: the input's bytes read of its size (a rate and an ETA), the documents done beside
        (its ``update(n)`` counts documents)."""
        bar = self.bar(self.meter.total, "reading + representing", "B", unit_scale=True, unit_divisor=1024,
                       postfix="0 docs")
        return ReadBar(bar, lambda: self.meter.bytes_read)

    def timed(self, name: str, t0: float) -> None:
        """Add the seconds since ``t0`` to stage ``name``; hand the stage's temporaries back."""
        self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - t0
        trim_heap()

    def manifest(self) -> dict[str, Any]:
        """What identifies this run for ``--resume``."""
        return {"input": file_fingerprint(self.input), "config": config_to_dict(self.config),
                "text_field": self.read.text_field, "id_field": self.read.id_field, "on_error": self.read.on_error,
                "max_chars": self.read.max_chars, "batch_docs": self.plan.batch_docs,
                **({"encoding": self.read.encoding} if self.read.encoding != "utf-8" else {})}

    def batches(self) -> Iterator[list[Document]]:
        """The input's validated documents in batches of the plan's size (skips recorded; with the
        representative policy's field, if it reads one)."""
        field = self.config.cluster.representative_field
        return iter_batches(self.input, self.read, self.plan.batch_docs, self.skipped, keep=(field,) if field else (),
                            meter=self.meter)

    def field_values(self, batch: list[Document]) -> list[float] | None:
        """The representative policy's field of each document of a batch, as numbers (None: no field)."""
        field = self.config.cluster.representative_field
        return [field_value(d.extra.get(field) if d.extra else None) for d in batch] if field else None

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """What the whole run needs around it (a Ray connection); nothing here."""
        yield

    # ---- stages --------------------------------------------------------------------------
    @abc.abstractmethod
    def map(self) -> int:
        """Stage 1: the input as shards of represented documents; returns the shard count."""

    @abc.abstractmethod
    def keyed_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stage 4 for a keyed method: the verified pairs ``(left, right, score)``, sorted."""

    def join(self, n_shards: int) -> None:
        """Stage 2: concatenate shard arrays into single memory-mappable files."""
        if self.wd.done("join"):
            return
        t0 = time.perf_counter()
        counts = [[int(x) for x in self.wd.shard(i, "done").read_text().split()] for i in range(n_shards)]
        sizes = [c[0] for c in counts]
        ShardJoin(self.wd).finish(n_shards)
        offsets = self._join_offsets("offsets.npy", n_shards, sizes)
        save_array(self.wd.root / "offsets.npy", offsets)
        if self.wd.shard(0, "chunk_offsets.npy").exists():
            save_array(self.wd.root / "chunk_offsets.npy", self._join_offsets("chunk_offsets.npy", n_shards, sizes))
        keyed = "representative_key" in pq.read_schema(self.wd.shard(0, "ids.parquet")).names
        columns = ["length", "representative_key"] if keyed else ["length"]
        parts: dict[str, list[np.ndarray]] = {name: [] for name in columns}
        for i in range(n_shards):  # each shard's ids file read once
            table = read_parquet(self.wd.shard(i, "ids.parquet"), columns)
            for name in columns:
                parts[name].append(numpy_of(table[name]))
        save_array(self.wd.root / "lengths.npy", np.concatenate(parts.pop("length")).astype(np.int64))
        if keyed:
            save_array(self.wd.root / "representative_keys.npy",
                       np.concatenate(parts.pop("representative_key")).astype(np.float64))
        if self.wd.shard(0, "texts.parquet").exists():
            texts = pa.concat_tables([read_parquet(self.wd.shard(i, "texts.parquet")) for i in range(n_shards)])
            with atomic_path(self.wd.root / "texts.parquet", durable=False) as tmp:
                pq.write_table(texts, tmp)
        write_json(self.wd.root / "shards.json", {"sizes": sizes, "n_empty": sum(c[1] for c in counts),
                                                  "n_truncated": sum(c[2] for c in counts)})
        self.wd.mark("join")
        self.wd.discard([self.wd.root / "join.json"])
        self.timed("join", t0)

    def _join_offsets(self, name: str, n_shards: int, sizes: list[int]) -> np.ndarray:
        """Concatenate CSR offsets of every shard (each shifted by the values before it)."""
        out = np.zeros(sum(sizes) + 1, dtype=np.int64)
        doc = base = 0
        for i in range(n_shards):
            o = load_array(self.wd.shard(i, name), mmap=False)
            out[doc + 1 : doc + sizes[i] + 1] = o[1:] + base
            doc += sizes[i]
            base += int(o[-1])
        return out

    def representation(self) -> Representation:
        """The joined representation (large arrays memory-mapped)."""
        if self._rep is None:
            self._rep = joined(self.wd.root)
        return self._rep

    def weights(self, per_value: bool = False) -> None:
        """Stage 3 (weighted scores only), in the worker processes: the IDF weight of every distinct value,
        where its document frequencies fit a table (:meth:`_weights_by_table`, which saves it for verification
        to look up the weights of the documents of pairs and sum them, :class:`~neardup.engine.tiles._Weights`);
        or else a weight for every value (``weights.npy``), by hash partitions of the values, and each
        document's summed weight (``totals.npy``). ``per_value``: both files in any case (for a method that
        scores the joined representation in this process, which is given the weights)."""
        if not self.method.weighted():
            return
        if not self.wd.done("weights"):
            t0 = time.perf_counter()
            sets = self.representation().sets
            n_values = sets.values.shape[0]
            workers = self.plan.workers
            parts = weight_partitions(n_values, self.engine.memory_limit, workers)
            self.make_room(min(n_values * BYTES_PER_COUNTED_VALUE, int(self.engine.memory_limit * 0.3)))
            with self.bar(n_values, "weights", "value", unit_scale=True) as self._weights_bar:
                by_table = self._weights_by_table(n_values, len(sets))
                self.counts.update(weights_by="table" if by_table else "hash partitions" if parts > 1 else "one partition")
                if not by_table:
                    self._weights_bar.reset(total=n_values * (3 if parts > 1 else 1))
                    self._per_value_weights(parts)
            self._weights_bar = None
            self.wd.discard([self.wd.root / SPLIT_DIR])
            self.wd.mark("weights")
            self.timed("weights", t0)
        if per_value:
            if not (self.wd.root / "weights.npy").exists():
                t0 = time.perf_counter()
                self._per_value_weights(0)
                self.timed("weights", t0)
            weights, totals = load_array(self.wd.root / "weights.npy"), load_array(self.wd.root / "totals.npy",
                                                                                  mmap=False)
            self.representation().set_weights(self.config.verify.idf_power, weights, totals)

    def _per_value_weights(self, parts: int) -> None:
        """``weights.npy``, a weight for every value (looked up in the stage's table when ``parts`` is 0, else
        counted by ``parts`` hash partitions), and ``totals.npy``, each document's sum of them."""
        sets = self.representation().sets
        n_values = sets.values.shape[0]
        root, power, pool = str(self.wd.root), self.config.verify.idf_power, self.workers()
        tmp = self.wd.root / "weights.npy.tmp"
        np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float64, shape=(n_values,)).flush()
        bar = getattr(self, "_weights_bar", None)
        if parts == 0:
            spans = _even_spans(n_values, self.plan.workers)
            _run_all(pool, [(weights_of_table, root, lo, hi) for lo, hi in spans], bar, [hi - lo for lo, hi in spans])
        elif parts == 1:
            pool.submit(weights_partition, root, 0, 1, power).result()
            if bar is not None:
                bar.update(n_values)
        else:  # the values grouped by partition in one read; each partition's frequencies; put back in order
            split = self._fresh_split()
            per_split = split_size(self.engine.memory_limit, self.plan.workers)
            spans = [(lo, min(n_values, lo + per_split)) for lo in range(0, n_values, per_split)]
            sizes = [hi - lo for lo, hi in spans]
            _run_all(pool, [(split_values, root, i, lo, hi, parts) for i, (lo, hi) in enumerate(spans)], bar, sizes)
            _run_all(pool, [(partition_frequencies, root, p, len(spans)) for p in range(parts)], bar,
                     [n_values // parts + (p < n_values % parts) for p in range(parts)])
            self.wd.discard(split.glob("*.values.npy"))  # the grouped copy of the values: read by no later step
            _run_all(pool, [(assemble_weights, root, i, lo, hi, parts, len(spans), power)
                            for i, (lo, hi) in enumerate(spans)], bar, sizes)
        out = load_array(tmp)
        totals = doc_weight_totals(sets, out, after_block=lambda: release(out, sets.values))
        save_array(self.wd.root / "totals.npy", totals)  # before the weights: their file says both are complete
        os.replace(tmp, self.wd.root / "weights.npy")

    def _fresh_split(self) -> Path:
        """The weights stage's splits folder, emptied of what a stopped run (or the table path) left."""
        split = self.wd.root / SPLIT_DIR
        self.wd.discard([split])
        split.mkdir()
        return split

    def _weights_by_table(self, n_values: int, n_docs: int) -> bool:
        """The weights stage's fast path, where compiled loops run: each worker's share of the values counted
        in a hash table (:func:`~neardup.engine.tasks.count_values`), then the counts merged and made IDF
        weights in one table, saved (:func:`~neardup.engine.tasks.idf_table`). False, for the hash partitions
        to redo the stage, when the distinct values do not fit a worker's table budget
        (:func:`~neardup.engine.plan.table_bytes`); no more than a pass over the values is lost."""
        if not pays(n_values) or n_docs >= 2**32:
            return False
        self._fresh_split()
        root, pool, workers = str(self.wd.root), self.workers(), self.plan.workers
        budget = table_bytes(self.engine.memory_limit, workers)
        spans = _even_spans(n_values, workers)
        if min(_run_all(pool, [(count_values, root, i, lo, hi, budget) for i, (lo, hi) in enumerate(spans)],
                        getattr(self, "_weights_bar", None), [hi - lo for lo, hi in spans])) < 0:
            return False
        return bool(pool.submit(idf_table, root, len(spans), self.config.verify.idf_power, budget).result())

    def vector_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stage 4 for a vector method: its candidates and scores over the joined representation, here."""
        rep = self.representation()
        self.weights(per_value=True)
        t0 = time.perf_counter()
        left, right, _ = self.method.candidates(rep)
        self.timed("candidates", t0)
        t0 = time.perf_counter()
        self.counts["n_candidates"] = int(left.size)
        if self.ceiling is None:
            scores = self.method.score(rep, left, right, info=self.scoring)
        else:  # greedy's two passes (:func:`~neardup.cluster.verify_in_order`)
            lengths, keys = self.representative_inputs()
            left, right, scores = verify_in_order(len(rep), left, right, policy_ranks(lengths, self.config.cluster, keys),
                                                  lambda a, b: self.method.score(rep, a, b, info=self.scoring),
                                                  self.ceiling)
        self.counts["n_scored"] = int(left.size)
        keep = passes(scores, self.floor)
        self.timed("verify", t0)
        return left[keep], right[keep], scores[keep]

    def set_threshold(self) -> None:
        """The verify stage's floor and greedy's score ceiling, from the planned method's threshold."""
        threshold = float(self.method.threshold)
        self.floor = min(threshold, score_floor(threshold, self.engine.score_floor))
        self.ceiling = score_ceiling(threshold, self.engine.score_ceiling) \
            if lazy_greedy(self.config.cluster, self.engine.all_pairs) else None

    def score_threshold(self, sample: Callable[[int], np.ndarray]) -> None:
        """For a configuration ``auto`` chose, between the candidates and their verification: the threshold read
        from a sample of the candidate scores (:mod:`neardup.calibrate_scores`; ``sample(k)``: the bottom ``k`` of the
        distinct candidate codes by :func:`~neardup.calibrate_scores.sample_codes`, from the engine's partitions),
        scored here as the memory engine scores them (the method's score, no screen); the method, the verify stage's
        floor and the score ceiling follow it. Kept in the work directory: a resumed run takes it from there."""
        if not (calibrate_scores.applies(self.config) and isinstance(self.method, KeyedMethod)):
            return
        path = self.wd.root / "score_threshold.json"
        if path.exists():
            record = json.loads(path.read_text())
        else:
            t0 = time.perf_counter()
            self.weights()  # the scores' IDF weights
            n = len(self.representation())
            record = calibrate_scores.read_scores(self.config, n, sample,
                                                  lambda c: self.score_sample(c, n)).to_dict()
            write_json(path, record)
            self.timed("score_threshold", t0)
        self.config = calibrate_scores.combine(self.config, record)
        self.method = methods.get(self.config).plan(self.representation())
        self.config = self.method.config
        self.set_threshold()

    def score_sample(self, codes: np.ndarray, n: int) -> np.ndarray:
        """The method's scores of the pairs ``codes`` without its screen (:func:`~neardup.engine.tasks.score_unscreened`),
        in this process; an engine with workers may split them."""
        return score_unscreened(str(self.wd.root), codes, n, self.config)

    def representative_inputs(self) -> tuple[np.ndarray, np.ndarray | None]:
        """Text lengths and the representative policy's keys (None where lengths decide), from the map stage."""
        keys = self.wd.root / "representative_keys.npy"
        return (load_array(self.wd.root / "lengths.npy", mmap=False),
                load_array(keys, mmap=False) if keys.exists() else None)

    def write_order(self, n: int) -> None:
        """Each document's place in the representative policy's order, for greedy's two verification passes
        (:func:`~neardup.cluster.verify_order`; :data:`~neardup.engine.tasks.ORDER_FILES`)."""
        lengths, keys = self.representative_inputs()
        ranks = policy_ranks(lengths, self.config.cluster, keys)
        save_array(self.wd.root / ORDER_FILES[0], ranks.astype(np.int32) if n < 2**31 else ranks)

    def write_settled(self, n: int, first: Sequence[Mapping[str, np.ndarray]]) -> None:
        """The copies greedy's first pass settled (:func:`~neardup.cluster.settled_copies`), from its scored pairs
        ``first`` (``left``, ``right``, ``score`` each)."""
        ranks, roots = (load_array(self.wd.root / name, mmap=False) for name in ORDER_FILES[:2])
        left = np.concatenate([d["left"] for d in first]) if first else np.empty(0, dtype=np.int64)
        right = np.concatenate([d["right"] for d in first]) if first else np.empty(0, dtype=np.int64)
        score = np.concatenate([d["score"] for d in first]) if first else np.empty(0, dtype=np.float64)
        a, b = ordered(left, right, ranks)
        assert self.ceiling is not None
        save_array(self.wd.root / ORDER_FILES[2], settled_copies(n, a, b, score, roots, self.ceiling))

    def cluster(self, left: np.ndarray, right: np.ndarray, scores: np.ndarray) -> Clusters:
        """Stage 5: clusters of the verified pairs (representatives by the cluster policy)."""
        t0 = time.perf_counter()
        lengths, keys = self.representative_inputs()
        clusters = cluster_pairs(lengths.size, left, right, scores, lengths, self.config.cluster, keys,
                                 threshold=self.method.threshold)
        self.timed("cluster", t0)
        return clusters

    def ids_for(self, n_shards: int, wanted: np.ndarray) -> DocIds:
        """Ids of the documents at the (sorted, distinct) global indices ``wanted``."""
        chunks: list[pa.Array] = []
        start = 0
        for i, size in enumerate(self.shard_sizes()[:n_shards]):
            end = start + size
            lo, hi = np.searchsorted(wanted, [start, end])
            if hi > lo:
                ids = read_parquet(self.wd.shard(i, "ids.parquet"), ["id"])["id"].combine_chunks()
                chunks.append(ids.take(arrow_array(np.asarray(wanted[lo:hi], dtype=np.int64) - start)))
            start = end
        return DocIds(np.asarray(wanted, dtype=np.int64), chunks)

    def shards_info(self) -> dict[str, Any]:
        """Shard sizes and the counts of empty and truncated texts, written by the join."""
        return json.loads((self.wd.root / "shards.json").read_text())

    def shard_sizes(self) -> list[int]:
        """Documents per shard."""
        return self.shards_info()["sizes"]

    def write(self, n_shards: int, clusters: Clusters, left: np.ndarray, right: np.ndarray,
              scores: np.ndarray, scored: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> None:
        """Stage 5 output: clusters.parquet and pairs.parquet, streamed shard by shard, atomically (an earlier
        run's summary.json removed first: :func:`~neardup.io.write.begin_outputs`)."""
        t0 = time.perf_counter()
        reps = distinct(clusters.labels[clusters.sizes > 1])
        extra = [] if scored is None else [scored[0], scored[1]]
        names = self.ids_for(n_shards, distinct(np.concatenate([reps, left, right, *extra])))
        lengths = load_array(self.wd.root / "lengths.npy", mmap=False)
        begin_outputs(self.outdir)
        schema = CLUSTER_SCHEMA
        with atomic_path(self.outdir / "clusters.parquet") as tmp:
            with pq.ParquetWriter(tmp, with_run_id(schema, self.run_id), compression="zstd") as writer:
                start = 0
                for i, size in enumerate(self.shard_sizes()):
                    ids = read_parquet(self.wd.shard(i, "ids.parquet"), ["id"])["id"].combine_chunks()
                    lab = clusters.labels[start : start + size]
                    sz = clusters.sizes[start : start + size]
                    grouped = sz > 1
                    kept = lab == np.arange(start, start + size)
                    link = clusters.link_scores_of(start, start + size)
                    cluster_names = ids if not grouped.any() else pc.if_else(
                        arrow_array(grouped), names.take(np.where(grouped, lab, reps[0])), ids)
                    copy_of = pa.nulls(size, pa.string()) if kept.all() else with_nulls(
                        names.take(np.where(kept, reps[0], lab)).combine_chunks(), ~kept)
                    writer.write_table(pa.table({
                        "id": ids, "cluster": cluster_names,
                        "cluster_size": arrow_array(sz.astype(np.int64)),
                        "is_representative": arrow_array(kept),
                        "oversized": arrow_array(clusters.oversized[start : start + size]),
                        "kept": arrow_array(kept), "copy_of": copy_of,
                        "score": with_nulls(arrow_array(np.nan_to_num(link)), ~np.isnan(link)),
                        "length": arrow_array(np.asarray(lengths[start : start + size], dtype=np.int64)),
                    }, schema=schema))
                    start += size
        write_table(self.outdir / "pairs.parquet", {
            "left": names.take(left), "right": names.take(right), "score": scores.astype(np.float64)},
            run_id=self.run_id)
        if scored is not None:
            write_table(self.outdir / SCORES_FILE, {"left": names.take(scored[0]), "right": names.take(scored[1]),
                                                    "score": np.asarray(scored[2], dtype=np.float64)}, run_id=self.run_id)
        self.timed("write", t0)

    def map_or_clean(self, outdir_existed: bool) -> int:
        """The map stage; on bad input remove this run's traces (it is not an interruption to resume)."""
        try:
            return self.map()
        except InputError:
            self.wd.clean()
            if not outdir_existed and self.outdir.exists() and not any(self.outdir.iterdir()):
                self.outdir.rmdir()
            raise

    def engine_info(self, n_shards: int, resumed: bool) -> dict[str, Any]:
        """How the run executed, for the summary's ``engine`` field."""
        info = {**asdict(self.engine), "plan": asdict(self.plan), "shards": n_shards, "tiles": self.counts.get("tiles"),
                "resumed": resumed}
        if self.scoring:
            info["scoring"] = self.scoring
        if "weights_beside_candidates" in self.counts:  # the two stages ran at once (their timings overlap)
            info["weights_beside_candidates"] = self.counts["weights_beside_candidates"]
        if "weights_by" in self.counts:  # how document frequencies were counted (not in a resumed run's stage)
            info["weights_by"] = self.counts["weights_by"]
        return info

    def run(self) -> dict[str, Any]:
        """All stages; returns the summary (also written to ``summary.json``, last, with :attr:`run_id`). A run that
        fails before its summary is written removes the output files it wrote (no partial outputs are left; an
        earlier run's stay); an I/O error that names no file (a full disk under a join's or a worker's write)
        names the work directory."""
        try:
            return self._stages()
        except BaseException as exc:
            from neardup.io.write import discard_run_outputs
            from neardup.results import RUN_FILES

            try:
                complete = json.loads((self.outdir / "summary.json").read_text()).get(SUMMARY_RUN_ID) == self.run_id
            except (OSError, ValueError, AttributeError):
                complete = False
            if not complete:
                discard_run_outputs(self.outdir, self.run_id, RUN_FILES)
            if isinstance(exc, OSError) and exc.errno is not None and exc.filename is None:
                raise OSError(exc.errno, os.strerror(exc.errno), str(self.wd.root)) from exc
            raise

    def _stages(self) -> dict[str, Any]:
        """:meth:`run`'s stages."""
        t_start = time.perf_counter()
        outdir_existed = self.outdir.exists()
        if not source_exists(self.input):
            raise InputError(self.input, None, "no such file or folder")
        with self.session():
            resumed = self.wd.prepare(self.manifest(), self.engine.resume)
            try:
                n_shards = self.map_or_clean(outdir_existed)
                self.join(n_shards)
                self.method = self.method.plan(self.representation())
                self.config = self.method.config
                self.set_threshold()
                if isinstance(self.method, KeyedMethod):
                    scored = self.keyed_pairs()
                else:
                    scored = self.vector_pairs()
                threshold = float(self.method.threshold)
                cut = passes(scored[2], threshold)
                left, right, scores = scored[0][cut], scored[1][cut], scored[2][cut]
                n_verified = int(left.size)
                clusters = self.cluster(left, right, scores)
                left, right, scores = written_pairs(clusters, left, right, scores, self.config.cluster,
                                                    self.engine.all_pairs)
                store = None
                if self.engine.evidence:  # its texts read again by a worker while this process writes
                    from neardup.engine.evidence import start_text_store

                    store = start_text_store(self, n_shards, left, right)
                self.write(n_shards, clusters, left, right, scores, scored)
                del scored
                counts = ClusterCounts.of(clusters, lambda ix: self.ids_for(n_shards, ix).take(ix).to_pylist())
                del clusters  # the summary needs only its counts: 17 bytes a document freed before the evidence
                if self.engine.evidence:  # on the same workers (replaced if they hold too much)
                    from neardup.engine.evidence import finish_text_store, write_run_evidence

                    finish_text_store(self, store)  # before the workers may be replaced
                    self.make_room(0)
                    write_run_evidence(self, n_shards, left, right, scores)
            except BaseException:
                self.close(now=True)
                raise
            finally:
                self.close()
        info = self.shards_info()
        summary = build_summary(
            source=self.source_name, clusters=counts, params=self.method.describe(),
            n_candidates=self.counts.get("n_candidates", 0), n_pairs=n_verified, n_empty=info["n_empty"],
            n_truncated=info["n_truncated"], skipped=self.skipped, timings=self.timings,
            seconds=time.perf_counter() - t_start, engine=self.engine_info(n_shards, resumed), read=self.read,
            n_written=int(left.size), floor=self.floor, ceiling=self.ceiling, n_scored=self.counts.get("n_scored"))
        write_json(self.outdir / "summary.json", {**summary, SUMMARY_RUN_ID: self.run_id})
        if self.engine.keep_work:
            self.wd.settle()
        else:
            self.wd.clean()
        return summary


__all__ = ["DocIds", "ShardedRun"]
