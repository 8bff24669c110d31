"""Worker processes for CPU-bound stages: a pool started by a fork server, or inline for one worker.

Owns how worker processes are started, sized and measured; must not decide what they run.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any


def process_pool(workers: int) -> ProcessPoolExecutor:
    """Worker processes for CPU-bound work, started by a fork server: never a plain fork of this
    process, whose thread pools (rensa's, FAISS's, onnxruntime's) would be dead in the child and
    deadlock it. As with any ``multiprocessing`` use, a script that calls it (or the chunked engine)
    must guard its entry point with ``if __name__ == "__main__":``.
    """
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("forkserver"))


class InlineExecutor:
    """A ProcessPoolExecutor stand-in that runs tasks in this process (one worker).

    >>> InlineExecutor().submit(sum, [1, 2]).result()
    3
    """

    def __enter__(self) -> InlineExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def submit(self, fn: Any, *args: Any, **kwargs: Any) -> Future[Any]:
        fut: Future[Any] = Future()
        fut.set_result(fn(*args, **kwargs))
        return fut

    def shutdown(self) -> None:
        return None


def worker_pool(workers: int) -> ProcessPoolExecutor | InlineExecutor:
    """``workers`` worker processes (:func:`process_pool`); one worker runs inline."""
    return InlineExecutor() if workers <= 1 else process_pool(workers)


def resident_bytes(pid: int) -> int:
    """Resident memory of process ``pid`` (0 where ``/proc`` is not available)."""
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def pool_resident_bytes(pool: ProcessPoolExecutor | InlineExecutor | None) -> int:
    """What the worker processes of a pool hold in memory now (0 for none, or inline)."""
    if not isinstance(pool, ProcessPoolExecutor):
        return 0
    return sum(resident_bytes(pid) for pid in list(getattr(pool, "_processes", {}) or {}))


__all__ = ["InlineExecutor", "pool_resident_bytes", "process_pool", "resident_bytes", "worker_pool"]
