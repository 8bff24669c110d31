"""Document tiles for verification at scale.

Verifying a candidate pair reads the shingle values of its two documents (and for a weighted score the
IDF weights of its left one, looked up in the weights stage's table of distinct values, and both
documents' summed weights). Read through a memory map, pairs touch the multi-gigabyte values file at
random, and every touched page counts in the process's resident set (recent kernels map whole large folios
per touch, so releasing pages after each block does not keep it small). Instead, the documents are cut into
*tiles*: contiguous document ranges whose values fit a memory budget. Candidate pairs are partitioned by the
tile of their left document; a worker reads the documents of that tile its pairs name with plain file
reads (page cache, not mapped; a run of adjacent documents in one read), then, for each other tile, the
documents its pairs name there, and scores the pairs of each tile pair on small contiguous arrays. Resident
memory is at most two tiles plus the pairs, whatever the corpus size (and, for a weighted score, the table:
at most a worker's share of the weights stage's memory, :func:`~neardup.engine.plan.table_bytes`); the
scores are bit-identical to scoring on the whole arrays.
Sketch rows of candidate pairs (MinHash estimates, sketch scores) are read the same way, a block of pairs at
a time (:func:`gather_rows`).
"""

from __future__ import annotations

import functools
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from neardup.arrays import distinct, offsets as offsets_of, ranges
from neardup.engine.workdir import load_array, npy_header, save_array
from neardup.jit import compiled, pays
from neardup.text.shingle import ShingleSets, concat_offsets
from neardup.verify.frequencies import FrequencyTable
from neardup.verify.overlap import doc_weight_totals, score_pairs

#: The weights stage's table of IDF weights by distinct value, in a work directory (:func:`load_idf_table`).
IDF_TABLE = "idf-table.npy"

#: Bytes a shingle value costs while its tile is loaded: the uint64 value, plus a float64 weight.
_BYTES_PER_VALUE = {False: 8, True: 16}


def tile_budget(memory_limit: int, workers: int, weighted: bool) -> int:
    """Values per tile: a fifth of the memory limit shared by the workers, two tiles each."""
    return max(1 << 16, int(memory_limit * 0.2 / max(1, workers) / 2 / _BYTES_PER_VALUE[weighted]))


def plan_tiles(offsets: np.ndarray, max_values: int) -> np.ndarray:
    """Tile boundaries: ascending document starts ending with ``n``, each tile holding at most
    ``max_values`` values (or a single document that alone holds more).

    >>> plan_tiles(np.array([0, 3, 6, 9, 10]), 6).tolist()
    [0, 2, 4]
    """
    offsets = np.asarray(offsets)
    n = len(offsets) - 1
    starts = [0]
    while starts[-1] < n:
        lo = starts[-1]
        hi = int(np.searchsorted(offsets, offsets[lo] + max_values, side="right")) - 1
        starts.append(min(n, max(hi, lo + 1)))
    return np.asarray(starts, dtype=np.int64)


def tile_of(tiles: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """The tile number of each document."""
    return np.searchsorted(tiles, docs, side="right") - 1


def tiles_for_run(root: str | os.PathLike[str], offsets: np.ndarray, memory_limit: int, workers: int,
                  score: str) -> np.ndarray:
    """The document tiles of the run in work directory ``root``: planned from the memory limit once
    and kept there (a resumed run re-uses them, so its partitions stay the same)."""
    path = Path(root) / "tiles.npy"
    if not path.exists():
        budget = tile_budget(memory_limit, workers, score.startswith("weighted-"))
        save_array(path, plan_tiles(np.asarray(offsets), budget))
    return load_tiles(root)


def load_tiles(root: str | os.PathLike[str]) -> np.ndarray:
    """The tiles :func:`tiles_for_run` planned for the work directory ``root``."""
    return load_array(Path(root) / "tiles.npy", mmap=False)


def partition_count(parts: int, tiles: np.ndarray) -> int:
    """At least ``parts`` pair partitions, the same whole number for every tile."""
    n_tiles = len(tiles) - 1
    return n_tiles * max(1, math.ceil(parts / n_tiles))


def pair_partition(left: np.ndarray, tiles: np.ndarray, parts: int) -> np.ndarray:
    """Partition of each candidate pair, of ``parts`` (from :func:`partition_count`): an equal share
    of the partitions for each tile of the left document."""
    per_tile = parts // (len(tiles) - 1)
    return tile_of(tiles, left) * per_tile + left % per_tile


def read_rows(path: str | os.PathLike[str], lo: int, hi: int, buffer: np.ndarray | None = None) -> np.ndarray:
    """Elements ``lo:hi`` of a one-dimensional ``.npy`` file, by a plain file read (no mapping); into the
    start of ``buffer`` (of the file's type, at least ``hi - lo`` long) when given, which a loop over
    chunks re-uses rather than fault in fresh pages for each."""
    with open(path, "rb") as fh:
        shape, _, dtype = npy_header(fh)
        if len(shape) != 1:
            raise ValueError(f"{path}: expected a one-dimensional array, got shape {shape}")
        fh.seek(fh.tell() + lo * dtype.itemsize)
        want = max(0, hi - lo)
        if buffer is None:
            out = np.fromfile(fh, dtype=dtype, count=want)
        else:
            if buffer.dtype != dtype or buffer.size < want:
                raise ValueError(f"{path}: a buffer of {buffer.size} {buffer.dtype} cannot hold {want} {dtype}")
            out = buffer[:want]
            got = fh.readinto(memoryview(out).cast("B"))
            out = out[: got // dtype.itemsize]
    if out.size != want:
        raise ValueError(f"{path}: truncated (wanted elements {lo}:{hi} of {shape[0]})")
    return out


def write_rows(path: str | os.PathLike[str], lo: int, rows: np.ndarray) -> None:
    """Write ``rows`` over elements ``lo:lo + len(rows)`` of an existing one-dimensional ``.npy`` file
    (plain writes, no mapping)."""
    with open(path, "r+b") as fh:
        shape, _, dtype = npy_header(fh)
        if len(shape) != 1 or lo + rows.size > shape[0] or dtype != rows.dtype:
            raise ValueError(f"{path}: cannot write {rows.size} {rows.dtype} at {lo} into {shape} {dtype}")
        fh.seek(fh.tell() + lo * dtype.itemsize)
        fh.write(memoryview(np.ascontiguousarray(rows)).cast("B"))


#: Values between two documents that are read through rather than sought over: none. A read is about a
#: microsecond, while values read through cost their copy, their pages and the gather that then drops them (at
#: 200k stories, with 4,096 and whole tiles read, verification spent a third of its time in the kernel).
READ_GAP = 0


def read_docs(path: str | os.PathLike[str], offsets: np.ndarray, docs: np.ndarray,
              gap: int = READ_GAP) -> np.ndarray:
    """The elements of the sorted documents ``docs`` of a one-dimensional ``.npy`` file aligned with CSR
    ``offsets``, concatenated in that order: one plain read per run of documents lying closer than ``gap``
    elements (a few of a whole tile's documents cost a few reads, not the tile).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "v.npy"
    >>> save_array(p, np.arange(10))
    >>> read_docs(p, np.array([0, 2, 5, 9, 10]), np.array([1, 3])).tolist()
    [2, 3, 4, 9]
    """
    starts, ends = offsets[docs], offsets[docs + 1]
    buf, first = _read_spans(path, starts, ends, gap)
    sizes = ends - starts
    total = int(sizes.sum())
    if buf.size == total:  # no gap read through: buf is the answer
        return buf
    return buf[ranges(first, sizes)]


def gather_rows(path: str | os.PathLike[str], rows: np.ndarray) -> np.ndarray:
    """Rows ``rows`` (ascending, along the first axis) of a ``.npy`` file (a sketch: one row a document), by
    plain reads, neighbouring rows in one read: a mapped file gathered at random counts whole folios of it in
    the process's resident set, up to the file's size.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.npy"
    >>> save_array(p, np.arange(12).reshape(6, 2))
    >>> gather_rows(p, np.array([0, 1, 4])).tolist()
    [[0, 1], [2, 3], [8, 9]]
    """
    with open(path, "rb") as fh:
        shape, _, _ = npy_header(fh)
    if len(shape) == 0:
        raise ValueError(f"{path}: expected an array of rows, got a scalar")
    width = int(np.prod(shape[1:], dtype=np.int64))
    rows = np.asarray(rows, dtype=np.int64)
    buf, first = _read_spans(path, rows * width, (rows + 1) * width, 2 * width)  # through gaps of two rows at most
    table = buf.reshape((-1,) + tuple(shape[1:]))  # runs are whole rows: the buffer is a table of rows
    return table if table.shape[0] == rows.size else table[first // width]


def _read_spans(path: str | os.PathLike[str], starts: np.ndarray, ends: np.ndarray,
                gap: int) -> tuple[np.ndarray, np.ndarray]:
    """The runs of spans ``starts[i]:ends[i]`` (elements of a ``.npy`` file, ascending) lying closer than
    ``gap`` elements, one positioned read each, one after the other in a buffer; and where each span starts
    in that buffer."""
    with open(path, "rb") as fh:  # the header once, then one positioned read per run
        _, _, dtype = npy_header(fh)
        if starts.size == 0:
            return np.empty(0, dtype=dtype), np.empty(0, dtype=np.int64)
        new_run = np.r_[True, starts[1:] - ends[:-1] > gap]
        run_of = np.cumsum(new_run) - 1
        run_lo = starts[new_run]
        run_hi = np.maximum.reduceat(ends, np.flatnonzero(new_run))
        at = fh.tell()
        lengths = run_hi - run_lo
        base = np.cumsum(lengths) - lengths  # where each run starts in buf
        buf = np.empty(int(lengths.sum()), dtype=dtype)
        size = dtype.itemsize
        if pays(int(buf.size)) and hasattr(os, "pread"):  # one compiled loop of reads: ~1 us a run, not ~3 us
            done = _compiled_reads()(fh.fileno(), buf, (at + run_lo * size).astype(np.int64), lengths * size, base * size)
        else:
            done = _read_runs(fh.fileno(), buf, at + run_lo * size, lengths * size, base * size)
        if done < run_lo.size:
            raise ValueError(f"{path}: truncated (wanted elements {run_lo[done]}:{run_lo[done] + lengths[done]})")
    return buf, starts - run_lo[run_of] + base[run_of]


def _read_runs(fd: int, buf: np.ndarray, at: np.ndarray, nbytes: np.ndarray, into: np.ndarray) -> int:
    """Read ``nbytes[i]`` bytes of file ``fd`` at byte ``at[i]`` into ``buf`` at byte ``into[i]``, for each run
    ``i`` in turn; returns the runs read in full (fewer: the file ended)."""
    view = memoryview(buf).cast("B")
    for i, (pos, n, b) in enumerate(zip(at.tolist(), nbytes.tolist(), into.tolist())):
        if os.preadv(fd, [view[b : b + n]], pos) != n:
            return i
    return len(at)


#: libc's ``pread``, called by name from machine code (resolved when the loop is linked, so the loop caches);
#: declared on first use (:func:`_compiled_reads`): importing numba costs a process ~0.3 s.
_pread: object = None


def _compiled_reads() -> Any:
    """The compiled read loop, ``pread`` declared for it first."""
    global _pread
    if _pread is None:
        from numba import types

        _pread = types.ExternalFunction("pread", types.intp(types.intc, types.intp, types.uintp, types.intp))
    return _pread_runs


@compiled
def _pread_runs(fd: int, buf: np.ndarray, at: np.ndarray, nbytes: np.ndarray, into: np.ndarray) -> int:
    """:func:`_read_runs` as one compiled loop of ``pread`` calls (the same bytes, the same count)."""
    base = buf.ctypes.data
    for i in range(at.size):
        if _pread(fd, base + into[i], nbytes[i], at[i]) != nbytes[i]:  # type: ignore[operator]
            return i
    return at.size


class _Joined:
    """Two arrays read as one, for gathers by integer arrays: two tiles side by side without a copy."""

    def __init__(self, a: np.ndarray, b: np.ndarray) -> None:
        self.a, self.b, self.split = a, b, a.shape[0]
        self.shape = (a.shape[0] + b.shape[0],)
        self.dtype = a.dtype

    def __getitem__(self, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx)
        out = np.empty(idx.shape, dtype=self.dtype)
        first = idx < self.split
        out[first] = self.a[idx[first]]
        rest = ~first
        out[rest] = self.b[idx[rest] - self.split]
        return out


def load_idf_table(root: str | os.PathLike[str]) -> FrequencyTable | None:
    """The IDF weight of each distinct value of the work directory ``root``, as the weights stage saved it
    (:data:`IDF_TABLE`), for lookups; None where that stage wrote a weight for each value instead. A process
    loads it once a run (the file's identity is part of the cache's key)."""
    path = Path(root) / IDF_TABLE
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return _idf_table(str(path), (stat.st_ino, stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=1)
def _idf_table(path: str, identity: tuple[int, int, int]) -> FrequencyTable:
    return FrequencyTable.of_slots(load_array(path, mmap=False), np.float64)


class _Weights:
    """IDF weights of a work directory's values as tiles read them, and each document's sum of them. A pair's
    score reads the weights of its left document only (a value's weight is the same in both documents,
    :func:`~neardup.verify.overlap.intersection_sizes`), and the summed weights of both. Looked up in the
    weights stage's table (:func:`load_idf_table`): a tile looks up the weights of its documents that are in one
    of its pairs, and of the documents of other tiles its pairs name, and sums them per document as
    :func:`~neardup.verify.overlap.doc_weight_totals` does (on this path the stage writes no ``totals.npy``:
    the sums of only the documents in candidate pairs, from weights looked up here anyway, rather than a pass
    over every value of the corpus). Or else read from ``weights.npy`` and ``totals.npy``. All give the same
    figures to the bit."""

    def __init__(self, root: Path) -> None:
        self.root, self.table = root, load_idf_table(root)
        path = root / "totals.npy"
        self.totals = load_array(path, mmap=False) if self.table is None or path.exists() else None

    def of_tile(self, tile: _Tile, docs: np.ndarray) -> np.ndarray:
        """The weights of a tile's values: those of documents ``docs`` (global indices, ascending, distinct,
        of the tile's); the rest 0 where looked up."""
        if self.table is None:
            return read_docs(self.root / "weights.npy", tile.global_offsets, tile.docs)
        if docs.size == tile.docs.size:  # every document the tile holds
            return self.table.lookup(tile.values)
        at = tile.at(docs)
        weights = np.zeros(tile.values.size, dtype=np.float64)
        self.table.lookup_ranges(tile.values, tile.offsets[at], tile.offsets[at + 1], weights)
        return weights

    def tile_docs(self, left: np.ndarray, held: np.ndarray) -> np.ndarray:
        """The documents of a tile whose weights it looks up, given its pairs' left documents and all it holds
        (ascending, distinct): the left ones, or all where the totals are summed here."""
        return distinct(left) if self.totals is not None else held

    def totals_of_tile(self, tile: _Tile) -> np.ndarray:
        """The summed weight of each document a tile holds (0 for those whose weights it did not look up)."""
        if self.totals is not None:
            return self.totals[tile.docs]
        assert tile.weights is not None
        return doc_weight_totals(ShingleSets(tile.values, tile.offsets), tile.weights)

    def totals_of_docs(self, docs: np.ndarray, values: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """The summed weights of documents ``docs`` (global indices) whose ``values`` were read one after the
        other, ``sizes`` each."""
        if self.totals is not None:
            return self.totals[docs]
        assert self.table is not None
        return doc_weight_totals(ShingleSets(values, offsets_of(sizes)), self.table.lookup(values))


class _Tile:
    """The documents of one tile that its pairs read, in memory: their values one after the other (with local
    offsets) and, for a weighted score, the weights of the documents ``weights`` looks up."""

    def __init__(self, root: Path, offsets: np.ndarray, docs: np.ndarray, weights: _Weights | None = None,
                 weighed: np.ndarray | None = None) -> None:
        self.docs, self.global_offsets = docs, offsets  # global indices, ascending, distinct
        self.offsets = offsets_of(offsets[docs + 1] - offsets[docs])
        self.values = read_docs(root / "values.npy", offsets, docs)
        self.weights = None
        if weights is not None:
            assert weighed is not None, "a weighted tile needs the documents it weighs"
            self.weights = weights.of_tile(self, weighed)

    def at(self, docs: np.ndarray) -> np.ndarray:
        """Where each of documents ``docs`` (global indices, all held) is in the tile."""
        return np.searchsorted(self.docs, docs)


def score_tiled(root: str | os.PathLike[str], left: np.ndarray, right: np.ndarray, score: str,
                tiles: np.ndarray) -> np.ndarray:
    """Exact ``score`` of each pair (``left < right``, global document indices) from the joined
    arrays of the work directory ``root``, reading two tiles at a time. Pairs may come in any order;
    of each left tile its pairs' documents are read once, and with them the documents of other tiles that
    its pairs name. A weighted score takes the weights stage's output (:class:`_Weights`)."""
    root = Path(root)
    offsets = load_array(root / "offsets.npy", mmap=False)
    out = np.empty(left.size, dtype=np.float64)
    if left.size == 0:
        return out
    weights = _Weights(root) if score.startswith("weighted-") else None
    tl = tile_of(tiles, left).astype(np.int32)
    tr = tile_of(tiles, right).astype(np.int32)
    for ta in distinct(tl):
        in_a = np.flatnonzero(tl == ta)
        tr_a = tr[in_a]
        held = distinct(np.concatenate([left[in_a], right[in_a[tr_a == ta]]]))  # its pairs' documents there
        weighed = None if weights is None else weights.tile_docs(left[in_a], held)
        a_tile = _Tile(root, offsets, held, weights, weighed)
        a_totals = None if weights is None else weights.totals_of_tile(a_tile)
        for tb in distinct(tr_a):
            seg = in_a[tr_a == tb]
            lft = a_tile.at(left[seg])
            if tb == ta:
                sets = ShingleSets(a_tile.values, a_tile.offsets)
                rgt = a_tile.at(right[seg])
                w, tot = a_tile.weights, a_totals
            else:  # the other tile's documents that this tile's pairs name, read beside this tile (their
                # values only: a pair's shared weight is read from its left document)
                others = distinct(right[seg])
                sizes = offsets[others + 1] - offsets[others]
                other_values = read_docs(root / "values.npy", offsets, others)
                sets = ShingleSets(_Joined(a_tile.values, other_values),  # type: ignore[arg-type]
                                   concat_offsets([a_tile.offsets, offsets_of(sizes)]))
                rgt = np.searchsorted(others, right[seg]) + held.size
                w = tot = None
                if weights is not None:
                    assert a_totals is not None
                    w = _Joined(a_tile.weights, np.zeros(0))
                    tot = np.concatenate([a_totals, weights.totals_of_docs(others, other_values, sizes)])
            out[seg] = score_pairs(sets, lft, rgt, score, weights=w, totals=tot)
            del sets, w
        del a_tile  # before the next left tile is read
    return out
