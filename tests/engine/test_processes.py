"""Worker processes start with what the fork server loaded (neardup.engine.forkserver): NumPy, PyArrow, the
tasks, numba with its contexts built (or no numba at all when compiled loops are off) and the normalizer's
table of word characters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import pytest

#: Run in a fresh interpreter (a fresh fork server): what a worker of a two-worker pool has loaded before its
#: first task, and what this process has.
_PROBE = """
import json, sys
from neardup.engine.processes import process_pool, stop_pool
names = ("numba", "numba.np.arraymath", "pyarrow.parquet", "neardup.engine.tasks", "neardup.engine.forkserver",
         "pandas")
pool = process_pool(2)
try:
    worker = pool.submit(eval, "[n for n in %r if n in __import__('sys').modules]" % (names,)).result()
    normalize = "__import__('neardup.text.normalize', fromlist=['x'])"
    table = pool.submit(eval, normalize + ".alnum_table.cache_info().currsize").result()
    blas = pool.submit(eval, "__import__('os').environ.get('OPENBLAS_THREAD_TIMEOUT')").result()
finally:
    stop_pool(pool)
print(json.dumps({"worker": worker, "parent": [n for n in names if n in sys.modules], "table": table,
                  "blas": blas, "parent_blas": __import__("os").environ.get("OPENBLAS_THREAD_TIMEOUT")}))
"""


def _probe(**env: str | None) -> dict[str, Any]:
    """:data:`_PROBE`'s answer, run with ``env`` changing this process's environment (None: a name removed)."""
    environ = {**os.environ, **env}
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in environ.items() if v is not None})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_worker_starts_with_numba_ready_and_the_tasks_loaded_by_the_fork_server():
    loaded = _probe(NEARDUP_JIT="")
    # numba.np.arraymath is imported by numba's first compilation context, which jit.ready() builds
    assert loaded["worker"] == ["numba", "numba.np.arraymath", "pyarrow.parquet", "neardup.engine.tasks",
                                "neardup.engine.forkserver"]
    assert loaded["parent"] == []  # the server loaded them, not the process that asked for workers
    assert loaded["table"] == 1  # the normalizer's table of word characters: built in the server, inherited
    # and not pandas (no worker task imports it: below), which kept the first worker waiting 0.25-0.35 s


#: A map task and a verification task in a fresh interpreter, as a worker runs them: what they import.
_TASKS = """
import json, sys, tempfile
import numpy as np
from neardup.config import DedupConfig
from neardup.engine.tasks import map_shard
from neardup.engine.workdir import WorkDir
from neardup.io.parquet import read_parquet
root = tempfile.mkdtemp()
WorkDir(root).shards.mkdir(parents=True, exist_ok=True)
texts = ["Oil prices rose on Monday in London trading, dealers said.", "Stocks fell \u00e9 in Tokyo.", ""]
map_shard(0, ["a", "b", "c"], texts, [1, 2, 3], DedupConfig(method="minhash"), root, 100_000)
ids = read_parquet(WorkDir(root).shard(0, "ids.parquet"))
print(json.dumps({"ids": ids.column("id").to_pylist(), "pandas": "pandas" in sys.modules}))
"""


def test_a_map_task_writes_its_shard_without_importing_pandas():
    """The shard's Arrow columns are made from buffers, and read back through the file's own reader: a worker
    never pays PyArrow's import of pandas (so the fork server need not load it)."""
    pytest.importorskip("pandas")
    done = subprocess.run([sys.executable, "-c", _TASKS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got == {"ids": ["a", "b", "c"], "pandas": False}


def test_the_workers_openblas_threads_sleep_when_idle_unless_the_environment_says_otherwise():
    """OpenBLAS's idle threads spun ~0.13 s of a core in each process after NumPy loaded: the fork server sets
    their spin short for itself and its workers, and leaves the process that asked for workers as it was."""
    quiet = _probe(OPENBLAS_THREAD_TIMEOUT=None)
    assert (quiet["blas"], quiet["parent_blas"]) == ("4", None)
    assert _probe(OPENBLAS_THREAD_TIMEOUT="28")["blas"] == "28"


def test_with_compiled_loops_off_the_fork_server_does_not_load_numba():
    loaded = _probe(NEARDUP_JIT="0")
    assert "numba" not in loaded["worker"] and "numba.np.arraymath" not in loaded["worker"]
    assert "neardup.engine.tasks" in loaded["worker"]


def test_a_failure_while_loading_ahead_leaves_the_fork_server_running(monkeypatch):
    """Loading ahead only saves time: an error in it (numba unable to build its contexts) must not kill the
    server before it forks a worker, which then meets the error with its own message where it needs numba."""
    import importlib

    from neardup import jit
    from neardup.engine import forkserver

    tried: list[str] = []

    def broken() -> None:
        tried.append("ready")
        raise RuntimeError("no LLVM here")

    monkeypatch.setattr(jit, "ready", broken)
    importlib.reload(forkserver)  # what the server does with its preload: import the module
    assert tried == ["ready"]


#: Run in a fresh interpreter: page faults while touching a 24 MB array made right after one of that size was
#: freed, in a worker and in this process.
_REUSE = r'''
import json
from neardup.engine.processes import process_pool, stop_pool
CODE = """
import numpy as np, resource
a = np.ones(3 << 20)
del a
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
b = np.ones(3 << 20)
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
"""
expr = "(lambda g: (exec(%r, g), g['faults'])[1])({})" % CODE
pool = process_pool(1)
try:
    worker = pool.submit(eval, expr).result()
finally:
    stop_pool(pool)
print(json.dumps({"worker": worker, "parent": eval(expr)}))
'''


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_a_worker_reuses_the_memory_of_a_freed_array_for_the_next():
    """Workers inherit the fork server's allocator settings (workdir.reuse_heap): a freed array of up to 32 MB
    stays on the heap for the next one, which then takes no fresh pages (6,144 pages of 4 KB; where the kernel
    backs them with huge pages, a few). With glibc's own settings a block this large goes back to the system
    and its successor faults its pages in again: in this process, and in a worker without them (515 faults
    each on the 2-core machine; glibc raises its bound with the blocks a process frees, and the fork server's
    imports had raised it past 16 MB, not 24)."""
    done = subprocess.run([sys.executable, "-c", _REUSE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    faults = json.loads(done.stdout.strip().splitlines()[-1])
    assert faults["worker"] < 64 and faults["parent"] >= faults["worker"], faults


#: A pool killed while a task too large for the pipe is half written to its queue (the one worker busy), then
#: the interpreter's exit: it must end at once, saying nothing.
_KILLED_MID_WRITE = """
import time
from neardup.engine.processes import process_pool, stop_pool
pool = process_pool(1)
pool.submit(time.sleep, 0).result()  # the worker is up
busy = pool.submit(time.sleep, 30)
queued = [pool.submit(len, bytes(8 << 20)) for _ in range(3)]  # 8 MB each: the pipe holds 64 KB
time.sleep(0.5)
stop_pool(pool, now=True)
print("stopped", flush=True)
"""


def test_a_pool_killed_while_a_task_is_being_written_lets_the_interpreter_exit_at_once():
    """Killing the workers (Ctrl-C, an error) leaves the pool's queue feeder thread blocked in a write nobody
    will read; Python before 3.11.5 then joined that thread at exit for ever (CPython gh-94777: Debian 12's
    3.11.2 hung on Ctrl-C). And the queue's semaphores are released before the resource tracker is stopped, so
    the exit prints nothing (no "leaked semaphore" warning, no failing finalizer)."""
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", _KILLED_MID_WRITE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "stopped\n", done.stderr
    assert done.stderr == ""
    assert time.monotonic() - start < 20


_NO_PANDAS = """
import sys
from neardup.api import dedup
from neardup.config import EngineConfig
dedup(sys.argv[1], engine=EngineConfig(name="local", workers=2, batch_docs=50, progress=False), output=sys.argv[2])
print("pandas" in sys.modules)
"""


def test_a_chunked_run_on_workers_never_imports_pandas(example_path, tmp_path):
    """PyArrow imports pandas (where installed) on a process's first conversion of NumPy or Python objects
    (0.3-0.45 s of CPU); the run's own process makes its Arrow arrays from buffers
    (:func:`neardup.io.arrow.arrow_array`), so it never does, from the map to the evidence."""
    pytest.importorskip("pandas")
    out = subprocess.run([sys.executable, "-c", _NO_PANDAS, str(example_path), str(tmp_path / "o")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False" and (tmp_path / "o" / "evidence.parquet").exists()
