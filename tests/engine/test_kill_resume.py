"""The chunked engine killed at random points (issue 20): SIGKILL during the map, candidate, verify and
write stages of one ``dedup --resume`` run, resumed after each kill. Each kill leaves no process and
no half-written output; the final output equals an uninterrupted run's, and the folder holds exactly
the three outputs."""

import json
import os
import random
import signal

import pyarrow.parquet as pq
import pytest

from .test_process_lifetime import (
    assert_all_gone,
    neardup,
    tree,
    wait_for,
    write_corpus,
)

#: Where to kill: after the marker a stage leaves when the one before it is done, plus a random delay.
STAGES = [("map", "shards/000002.done"), ("candidates", "join.done"), ("verify", "candidates.done"),
          ("write", "verify.done")]
OUTPUTS = ("clusters.parquet", "evidence.parquet", "pairs.parquet", "scores.parquet", "summary.json")


def _outputs(outdir):
    clusters = pq.read_table(outdir / "clusters.parquet").to_pylist()
    pairs = pq.read_table(outdir / "pairs.parquet").to_pylist()
    return clusters, [(p["left"], p["right"], round(p["score"], 12)) for p in pairs]


def _no_half_written_output(outdir):
    for name in OUTPUTS:
        path = outdir / name
        if path.exists():  # complete, or absent: never a part of one
            json.loads(path.read_text()) if name.endswith(".json") else pq.read_table(path)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_sigkill_at_random_points_then_resume_gives_the_uninterrupted_output(tmp_path, seed):
    rng = random.Random(seed)
    src = write_corpus(tmp_path / "in.jsonl", 12_000, seed=seed)
    args = ["dedup", src, "--workers", "2", "--batch-docs", "300", "-q"]
    ref = neardup(*args, "-o", tmp_path / "ref")
    assert ref.wait(timeout=300) == 0, ref.stderr.read()
    out = tmp_path / "run"
    work = out / ".neardup-work"
    killed = []
    for stage, marker in STAGES:
        proc = neardup(*args, "-o", out, "--resume")
        wait_for(lambda p=proc, m=marker: (work / m).exists() or p.poll() is not None, timeout=300, what=f"stage {stage}")
        procs = tree(proc) if proc.poll() is None else []
        delay = rng.uniform(0.0, 1.0)
        try:
            wait_for(lambda p=proc: p.poll() is not None, timeout=delay, what="the delay")
        except AssertionError:
            pass
        if proc.poll() is not None:  # it finished before the kill: nothing more to interrupt
            assert proc.returncode == 0, proc.stderr.read()
            break
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        killed.append((stage, round(delay, 3)))
        assert_all_gone(procs[1:])
        _no_half_written_output(out)
        if not work.exists():  # killed after its last step: the outputs are complete, nothing to resume
            break
    if work.exists():  # (without its manifest: killed while being removed, so started afresh)
        resumable = (work / "manifest.json").exists()
        final = neardup(*args, "-o", out, "--resume")
        assert final.wait(timeout=300) == 0, final.stderr.read()
        assert json.loads((out / "summary.json").read_text())["engine"]["resumed"] is resumable
    assert killed, "no kill landed: the run is too short for this test"
    assert _outputs(out) == _outputs(tmp_path / "ref"), f"killed at {killed}"
    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUTS)  # no work folder, no temporary file left
