"""Worker processes never outlive the command that started them (issue 20, cases 5 and 9): SIGKILL of
``neardup dedup`` or ``neardup online load`` leaves no process of its tree; Ctrl-C (SIGINT) says what
stopped and how to continue, and exits 130."""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import neardup as _package

psutil = pytest.importorskip("psutil")

SRC = Path(_package.__file__).resolve().parents[1]  # the neardup under test, installed or not


def write_corpus(path, n, seed=3, words=80):
    """``n`` documents, half of them near-copies of the others (enough work to be killed mid-run)."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(3000)]
    base = [" ".join(rng.choice(vocab) for _ in range(words)) for _ in range(n // 2)]
    with open(path, "w") as fh:
        for i in range(n):
            text = base[i % len(base)] if i < len(base) else base[rng.randrange(len(base))] + f" extra{i}"
            fh.write(json.dumps({"id": f"d{i}", "text": text}) + "\n")
    return path


def _sigint_default() -> None:
    """In the child before it starts: SIGINT handled as a terminal's command would (a test run started in
    the background by a shell, e.g. ``cmd &``, passes SIGINT on ignored, and Python then keeps ignoring it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def neardup(*args, **kwargs):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-m", "neardup", *map(str, args)], env=env, start_new_session=True,
                            preexec_fn=_sigint_default, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **kwargs)


def wait_for(cond, timeout=60.0, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def tree(proc):
    """The process and every descendant now (workers, the fork server, the resource tracker)."""
    parent = psutil.Process(proc.pid)
    return [parent, *parent.children(recursive=True)]


def assert_all_gone(procs, timeout=10.0):
    """Every process of ``procs`` ends within ``timeout`` seconds (a zombie counts as ended)."""
    deadline = time.time() + timeout
    alive = list(procs)
    while alive and time.time() < deadline:
        alive = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        time.sleep(0.1)
    left = []
    for p in alive:
        try:
            left.append((p.pid, " ".join(p.cmdline())[:100]))
            p.kill()
        except psutil.Error:
            pass
    assert not left, f"processes left after the command was killed: {left}"


def test_sigkill_of_dedup_leaves_no_worker_or_fork_server(tmp_path):
    src = write_corpus(tmp_path / "big.jsonl", 40_000)
    proc = neardup("dedup", src, "-o", tmp_path / "out", "--workers", "2", "--batch-docs", "500", "-q")
    shards = tmp_path / "out" / ".neardup-work" / "shards"
    wait_for(lambda: len(list(shards.glob("*.done"))) >= 2, what="two shards")
    procs = tree(proc)
    assert len(procs) >= 4  # this one, the resource tracker, the fork server, its workers
    os.kill(proc.pid, signal.SIGKILL)  # the main process only: nothing else is told
    proc.wait()
    assert_all_gone(procs[1:])


def test_sigkill_of_online_load_leaves_no_worker_or_fork_server(tmp_path):
    src = write_corpus(tmp_path / "big.jsonl", 40_000)
    store = tmp_path / "store.db"
    proc = neardup("online", "load", src, "--store", f"sqlite:///{store}", "--workers", "1", "--batch", "200", "-q")
    wait_for(lambda: len(tree(proc)) >= 4, what="the worker")
    wait_for(lambda: (tmp_path / "store.db-wal").exists() and (tmp_path / "store.db-wal").stat().st_size > 0,
             what="a committed batch")
    procs = tree(proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert_all_gone(procs[1:])


def test_ctrl_c_says_what_stopped_how_to_resume_and_exits_130(tmp_path):
    src = write_corpus(tmp_path / "big.jsonl", 40_000)
    out = tmp_path / "out"
    proc = neardup("dedup", src, "-o", out, "--workers", "2", "--batch-docs", "500", "-q")
    wait_for(lambda: len(list((out / ".neardup-work" / "shards").glob("*.done"))) >= 2, what="two shards")
    procs = tree(proc)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: the whole foreground group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err  # workers ignore it: one line, from the command
    assert lines[0].startswith(f"neardup: interrupted: dedup of {src} stopped")
    assert "--resume" in lines[0] and str(out / ".neardup-work") in lines[0]
    assert_all_gone(procs[1:])
    assert (out / ".neardup-work" / "manifest.json").exists() and not (out / "clusters.parquet").exists()


def test_ctrl_c_of_an_in_memory_run_says_nothing_was_written(tmp_path):
    src = write_corpus(tmp_path / "big.jsonl", 40_000)
    proc = neardup("dedup", src, "-o", tmp_path / "out", "--engine", "memory", "-q")
    wait_for(lambda: psutil.Process(proc.pid).cpu_times().user > 1.5, what="a second of work")
    os.kill(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip() == f"neardup: interrupted: dedup of {src} stopped; nothing was written"
    assert not (tmp_path / "out").exists()


def test_a_finished_dedup_leaves_no_process_behind(tmp_path):
    """When ``neardup dedup`` has ended, the fork server and the resource tracker it started have ended too
    (not a moment later, when they would notice its end of their pipes closed)."""
    src = write_corpus(tmp_path / "c.jsonl", 3_000)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    for attempt in range(3):
        with open(tmp_path / "err.txt", "w") as err:  # a file, not a pipe: waiting on a pipe waits for every holder
            proc = subprocess.Popen([sys.executable, "-m", "neardup", "dedup", str(src), "-o", str(tmp_path / f"o{attempt}"),
                                     "--workers", "2", "--batch-docs", "500", "-q"], env=env, start_new_session=True,
                                    stdout=subprocess.DEVNULL, stderr=err)
            assert proc.wait(timeout=300) == 0, (tmp_path / "err.txt").read_text()
        left = []
        for p in psutil.process_iter(["pid"]):
            try:
                if os.getsid(p.pid) == proc.pid and p.status() != psutil.STATUS_ZOMBIE:
                    left.append((p.pid, " ".join(p.cmdline())[:100]))
            except (psutil.Error, ProcessLookupError, PermissionError):
                pass
        assert not left, f"processes of the command alive after it ended: {left}"
