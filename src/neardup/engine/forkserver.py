"""What the fork server loads once, before it forks any worker: importing this module is its whole job.

Owns the list of what every worker process needs loaded (NumPy, PyArrow and its Parquet and compute
modules, the stages' tasks, numba with its compilation contexts ready, the normalizer's table of word
characters) and loads it, and sets the allocator and OpenBLAS's idle threads that workers inherit
(:func:`neardup.engine.workdir.reuse_heap`, :func:`neardup.jit.quiet_blas`);
must not start processes (:mod:`neardup.engine.processes` names this module as
the fork server's preload) or run tasks.

A worker forked from a server that holds them starts with them. Without it, each worker spent about a
second of CPU importing them and building numba's contexts on its first compiled call (0.3 s + 0.2 s), and
a run starts workers for every stage: at 200k stories, 10.5 s of the run's 53 s of CPU were imports. pandas
is not loaded: PyArrow imports it (where installed) on a process's first ``pyarrow.array`` or
``pyarrow.parquet.read_table``, and the workers' tasks make their Arrow arrays from buffers
(:func:`neardup.io.arrow.arrow_array`) and read Parquet through the file's own reader
(:func:`neardup.io.parquet.read_parquet`), so none of them imports it; loading it here kept every run's first
worker waiting 0.25-0.35 s longer. The server holds about 220 MB resident (100 MB anonymous), nearly all of
it pages its workers share until they write them; the scale bench's summed RSS counts it (docs/speed.md,
"How the chunked engine bounds memory").
"""

from __future__ import annotations

import importlib

from neardup import jit

jit.quiet_blas()  # before NumPy loads, in the imports below

from neardup.engine.workdir import reuse_heap  # noqa: E402
from neardup.text.normalize import alnum_table  # noqa: E402

#: What every worker imports.
MODULES = ("numpy", "pyarrow", "pyarrow.compute", "pyarrow.parquet", "neardup.engine.tasks")


def load() -> None:
    """Load what every worker needs, in this process (the fork server imports this module and so runs it)."""
    for name in MODULES:
        importlib.import_module(name)
    jit.ready()
    reuse_heap()
    alnum_table()  # the table of word characters, which every worker meeting non-ASCII text would build


try:
    load()
except Exception:  # loading ahead only saves time: a worker meets the same error where it needs what failed,
    pass  # with that error's own message, rather than a fork server that died before forking any worker
