"""The memory plan of a chunked run: batch sizes, partitions and passes chosen so that the whole
process tree stays under ``EngineConfig.memory_limit``.

Owns the measured per-item costs and the sizes derived from them; must not run anything.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from stat import S_ISREG
from typing import TYPE_CHECKING

from neardup.config import EngineConfig

if TYPE_CHECKING:
    from neardup.io.sources import Sources

# Measured working set of the map stage per document (text, tokens, shingle arrays), bytes.
_BYTES_PER_DOC_IN_FLIGHT = 24_000
_BASE_PROCESS_BYTES = 120 * 2**20  # interpreter + NumPy + PyArrow, per process
# About 40 bytes a key row while sorting a table's rows into buckets (keys, documents, the order).
BYTES_PER_KEY_ROW = 40
# About 40 bytes a candidate pair while de-duplicating and verifying it; 64 a code in a verify pass.
BYTES_PER_CANDIDATE = 40
BYTES_PER_CODE = 64
# Bytes a value while one hash partition's document frequencies are counted and turned into weights:
# Arrow's dictionary encoding of distinct 64-bit values peaked at 111-270 bytes a value on 0.25M-7.5M
# random hashes (its hash table grows by doubling, so the figure depends on where the count falls; 55
# bytes when each value occurs four times), and most word shingles of a large corpus occur once. With 40
# here, a million-story corpus of distinct stories peaked at 2.7 GB of anonymous memory under a 2 GB limit.
BYTES_PER_COUNTED_VALUE = 256
# Values a weights task reads (and writes weights of) at a time: 8 MiB of values, 8 MiB of weights.
TABLE_CHUNK_VALUES = 1 << 20


@dataclass(frozen=True)
class Plan:
    """The memory plan: sizes chosen so the process tree stays under the limit."""

    batch_docs: int
    in_flight: int
    workers: int


def make_plan(engine: EngineConfig) -> Plan:
    """Choose batch size and parallelism for the map stage from the memory limit.

    >>> make_plan(EngineConfig(memory_limit=4 * 10**9, workers=2)).batch_docs
    2500
    """
    workers = engine.n_workers
    budget = engine.memory_limit - _BASE_PROCESS_BYTES * (workers + 1)
    budget = max(budget, 64 * 2**20)
    in_flight = workers + 1
    batch = int(budget * 0.5 / in_flight / _BYTES_PER_DOC_IN_FLIGHT)
    # Capped at 2,500 documents: smaller batches keep every worker busy (measured faster at 20k docs).
    batch = engine.batch_docs or min(max(batch // 500 * 500, 500), 2500)
    return Plan(batch_docs=batch, in_flight=in_flight, workers=workers)


#: Inputs up to this many documents run their tasks in the main process when the worker count is automatic:
#: two workers' start (an interpreter, NumPy, PyArrow and the compiled loops loaded in each, again after each
#: replacement) cost more than they save below it. Measured on 2 cores, whole command, default method, the
#: first N stories of the 200k bench corpus, farm-bench medians of 5 (inline / two workers): 5k 2.71 / 4.76 s,
#: 20k 4.27 / 5.27 s, 30k 6.69 / 6.62 s (even), 50k even in single runs.
INLINE_DOCS = 20_000


def runs_inline(docs: int, chars: int, memory_limit: int) -> bool:
    """Whether an input of which ``docs`` documents of ``chars`` characters have been read is still small
    enough to run in one process: at most :data:`INLINE_DOCS` documents, and its text within a twentieth
    of the memory limit (the batches are held while the rest is read).

    >>> runs_inline(300, 10**6, 2 * 2**30), runs_inline(40_000, 10**6, 2 * 2**30), runs_inline(10, 10**9, 2**30)
    (True, False, False)
    """
    return docs <= INLINE_DOCS and chars <= held_chars(memory_limit)


def held_chars(memory_limit: int) -> int:
    """The characters of text this process may hold read ahead of the workers: a twentieth of the memory limit
    (a small input's batches, held while the rest is read; batches read while the workers start)."""
    return memory_limit // 20


#: An input file of at least this many bytes (as stored) has the fork server of its workers started as the run
#: begins, where the local engine picks the worker count itself: the server's loading (about a second of one
#: core, NumPy, PyArrow, numba) then overlaps this process's own imports and the calibration, where it held the
#: first worker back (at 200k stories, 0.7 s with a core idle). Below it, an input may hold fewer than
#: :data:`INLINE_DOCS` documents and run in this process, the server unused: at 800 bytes a story 20k of them
#: are 16 MB. Smaller inputs start it once they fill a batch (or the calibration's sample).
EARLY_SERVER_BYTES = 16 << 20


def starts_server_early(path: str | os.PathLike[str], engine: EngineConfig) -> bool:
    """Whether a chunked run of the input file ``path`` starts its workers' fork server before anything else:
    the local engine, the worker count automatic with two or more cores, and a regular file of at least
    :data:`EARLY_SERVER_BYTES`.

    >>> import tempfile
    >>> local = EngineConfig(name="local")
    >>> with tempfile.NamedTemporaryFile() as f:
    ...     small = starts_server_early(f.name, local)
    ...     _ = f.truncate(EARLY_SERVER_BYTES)
    ...     large, set_count = starts_server_early(f.name, local), starts_server_early(f.name, local.replace(workers=2))
    >>> small, large == (local.n_workers > 1), set_count
    (False, True, False)
    """
    if engine.name != "local" or engine.workers != 0 or engine.n_workers < 2:
        return False
    try:
        stat = os.stat(path)
    except (OSError, TypeError, ValueError):
        return False
    return S_ISREG(stat.st_mode) and stat.st_size >= EARLY_SERVER_BYTES


#: An uncompressed input file up to this many bytes runs on the in-memory engine when the command line names
#: no engine and sets none of its options (``neardup dedup`` alone): the same output, without the chunked
#: engine's work folder, imports and per-stage files (the bundled 300 stories: 0.59 -> 0.43 s above the
#: interpreter's start, docs/speed.md). Measured on 2 cores, whole command, default method, the first N stories of the 200k
#: bench corpus (local / memory, two runs each): 1,000 stories (0.7 MB) 3.05-3.65 / 2.55-3.61 s, 1,400 (1.0 MB)
#: 3.46-3.82 / 2.59-2.77 s, 5,000 (3.6 MB) 3.38 / 4.62 s: past a megabyte the memory engine's single process
#: loses to the chunked engine's compiled loops and second core.
MEMORY_INPUT_BYTES = 1 << 20


def runs_in_memory(path: str | os.PathLike[str] | Sources) -> bool:
    """Whether an input given no engine is small enough for the in-memory engine (:data:`MEMORY_INPUT_BYTES`):
    a local, uncompressed JSONL or CSV file of at most that size (or several, :class:`~neardup.io.sources.Sources`,
    of at most that size together). A folder, a URL, Parquet or gzip (which hold
    several times their size in text) and a path that cannot be read take the chunked engine, which says why.

    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as d:
    ...     small, big = Path(d, "a.jsonl"), Path(d, "b.jsonl")
    ...     _ = small.write_text('{"id": 1, "text": "a"}\\n'), big.write_bytes(b" " * (MEMORY_INPUT_BYTES + 1))
    ...     runs_in_memory(small), runs_in_memory(big), runs_in_memory(Path(d, "c.jsonl")), runs_in_memory(d)
    (True, False, False, False)
    """
    from neardup.io.read import InputError, detect_format, is_url
    from neardup.io.sources import Sources

    if isinstance(path, Sources):  # several files: each one such a file, all of them within the size
        return all(runs_in_memory(f) for f in path.files) and (path.total_bytes() or 0) <= MEMORY_INPUT_BYTES
    if is_url(path) or os.fspath(path).lower().endswith(".gz"):
        return False
    try:
        if detect_format(path) not in ("jsonl", "csv"):
            return False
        stat = os.stat(path)
    except (InputError, OSError):
        return False
    return S_ISREG(stat.st_mode) and stat.st_size <= MEMORY_INPUT_BYTES


def power_of_two_at_least(x: float) -> int:
    """The smallest power of two >= ``x`` (and >= 1).

    >>> power_of_two_at_least(5), power_of_two_at_least(0.3)
    (8, 1)
    """
    return max(1, 2 ** math.ceil(math.log2(max(1.0, x))))


def key_partitions(rows: int, memory_limit: int, concurrent: int = 1) -> int:
    """Hash partitions of one table's key rows so that ``concurrent`` partitions at a time fit a share
    of the limit (a power of two: a partition is a range of the keys' top bits)."""
    return power_of_two_at_least(max(rows * BYTES_PER_KEY_ROW * concurrent / (memory_limit * 0.3), concurrent))


def weight_partitions(values: int, memory_limit: int, workers: int) -> int:
    """Hash partitions of the shingle values for the weights stage, so that each of ``workers`` concurrent
    partitions is counted within its share of the limit even when every value is distinct.

    >>> weight_partitions(10_000_000, 2 * 10**9, 2), weight_partitions(10_000_000, 2 * 10**9, 1)
    (16, 8)
    """
    return power_of_two_at_least(values * BYTES_PER_COUNTED_VALUE * workers / (memory_limit * 0.3))


def table_bytes(memory_limit: int, workers: int) -> int:
    """Memory for one worker's hash table of document frequencies (the weights stage's fast path,
    :class:`neardup.verify.frequencies.FrequencyTable`): three quarters of its share of the 0.3 of the limit
    the stage has, less its buffers; the rest holds another worker's counts while they are merged in (at
    most a third of the table's bytes). A corpus with more distinct values counts by hash partition.

    >>> table_bytes(2 * 10**9, 2) // 2**20
    202
    """
    share = memory_limit * 0.3 / max(1, workers) - 16 * TABLE_CHUNK_VALUES
    return max(0, int(share * 0.75))


def split_size(memory_limit: int, workers: int) -> int:
    """Values one worker groups by hash partition, or puts back in order, at a time (about 40 bytes each: the
    values, their partitions, the order, the grouped values, their weights), within the share of the limit
    a partition gets."""
    return max(1 << 16, int(memory_limit * 0.3 / max(1, workers) / 40))


def weights_beside_candidates(key_rows: int, values: int, memory_limit: int) -> bool:
    """Whether the weights stage (a hash partition of the values counted in each worker, at most 0.3 of the
    limit in all) may run while the driver sorts the candidates' key rows (at most a quarter of the limit):
    when the two fit within half the limit together, as each alone does. A run of 200k stories (32 tables
    of key rows, 116M character shingles) does; one of 1M does not.

    >>> weights_beside_candidates(200_000 * 32, 116_000_000, 2**31), weights_beside_candidates(10**6 * 32, 580_000_000, 2**31)
    (True, False)
    """
    return (min(key_rows * BYTES_PER_KEY_ROW, memory_limit * 0.25)
            + min(values * BYTES_PER_COUNTED_VALUE, memory_limit * 0.3)) <= memory_limit * 0.5


def tables_per_pass(rows_per_table: int, memory_limit: int) -> int:
    """How many key tables to compute at once: their rows held while sorting, within a quarter of the limit."""
    return max(1, int(memory_limit * 0.25 / max(1, rows_per_table * 8 * 4)))


def pair_partitions(n_docs: int, memory_limit: int, workers: int) -> int:
    """Partitions of the candidate pairs: one per worker at a time, each verified within its share."""
    return max(workers, int(math.ceil(n_docs * 16 * BYTES_PER_CANDIDATE * workers / (memory_limit * 0.3))))


def codes_per_pass(memory_limit: int, workers: int) -> int:
    """Candidate codes one worker de-duplicates and scores at a time (beside its two tiles)."""
    return int(memory_limit * 0.25 / max(1, workers) / BYTES_PER_CODE)


__all__ = ["INLINE_DOCS", "MEMORY_INPUT_BYTES", "Plan", "codes_per_pass", "key_partitions", "make_plan", "pair_partitions",
           "power_of_two_at_least", "runs_in_memory", "runs_inline", "split_size", "tables_per_pass", "weight_partitions"]
