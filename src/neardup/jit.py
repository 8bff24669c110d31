"""Compiled loops: owns turning a plain Python loop over NumPy arrays into machine code (numba, compiled on
its first large call and cached on disk) and the rule for when that pays; must not hold an algorithm.

Each loop lives in the module of its job, beside the NumPy code (or the library call: rensa's sketch, xxhash's
XXH3) it must equal bit for bit (the tests compare the two on random inputs); functions a module's loops share
are its helpers (:func:`helper`). Importing numba costs about 0.3 s and 100 MB in a process, so a job
runs its NumPy code on small inputs (:func:`pays`): a short run, a single document, the online detector.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

#: Elements (characters, shingle values, pairs' values) from which a loop is compiled rather than run
#: as NumPy code. ``NEARDUP_JIT=0`` turns compiled loops off, ``NEARDUP_JIT=1`` uses them at any size.
MIN_ELEMENTS = 1 << 18


def pays(elements: int) -> bool:
    """Whether an input of ``elements`` runs the compiled loop (see :data:`MIN_ELEMENTS`).

    >>> pays(10), pays(10**7) == (os.environ.get("NEARDUP_JIT", "") != "0")
    (False, True)
    """
    if not enabled():
        return False
    return os.environ.get("NEARDUP_JIT", "") == "1" or elements >= MIN_ELEMENTS


def cores() -> int:
    """The threads a loop that releases the lock may use: ``OMP_NUM_THREADS`` where set (Ray sets it to a
    task's cores in its workers), else the cores this process may run on.

    >>> cores() >= 1
    True
    """
    with contextlib.suppress(ValueError):
        return max(1, int(os.environ.get("OMP_NUM_THREADS", "")))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


#: How long OpenBLAS's idle threads spin for work before they sleep: 2**4 cycles rather than its default 2**28.
#: A thread spins about 0.13 s of a core right after the library loads, in every process that imports NumPy
#: (0.4 s of CPU a run at 200k stories: this process, the fork server, and the fork server's SciPy). The
#: threads still work: a call wakes them.
BLAS_SPIN = ("OPENBLAS_THREAD_TIMEOUT", "4")


def quiet_blas() -> None:
    """Let OpenBLAS's idle threads sleep at once in this process and in those it starts, unless the environment
    already says how long (:data:`BLAS_SPIN`). OpenBLAS reads it when it loads: call this before NumPy is
    imported."""
    os.environ.setdefault(*BLAS_SPIN)


def enabled() -> bool:
    """Whether compiled loops may run at all (``NEARDUP_JIT=0`` turns them off).

    >>> enabled() == (os.environ.get("NEARDUP_JIT", "") != "0")
    True
    """
    return os.environ.get("NEARDUP_JIT", "") != "0"


def ready() -> None:
    """Import numba and build its typing and target contexts now: what a process's first compiled call would
    otherwise do (about 0.3 s of imports and 0.2 s of contexts), so that processes forked from this one
    start with both (:mod:`neardup.engine.forkserver`). A no-op when compiled loops are off."""
    if not enabled():
        return
    from numba.core.registry import cpu_target

    cpu_target.typing_context.refresh()
    cpu_target.target_context.refresh()


def compiled(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (a loop over NumPy arrays and scalars, calling no Python function but its module's helpers,
    :func:`helper`) compiled by numba on its first call, the machine code cached on disk beside the module (or
    in numba's user cache).
    The plain function stays available as ``.py_func``.

    >>> import numpy as np
    >>> @compiled
    ... def total(a):
    ...     s = 0
    ...     for x in a:
    ...         s += x
    ...     return s
    >>> int(total.py_func(np.arange(4)))
    6
    """
    state: dict[str, Any] = {}

    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        machine = state.get("fn")
        if machine is None:
            import numba

            _compile_helpers(fn.__globals__)
            try:
                machine = numba.njit(cache=True, nogil=True)(fn)
            except RuntimeError:  # no writable cache location: compile in every process instead
                machine = numba.njit(cache=False, nogil=True)(fn)
            state["fn"] = machine
        with _interrupts_after():
            return machine(*args)

    call.py_func = fn  # type: ignore[attr-defined]
    return call


def helper(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (as :func:`compiled` asks, or calling other helpers) callable from the compiled loops of its
    module: they are compiled with it, and it stays a plain function until one of them is. Its module's name
    for it then names the compiled function.

    >>> @helper
    ... def twice(x):
    ...     return 2 * x
    >>> twice(3)
    6
    """
    fn._compiled_helper = True  # type: ignore[attr-defined]
    return fn


def _compile_helpers(names: dict[str, Any]) -> None:
    """Each :func:`helper` among a module's ``names`` replaced by its compiled form (before a loop of the module
    that calls it is compiled: numba reads the callees of a loop from its module's names)."""
    import numba

    for name, obj in list(names.items()):
        if getattr(obj, "_compiled_helper", False) and not isinstance(obj, numba.core.dispatcher.Dispatcher):
            try:
                names[name] = numba.njit(cache=True, nogil=True, inline="always")(obj)
            except RuntimeError:  # no writable cache location
                names[name] = numba.njit(cache=False, nogil=True, inline="always")(obj)


@contextlib.contextmanager
def _interrupts_after() -> Iterator[None]:
    """Ctrl-C during the block interrupts after it: numba and llvmlite run Python code inside a call (loading
    a cached loop, ctypes callbacks while compiling), where a KeyboardInterrupt is swallowed ("Exception
    ignored on calling ctypes callback") or turned into a SystemError. Only where Python's own handler is in
    place, on the main thread (workers that ignore SIGINT keep ignoring it)."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            raise KeyboardInterrupt
