"""The Ray engine: the sharded run's stages on a Ray cluster; the same outputs as :mod:`neardup.engine.local`.

Owns scheduling the stages on Ray (Ray Data datasets, shuffles, iterations); must not implement a stage:
every task calls the same code as the local engine (:mod:`neardup.engine.tasks`, the method's
``keys`` and ``bucket_pairs`` or ``table_pairs``, ``cluster.clusters_of_groups``), so ``clusters.parquet``,
``pairs.parquet`` and the summary's fields equal the local engine's exactly.

Stages (the work directory, its layout and the shared stages are :mod:`neardup.engine.sharded`'s):

1. ``map``: the driver reads and validates the input (errors name the file, line and field) and puts
   batches into the object store in waves; ``Dataset.map_batches`` represents each batch
   (:func:`~neardup.engine.tasks.map_shard`) and writes it as a shard. Shards are renamed into document order.
2. ``join`` and ``weights``: in the driver, as in the local engine.
3. ``candidates`` (keyed methods): a dataset of ``(group, key, doc)`` rows (the method's key rows of a
   range of documents) is shuffled with ``groupby("group").map_groups(...)``. A group is
   ``table * KP + key % KP``, so every bucket of a table lands whole in one group, and the method's
   ``bucket_pairs`` on the group emits exactly the pairs it emits on the whole table (``table_pairs``, from the
   joined representation, where the method keeps only some of them as it makes them: SimHash's within the
   distance).
4. ``verify``: candidate pair codes are shuffled by the document tile of ``left`` (``engine.tiles``;
   ``groupby().map_groups()``); each group is de-duplicated (counted, where the method counts tables)
   and scored from the work directory's shingle sets, two tiles at a time, so workers need the work
   directory on a shared filesystem (or one machine). A vector method's neighbours and scores are
   computed in the driver over the joined vectors, as in the local engine.
5. ``cluster``: connected components by alternating large-star / small-star rounds (Kiveris et al.
   2014) over a Ray Data edge dataset until it stops changing; the driver then turns the star forest
   into labels and applies ``cluster.clusters_of_groups`` (representatives by the cluster policy).
   ``louvain`` / ``leiden`` run in the driver on the verified graph (``cluster_pairs``).
6. write: in the driver, as in the local engine.

Ray is imported lazily; ``pip install 'neardup[ray]'`` provides it.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import shutil
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import numpy as np
import pyarrow as pa

from neardup import methods
from neardup.arrays import distinct
from neardup.calibrate_scores import sample_codes
from neardup.cluster import Clusters, clusters_of_groups, ordered, paired_documents, roots_of, with_links
from neardup.config import DedupConfig, EngineConfig, ReadConfig
from neardup.engine.sharded import ShardedRun
from neardup.engine.tasks import ORDER_FILES, distinct_codes, in_order, map_shard, score_codes, screen_codes
from neardup.engine.tiles import pair_partition, partition_count, tiles_for_run
from neardup.engine.workdir import WorkDir, joined, load_array, save_array, shard_files
from neardup.io.read import InputError
from neardup.methods.base import KeyedMethod

_INSTALL_HINT = "install neardup[ray]: pip install 'neardup[ray]'"
_ROWS_PER_TASK = 2_000_000  # (group, key, doc) rows per key-emitting task and per shuffle group
_EDGES_PER_PART = 1_000_000
_MAX_CC_ROUNDS = 200
_OBJECT_STORE_MIN = 80 * 2**20


def import_ray() -> Any:
    """The ``ray`` module with Ray Data, or an ImportError that says how to install them."""
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
    ray = import_ray()
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
    values = batch["value"].to_pylist() if "value" in batch.column_names else None
    cuts = [0, *(np.flatnonzero(np.diff(doc) != 1) + 1).tolist(), doc.size]
    starts, sizes = [], []
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        if hi > lo:
            map_shard(int(doc[lo]), ids[lo:hi], texts[lo:hi], lines[lo:hi], config, root, max_chars,
                      values[lo:hi] if values is not None else None)
            starts.append(int(doc[lo]))
            sizes.append(hi - lo)
    return {"start": np.array(starts, dtype=np.int64), "n": np.array(sizes, dtype=np.int64)}


def _emit_keys(batch: dict[str, np.ndarray], spec: dict[str, Any]) -> dict[str, np.ndarray]:
    """Candidates stage, map side: ``(group, key, doc)`` rows of a range of the non-empty documents."""
    method = methods.get(spec["config"])
    rep = joined(spec["root"])
    docs = np.flatnonzero(~rep.empty).astype(np.int64)[int(batch["lo"][0]) : int(batch["hi"][0])]
    keys, key_docs, table = method.keys(rep, docs, range(method.n_tables()))
    kp = spec["key_parts"]
    group = table * kp + (keys % np.uint64(kp)).astype(np.int64)
    return {"group": group, "key": keys, "doc": key_docs}


def _bucket_pairs(batch: dict[str, np.ndarray], spec: dict[str, Any]) -> dict[str, np.ndarray]:
    """Candidates stage, reduce side: the pairs of one group's buckets, as codes ``left * n + right`` (only
    those the method keeps as it makes them where it screens them, from the joined representation)."""
    method = methods.get(spec["config"])
    keys, docs = batch["key"], batch["doc"].astype(np.int64)
    left, right = method.table_pairs(joined(spec["root"]), keys, docs) if method.reads_representation \
        else method.bucket_pairs(keys, docs)
    return {"part": pair_partition(left, spec["tiles"], spec["pair_parts"]), "code": left * spec["n"] + right}


def _screen_group(batch: dict[str, np.ndarray], spec: dict[str, Any]) -> dict[str, np.ndarray]:
    """Greedy's first look at one partition of candidate codes: de-duplicated (or counted) and screened by the
    method (:func:`~neardup.engine.tasks.screen_codes`), with each pair's later end in the policy's order."""
    codes = screen_codes(spec["root"], distinct_codes(batch["code"], spec["min_shared"]), spec["n"], spec["config"])
    ranks = load_array(os.path.join(spec["root"], ORDER_FILES[0]), mmap=False)
    return {"part": np.full(codes.size, int(batch["part"][0]) if batch["part"].size else 0, dtype=np.int64),
            "code": codes, "later": ordered(codes // spec["n"], codes % spec["n"], ranks)[1]}


def _sample_group(batch: dict[str, np.ndarray], spec: dict[str, Any]) -> dict[str, np.ndarray]:
    """One partition's distinct candidate codes sampled by :func:`~neardup.calibrate_scores.sample_codes` (the
    threshold read from the candidate scores)."""
    return {"code": sample_codes(distinct_codes(batch["code"], spec["min_shared"]), spec["k"])}


def _verify_group(batch: dict[str, np.ndarray], spec: dict[str, Any]) -> dict[str, np.ndarray]:
    """Verify stage: de-duplicate (or count) one partition of candidate codes and score them (with ``select``, those
    of greedy's pass 1 or 2, :func:`~neardup.cluster.verify_order`, among codes already screened).

    The first row is a tally, ``(-1, n_candidates, nan)``; the others are the pairs that pass.
    """
    codes = distinct_codes(batch["code"], spec["min_shared"])
    if spec.get("select"):
        codes = in_order(spec["root"], codes, spec["n"], spec["select"])
    left, right, s, n_candidates = score_codes(spec["root"], codes, spec["n"], spec["config"], spec["floor"])
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
    code = distinct(lo * n + hi)
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

class RayRun(ShardedRun):
    """One run of a :class:`DedupConfig` on Ray (stages as in :class:`~neardup.engine.sharded.ShardedRun`)."""

    engine_name = "ray"

    def __init__(self, input_path: str | os.PathLike[str], outdir: str | os.PathLike[str], config: DedupConfig,
                 engine: EngineConfig | None = None, read: ReadConfig | None = None) -> None:
        super().__init__(input_path, outdir, config, engine, read)
        self.ray_info: dict[str, Any] = {}
        self._verified: Any = None

    # ---- helpers -------------------------------------------------------------------------
    @property
    def _cpus(self) -> int:
        return max(1, int(self.ray_info.get("num_cpus") or self.plan.workers))

    def _spread(self, total_rows: int, count: int) -> int:
        """How many pieces to cut ``total_rows`` rows of ``count`` units into: small enough, and enough to share."""
        return max(1, min(count, max(math.ceil(total_rows / _ROWS_PER_TASK), 2 * self._cpus)))

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        with ray_session(self.engine, self.engine.address) as ray:
            self.ray_info = {"version": ray.__version__, "address": self.engine.address,
                             "num_cpus": int(ray.cluster_resources().get("CPU", 0)),
                             "nodes": sum(1 for node in ray.nodes() if node.get("Alive"))}
            yield

    # ---- stages --------------------------------------------------------------------------
    def map(self) -> int:
        """Stage 1: read in the driver, map with ``Dataset.map_batches``; returns the shard count."""
        ray = import_ray()
        t0 = time.perf_counter()
        staging = WorkDir(self.wd.root / "ray-map")
        staging.shards.mkdir(parents=True, exist_ok=True)
        wave_docs = self.plan.batch_docs * max(4, 2 * self._cpus)
        kwargs = {"config": self.config, "root": str(staging.root), "max_chars": self.read.max_chars}

        def run_wave(refs: list[Any]) -> list[dict[str, Any]]:
            ds = ray.data.from_arrow_refs(refs).map_batches(
                _map_batch, batch_size=self.plan.batch_docs, batch_format="pyarrow", fn_kwargs=kwargs)
            return ds.take_all()

        bar = self.read_bar()
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

            for batch in self.batches():
                table = pa.table({"doc": pa.array(np.arange(n_docs, n_docs + len(batch), dtype=np.int64)),
                                  "id": pa.array([d.id for d in batch], pa.string()),
                                  "text": pa.array([d.text for d in batch], pa.string()),
                                  "line": pa.array([d.line for d in batch], pa.int64())})
                values = self.field_values(batch)
                if values is not None:
                    table = table.append_column("value", pa.array(values, pa.float64()))
                refs.append(ray.put(table))
                n_docs += len(batch)
                wave += len(batch)
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
            for part in shard_files(staging, int(row["start"])):  # "done" last, as in the local engine
                os.replace(staging.shard(int(row["start"]), part), self.wd.shard(index, part))
            expected += int(row["n"])
        if expected != n_docs:
            raise RuntimeError(f"ray map stage returned {expected} of {n_docs} documents")
        shutil.rmtree(staging.root, ignore_errors=True)
        self.timed("map", t0)
        return len(done)

    def keyed_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        verified, left, right, scores = self.verify_pairs(self.candidate_pairs())
        self._verified = verified
        return left, right, scores

    def candidate_pairs(self) -> Any:
        """Stage 3: a materialized dataset of candidate codes ``(part, code)``, or None when there are none."""
        ray = import_ray()
        t0 = time.perf_counter()
        method = self.method
        assert isinstance(method, KeyedMethod)
        rep = self.representation()
        n = len(rep)
        docs = np.flatnonzero(~rep.empty).astype(np.int64)
        pair_parts = max(1, int(math.ceil(n * 16 * 40 / (self.engine.memory_limit * 0.3))), 2 * self._cpus)
        tiles = tiles_for_run(self.wd.root, np.asarray(rep.sets.offsets), self.engine.memory_limit, self._cpus,
                              method.score_name)
        self.counts.update(tiles=len(tiles) - 1)
        pair_parts = partition_count(pair_parts, tiles)
        if docs.size < 2:
            self.timed("candidates", t0)
            return None
        tables = method.n_tables()
        rows = method.key_counts(rep, docs)
        total = int(rows.sum())
        pieces = self._spread(total, docs.size)
        # Cut the documents where the running row count crosses each piece's share.
        cuts = np.searchsorted(np.cumsum(rows), np.linspace(0, total, pieces + 1)[1:-1])
        bounds = np.unique(np.concatenate([[0], np.clip(cuts, 0, docs.size), [docs.size]]))
        spec: dict[str, Any] = {"root": str(self.wd.root), "n": n, "pair_parts": pair_parts, "tiles": tiles,
                                "config": self.config,
                                "key_parts": max(1, math.ceil(total / tables / _ROWS_PER_TASK),
                                                 math.ceil(2 * self._cpus / tables))}
        ranges = [{"lo": int(a), "hi": int(b)} for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
        pairs = (ray.data.from_items(ranges, override_num_blocks=len(ranges))
                 .map_batches(_emit_keys, batch_size=1, batch_format="numpy", fn_kwargs={"spec": spec})
                 .groupby("group").map_groups(_bucket_pairs, batch_format="numpy", fn_kwargs={"spec": spec})
                 .materialize())
        self.ray_info.update(key_parts=spec["key_parts"], key_tasks=len(ranges), pair_parts=pair_parts)
        self.timed("candidates", t0)
        count = pairs.count()
        method.check_candidates(count, docs.size)
        return pairs if count else None

    def verify_pairs(self, pairs: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
        """Stage 4: the verified pairs, as a materialized dataset and as sorted driver arrays."""
        self.weights()  # computed in the driver, memory-mapped by the workers
        empty = np.empty(0, dtype=np.int64)
        self.score_threshold(lambda k: empty if pairs is None else self.sample_candidates(pairs, k))
        t0 = time.perf_counter()
        if pairs is None:
            self.counts["n_candidates"] = 0
            self.timed("verify", t0)
            return None, empty, empty, np.empty(0, dtype=np.float64)
        n = len(self.representation())
        spec = {"root": str(self.wd.root), "n": n, "config": self.config, "floor": self.floor,
                "min_shared": getattr(self.method, "min_shared", 1)}

        def verify(data: Any, **more: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, int]:
            done = data.groupby("part").map_groups(_verify_group, batch_format="numpy",
                                                   fn_kwargs={"spec": {**spec, **more}}).materialize()
            lefts, rights, scores, count = [], [], [], 0
            for batch in done.iter_batches(batch_format="numpy", batch_size=None):
                tally = batch["left"] < 0
                count += int(batch["right"][tally].sum())
                lefts.append(batch["left"][~tally])
                rights.append(batch["right"][~tally])
                scores.append(batch["score"][~tally])
            return (done, np.concatenate(lefts) if lefts else empty, np.concatenate(rights) if rights else empty,
                    np.concatenate(scores) if scores else np.empty(0, dtype=np.float64), count)

        if self.ceiling is None:
            verified, left, right, score, n_candidates = verify(pairs)
            n_scored = n_candidates
        else:  # greedy's two passes (see the local engine's verify): roots first, then what their copies leave
            self.write_order(n)
            screened = pairs.groupby("part").map_groups(_screen_group, batch_format="numpy",
                                                        fn_kwargs={"spec": spec}).materialize()
            later = [distinct(b["later"]) for b in screened.iter_batches(batch_format="numpy", batch_size=None)]
            n_candidates = screened.count()
            save_array(self.wd.root / ORDER_FILES[1], roots_of(n, np.concatenate(later) if later else empty))
            spec["min_shared"] = 1  # counted already
            first, l1, r1, s1, c1 = verify(screened.select_columns(["part", "code"]), select=1)
            self.write_settled(n, [{"left": l1, "right": r1, "score": s1}])
            second, l2, r2, s2, c2 = verify(screened.select_columns(["part", "code"]), select=2)
            verified, n_scored = first.union(second), c1 + c2
            left, right, score = np.concatenate([l1, l2]), np.concatenate([r1, r2]), np.concatenate([s1, s2])
        order = np.lexsort((right, left))
        self.counts["n_candidates"] = n_candidates
        self.counts["n_scored"] = n_scored
        self.timed("verify", t0)
        return verified, left[order], right[order], score[order]

    def sample_candidates(self, pairs: Any, k: int) -> np.ndarray:
        """At most ``k`` distinct candidate codes, the bottom of :func:`~neardup.calibrate_scores.sample_codes`: each
        partition's bottom (a Ray task), then theirs."""
        spec = {"min_shared": getattr(self.method, "min_shared", 1), "k": k}
        got = pairs.groupby("part").map_groups(_sample_group, batch_format="numpy", fn_kwargs={"spec": spec})
        codes = [b["code"] for b in got.iter_batches(batch_format="numpy", batch_size=None)]
        return sample_codes(np.concatenate(codes), k) if codes else np.empty(0, dtype=np.int64)

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

    def cluster(self, left: np.ndarray, right: np.ndarray, scores: np.ndarray) -> Clusters:
        """Stage 5: clusters; components distributed (keyed methods); greedy decisions and communities in the
        driver, over the verified pairs the verify stage gathered there."""
        if self.config.cluster.algorithm != "components" or self._verified is None or self.floor < self.method.threshold:
            return super().cluster(left, right, scores)
        t0 = time.perf_counter()
        lengths, keys = self.representative_inputs()
        nodes = paired_documents(left, right)
        groups = self.components(self._verified, lengths.size, left.size)[nodes]
        clusters = with_links(clusters_of_groups(lengths.size, nodes, groups, lengths, self.config.cluster, keys),
                              left, right, scores)
        self._verified = None
        self.timed("cluster", t0)
        return clusters

    def engine_info(self, n_shards: int, resumed: bool) -> dict[str, Any]:
        return {**super().engine_info(n_shards, resumed), "ray": self.ray_info}


def run_ray(input_path: str | os.PathLike[str], outdir: str | os.PathLike[str], config: DedupConfig,
            engine: EngineConfig | None = None, read: ReadConfig | None = None) -> dict[str, Any]:
    """De-duplicate a file on Ray; writes OUTDIR exactly as :func:`neardup.engine.local.run_chunked` does.

    ``engine.address`` joins a Ray cluster (``"auto"``, ``"ray://host:10001"``, ...); without it a local
    cluster of ``engine.workers`` CPUs is started (and stopped at the end). The work directory must be
    on a filesystem every worker sees. Reading and validating the input happen in the driver.
    """
    import_ray()
    return RayRun(input_path, outdir, config, engine, read).run()
