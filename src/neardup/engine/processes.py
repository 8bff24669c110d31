"""Worker processes for CPU-bound stages: a pool started by a fork server, or inline for one worker.

Owns how worker processes are started, sized, measured and stopped, and that they never outlive the
process that started them; must not decide what they run.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import multiprocessing.context
import multiprocessing.forkserver
import multiprocessing.popen_forkserver
import multiprocessing.util
import os
import select
import signal
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any


def process_pool(workers: int) -> ProcessPoolExecutor:
    """Worker processes for CPU-bound work, started by a fork server: never a plain fork of this
    process, whose thread pools (rensa's, FAISS's, onnxruntime's) would be dead in the child and
    deadlock it. The workers do not import the caller's main module (:class:`_WorkerPopen`), so a script
    need not guard its entry point, and a program read from stdin runs them too.

    Each worker ignores Ctrl-C (this process decides what an interrupt stops) and exits as soon as
    this process is gone, even killed (:func:`exit_with_parent`): the fork server and the workers
    otherwise keep each other alive, and a worker would go on computing for nobody.

    The fork server loads what every worker needs once (:data:`SERVER_PRELOAD`: NumPy, PyArrow, the
    stages' tasks, numba), so each worker starts with it and takes its first task at once.
    """
    return ProcessPoolExecutor(max_workers=workers, mp_context=_context(),
                               initializer=exit_with_parent, initargs=(os.getpid(),))


#: The module the fork server imports before it forks any worker (it loads what the workers need).
SERVER_PRELOAD = "neardup.engine.forkserver"


_PREPARING = threading.Lock()


class _WorkerPopen(multiprocessing.popen_forkserver.Popen):
    """A worker's start, without this process's main module: a worker runs neardup's own functions, and a main
    module imported again in it runs a script's top level once more (a script that does not guard its entry
    point starts workers from each worker) or cannot be found (a program read from stdin: BrokenProcessPool)."""

    def _launch(self, process_obj: Any) -> None:
        from multiprocessing import spawn

        real = spawn.get_preparation_data

        def without_main(name: str) -> dict[str, Any]:
            data = real(name)
            data.pop("init_main_from_path", None)
            data.pop("init_main_from_name", None)
            return data

        with _PREPARING:  # the stdlib reads it by module attribute; only while this worker's data is made
            spawn.get_preparation_data = without_main
            try:
                super()._launch(process_obj)
            finally:
                spawn.get_preparation_data = real


class _WorkerProcess(multiprocessing.context.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> Any:
        return _WorkerPopen(process_obj)


class _WorkerContext(multiprocessing.context.ForkServerContext):
    Process = _WorkerProcess


_CONTEXT = _WorkerContext()


def _context() -> multiprocessing.context.ForkServerContext:
    _CONTEXT.set_forkserver_preload([SERVER_PRELOAD])  # read when the server starts (once per process)
    _stop_server_at_exit()
    return _CONTEXT


@functools.cache
def _stop_server_at_exit() -> None:
    # last of multiprocessing's own exit steps (a finalizer of the lowest priority), not an earlier atexit hook:
    # the semaphores of a killed pool's queues are released first, or the stopped tracker would find them
    # "leaked" and their own finalizers then fail, both on stderr
    multiprocessing.util.Finalize(None, stop_server, exitpriority=-100)


def stop_server(timeout: float = 5.0) -> None:
    """Stop this process's fork server and the resource tracker it shares with the workers, and wait (at
    most ``timeout`` seconds) for both to end. Run at exit (set up with the first pool), so that no
    process a command started outlives it: left alone, each ends a moment after this process, when it sees
    its end of a pipe close. The server is killed (it is idle, its workers gone); the tracker is asked to
    stop, so that it still cleans up what was left. Uses the stop methods of ``multiprocessing`` that its own
    tests use (a Python without them keeps the old ending); a process that does not end in time is left to
    that ending too."""
    from multiprocessing import forkserver, resource_tracker

    def stop_all() -> None:
        server = getattr(forkserver, "_forkserver", None)
        pid = getattr(server, "_forkserver_pid", None)
        if isinstance(pid, int):  # it holds nothing to save, and its own exit unloads numba & co. (0.4 s)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for owner in (server, getattr(resource_tracker, "_resource_tracker", None)):  # the server holds the
            stop = getattr(owner, "_stop", None)  # tracker's pipe; the tracker cleans what was left, then ends
            if callable(stop):
                try:
                    stop()
                except (OSError, RuntimeError):  # already gone, or stopped from inside a call of its own
                    pass

    waiter = threading.Thread(target=stop_all, name="neardup-stop-server", daemon=True)
    waiter.start()
    waiter.join(timeout)


def start_server() -> None:
    """Start this process's fork server now, if it is not running: its loading (about half a second of
    CPU) then overlaps this process's own work instead of delaying the first worker. Returns at once."""
    _context()
    multiprocessing.forkserver.ensure_running()


def start_workers(pool: ProcessPoolExecutor | InlineExecutor, workers: int) -> threading.Thread | None:
    """Start a pool's worker processes in a thread of their own, which it returns (None for one worker,
    inline): a submit starts a process when none is idle, and waits for the fork server to have loaded
    (about a second) before it returns, holding the pool's lock. The caller does other work meanwhile (e.g.
    reads ahead) and joins the thread before its first submit."""
    if not isinstance(pool, ProcessPoolExecutor):
        return None

    def start() -> None:
        with contextlib.suppress(Exception):  # a pool broken or stopped meanwhile: the caller's next submit says so
            for done in [pool.submit(int) for _ in range(workers)]:  # an empty task each (int() is 0)
                done.result()

    thread = threading.Thread(target=start, name="neardup-start-workers", daemon=True)
    thread.start()
    return thread


def exit_with_parent(parent: int, poll_s: float = 0.5) -> None:
    """In a worker: ignore SIGINT, and end this process when process ``parent`` ends.

    A daemon thread waits on a pidfd of ``parent`` (Linux 5.3+; elsewhere it checks every ``poll_s``
    seconds), then ends this process at once. Called as the pool's initializer.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        fd: int | None = os.pidfd_open(parent)
    except ProcessLookupError:
        os._exit(1)
    except (AttributeError, OSError):
        fd = None

    def watch() -> None:
        if fd is not None:
            select.select([fd], [], [])
        else:
            while _alive(parent):
                time.sleep(poll_s)
        os._exit(1)

    threading.Thread(target=watch, name="neardup-exit-with-parent", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_pool(pool: ProcessPoolExecutor | InlineExecutor, now: bool = False) -> None:
    """Stop a pool's workers: after their current tasks (queued ones are cancelled), or ``now`` (killed:
    on an interrupt or error, nothing they would finish is wanted; their writes are atomic)."""
    if now and isinstance(pool, ProcessPoolExecutor):
        processes = list((getattr(pool, "_processes", None) or {}).values())
        call_queue = getattr(pool, "_call_queue", None)  # (shutdown forgets both)
        if call_queue is not None:  # a task half written to the killed workers' queue blocks its feeder thread, and
            call_queue.cancel_join_thread()  # Python < 3.11.5 then joins that thread at exit for ever (gh-94777)
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in processes:
            proc.kill()
        for proc in processes:
            proc.join(timeout=10)
        return
    pool.shutdown(cancel_futures=True)


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

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        return None


def worker_pool(workers: int) -> ProcessPoolExecutor | InlineExecutor:
    """``workers`` worker processes (:func:`process_pool`); one worker runs inline."""
    return InlineExecutor() if workers <= 1 else process_pool(workers)


def held_bytes(pid: int) -> int:
    """Anonymous resident memory of process ``pid`` (``RssAnon``: its heap and the memory its allocators
    keep for reuse; not the pages of libraries and files it maps, which the kernel shares and can drop; 0
    where ``/proc`` is not available)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def pool_held_bytes(pool: ProcessPoolExecutor | InlineExecutor | None) -> int:
    """What the worker processes of a pool hold in memory now (:func:`held_bytes`; 0 for none, or inline):
    a fresh worker about 50 MB, most of it the fork server's pages it shares until it writes them."""
    if not isinstance(pool, ProcessPoolExecutor):
        return 0
    return sum(held_bytes(pid) for pid in list(getattr(pool, "_processes", {}) or {}))


__all__ = ["SERVER_PRELOAD", "InlineExecutor", "exit_with_parent", "held_bytes",
           "pool_held_bytes", "process_pool", "start_server", "start_workers",
           "stop_pool", "worker_pool"]
