"""The chunked engine: same output as the in-memory pipeline, bounded batches, resumable after a kill."""

import dataclasses
import json
import os
import random
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest

from neardup.config import ConfigError, DedupConfig
from neardup.config import EngineConfig, parse_size
from neardup.engine.local import run_chunked
from neardup.engine.plan import make_plan, weight_partitions
from neardup.engine.workdir import WorkDir, WorkDirError
from neardup.io.read import read_corpus
from neardup.pipeline import run

CONFIGS = [
    DedupConfig(method="minhash"),
    DedupConfig(method="minhash").replace(minhash__rule="collisions", minhash__min_collisions=8),
    DedupConfig(method="minhash", threshold=0.3).replace(verify__score="jaccard", cluster__algorithm="leiden"),
    DedupConfig(method="ngram"),
    DedupConfig(method="simhash"),
]


def _outputs(outdir):
    clusters = pq.read_table(outdir / "clusters.parquet").to_pylist()
    pairs = pq.read_table(outdir / "pairs.parquet").to_pylist()
    return clusters, [(p["left"], p["right"], round(p["score"], 12)) for p in pairs]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"{c.method}-{c.minhash.rule}-{c.verify.score}")
def test_chunked_run_equals_in_memory_run(example_path, tmp_path, cfg):
    summary = run_chunked(example_path, tmp_path / "o", cfg, EngineConfig(workers=2, batch_docs=37, progress=False))
    clusters, pairs = _outputs(tmp_path / "o")
    ref = run(read_corpus(example_path), cfg)
    assert [c["id"] for c in clusters] == ref.ids
    assert [c["cluster"] for c in clusters] == ref.cluster_ids
    assert [c["is_representative"] for c in clusters] == ref.clusters.is_representative.tolist()
    assert pairs == [(a, b, round(s, 12)) for a, b, s in ref.pairs_by_id()]
    assert summary["engine"]["shards"] == 9 and summary["n_docs"] == 300
    assert not (tmp_path / "o" / ".neardup-work").exists()  # cleaned after success


@pytest.mark.parametrize("score", ["weighted-overlap", "jaccard"])
def test_chunked_run_over_many_tiles_equals_in_memory_run(example_path, tmp_path, monkeypatch, score):
    """Verification reads two document tiles at a time; with tiles of a few documents each, pairs span
    many tile pairs and partitions, and the output must not change."""
    import neardup.engine.tiles as tiles

    monkeypatch.setattr(tiles, "tile_budget", lambda *args: 1000)
    cfg = DedupConfig(threshold=0.5).replace(verify__score=score)
    summary = run_chunked(example_path, tmp_path / "o", cfg, EngineConfig(workers=2, batch_docs=50, progress=False))
    assert summary["engine"]["tiles"] >= 10
    clusters, pairs = _outputs(tmp_path / "o")
    ref = run(read_corpus(example_path), cfg)
    assert len(pairs) > 50
    assert pairs == [(a, b, round(s, 12)) for a, b, s in ref.pairs_by_id()]
    assert [c["cluster"] for c in clusters] == ref.cluster_ids


def test_ids_answered_in_pieces_keep_the_outputs_and_their_string_type(example_path, tmp_path, monkeypatch):
    """Ids of paired documents are held with 64-bit offsets (more than 2 GiB of id characters at tens of
    millions of documents) and answered in pieces; with pieces of three ids the outputs must not change and
    the id columns stay ``string``."""
    import pyarrow as pa

    import neardup.engine.sharded as sharded

    init = sharded.DocIds.__init__
    monkeypatch.setattr(sharded.DocIds, "__init__", lambda self, docs, chunks, piece=3: init(self, docs, chunks, piece))
    cfg = DedupConfig(threshold=0.5)
    run_chunked(example_path, tmp_path / "o", cfg, EngineConfig(workers=2, batch_docs=50, progress=False))
    clusters, pairs = _outputs(tmp_path / "o")
    ref = run(read_corpus(example_path), cfg)
    assert len(pairs) > 50
    assert pairs == [(a, b, round(s, 12)) for a, b, s in ref.pairs_by_id()]
    assert [c["cluster"] for c in clusters] == ref.cluster_ids
    for name, column in (("pairs", "left"), ("clusters", "cluster"), ("evidence", "left")):
        assert pq.read_schema(tmp_path / "o" / f"{name}.parquet").field(column).type == pa.string()


def test_workers_grown_past_their_share_are_replaced_before_a_stage(example_path, tmp_path):
    """Allocators keep freed memory in long-lived workers; a stage that needs room gets fresh ones."""
    from neardup.engine.local import LocalRun as ChunkedRun
    from neardup.engine.processes import held_bytes

    run_ = ChunkedRun(example_path, tmp_path / "o", DedupConfig(),
                      EngineConfig(workers=2, memory_limit=parse_size("1GB"), progress=False))
    try:
        first = run_.workers()
        assert first.submit(sum, [1, 2]).result() == 3  # the workers exist (each holds tens of MB)
        run_.make_room(0)  # they hold far less than half a gigabyte: kept
        assert run_.workers() is first
        held = sum(held_bytes(pid) for pid in first._processes)
        assert held > 2 * 2**20  # measured from /proc
        run_.make_room(parse_size("500MB") - held + 2**20)  # what they hold + the need passes half the limit
        second = run_.workers()
        assert second is not first and second.submit(sum, [2, 3]).result() == 5
    finally:
        run_.close()


def test_one_worker_and_many_workers_agree(example_path, tmp_path):
    cfg = DedupConfig()
    run_chunked(example_path, tmp_path / "a", cfg, EngineConfig(workers=1, batch_docs=50, progress=False))
    run_chunked(example_path, tmp_path / "b", cfg, EngineConfig(workers=2, batch_docs=13, progress=False))
    assert _outputs(tmp_path / "a") == _outputs(tmp_path / "b")


def test_a_small_input_runs_in_this_process_unless_workers_are_asked_for(example_path, tmp_path, monkeypatch):
    """With the worker count automatic, an input of at most INLINE_DOCS documents starts no worker process
    (their start costs more than the work); past it, or with --workers, the workers run it. Same output."""
    import neardup.engine.plan as plan
    from neardup.engine import local

    started = []
    real_pool, bound = local.LocalRun.workers, plan.INLINE_DOCS

    def counted(self):
        pool = real_pool(self)
        started.append(type(pool).__name__)
        return pool

    monkeypatch.setattr(local.LocalRun, "workers", counted)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # automatic = two workers, on any machine
    small = run_chunked(example_path, tmp_path / "small", DedupConfig(), EngineConfig(batch_docs=40, progress=False))
    assert small["engine"]["plan"]["workers"] == 1 and small["engine"]["shards"] == 8
    assert set(started) == {"InlineExecutor"}

    started.clear()
    monkeypatch.setattr(plan, "INLINE_DOCS", 100)  # the same 300 documents are now past the bound
    large = run_chunked(example_path, tmp_path / "large", DedupConfig(), EngineConfig(batch_docs=40, progress=False))
    assert large["engine"]["plan"]["workers"] == 2 and set(started) == {"ProcessPoolExecutor"}

    started.clear()
    monkeypatch.setattr(plan, "INLINE_DOCS", bound)
    asked = run_chunked(example_path, tmp_path / "asked", DedupConfig(), EngineConfig(workers=2, progress=False))
    assert asked["engine"]["plan"]["workers"] == 2 and set(started) == {"ProcessPoolExecutor"}
    assert _outputs(tmp_path / "small") == _outputs(tmp_path / "large") == _outputs(tmp_path / "asked")


def test_the_input_is_read_on_while_the_workers_start_within_a_twentieth_of_the_limit(example_path, tmp_path,
                                                                                     monkeypatch):
    """A worker's start waits for the fork server's loading: the map stage reads on meanwhile (held texts
    within a twentieth of the memory limit), then hands the batches out in order. Same output."""
    import threading

    from neardup.engine import local

    real_start = local.start_workers
    held = []

    def slow_start(pool, workers):
        thread = real_start(pool, workers)
        done = threading.Event()
        slow = threading.Thread(target=lambda: (thread.join(), done.wait(1.0)))  # the server loads for a second
        slow.start()
        return slow

    real_read = local.LocalRun.read_while_workers_start

    def spy(self, pool, batches, ahead):
        before = len(ahead)
        real_read(self, pool, batches, ahead)
        held.append((before, len(ahead), sum(len(d.text) for b in ahead for d in b)))

    monkeypatch.setattr(local, "start_workers", slow_start)
    monkeypatch.setattr(local.LocalRun, "read_while_workers_start", spy)
    cfg, engine = DedupConfig(), EngineConfig(workers=2, batch_docs=20, progress=False)
    run_chunked(example_path, tmp_path / "all", cfg, engine)  # the bound (107M characters) holds the 100k
    monkeypatch.setattr(local, "held_chars", lambda limit: 30_000)
    run_chunked(example_path, tmp_path / "bound", cfg, engine)
    (before, after, _), (_, bounded, chars) = held
    assert before == 0 and after == 15  # every batch of the 300 stories, read while the workers started
    assert 0 < bounded < 15 and 30_000 < chars <= 30_000 + 20 * 500  # stops once past the bound (by a batch)
    assert _outputs(tmp_path / "all") == _outputs(tmp_path / "bound")


def test_the_evidence_is_written_chunk_by_chunk_while_the_workers_compute_the_next(example_path, tmp_path,
                                                                                   monkeypatch):
    """The evidence's chunks reach the output in order as they are done, a few in flight per worker: when the
    first is written the last has not been asked for. The same evidence as one chunk done in this process."""
    from neardup.engine import evidence

    run_chunked(example_path, tmp_path / "one", DedupConfig(), EngineConfig(workers=2, progress=False))
    monkeypatch.setattr(evidence, "MIN_PAIRS_PER_TASK", 1)
    monkeypatch.setattr(evidence, "PAIRS_PER_TASK", 4)
    seen = []
    real = evidence.write_evidence

    def spy(path, tables, **kwargs):
        def counted():
            for table in tables:
                seen.append(len(list((tmp_path / "many" / "work" / "evidence").glob("*.parquet"))))
                yield table
        real(path, counted(), **kwargs)

    monkeypatch.setattr(evidence, "write_evidence", spy)
    run_chunked(example_path, tmp_path / "many", DedupConfig(),
                EngineConfig(workers=2, progress=False, work_dir=str(tmp_path / "many" / "work")))
    assert len(seen) >= 10 and 1 <= seen[0] <= 4  # the first written with at most 2 x 2 chunks asked for
    assert seen == sorted(seen) and seen[-1] == len(seen)
    many, one = (pq.read_table(tmp_path / name / "evidence.parquet") for name in ("many", "one"))
    assert many.equals(one)


def test_the_evidence_texts_are_read_again_by_a_worker_while_this_process_clusters(example_path, tmp_path, monkeypatch):
    """With worker processes, the evidence's text store (the input read again for the documents in pairs) is
    begun in a worker as soon as the pairs are known, and has been written when the evidence needs it; one
    worker (this process) writes it itself, at the evidence. The same evidence either way."""
    from neardup.engine import evidence

    begun = []
    real = evidence.start_text_store

    def spy(run, n_shards, left, right):
        store = real(run, n_shards, left, right)
        begun.append((store, run.wd.done("texts")))
        return store

    monkeypatch.setattr(evidence, "start_text_store", spy)
    run_chunked(example_path, tmp_path / "two", DedupConfig(), EngineConfig(workers=2, batch_docs=40, progress=False))
    run_chunked(example_path, tmp_path / "one", DedupConfig(), EngineConfig(workers=1, batch_docs=40, progress=False))
    (two, two_done), (one, _) = begun
    assert two is not None and two.done() and two.exception() is None and not two_done
    assert one is None
    assert _outputs(tmp_path / "two") == _outputs(tmp_path / "one")
    assert pq.read_table(tmp_path / "two" / "evidence.parquet").equals(pq.read_table(tmp_path / "one" / "evidence.parquet"))
    assert pq.read_table(tmp_path / "two" / "evidence.parquet").num_rows > 50


def test_workers_start_cleanly_after_native_thread_pools_ran_in_the_parent(example_path, tmp_path):
    """Regression: rensa's Rust thread pool, started in the parent, deadlocked plainly forked workers."""
    script = (
        "import sys\n"
        "from neardup.config import DedupConfig\n"
        "from neardup.config import EngineConfig\n"
        "from neardup.engine.local import run_chunked\n"
        "from neardup.io.read import read_corpus\n"
        "from neardup.pipeline import run\n"
        "if __name__ == '__main__':\n"
        "    run(read_corpus(sys.argv[1]), DedupConfig())  # MinHash in this process first\n"
        "    s = run_chunked(sys.argv[1], sys.argv[2], DedupConfig(), EngineConfig(workers=2, batch_docs=40,\n"
        "                                                                         progress=False))\n"
        "    print(s['n_docs'])\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(example_path), str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["300"]


def test_verifying_a_partition_in_many_passes_gives_the_same_pairs(example_path, tmp_path):
    import numpy as np

    from neardup.engine.tasks import verify_partition as _verify_part

    from neardup.engine.tasks import later_ends

    cfg = DedupConfig()
    key = lambda d: sorted(zip(d["left"].tolist(), d["right"].tolist(), d["score"].tolist()))  # noqa: E731
    for lazy in (False, True):  # every candidate (all pairs asked for), or greedy's two passes
        work = tmp_path / f"work-{lazy}"
        run_chunked(example_path, tmp_path / f"o-{lazy}", cfg, EngineConfig(
            workers=1, work_dir=str(work), keep_work=True, progress=False, all_pairs=not lazy))
        done = sorted((work / "pairs").glob("verified-*.npz"))
        floor = json.loads((tmp_path / f"o-{lazy}" / "summary.json").read_text())["decision"]["score_floor"]
        assert done and all((p.stem.count("-") == 2) == lazy for p in done)
        firsts = {}
        for path in done:
            part, select = int(path.stem.split("-")[1]), int(path.stem.split("-")[2]) if lazy else 0
            one = dict(np.load(path))
            path.unlink()
            if lazy and part not in firsts:  # its screened candidates again, in many passes
                for f in (work / "pairs").glob(f"*-{part:03d}*.npy"):
                    if f.name.startswith(("later-", "screened-")):
                        f.unlink()
                firsts[part] = later_ends(str(work), part, 300, cfg, max_codes=7)
            count = _verify_part(str(work), part, 300, cfg, max_codes=7, floor=floor, select=select)  # many passes
            many = dict(np.load(path))
            assert count == int(one["n_candidates"][0]) == int(many["n_candidates"][0])
            assert key(many) == key(one)


@pytest.mark.parametrize("rule", ["lsh", "collisions"])
def test_candidates_flushed_mid_group_give_the_same_output(example_path, tmp_path, monkeypatch, rule):
    """The candidates stage buffers its tables' pairs and writes them a partition at a time: flushed after a
    few codes (many files, each named by its first table) or once a group of tables, every code reaches
    verification once, so the pairs and the candidate counts (repeats counted, under the collisions rule) are
    the same."""
    import neardup.engine.local as local

    cfg = DedupConfig(method="minhash").replace(minhash__rule=rule)
    runs = {}
    for name, codes in (("once", local.SPILL_CODES), ("often", 8)):
        monkeypatch.setattr(local, "SPILL_CODES", codes)
        work = tmp_path / f"work-{name}"
        summary = run_chunked(example_path, tmp_path / name, cfg, EngineConfig(workers=2, batch_docs=50, progress=False,
                                                                              work_dir=str(work), keep_work=True))
        runs[name] = (_outputs(tmp_path / name), summary["n_candidates"], len(list((work / "pairs").glob("*-t*.npy"))))
    assert runs["often"][:2] == runs["once"][:2] and runs["once"][1] > 0
    assert runs["often"][2] > runs["once"][2]


def test_memory_plan_and_size_parsing():
    assert parse_size("1GB") == 10**9 and parse_size("2GiB") == 2 * 2**30 and parse_size("300mb") == 300 * 10**6
    with pytest.raises(ConfigError, match="memory limit"):
        parse_size("lots")
    with pytest.raises(ConfigError, match="at least 256MB"):
        EngineConfig(memory_limit=parse_size("100MB"))
    with pytest.raises(ConfigError, match="at least 256MB"):
        EngineConfig(memory_limit="255MB")
    assert EngineConfig(memory_limit="256MB").memory_limit == 256 * 10**6  # the minimum as the message writes it
    small = make_plan(EngineConfig(memory_limit=parse_size("512MB"), workers=2))
    big = make_plan(EngineConfig(memory_limit=parse_size("4GB"), workers=2))
    assert small.batch_docs <= big.batch_docs


_COUNT_PEAK = """
import sys
import numpy as np
import pyarrow.compute  # imported in every worker before the stage (the plan counts it in a process's base)
from neardup.verify.overlap import idf_weights_of_codes, value_codes
n = int(sys.argv[1])
values = np.random.default_rng(0).integers(0, 2**63, n, dtype=np.uint64)
def peak():
    return int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024
before = peak()
codes, counts = value_codes(values)
idf_weights_of_codes(codes, counts, 10**6, 2.0)
print(peak() - before)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads a process's peak memory from /proc")
def test_a_weights_partition_of_distinct_values_is_counted_within_its_share_of_the_limit():
    """Most word shingles of a large corpus occur once: a partition of distinct hashes, sized by the plan,
    must be counted (Arrow's dictionary encoding and the weights) within a worker's share of the limit.
    With 40 bytes a value planned, 4M values under 1 GB on two workers were two partitions of 2M, ~280 MB
    each against a share of 150 MB."""
    limit, workers, n_values = parse_size("1GB"), 2, 4_000_000
    per_partition = n_values // weight_partitions(n_values, limit, workers)
    out = subprocess.run([sys.executable, "-c", _COUNT_PEAK, str(per_partition)], capture_output=True, text=True,
                         check=True)
    assert int(out.stdout) <= limit * 0.3 / workers

_TABLE_PEAK = """
import sys
import numpy as np
import pyarrow.compute  # imported in every worker before the stage (the plan counts it in a process's base)
from neardup.engine.plan import TABLE_CHUNK_VALUES, table_bytes
from neardup.verify.frequencies import FrequencyTable
limit, workers = int(sys.argv[1]), 2
def peak():
    return int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024
budget = table_bytes(limit, workers)
chunk = np.random.default_rng(0).integers(0, 2**64 - 1, TABLE_CHUNK_VALUES, dtype=np.uint64, endpoint=True)
FrequencyTable(budget).add(chunk[:10])  # compiled loops loaded before the baseline
before = peak()
table = FrequencyTable(budget)
full, done = table.max_entries, 0
while done < full:  # count_values: distinct values up to the largest table, a chunk at a time
    m = min(chunk.size, full - done)
    assert table.add(chunk[:m] + np.uint64(done))
    done += m
entries = table.entries()
assert not table.add(chunk + np.uint64(done))  # and one chunk more gives up
del table
merged = FrequencyTable(budget)  # idf_table: the entries merged, the counts made weights, the table compacted
assert merged.add(*entries)
del entries
merged.map_counts(lambda c: c * 0.5)
merged.compact()
out = merged.lookup(chunk)  # as verification looks values up
print(peak() - before, full)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads a process's peak memory from /proc")
@pytest.mark.parametrize("limit", ["1GB", "2GB"])
def test_a_frequency_table_at_its_largest_stays_within_a_workers_share_of_the_limit(limit):
    """The weights stage's table path: a worker's table filled to its largest size (then one chunk more,
    which gives up), its entries, and the merged table turned into weights stay within the worker's share
    of the 0.3 of the limit the stage has."""
    out = subprocess.run([sys.executable, "-c", _TABLE_PEAK, str(parse_size(limit))], capture_output=True, text=True,
                         check=True)
    used, entries = map(int, out.stdout.split())
    assert entries >= parse_size(limit) // 1000  # a million distinct values a GB of limit, at least
    assert used <= parse_size(limit) * 0.3 / 2


def _corpus(path, n):
    rng = random.Random(3)
    words = [f"w{i}" for i in range(3000)]
    base = [" ".join(rng.choice(words) for _ in range(80)) for _ in range(n // 2)]
    with open(path, "w") as fh:
        for i in range(n):
            text = base[i % len(base)] if i < len(base) else base[rng.randrange(len(base))] + f" extra{i}"
            fh.write(json.dumps({"id": f"d{i}", "text": text}) + "\n")


def test_resume_after_sigkill_gives_the_same_output(tmp_path):
    src = tmp_path / "big.jsonl"
    _corpus(src, 8_000)
    cmd = [sys.executable, "-m", "neardup", "dedup", str(src), "--batch-docs", "200", "--workers", "1", "-q"]
    subprocess.run(cmd + ["-o", str(tmp_path / "ref")], check=True, timeout=300)
    work = tmp_path / "run" / ".neardup-work"
    proc = subprocess.Popen(cmd + ["-o", str(tmp_path / "run")], start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and len(list((work / "shards").glob("*.done"))) < 5:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(list((work / "shards").glob("*.done")))
    assert 5 <= done_before < 40, "the kill should land mid-way through the map stage"
    assert not (tmp_path / "run" / "clusters.parquet").exists()
    subprocess.run(cmd + ["-o", str(tmp_path / "run"), "--resume"], check=True, timeout=300)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["engine"]["resumed"] is True
    assert _outputs(tmp_path / "run") == _outputs(tmp_path / "ref")


def test_joined_arrays_leave_the_shards(example_path, tmp_path):
    """After the join, the shards keep their ids and lines, not a second copy of the joined arrays."""
    work = tmp_path / "work"
    cfg = DedupConfig()
    run_chunked(example_path, tmp_path / "o", cfg, EngineConfig(workers=1, batch_docs=50, work_dir=str(work),
                                                                keep_work=True, progress=False))
    shards = work / "shards"
    assert len(list(shards.glob("*.done"))) >= 6 and len(list(shards.glob("*.ids.parquet"))) >= 6
    assert not list(shards.glob("*.values.npy")) and not list(shards.glob("*.sketch.npy"))
    assert (work / "values.npy").exists() and (work / "sketch.npy").exists()
    ref = run(read_corpus(example_path), cfg)
    assert [c["cluster"] for c in _outputs(tmp_path / "o")[0]] == ref.cluster_ids


@pytest.mark.parametrize("normal", [0, 200], ids=["all-empty", "empty-then-normal"])
def test_a_first_shard_of_empty_texts_joins(tmp_path, normal):
    """Issue 55: a first shard whose texts are all empty has no rows to append; the joined files must still
    keep room for their header (once: "values.npy.tmp shorter than the 0 bytes joined into it")."""
    src = tmp_path / "in.jsonl"
    with open(src, "w") as fh:
        for i in range(300):
            fh.write(json.dumps({"id": f"e{i}", "text": ""}) + "\n")
        for i in range(normal):
            fh.write(json.dumps({"id": f"n{i}", "text": f"document {i} says something of its own, number {i}"}) + "\n")
    summary = run_chunked(src, tmp_path / "o", DedupConfig(method="minhash"),
                          EngineConfig(workers=1, batch_docs=50, progress=False))
    clusters = pq.read_table(tmp_path / "o" / "clusters.parquet").to_pylist()
    assert summary["n_docs"] == len(clusters) == 300 + normal and summary["n_empty_docs"] == 300
    assert summary["n_duplicates"] == 0 and len({c["cluster"] for c in clusters}) == len(clusters)
    assert (tmp_path / "o" / "summary.json").exists()


def test_discarded_files_free_their_names_at_once_and_are_gone_once_settled(tmp_path):
    """WorkDir.discard renames what no later step reads out of the way before a thread deletes it: the name
    can be written again at once (a resumed weights stage recreates its folder), and settle waits for the
    deletions, leaving neither the files nor the folder of discarded files (nor what a killed run left in it)."""
    wd = WorkDir(tmp_path / "work")
    wd.shards.mkdir(parents=True)
    files = [wd.shard(i, "values.npy") for i in range(20)]
    for f in files:
        f.write_bytes(b"x" * 100_000)
    folder = wd.root / "split"
    (folder / "deep").mkdir(parents=True)
    (folder / "deep" / "a.npy").write_bytes(b"y")
    for name in ("0-split", "0-000000.values.npy"):  # what a run killed while deleting left there
        (wd.root / "discarded" / "earlier" / name).mkdir(parents=True)
    wd.discard(f for f in files)
    wd.discard([folder, wd.root / "never-written"])
    assert not any(f.exists() for f in files) and not folder.exists()
    folder.mkdir()
    (folder / "new.npy").write_bytes(b"z")
    wd.settle()
    assert not (wd.root / "discarded").exists()
    left = sorted(p.relative_to(wd.root).as_posix() for p in wd.root.rglob("*"))
    assert left == ["shards", "split", "split/new.npy"]


def test_the_fork_server_starts_when_an_input_fills_the_calibration_sample(tmp_path, monkeypatch):
    """method "auto" reads a sample of the input (SAMPLE_DOCS documents) to calibrate before the map. An input
    that fills it is past a batch, so with the worker count automatic the fork server starts then: its loading
    overlaps the calibration instead of delaying the first worker. Not for a smaller input, a worker count
    asked for, or a method that needs no calibration."""
    from neardup.calibrate import SAMPLE_DOCS
    from neardup.engine import local

    started = []
    monkeypatch.setattr(local, "start_server", lambda: started.append(True))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # automatic = two workers, on any machine
    full, short = tmp_path / "full.jsonl", tmp_path / "short.jsonl"
    _corpus(full, SAMPLE_DOCS)
    _corpus(short, SAMPLE_DOCS - 1)

    def starts(path, method, workers=0):
        started.clear()
        run = local.LocalRun(path, tmp_path / "o", DedupConfig(method=method), EngineConfig(workers=workers))
        assert run.config.method == ("minhash" if method == "auto" else method)  # calibrated before the map
        return started == [True]

    assert starts(full, "auto")
    assert not starts(short, "auto") and not starts(full, "auto", workers=2) and not starts(full, "minhash")


def test_resume_refuses_a_different_run(example_path, tmp_path):
    eng = EngineConfig(workers=1, keep_work=True, progress=False)
    run_chunked(example_path, tmp_path / "o", DedupConfig(), eng)
    with pytest.raises(WorkDirError, match="other input or settings"):
        run_chunked(example_path, tmp_path / "o", DedupConfig(threshold=0.9),
                    EngineConfig(workers=1, resume=True, progress=False))


def test_weights_beside_candidates_give_the_outputs_of_one_stage_after_the_other(example_path, tmp_path, monkeypatch):
    """Where the plan allows, the weights stage runs in the workers while the driver finds the candidates;
    the outputs equal those of the two stages one after the other, and the summary says which ran."""
    import neardup.engine.local as local

    eng = EngineConfig(workers=2, batch_docs=50, progress=False)
    beside = run_chunked(example_path, tmp_path / "a", DedupConfig(), eng)
    monkeypatch.setattr(local, "weights_beside_candidates", lambda *_: False)
    after = run_chunked(example_path, tmp_path / "b", DedupConfig(), eng)
    assert beside["engine"]["weights_beside_candidates"] is True
    assert after["engine"]["weights_beside_candidates"] is False
    assert _outputs(tmp_path / "a") == _outputs(tmp_path / "b")
    assert beside["n_candidates"] == after["n_candidates"] > 0


def test_a_failed_weights_stage_stops_the_candidates_and_the_run_resumes(example_path, tmp_path, monkeypatch):
    """An error in the weights stage stops the candidates thread before its next table (no thread left,
    the stage not marked done) and reaches the caller; the run resumed gives a fresh run's outputs."""
    import threading

    from neardup.engine.local import LocalRun

    spilled, go = [], threading.Event()
    real_spill, real_weights = LocalRun.spill, LocalRun.weights

    def spill(self, *args):
        spilled.append(args[2])
        go.set()
        time.sleep(0.2)  # the failing stage sets the stop meanwhile
        return real_spill(self, *args)

    def weights(self):
        assert go.wait(30)
        raise RuntimeError("weights failed")

    monkeypatch.setattr(LocalRun, "spill", spill)
    monkeypatch.setattr(LocalRun, "weights", weights)
    work = tmp_path / "work"
    eng = EngineConfig(workers=2, batch_docs=50, progress=False, work_dir=str(work), keep_work=True)
    with pytest.raises(RuntimeError, match="weights failed"):
        run_chunked(example_path, tmp_path / "o", DedupConfig(), eng)
    assert not any(t.name == "neardup-candidates" for t in threading.enumerate())
    assert not (work / "candidates.done").exists() and 1 <= len(spilled) < 32
    monkeypatch.setattr(LocalRun, "spill", real_spill)
    monkeypatch.setattr(LocalRun, "weights", real_weights)
    run_chunked(example_path, tmp_path / "o", DedupConfig(), dataclasses.replace(eng, resume=True))
    run_chunked(example_path, tmp_path / "fresh", DedupConfig(), EngineConfig(workers=2, batch_docs=50, progress=False))
    assert _outputs(tmp_path / "o") == _outputs(tmp_path / "fresh")


def test_an_error_finding_candidates_beside_the_weights_reaches_the_caller(example_path, tmp_path, monkeypatch):
    from neardup.engine.local import LocalRun

    def spill(self, *args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(LocalRun, "spill", spill)
    with pytest.raises(OSError, match="No space left"):
        run_chunked(example_path, tmp_path / "o", DedupConfig(), EngineConfig(workers=2, batch_docs=50, progress=False))


def test_weights_counted_in_a_table_or_by_partitions_give_the_in_memory_output(tmp_path, monkeypatch):
    """Where compiled loops run, the weights stage counts document frequencies in a hash table a worker;
    when the distinct values overflow a worker's table budget it counts by hash partitions instead. Both
    give the in-memory run's pairs and clusters, and the summary says which counted."""
    import neardup.engine.sharded as sharded

    src = tmp_path / "in.jsonl"
    _corpus(src, 1_200)  # word 4-grams of random words: 47k distinct values, more than the smallest table holds
    cfg = DedupConfig(method="minhash").replace(verify__score="weighted-jaccard")
    eng = EngineConfig(workers=2, batch_docs=100, progress=False)
    monkeypatch.setenv("NEARDUP_JIT", "1")
    table = run_chunked(src, tmp_path / "table", cfg, eng)
    monkeypatch.setattr(sharded, "table_bytes", lambda *_: 0)  # the smallest table: 2**15 distinct values
    monkeypatch.setattr(sharded, "weight_partitions", lambda *_: 4)  # then four hash partitions
    partitions = run_chunked(src, tmp_path / "partitions", cfg, eng)
    assert table["engine"]["weights_by"] == "table"
    assert partitions["engine"]["weights_by"] == "hash partitions"
    ref = run(read_corpus(src), cfg)
    assert len(ref.left) > 100
    expected = [(a, b, round(s, 12)) for a, b, s in ref.pairs_by_id()]
    for out in ("table", "partitions"):
        clusters, pairs = _outputs(tmp_path / out)
        assert pairs == expected and [c["cluster"] for c in clusters] == ref.cluster_ids
