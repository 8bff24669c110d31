"""The benchmark suite: every method x set tuned on validation, reported on test, timed and measured.

Owns running methods over benchmark sets and writing ``results.jsonl`` / ``trials.jsonl`` /
``sets.json`` / ``run.json`` (:mod:`neardup.report.bench_results`); must not build sets (:mod:`neardup.eval.benchsets`),
implement peers (:mod:`neardup.eval.peers`) or render the report (:mod:`neardup.report`, its caller's job).

Protocol, the same for every method: the validation split picks the setting with the best ARI (ties:
F1, then the higher threshold) -- neardup methods through :func:`neardup.eval.tune.tune` (its grid of
thresholds and, for MinHash, candidate rules), peers over their own grid -- and the chosen setting is
run once, unchanged, on the test split. That test run is what is reported:

* ``ari``, ``precision``, ``recall``, ``f1`` (pairwise, :mod:`neardup.eval.metrics`);
* ``docs_per_second``: test documents / wall seconds of the whole run from texts to clusters
  (representation, candidates, verification, clustering; model loading and imports excluded: they
  happen during validation);
* ``peak_memory_mb``: peak resident set size (RSS) of this process during the test run minus the RSS
  just before it (after ``gc.collect()`` and glibc ``malloc_trim(0)``, so freed memory is handed
  back and re-allocating it counts), sampled every 2 ms from ``/proc/self/statm`` (psutil elsewhere). RSS, not tracemalloc, because tracemalloc misses native allocations (NumPy buffers are
  seen, but not Rust/ONNX ones, so peers would look free) and slows Python code down. Memory that the
  allocator re-uses from earlier runs is not counted, so small values are lower bounds.

Any method name :class:`neardup.config.DedupConfig` accepts is a neardup method (the list is not fixed
here); a name in :data:`neardup.eval.peers.PEERS` is a peer. A method without a grid in
:data:`neardup.eval.tune.DEFAULT_GRIDS` is swept over 0.05..0.99 by 0.01.
"""

from __future__ import annotations

import gc
import os
import platform
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from neardup.config import ConfigError, DedupConfig
from neardup.eval.benchsets import BenchSet, bench_dir, cluster_size_stats, list_sets, make_quick_set
from neardup.eval.evaluate import LabelledData, score
from neardup.eval.peers import PEERS, Peer, get_peer
from neardup.io.read import Corpus
from neardup.io.write import write_json, write_jsonl
from neardup.report.bench_results import RESULTS_FILE, RUN_FILE, SETS_FILE, TRIALS_FILE
from neardup.synth import derive_seed

__all__ = [
    "CONTRACT_KEYS",
    "DEFAULT_METHODS",
    "QUICK_METHODS",
    "MethodRef",
    "PeakMemory",
    "base_config",
    "resolve_methods",
    "run_method",
    "run_suite",
    "subsample",
]

DEFAULT_METHODS: tuple[str, ...] = ("minhash", "ngram", "simhash", "datasketch", "rensa", "unisim-retsim")
QUICK_METHODS: tuple[str, ...] = ("minhash", "ngram", "simhash", "datasketch", "rensa")
GENERIC_GRID: list[float] = [round(float(x), 3) for x in np.arange(0.05, 0.9951, 0.01)]
DEFAULT_SLOW_MAX_DOCS = 400
CONTRACT_KEYS: tuple[str, ...] = ("method", "set", "ari", "precision", "recall", "f1", "params",
                                  "docs_per_second", "peak_memory_mb", "split_sizes")


# --------------------------------------------------------------------------------------------
# Methods
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MethodRef:
    """A method to benchmark: a neardup method (``base``) or a peer."""

    name: str
    base: DedupConfig | None = None
    peer: Peer | None = None

    @property
    def kind(self) -> str:
        return "peer" if self.peer is not None else "neardup"


def base_config(method: str) -> DedupConfig:
    """The configuration a neardup method is tuned from: the method's defaults.

    >>> base_config("simhash").verify.score
    'none'
    """
    return DedupConfig(method=method)


def resolve_methods(names: Sequence[str]) -> list[MethodRef]:
    """Turn method names into :class:`MethodRef` s; an unknown name is a ``ConfigError`` listing the known ones.

    >>> [m.kind for m in resolve_methods(["minhash", "datasketch"])]
    ['neardup', 'peer']
    """
    out: list[MethodRef] = []
    for raw in names:
        name = raw.strip()
        if not name or name in {m.name for m in out}:
            continue
        peer = get_peer(name)
        if peer is not None:
            out.append(MethodRef(name, peer=peer))
            continue
        try:
            out.append(MethodRef(name, base=base_config(name)))
        except ConfigError:
            from neardup.methods import names

            raise ConfigError(f"unknown method {name!r}: neardup methods are {', '.join(names())}; "
                              f"peers are {', '.join(PEERS)}") from None
    if not out:
        raise ConfigError("--methods: give at least one method")
    return out


# --------------------------------------------------------------------------------------------
# Measuring
# --------------------------------------------------------------------------------------------


def _rss_reader() -> Callable[[], int] | None:
    statm = "/proc/self/statm"
    if os.path.exists(statm):
        page = os.sysconf("SC_PAGE_SIZE")

        def read_statm() -> int:
            with open(statm, "rb") as fh:
                return int(fh.read().split()[1]) * page

        return read_statm
    try:
        import psutil

        proc = psutil.Process()
        return lambda: int(proc.memory_info().rss)
    except ImportError:
        return None


def _trimmer() -> Callable[[], None]:
    """glibc ``malloc_trim(0)``: hand freed heap pages back to the OS so a new run's growth shows in RSS."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return lambda: None

    def run() -> None:
        trim(0)

    return run


class PeakMemory:
    """Peak RSS growth during a block, sampled by a background thread (see the module docstring).

    >>> with PeakMemory() as m:
    ...     x = bytearray(50 * 2**20)
    ...     x[::4096] = b"x" * len(x[::4096])
    >>> m.peak_mb is None or m.peak_mb > 30
    True
    """

    def __init__(self, interval: float = 0.002) -> None:
        self.interval = interval
        self.read = _rss_reader()
        self.trim = _trimmer()
        self.base = 0
        self.peak = 0
        self.peak_mb: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _poll(self) -> None:
        assert self.read is not None
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, self.read())

    def __enter__(self) -> PeakMemory:
        if self.read is not None:
            gc.collect()
            self.trim()
            self.base = self.peak = self.read()
            self._thread = threading.Thread(target=self._poll, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.read is not None and self._thread is not None:
            self.peak = max(self.peak, self.read())
            self._stop.set()
            self._thread.join()
            self.peak_mb = round(max(0, self.peak - self.base) / 2**20, 2)


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------


def subsample(data: LabelledData, max_docs: int, seed: int = 0, key: str | None = None) -> LabelledData:
    """At most ``max_docs`` documents, keeping whole true clusters; pair-labelled data is returned as is.

    The choice depends on ``seed``, ``key`` (default: the data's name) and the cluster labels only, so
    the sets of one source (same labels at every preset) keep the same clusters at every preset.

    >>> from neardup.io.read import read_records
    >>> c = read_records([{"id": str(i), "text": "x", "cluster": str(i // 3)} for i in range(30)], label_field="cluster")
    >>> len(subsample(LabelledData(c), 10).corpus)
    9
    """
    c = data.corpus
    if len(c) <= max_docs or c.labels is None or data.pairs is not None:
        return data
    groups: dict[str, list[int]] = {}
    for i, lab in enumerate(c.labels):
        groups.setdefault(lab if lab is not None else f"\x00{i}", []).append(i)
    keys = sorted(groups)
    random.Random(derive_seed(seed, "subsample", key if key is not None else data.name)).shuffle(keys)
    chosen: list[int] = []
    for k in keys:
        if len(chosen) + len(groups[k]) <= max_docs:
            chosen += groups[k]
        if len(chosen) >= max_docs:
            break
    chosen.sort()
    sub = Corpus(ids=[c.ids[i] for i in chosen], texts=[c.texts[i] for i in chosen],
                 labels=[c.labels[i] for i in chosen], source=c.source)
    return LabelledData(corpus=sub, name=data.name)


def _metrics(m: dict[str, Any]) -> dict[str, Any]:
    return {k: (round(float(m[k]), 6) if m.get(k) is not None else None) for k in ("ari", "precision", "recall", "f1")}


def _score_labels(labels: np.ndarray, data: LabelledData) -> dict[str, Any]:
    return score(SimpleNamespace(clusters=SimpleNamespace(labels=np.asarray(labels))), data)  # type: ignore[arg-type]


def _best(trials: list[tuple[dict[str, Any], dict[str, Any]]]) -> tuple[dict[str, Any], dict[str, Any]]:
    return max(trials, key=lambda tr: (round(tr[1]["ari"], 12), round(tr[1]["f1"], 12), tr[0]["threshold"]))


# --------------------------------------------------------------------------------------------
# One method on one set
# --------------------------------------------------------------------------------------------


def _grid_for(method: MethodRef, quick: bool) -> list[float] | None:
    from neardup.eval.tune import DEFAULT_GRIDS

    assert method.base is not None
    grid = DEFAULT_GRIDS.get(method.base.method, GENERIC_GRID)
    return grid[::2] if quick else list(grid)


def _run_neardup(method: MethodRef, val: LabelledData, test: LabelledData, quick: bool
                 ) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    from neardup.eval.tune import config_for, tune
    from neardup.pipeline import prepare, run_prepared

    assert method.base is not None
    out = tune(val, None, method.base, thresholds=_grid_for(method, quick))
    params = out["params"]
    chosen = config_for(method.base, params)
    setting = {k: v for k, v in params.items() if k != "threshold"}
    trials = [{**tr, "selected_setting": all(tr.get(k) == v for k, v in setting.items())} for tr in out["trials"]]
    with PeakMemory() as mem:
        t0 = time.perf_counter()
        result = run_prepared(prepare(test.corpus, chosen), chosen)
        seconds = time.perf_counter() - t0
    metrics = score(result, test)
    measured = {"seconds": seconds, "peak_memory_mb": mem.peak_mb}
    return params, out["validation"], trials, {**metrics, **measured}


def _run_peer(method: MethodRef, val: LabelledData, test: LabelledData, quick: bool
              ) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    peer = method.peer
    assert peer is not None
    state = peer.prepare(val.corpus.texts)
    trials: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for params in peer.grid(quick):
        trials.append((params, _score_labels(peer.cluster(state, params), val)))
    params, val_metrics = _best(trials)
    setting = {k: v for k, v in params.items() if k != "threshold"}
    rows = [{**p, **_metrics(m), "selected_setting": all(p.get(k) == v for k, v in setting.items())}
            for p, m in trials]
    del state
    with PeakMemory() as mem:
        t0 = time.perf_counter()
        labels = peer.run(test.corpus.texts, params)
        seconds = time.perf_counter() - t0
    metrics = _score_labels(labels, test)
    return params, val_metrics, rows, {**metrics, "seconds": seconds, "peak_memory_mb": mem.peak_mb}


def run_method(method: MethodRef, val: LabelledData, test: LabelledData, set_info: dict[str, Any] | None = None,
               quick: bool = False) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Tune ``method`` on ``val``, run it on ``test``: the results row and the validation trials."""
    info = set_info or {}
    t0 = time.perf_counter()
    runner = _run_peer if method.peer is not None else _run_neardup
    params, val_metrics, trials, test_metrics = runner(method, val, test, quick)
    seconds = test_metrics["seconds"]
    n_test = len(test.corpus)
    row: dict[str, Any] = {
        "method": method.name,
        "kind": method.kind,
        "set": info.get("name", test.name),
        "source": info.get("source", ""),
        "preset": info.get("preset", ""),
        **_metrics(test_metrics),
        "params": params,
        "docs_per_second": round(n_test / seconds, 1) if seconds > 0 else None,
        "seconds": round(seconds, 4),
        "peak_memory_mb": test_metrics["peak_memory_mb"],
        "memory_measure": "peak RSS delta (sampled every 2 ms)",
        "split_sizes": {"validation": len(val.corpus), "test": n_test},
        "n_pred_pairs": test_metrics.get("n_pred_pairs"),
        "n_true_pairs": test_metrics.get("n_true_pairs"),
        "validation": _metrics(val_metrics),
        "n_trials": len(trials),
        "tune_seconds": round(time.perf_counter() - t0 - seconds, 3),
        "subsampled": bool(info.get("subsampled", False)),
    }
    for tr in trials:
        tr.update(method=method.name, set=row["set"], source=row["source"], preset=row["preset"])
    return row, trials


# --------------------------------------------------------------------------------------------
# The suite
# --------------------------------------------------------------------------------------------


def run_suite(sets: Sequence[BenchSet] | None = None, methods: Sequence[str] = DEFAULT_METHODS,
              out: Path | None = None, sets_dir: Path | None = None, quick: bool = False,
              max_docs: int | None = None, slow_max_docs: int | None = DEFAULT_SLOW_MAX_DOCS, seed: int = 0,
              log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run ``methods`` on ``sets`` and write ``out/results.jsonl``, ``trials.jsonl``, ``sets.json`` and
    ``run.json``. Returns a summary (paths, rows, skipped methods, notes); the caller renders the report
    (:func:`neardup.report.html.write_report`, as ``neardup bench run`` does).

    ``quick`` builds a tiny set into ``out/quick-sets`` (ignoring ``sets``/``sets_dir``) and sweeps every
    second threshold. ``max_docs`` subsamples every split (whole clusters); ``slow_max_docs`` does the
    same for slow peers only (RETSim). A peer whose package is missing is skipped with a note.
    """
    say = log or (lambda _msg: None)
    out = Path(out) if out is not None else bench_dir()
    refs = resolve_methods(methods)
    t_start = time.perf_counter()
    notes: list[str] = []
    if quick:
        qdir = out / "quick-sets"
        make_quick_set(qdir, seed=seed)
        sets = list_sets(qdir)
        notes.append("quick run: tiny set, every second threshold of each grid")
    elif sets is None:
        sets = list_sets(sets_dir)
    if not sets:
        raise ValueError(f"no benchmark sets in {sets_dir or bench_dir()}: run `neardup bench make` first")
    skipped: list[dict[str, str]] = []
    runnable: list[MethodRef] = []
    for ref in refs:
        why = ref.peer.missing() if ref.peer is not None else None
        if why:
            skipped.append({"method": ref.name, "reason": why})
            say(f"skipping {why}")
        else:
            runnable.append(ref)
    rows: list[dict[str, Any]] = []
    trials: list[dict[str, Any]] = []
    set_rows: dict[str, Any] = {}
    for bset in sets:
        val_full, test_full = bset.load("validation"), bset.load("test")
        vkey, tkey = f"{bset.source or bset.name}/validation", f"{bset.source or bset.name}/test"
        if max_docs:
            val_full, test_full = subsample(val_full, max_docs, seed, vkey), subsample(test_full, max_docs, seed, tkey)
        info = {"name": bset.name, "source": bset.source, "preset": bset.preset}
        set_rows[bset.name] = {
            **info,
            "split_sizes": {"validation": len(val_full.corpus), "test": len(test_full.corpus)},
            "cluster_sizes": {s: _sizes(d) for s, d in (("validation", val_full), ("test", test_full))},
            "stats": {s: cluster_size_stats(d.corpus.labels or []) for s, d in
                      (("validation", val_full), ("test", test_full)) if d.pairs is None},
            "similarity": (bset.info.get("splits") or {}).get("test", {}).get("similarity"),
        }
        for ref in runnable:
            val, test, sub = val_full, test_full, bool(max_docs)
            if ref.peer is not None and ref.peer.slow and slow_max_docs:
                val, test = subsample(val_full, slow_max_docs, seed, vkey), subsample(test_full, slow_max_docs, seed, tkey)
                if len(val.corpus) < len(val_full.corpus) or len(test.corpus) < len(test_full.corpus):
                    sub = True
                    note = (f"{ref.name} on {bset.name}: splits subsampled to <= {slow_max_docs} documents "
                            f"(whole clusters) because it is slow")
                    notes.append(note)
            t0 = time.perf_counter()
            row, tr = run_method(ref, val, test, {**info, "subsampled": sub}, quick=quick)
            rows.append(row)
            trials += tr
            say(f"{bset.name:32s} {ref.name:14s} ARI {row['ari']:.3f}  P {row['precision']:.3f}  "
                f"R {row['recall']:.3f}  F1 {row['f1']:.3f}  {row['docs_per_second'] or 0:8.0f} docs/s  "
                f"{row['peak_memory_mb'] or 0:7.1f} MB  ({time.perf_counter() - t0:.1f}s)")
        write_jsonl(out / RESULTS_FILE, iter(rows))  # after every set: a long run keeps what it has
    write_jsonl(out / TRIALS_FILE, iter(trials))
    write_json(out / SETS_FILE, set_rows)
    run_info = {
        "methods": [r.name for r in refs], "skipped": skipped, "notes": notes, "quick": quick,
        "max_docs": max_docs, "slow_max_docs": slow_max_docs, "seed": seed, "sets": [s.name for s in sets],
        "seconds": round(time.perf_counter() - t_start, 1), "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": _machine(),
    }
    write_json(out / RUN_FILE, run_info)
    return {"out": str(out), "results": str(out / RESULTS_FILE), "rows": rows, "skipped": skipped, "notes": notes,
            "seconds": run_info["seconds"]}


def _sizes(data: LabelledData) -> list[int]:
    labels = data.corpus.labels or []
    counts: dict[str, int] = {}
    singles = 0
    for lab in labels:
        if lab is None:
            singles += 1
        else:
            counts[lab] = counts.get(lab, 0) + 1
    return sorted(counts.values(), reverse=True) + [1] * singles


def _machine() -> dict[str, Any]:
    info: dict[str, Any] = {"python": platform.python_version(), "platform": platform.platform(),
                            "cpus": os.cpu_count()}
    try:
        info["load_average"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    return info
