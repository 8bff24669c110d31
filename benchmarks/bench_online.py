"""Online detector speed: latency of one insert-and-answer with N documents stored, and ingest throughput.

Owns the benchmark corpus, timing and report of the online detector; must not change detection.
Run by hand (not part of the test suite)::

    python benchmarks/bench_online.py [--n 100000] [--methods sketch,minhash]
        [--stores sqlite,postgresql] [--pg-dsn postgresql://...] [--queries 1000] [--max-seconds 120]
        [--batch 500] [--workers 1] [--workdir /tmp/neardup-bench-online] [--reuse] [--fill-only] [--json OUT]

Corpus: Reuters-21578, 20 Newsgroups and BBC News texts (``$NEARDUP_SHARED_DATA`` or ../shared/data),
pooled and shuffled (seeded), repeated with light keyboard noise (``neardup.synth`` preset
``typos``, a new seed per round) until there are N + Q texts. The first N are written to a JSONL file
and stored as ``neardup online load`` stores them (``--batch`` documents per transaction, ``--workers``
processes preparing batches ahead; docs/s is reported); the held-out queries alternate between a noisy
copy of a stored text (a duplicate) and a held-out text.

Latency of one insert-and-answer (each query is a new document: decided, stored, committed), at most
``--queries`` per setting and at most ``--max-seconds``:

* ``inproc``: ``Detector.add`` in this process (SQLite: WAL, ``synchronous=FULL``: one fsync each);
* ``http``: ``POST /documents`` to ``neardup serve`` in a child process on 127.0.0.1, timed by the
  client (httpx, keep-alive), i.e. the latency a local client sees.

PostgreSQL: give ``--pg-dsn`` (or NEARDUP_BENCH_POSTGRES_DSN / NEARDUP_TEST_POSTGRES_DSN); one schema
per (method, N). Load average at start and end is printed: on a shared machine p99 moves with it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from neardup.online.detector import Detector, OnlineConfig, latency_summary  # noqa: E402
from neardup.online.store import open_store  # noqa: E402
from neardup.synth import apply_noise  # noqa: E402

SHARED = Path(os.environ.get("NEARDUP_SHARED_DATA", REPO.parent / "shared" / "data"))
SOURCES = ("reuters21578/docs.jsonl.gz", "20newsgroups/docs.jsonl.gz", "bbc_news/docs.jsonl")


def read_texts(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    out = []
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            text = json.loads(line).get("text") or ""
            if len(text.split()) >= 5:
                out.append(text[:20_000])
    return out


def build_corpus(n: int, queries: int, seed: int) -> tuple[list[str], list[str]]:
    """(N stored texts, Q query texts) as described in the module docstring."""
    base: list[str] = []
    for rel in SOURCES:
        path = SHARED / rel
        if not path.exists():
            sys.exit(f"bench_online: missing {path} (set NEARDUP_SHARED_DATA)")
        base += read_texts(path)
    rng = random.Random(seed)
    rng.shuffle(base)
    held_out = base[-(queries // 2 + 1):]
    pool = base[: -(queries // 2 + 1)]
    stored: list[str] = []
    rnd = 0
    while len(stored) < n:
        need = n - len(stored)
        if rnd == 0:
            stored += pool[:need]
        else:
            stored += [apply_noise(t, "typos", seed=seed + rnd, doc_id=str(i)).text
                       for i, t in enumerate(pool[:need])]
        rnd += 1
    qs = []
    for i in range(queries):
        if i % 2 == 0:
            j = rng.randrange(len(stored))
            qs.append(apply_noise(stored[j], "typos", seed=seed + 1000 + i, doc_id=f"q{i}").text)
        else:
            qs.append(held_out[(i // 2) % len(held_out)])
    return stored, qs


def store_url(kind: str, method: str, n: int, workdir: Path, pg_dsn: str | None) -> str:
    if kind == "sqlite":
        return f"sqlite:///{workdir / f'bench_{method}_{n}.db'}"
    assert pg_dsn
    return f"{pg_dsn}{'&' if '?' in pg_dsn else '?'}schema=bench_{method}_{n}"


def reset(kind: str, url: str, workdir: Path, method: str, n: int) -> None:
    if kind == "sqlite":
        for suffix in ("", "-wal", "-shm"):
            p = workdir / f"bench_{method}_{n}.db{suffix}"
            if p.exists():
                p.unlink()
    else:
        store = open_store(url)
        store.drop()  # type: ignore[attr-defined]
        store.close()


def corpus_file(texts: list[str], workdir: Path, seed: int) -> Path:
    """The stored texts as JSONL (ids d0, d1, ...), written once per (N, seed)."""
    path = workdir / f"corpus_{len(texts)}_{seed}.jsonl"
    if not path.exists():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            for i, text in enumerate(texts):
                fh.write(json.dumps({"id": f"d{i}", "text": text}) + "\n")
        os.replace(tmp, path)
    return path


def ingest(url: str, config: OnlineConfig, path: Path, batch: int, workers: int) -> dict[str, Any]:
    """``neardup online load``: the file added in batches (one transaction each), ``workers`` preparing ahead."""
    from neardup.online.load import load

    detector = Detector(open_store(url), config)
    c0 = time.process_time()
    out = load(detector, path, batch_size=batch, workers=workers, progress=True)
    cpu = time.process_time() - c0  # this process only (the detector's share; workers prepare beside it)
    detector.close()
    return {"docs": out["read"], "seconds": round(out["seconds"], 1), "docs_per_second": out["docs_per_second"],
            "workers": workers, "deciding_cpu_seconds": round(cpu, 1), "duplicates_found": out["duplicates"]}


def latency_inproc(url: str, config: OnlineConfig, queries: list[str], max_seconds: float, tag: str
                   ) -> dict[str, Any]:
    detector = Detector(open_store(url), config)
    lat, cpu = [], []
    dups = 0
    t_end = time.perf_counter() + max_seconds
    for i, text in enumerate(queries):
        t0, c0 = time.perf_counter(), time.process_time()
        ans = detector.add(f"{tag}-{i}", text)
        lat.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        dups += ans.is_duplicate
        if time.perf_counter() > t_end:
            break
    detector.close()
    c = latency_summary(cpu)
    return {**latency_summary(lat), "cpu_p50_ms": c["p50_ms"], "cpu_p99_ms": c["p99_ms"], "duplicates": dups}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def latency_http(url: str, config: OnlineConfig, queries: list[str], max_seconds: float, tag: str, workdir: Path
                 ) -> dict[str, Any]:
    import httpx

    port, token = free_port(), "bench-token"
    log = open(workdir / "server.log", "ab")
    settings = workdir / f"config_{config.method}.json"
    settings.write_text(json.dumps(config.to_dict()))
    proc = subprocess.Popen([sys.executable, "-m", "neardup.online", "serve", "--store", url, "--port", str(port),
                             "--config", str(settings), "--log-level", "warning"],
                            env={**os.environ, "NEARDUP_TOKEN": token, "PYTHONPATH": str(REPO / "src")},
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.time() + 120
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.time() > deadline or proc.poll() is not None:
                raise RuntimeError(f"server did not start (see {workdir / 'server.log'})")
            time.sleep(0.2)
        lat = []
        dups = 0
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
            client.get("/metrics")  # warm the connection
            t_end = time.perf_counter() + max_seconds
            for i, text in enumerate(queries):
                t0 = time.perf_counter()
                r = client.post("/documents", json={"id": f"{tag}-{i}", "text": text})
                lat.append((time.perf_counter() - t0) * 1000)
                r.raise_for_status()
                dups += r.json()["status"] == "duplicate"
                if time.perf_counter() > t_end:
                    break
            server = client.get("/metrics").json()["decision_latency"]
        return {**latency_summary(lat), "server_decision_p50_ms": server["p50_ms"],
                "server_decision_p99_ms": server["p99_ms"], "duplicates": dups}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000, help="documents stored before timing")
    ap.add_argument("--methods", default="sketch,minhash")
    ap.add_argument("--stores", default="sqlite,postgresql")
    ap.add_argument("--pg-dsn", default=os.environ.get("NEARDUP_BENCH_POSTGRES_DSN")
                    or os.environ.get("NEARDUP_TEST_POSTGRES_DSN"))
    ap.add_argument("--queries", type=int, default=1000, help="most single inserts timed per setting")
    ap.add_argument("--max-seconds", type=float, default=120.0, help="most seconds of timing per setting")
    ap.add_argument("--batch", type=int, default=500, help="documents per transaction when ingesting")
    ap.add_argument("--workers", type=int, default=1, help="processes preparing batches ahead when ingesting")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/neardup-bench-online"))
    ap.add_argument("--reuse", action="store_true", help="keep a store that already holds N documents")
    ap.add_argument("--no-http", action="store_true", help="skip the HTTP latency runs")
    ap.add_argument("--fill-only", action="store_true",
                    help="only build the stores (time them later with --reuse, on an idle machine)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, help="write the results here")
    args = ap.parse_args()

    args.workdir.mkdir(parents=True, exist_ok=True)
    print(f"load average at start: {os.getloadavg()}  cpus: {os.cpu_count()}", flush=True)
    t0 = time.perf_counter()
    stored, queries = build_corpus(args.n, 2 * args.queries, args.seed)
    print(f"corpus: {len(stored):,} stored texts, {len(queries):,} queries ({time.perf_counter() - t0:.0f} s)",
          flush=True)
    results: list[dict[str, Any]] = []
    for kind in args.stores.split(","):
        if kind == "postgresql" and not args.pg_dsn:
            print("postgresql: skipped (no --pg-dsn)")
            continue
        for method in args.methods.split(","):
            config = OnlineConfig.ours() if method == "minhash" else OnlineConfig(method=method)
            url = store_url(kind, method, args.n, args.workdir, args.pg_dsn)
            row: dict[str, Any] = {"store": kind, "method": method, "n_stored": args.n,
                                   "config": {k: v for k, v in config.to_dict().items() if k != "normalize"}}
            print(f"== {kind} / {method}: N = {args.n:,}", flush=True)
            have = 0
            if args.reuse:
                try:
                    s = open_store(url)
                    have = s.counts()["documents"]
                    s.close()
                except Exception:  # noqa: BLE001 - a missing/old store is rebuilt
                    have = 0
            if have != args.n:
                reset(kind, url, args.workdir, method, args.n)
                row["ingest"] = ingest(url, config, corpus_file(stored, args.workdir, args.seed), args.batch,
                                       args.workers)
                print(f"  ingest: {row['ingest']}", flush=True)
            else:
                # The timed inserts of an earlier run were added on top: start from a fresh copy instead.
                print("  reusing the stored corpus", flush=True)
            if args.fill_only:
                results.append(row)
                continue
            if kind == "sqlite":
                db = args.workdir / f"bench_{method}_{args.n}.db"
                work = args.workdir / f"work_{method}_{args.n}.db"
                for suffix in ("", "-wal", "-shm"):
                    if Path(f"{work}{suffix}").exists():
                        Path(f"{work}{suffix}").unlink()
                s = open_store(url)
                s.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # type: ignore[attr-defined]
                s.close()
                shutil.copyfile(db, work)
                run_url = f"sqlite:///{work}"
                row["db_bytes"] = db.stat().st_size
            else:
                run_url = url
            q_in, q_http = queries[: args.queries], queries[args.queries:]
            row["inproc"] = latency_inproc(run_url, config, q_in, args.max_seconds, f"{method}-in")
            print(f"  in-process insert-and-answer: {row['inproc']}", flush=True)
            if not args.no_http:
                row["http"] = latency_http(run_url, config, q_http, args.max_seconds, f"{method}-http", args.workdir)
                print(f"  HTTP on loopback:             {row['http']}", flush=True)
            if kind != "sqlite":  # take the timed inserts out again, so --reuse finds N documents
                detector = Detector(open_store(run_url), config)
                for tag in (f"{method}-in", f"{method}-http"):
                    for i in range(len(queries)):
                        if detector.get(f"{tag}-{i}", with_text=False) is not None:
                            detector.delete(f"{tag}-{i}")
                detector.close()
            results.append(row)
    print(f"load average at end: {os.getloadavg()}", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"load_end": os.getloadavg(), "results": results}, indent=2))
    print("\nstore       method   ingest docs/s (workers)    inproc p50/p99 ms (CPU p50/p99)  http p50/p99 ms")
    for r in results:
        if "inproc" not in r:
            continue
        ing = r.get("ingest", {})
        ing_s = f"{ing['docs_per_second']:.0f} ({ing['workers']} worker(s))" if ing else "reused"
        i = r["inproc"]
        http = f"{r['http']['p50_ms']:.1f} / {r['http']['p99_ms']:.1f}" if "http" in r else "-"
        print(f"{r['store']:<11} {r['method']:<8} {ing_s:>22}  {i['p50_ms']:6.1f} / {i['p99_ms']:6.1f} "
              f"({i['cpu_p50_ms']:.1f} / {i['cpu_p99_ms']:.1f})      {http}")


if __name__ == "__main__":
    main()
