"""Run the chunked pipeline's stages on a Ray cluster; same outputs as :mod:`neardup.engine.local`.

Owns scheduling the stages on Ray (Ray Data datasets, shuffles, iterations); must not implement a stage:
every stage calls the same functions as the local engine (``_map_shard``, ``band_keys``,
``pairs_from_keys``, ``score_pairs``, ``cluster._finalise``), so ``clusters.parquet``, ``pairs.parquet``
and the summary's fields equal the local engine's exactly.

Stages (the work directory and its layout are the local engine's, see :mod:`neardup.engine.workdir`):

1. ``map``: the driver reads and validates the input (errors name the file, line and field) and puts
   batches into the object store in waves; ``Dataset.map_batches`` normalizes, shingles and sketches
   each batch (``_map_shard``) and writes it as a shard. Shards are renamed into document order.
2. ``join`` and ``weights``: in the driver, as in the local engine (sequential file concatenation).
3. ``candidates``: a dataset of ``(group, key, doc)`` rows (LSH band keys; signature values for the
   ``collisions`` rule; shingle values for ``ngram``; SimHash table keys) is shuffled with
   ``groupby("group").map_groups(...)``. A group is ``sub * KP + key % KP`` (``sub`` = band, position
   or table), so every bucket of a band lands whole in one group, and ``pairs_from_keys`` on the
   group emits exactly the pairs it emits on the whole band, star rule included.
4. ``verify``: candidate pair codes are shuffled by the document tile of ``left``
   (``engine.tiles``; ``groupby().map_groups()``); each group is de-duplicated (counted for
   ``collisions``) and scored from the work directory's shingle sets, two tiles at a time, so
   workers need the work directory on a shared filesystem (or one machine).
5. ``cluster``: connected components by alternating large-star / small-star rounds (Kiveris et al.
   2014) over a Ray Data edge dataset until it stops changing; the driver then turns the star forest
   into labels and applies ``cluster._finalise`` (representative: longest text, then first seen).
   ``louvain`` / ``leiden`` run in the driver on the verified graph (``cluster_pairs``).
6. write: in the driver, as in the local engine.

Ray is imported lazily; ``pip install 'neardup[ray]'`` provides it.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any

import numpy as np
import pyarrow as pa

from neardup.candidates.buckets import pairs_from_keys
from neardup.cluster import Clusters, _finalise, cluster_pairs
from neardup.config import ConfigError, DedupConfig
from neardup.engine.local import (ChunkedRun, EngineConfig, _batches, _map_shard, joined_sets, lsh_bands_rows,
                                  max_hamming_for, min_collisions_for, score_codes)
from neardup.engine.tiles import pair_partition, partition_count, tiles_for_run
from neardup.engine.workdir import WorkDir, load_array
from neardup.io.read import InputError, source_exists

_INSTALL_HINT = "install neardup[ray]: pip install 'neardup[ray]'"
_SHARD_PARTS = ("values.npy", "offsets.npy", "sketch.npy", "ids.parquet", "done")
_ROWS_PER_TASK = 2_000_000  # (group, key, doc) rows per key-emitting task and per shuffle group
_EDGES_PER_PART = 1_000_000
_MAX_CC_ROUNDS = 200
_OBJECT_STORE_MIN = 80 * 2**20


def _import_ray() -> Any:
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return ray


def object_store_bytes(engine: EngineConfig) -> int:
    """Object store size of a local cluster: 30% of the memory limit (at least 80MiB).

    >>> object_store_bytes(EngineConfig(memory_limit=2 * 2**30)) // 2**20
    614
    """
    return max(_OBJECT_STORE_MIN, int(engine.memory_limit * 0.3))


@contextmanager
def ray_session(engine: EngineConfig, address: str | None = None) -> Iterator[Any]:
    """Ray, connected: to ``address`` when given, else to a new local cluster of ``engine.n_workers``
    CPUs; an already initialised Ray is re-used. Shuts down only what it started.

    Sets Ray Data's shuffle to the sort-based pull shuffle (no long-lived aggregator actors: fast to
    start on small clusters) and turns its progress bars off, restoring both afterwards.
    """
    ray = _import_ray()
    started = False
    if not ray.is_initialized():
        common = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING}
        if address:
            ray.init(address=address, **common)
        else:
            ray.init(num_cpus=engine.n_workers, object_store_memory=object_store_bytes(engine), **common)
        started = True
    ctx = ray.data.DataContext.get_current()
    saved = (ctx.shuffle_strategy, ctx.enable_progress_bars, ctx.print_on_execution_start)
    data_logger = logging.getLogger("ray.data")
    saved_level = data_logger.level
    ctx.shuffle_strategy = "sort_shuffle_pull_based"
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    data_logger.setLevel(logging.WARNING)
    try:
        yield ray
    finally:
        ctx.shuffle_strategy, ctx.enable_progress_bars, ctx.print_on_execution_start = saved
        data_logger.setLevel(saved_level)
        if started:
            ray.shutdown()


# ---- worker functions (module level so Ray pickles them by reference) ---------------------------

def _map_batch(batch: pa.Table, config: DedupConfig, root: str, max_chars: int) -> dict[str, np.ndarray]:
    """Map stage: each run of consecutive documents of the batch becomes one shard named by its first doc."""
    doc = batch["doc"].to_numpy()
    ids, texts, lines = batch["id"].to_pylist(), batch["text"].to_pylist(), batch["line"].to_pylist()
    cuts = [0, *(np.flatnonzero(np.diff(doc) != 1) + 1).tolist(), doc.size]
    starts, sizes = [], []
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        if hi > lo:
            _map_shard(int(doc[lo]), ids[lo:hi], texts[lo:hi], lines[lo:hi], config, root, max_chars)
            starts.append(int(doc[lo]))
            sizes.append(hi - lo)
    return {"start": np.array(starts, dtype=np.int64), "n": np.array(sizes, dtype=np.int64)}


def _emit_keys(batch: dict[str, np.ndarray], spec: dict[str, Any]) -> dict[str, np.ndarray]:
    """Candidates stage, map side: ``(group, key, doc)`` rows for a range of documents."""
    root, kind, kp = spec["root"], spec["kind"], spec["key_parts"]
    lo, hi = int(batch["lo"][0]), int(batch["hi"][0])
    if kind == "ngram":  # one row per shingle value; lo:hi are document indices
        sets = joined_sets(root)
        keys = np.asarray(sets.values[sets.offsets[lo] : sets.offsets[hi]])
        docs = np.repeat(np.arange(lo, hi, dtype=np.int64), np.diff(sets.offsets[lo : hi + 1]))
        sub = np.zeros(keys.size, dtype=np.int64)
    else:  # one row per (document, band | position | table); lo:hi index the non-empty documents
        sizes = np.diff(load_array(os.path.join(root, "offsets.npy"), mmap=False))
        doc_ids = np.flatnonzero(sizes > 0).astype(np.int64)[lo:hi]
        sketch = load_array(os.path.join(root, "sketch.npy"))
        if kind == "lsh":
            from neardup.candidates.lsh import band_keys

            bands, rows = spec["bands"], spec["rows"]
            table = band_keys(np.asarray(sketch[doc_ids, : bands * rows]), bands, rows)
        elif kind == "collisions":
            table = np.asarray(sketch[doc_ids]).astype(np.uint64)
        else:  # simhash: one key per block-combination table
            fps = np.asarray(sketch[doc_ids]).astype(np.uint64)
            table = fps[:, None] & np.array(spec["masks"], dtype=np.uint64)[None, :]
        keys = table.ravel()
        docs = np.repeat(doc_ids, table.shape[1])
        sub = np.tile(np.arange(table.shape[1], dtype=np.int64), doc_ids.size)
    group = sub * kp + (keys % np.uint64(kp)).astype(np.int64)
    return {"group": group, "key": keys, "doc": docs}


def _bucket_pairs(batch: dict[str, np.ndarray], spec: dict[str, Any]) -> dict[str, np.ndarray]:
    """Candidates stage, reduce side: the pairs of one group's buckets, as codes ``left * n + right``."""
    kind = spec["kind"]
    keys, docs = batch["key"], batch["doc"].astype(np.int64)
    if kind == "lsh":
        left, right = pairs_from_keys(keys, docs, star_above=spec["max_bucket"])
    elif kind == "collisions":
        left, right = pairs_from_keys(keys, docs, max_group=spec["max_bucket"], unique=False)
    elif kind == "ngram":
        left, right = pairs_from_keys(keys, docs, max_group=spec["max_df"])
    else:
        left, right = pairs_from_keys(keys, docs)
    return {"part": pair_partition(left, spec["tiles"], spec["pair_parts"]), "code": left * spec["n"] + right}


def _verify_group(batch: dict[str, np.ndarray], spec: dict[str, Any]) -> dict[str, np.ndarray]:
    """Verify stage: de-duplicate (or count) one partition of candidate codes and score them.

    The first row is a tally, ``(-1, n_candidates, nan)``; the others are the pairs that pass.
    """
    codes, counts = np.unique(batch["code"], return_counts=True)
    if spec["min_count"] > 1:
        codes = codes[counts >= spec["min_count"]]
    left, right, s, n_candidates = score_codes(spec["root"], codes, spec["n"], spec["config"],
                                               max_hamming=spec["max_hamming"])
    return {"left": np.concatenate([[-1], left]).astype(np.int64),
            "right": np.concatenate([[n_candidates], right]).astype(np.int64),
            "score": np.concatenate([[np.nan], s]).astype(np.float64)}


def _edges_of(batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    keep = batch["left"] >= 0
    return {"lo": batch["left"][keep], "hi": batch["right"][keep]}


def _large_star_rows(batch: dict[str, np.ndarray], parts: int) -> dict[str, np.ndarray]:
    """Large-star map: each edge in both directions, keyed by its source."""
    src = np.concatenate([batch["lo"], batch["hi"]])
    dst = np.concatenate([batch["hi"], batch["lo"]])
    return {"part": src % parts, "src": src, "dst": dst}


def _small_star_rows(batch: dict[str, np.ndarray], parts: int) -> dict[str, np.ndarray]:
    """Small-star map: each edge keyed by its larger node, pointing to the smaller."""
    return {"part": batch["hi"] % parts, "src": batch["hi"], "dst": batch["lo"]}


def _star(batch: dict[str, np.ndarray], large: bool, n: int) -> dict[str, np.ndarray]:
    """Large-star / small-star reduce over the nodes of one partition.

    With ``m(u)`` the smallest of ``u`` and its neighbours here: large-star links every larger neighbour
    of ``u`` to ``m(u)``; small-star (neighbours are all smaller) links ``u`` and its neighbours to ``m(u)``.
    """
    src, dst = batch["src"].astype(np.int64), batch["dst"].astype(np.int64)
    if src.size == 0:
        return {"lo": src, "hi": dst}
    order = np.lexsort((dst, src))
    src, dst = src[order], dst[order]
    starts = np.flatnonzero(np.concatenate([[True], src[1:] != src[:-1]]))
    node = src[starts]
    m = np.minimum(np.minimum.reduceat(dst, starts), node)
    m_row = np.repeat(m, np.diff(np.append(starts, src.size)))
    if large:
        sel = dst > src
        lo, hi = m_row[sel], dst[sel]
    else:
        v = np.concatenate([dst, node])
        mm = np.concatenate([m_row, m])
        sel = v != mm
        lo, hi = mm[sel], v[sel]
    code = np.unique(lo * n + hi)
    return {"lo": code // n, "hi": code % n}


def _digest(batch: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    """Order-free fingerprint of a multiset of edges: count and a wrapped sum of mixed codes."""
    code = (batch["lo"].astype(np.int64) * n + batch["hi"]).astype(np.uint64)
    with np.errstate(over="ignore"):
        h = code * np.uint64(0x9E3779B97F4A7C15)
        h ^= h >> np.uint64(31)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(29)
        total = np.sum(h, dtype=np.uint64) if h.size else np.uint64(0)
    return {"count": np.array([code.size], dtype=np.int64), "sum": np.array([total], dtype=np.uint64)}


# ---- the run -----------------------------------------------------------------------------------

class RayRun(ChunkedRun):
    """One run of a :class:`DedupConfig` on Ray (stages as in :class:`ChunkedRun`, see the module docstring)."""

    def __init__(self, *args: Any, address: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.address = address
        self.ray_info: dict[str, Any] = {}

    # ---- helpers -------------------------------------------------------------------------
    @property
    def _cpus(self) -> int:
        return max(1, int(self.ray_info.get("num_cpus") or self.plan.workers))

    def _spread(self, total_rows: int, count: int) -> int:
        """How many pieces to cut ``total_rows`` rows of ``count`` units into: small enough, and enough to share."""
        return max(1, min(count, max(math.ceil(total_rows / _ROWS_PER_TASK), 2 * self._cpus)))

    # ---- stages --------------------------------------------------------------------------
    def map(self) -> int:
        """Stage 1: read in the driver, map with ``Dataset.map_batches``; returns the shard count."""
        ray = _import_ray()
        t0 = time.perf_counter()
        if not source_exists(self.input):
            raise InputError(self.input, None, "no such file or folder")
        staging = WorkDir(self.wd.root / "ray-map")
        staging.shards.mkdir(parents=True, exist_ok=True)
        wave_docs = self.plan.batch_docs * max(4, 2 * self._cpus)
        kwargs = {"config": self.config, "root": str(staging.root), "max_chars": self.max_chars}

        def run_wave(refs: list[Any]) -> list[dict[str, Any]]:
            ds = ray.data.from_arrow_refs(refs).map_batches(
                _map_batch, batch_size=self.plan.batch_docs, batch_format="pyarrow", fn_kwargs=kwargs)
            return ds.take_all()

        bar = self._bar(None, "reading + shingling")
        done: list[dict[str, Any]] = []
        n_docs = 0
        refs: list[Any] = []
        wave = 0
        # One wave is mapped while the next is read: at most two waves of text in the object store.
        with ThreadPoolExecutor(max_workers=1) as pool:
            pending: Future[list[dict[str, Any]]] | None = None

            def finish() -> None:
                if pending is not None:
                    rows = pending.result()
                    done.extend(rows)
                    bar.update(sum(int(r["n"]) for r in rows))

            for ids, texts, lines in _batches(self.input, self.text_field, self.id_field, self.on_error,
                                              self.plan.batch_docs, self.skipped):
                table = pa.table({"doc": pa.array(np.arange(n_docs, n_docs + len(ids), dtype=np.int64)),
                                  "id": pa.array(ids, pa.string()), "text": pa.array(texts, pa.string()),
                                  "line": pa.array(lines, pa.int64())})
                refs.append(ray.put(table))
                n_docs += len(ids)
                wave += len(ids)
                if wave >= wave_docs:
                    finish()
                    pending, refs, wave = pool.submit(run_wave, refs), [], 0
            finish()
            pending = pool.submit(run_wave, refs) if refs else None
            finish()
        bar.close()
        if n_docs == 0:
            raise InputError(self.input, None, "no documents found (empty input)")
        done.sort(key=lambda r: int(r["start"]))
        expected = 0
        for index, row in enumerate(done):
            if int(row["start"]) != expected:
                raise RuntimeError(f"ray map stage lost documents at index {expected}")
            for part in _SHARD_PARTS:  # "done" last, as in the local engine
                os.replace(staging.shard(int(row["start"]), part), self.wd.shard(index, part))
            expected += int(row["n"])
        if expected != n_docs:
            raise RuntimeError(f"ray map stage returned {expected} of {n_docs} documents")
        shutil.rmtree(staging.root, ignore_errors=True)
        self._timed("map", t0)
        return len(done)

    def candidate_pairs(self) -> Any:
        """Stage 4: a materialized dataset of candidate codes ``(part, code)``, or None when there are none."""
        ray = _import_ray()
        t0 = time.perf_counter()
        cfg = self.config
        sets = self.sets()
        n = len(sets)
        sizes = np.asarray(sets.sizes)
        n_docs = int((sizes > 0).sum())
        pair_parts = max(1, int(math.ceil(n * 16 * 40 / (self.engine.memory_limit * 0.3))), 2 * self._cpus)
        tiles = tiles_for_run(self.wd.root, sets.offsets, self.engine.memory_limit, self._cpus, cfg.verify.score)
        self.counts.update(tiles=len(tiles) - 1)
        pair_parts = partition_count(pair_parts, tiles)
        spec: dict[str, Any] = {"root": str(self.wd.root), "n": n, "pair_parts": pair_parts, "tiles": tiles,
                                "max_bucket": cfg.minhash.max_bucket, "max_df": cfg.ngram.max_df}
        if cfg.method == "minhash" and cfg.minhash.rule == "lsh":
            bands, rows = lsh_bands_rows(cfg)
            self.counts.update(bands=bands, rows=rows)
            spec.update(kind="lsh", bands=bands, rows=rows)
            subs = bands
        elif cfg.method == "minhash":
            self.counts.update(min_collisions=min_collisions_for(cfg))
            spec.update(kind="collisions")
            subs = cfg.minhash.num_perm
        elif cfg.method == "ngram":
            spec.update(kind="ngram")
            subs = 1
        else:
            from itertools import combinations

            from neardup.candidates.hamming import _block_masks, table_plan

            max_distance = max_hamming_for(cfg)
            self.counts.update(max_hamming=max_distance)
            blocks, m = table_plan(max_distance, cfg.simhash.max_tables)
            masks = _block_masks(blocks)
            spec.update(kind="simhash", masks=[sum(masks[i] for i in c) for c in combinations(range(blocks), m)])
            subs = len(spec["masks"])
        if n_docs < 2:
            self._timed("candidates", t0)
            return None
        if spec["kind"] == "ngram":
            total = int(sets.values.shape[0])
            pieces = self._spread(total, n)
            # Cut the documents where the running value count crosses each piece's share.
            cuts = np.searchsorted(np.asarray(sets.offsets), np.linspace(0, total, pieces + 1)[1:-1])
            bounds = np.unique(np.concatenate([[0], np.clip(cuts, 0, n), [n]]))
        else:
            total = n_docs * subs
            pieces = self._spread(total, n_docs)
            bounds = np.unique(np.linspace(0, n_docs, pieces + 1).round().astype(np.int64))
        spec["key_parts"] = max(1, math.ceil(total / subs / _ROWS_PER_TASK), math.ceil(2 * self._cpus / subs))
        ranges = [{"lo": int(a), "hi": int(b)} for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
        pairs = (ray.data.from_items(ranges, override_num_blocks=len(ranges))
                 .map_batches(_emit_keys, batch_size=1, batch_format="numpy", fn_kwargs={"spec": spec})
                 .groupby("group").map_groups(_bucket_pairs, batch_format="numpy", fn_kwargs={"spec": spec})
                 .materialize())
        self.ray_info.update(key_parts=spec["key_parts"], key_tasks=len(ranges), pair_parts=pair_parts)
        self._timed("candidates", t0)
        return pairs if pairs.count() else None

    def verify_pairs(self, pairs: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
        """Stage 5: the verified pairs, as a materialized dataset and as sorted driver arrays."""
        cfg = self.config
        weighted = self.weights() is not None  # computed in the driver, memory-mapped by the workers
        t0 = time.perf_counter()
        empty = np.empty(0, dtype=np.int64)
        if pairs is None:
            self.counts["n_candidates"] = 0
            self._timed("verify", t0)
            return None, empty, empty, np.empty(0, dtype=np.float64)
        spec = {"root": str(self.wd.root), "n": len(self.sets()), "config": cfg, "weighted": weighted,
                "min_count": min_collisions_for(cfg) if cfg.method == "minhash" and cfg.minhash.rule != "lsh" else 1,
                "max_hamming": self.counts.get("max_hamming")}
        verified = pairs.groupby("part").map_groups(_verify_group, batch_format="numpy",
                                                    fn_kwargs={"spec": spec}).materialize()
        lefts, rights, scores = [], [], []
        n_candidates = 0
        for batch in verified.iter_batches(batch_format="numpy", batch_size=None):
            tally = batch["left"] < 0
            n_candidates += int(batch["right"][tally].sum())
            lefts.append(batch["left"][~tally])
            rights.append(batch["right"][~tally])
            scores.append(batch["score"][~tally])
        left = np.concatenate(lefts) if lefts else empty
        right = np.concatenate(rights) if rights else empty
        score = np.concatenate(scores) if scores else np.empty(0, dtype=np.float64)
        order = np.lexsort((right, left))
        self.counts["n_candidates"] = n_candidates
        self._timed("verify", t0)
        return verified, left[order], right[order], score[order]

    def components(self, verified: Any, n: int, n_edges: int) -> np.ndarray:
        """Connected components (label = smallest member) by large-star / small-star rounds on Ray Data."""
        labels = np.arange(n, dtype=np.int64)
        rounds = 0
        if verified is not None and n_edges:
            parts = max(2 * self._cpus, math.ceil(n_edges / _EDGES_PER_PART))
            edges = verified.map_batches(_edges_of, batch_format="numpy").materialize()
            previous = None
            while True:
                rounds += 1
                if rounds > _MAX_CC_ROUNDS:
                    raise RuntimeError(f"connected components did not converge in {_MAX_CC_ROUNDS} rounds")
                edges = (edges.map_batches(_large_star_rows, batch_format="numpy", fn_kwargs={"parts": parts})
                         .groupby("part").map_groups(_star, batch_format="numpy", fn_kwargs={"large": True, "n": n})
                         .map_batches(_small_star_rows, batch_format="numpy", fn_kwargs={"parts": parts})
                         .groupby("part").map_groups(_star, batch_format="numpy", fn_kwargs={"large": False, "n": n})
                         .materialize())
                rows = edges.map_batches(_digest, batch_format="numpy", batch_size=None, fn_kwargs={"n": n}).take_all()
                digest = (sum(int(r["count"]) for r in rows), sum(int(r["sum"]) for r in rows) % 2**64)
                if digest == previous and self._stars(edges, labels):
                    break
                previous = digest
        self.ray_info["cc_rounds"] = rounds
        return labels

    @staticmethod
    def _stars(edges: Any, labels: np.ndarray) -> bool:
        """Whether the edges form stars (every child's one parent is a root); fills ``labels`` if so."""
        batches = list(edges.iter_batches(batch_format="numpy", batch_size=None))
        lo = np.concatenate([b["lo"] for b in batches]) if batches else np.empty(0, dtype=np.int64)
        hi = np.concatenate([b["hi"] for b in batches]) if batches else np.empty(0, dtype=np.int64)
        if np.intersect1d(lo, hi).size or np.unique(hi).size != hi.size:
            return False
        labels[hi] = lo
        return True

    def cluster(self, verified: Any, left: np.ndarray, right: np.ndarray, scores: np.ndarray) -> Clusters:
        """Stage 6: clusters; components distributed, communities in the driver."""
        t0 = time.perf_counter()
        lengths = load_array(self.wd.root / "lengths.npy", mmap=False)
        cfg = self.config.cluster
        if cfg.algorithm == "components":
            groups = self.components(verified, lengths.size, left.size)
            clusters = _finalise(groups, lengths, cfg)
        else:
            clusters = cluster_pairs(lengths.size, left, right, scores, lengths, cfg)
        self._timed("cluster", t0)
        return clusters

    def run(self) -> dict[str, Any]:
        """All stages; returns the summary (also written to ``summary.json``)."""
        from neardup.io.write import write_json

        t_start = time.perf_counter()
        outdir_existed = self.outdir.exists()
        if not source_exists(self.input):
            raise InputError(self.input, None, "no such file or folder")
        if self.engine.resume:
            raise ConfigError("--resume is not supported by the ray engine (use the local engine)")
        with ray_session(self.engine, self.address) as ray:
            self.ray_info = {"version": ray.__version__, "address": self.address,
                             "num_cpus": int(ray.cluster_resources().get("CPU", 0)),
                             "nodes": sum(1 for node in ray.nodes() if node.get("Alive"))}
            self.wd.prepare(self.manifest(), False)
            n_shards = self.map_or_clean(outdir_existed)
            self.join(n_shards)
            try:
                verified, left, right, scores = self.verify_pairs(self.candidate_pairs())
            finally:
                self.close()  # the driver's worker processes (IDF weights)
            clusters = self.cluster(verified, left, right, scores)
            del verified
        t0 = time.perf_counter()
        self.write(n_shards, clusters, left, right, scores)
        self._timed("write", t0)
        summary = self._summary(clusters, left.size, n_shards, False, time.perf_counter() - t_start)
        summary["engine"] = {"name": "ray", "address": self.address, **asdict(self.engine),
                             "plan": asdict(self.plan), "shards": n_shards, "resumed": False, "ray": self.ray_info}
        write_json(self.outdir / "summary.json", summary)
        if not self.engine.keep_work:
            self.wd.clean()
        return summary


def run_ray(input_path: str | os.PathLike[str], outdir: str | os.PathLike[str], config: DedupConfig,
            engine: EngineConfig | None = None, address: str | None = None, **read_options: Any) -> dict[str, Any]:
    """De-duplicate a file on Ray; writes OUTDIR exactly as :func:`neardup.engine.local.run_chunked` does.

    ``address``: a Ray cluster to join (``"auto"``, ``"ray://host:10001"``, ...); without it a local
    cluster of ``engine.workers`` CPUs is started (and stopped at the end). The work directory must be
    on a filesystem every worker sees. Reading and validating the input happen in the driver.
    ``read_options``: ``text_field``, ``id_field``, ``on_error``, ``max_chars``.
    """
    _import_ray()
    return RayRun(input_path, outdir, config, engine, address=address, **read_options).run()
