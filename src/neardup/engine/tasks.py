"""The tasks the chunked engines run in worker processes (a local pool or Ray tasks): map a batch into a
shard, IDF weights of a hash partition, the key rows of documents, and the verification of candidates.

Owns what each task does to a work directory, calling the method's own operations; must not schedule
tasks (:mod:`neardup.engine.local`, :mod:`neardup.engine.ray` do) or implement a method.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from neardup import methods
from neardup.arrays import distinct
from neardup.calibrate_scores import sample_codes
from neardup.cluster import ordered, passes, representative_keys, verify_order
from neardup.config import DedupConfig
from neardup.engine.plan import TABLE_CHUNK_VALUES
from neardup.engine.tiles import (IDF_TABLE, gather_rows, load_idf_table, load_tiles, read_rows, score_tiled,
                                  write_rows)
from neardup.engine.workdir import (WorkDir, array_shape, load_array, release, save_array, save_npz, save_shard,
                                   trim_heap)
from neardup.jit import compiled, pays
from neardup.methods.base import KeyedMethod, Representation
from neardup.verify.frequencies import FrequencyTable
from neardup.verify.overlap import idf_of_frequencies, idf_weights_of_codes, value_codes

#: Key rows computed at once while scanning documents for one table group and partition, and documents
#: at once for a fixed-width method (its temporaries are a few times the block's signature rows).
ROWS_PER_BLOCK = 1 << 22
DOCS_PER_BLOCK = 1 << 16


def map_shard(index: int, ids: list[str], texts: list[str], lines: list[int], config: DedupConfig, root: str,
              max_chars: int, values: list[float] | None = None) -> dict[str, Any]:
    """Represent one batch of documents (normalize, shingle, sketch, embed) and write it as shard ``index``,
    with the representative policy's key of each document (``values``: its field's, when it reads one)."""
    t0 = time.perf_counter()
    rep = methods.get(config).represent(texts, max_chars)
    save_shard(WorkDir(root), index, rep, ids, texts, lines, max_chars,
               keys=representative_keys(texts, values, config.cluster))
    # no trim_heap: the next shard reuses this one's freed arrays (workers reuse_heap), where fresh pages cost
    # faults; a worker's heap stays at one shard's peak
    return {"index": index, "n": len(ids), "seconds": time.perf_counter() - t0}


def value_partition(path: str | os.PathLike[str], part: int, parts: int,
                    block: int = 1 << 22) -> tuple[np.ndarray, np.ndarray]:
    """The values of the ``.npy`` file ``path`` whose top bits equal ``part`` (of a power-of-two
    ``parts``), with their positions; the file is read block by block (plain reads, no mapping)."""
    total = array_shape(path)[0]
    chunks, positions = [], []
    for lo in range(0, total, block):
        v = read_rows(path, lo, min(total, lo + block))
        mask = partition_of(v, parts) == part
        chunks.append(v[mask])
        positions.append(np.flatnonzero(mask) + lo)
    if not chunks:
        return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64)
    return np.concatenate(chunks), np.concatenate(positions)


#: Where the weights stage groups the values by hash partition (:func:`split_values`), in a work directory.
SPLIT_DIR = "weights-split"


def grouped(values: np.ndarray, parts: int) -> tuple[np.ndarray, np.ndarray]:
    """``values`` grouped by hash partition (:func:`partition_of`; positions ascending within each) and the
    count per partition: a compiled counting sort on many values, else NumPy's radix sort of the partitions.

    >>> g, c = grouped(np.array([2**63, 1, 2**62, 2], dtype=np.uint64), 2)
    >>> g.tolist() == [1, 2**62, 2, 2**63], c.tolist()
    (True, [3, 1])
    """
    if parts > 1 and pays(int(values.size)):
        return _grouped_loop(values, np.uint64(64 - int(math.log2(parts))), parts)
    order, counts = _grouping(values, parts)
    return values[order], counts


def ungrouped(values: np.ndarray, parts: int, items: np.ndarray) -> np.ndarray:
    """The inverse of :func:`grouped` for items aligned with the grouped values (e.g. their weights): each
    put back at the position of its value in ``values``.

    >>> v = np.array([2**63, 1, 2**62, 2], dtype=np.uint64)
    >>> ungrouped(v, 2, grouped(v, 2)[0]).tolist() == v.tolist()
    True
    """
    if parts > 1 and pays(int(values.size)):
        return _ungrouped_loop(values, np.uint64(64 - int(math.log2(parts))), parts, items)
    order, _ = _grouping(values, parts)
    out = np.empty(values.size, dtype=items.dtype)
    out[order] = items
    return out


def _grouping(values: np.ndarray, parts: int) -> tuple[np.ndarray, np.ndarray]:
    """The order that groups ``values`` by hash partition (positions ascending within each) and the count
    per partition (NumPy)."""
    part = partition_of(values, parts).astype(np.uint16 if parts <= 1 << 16 else np.uint32)
    return np.argsort(part, kind="stable"), np.bincount(part, minlength=parts)  # a radix sort of small integers


@compiled
def _grouped_loop(values: np.ndarray, shift: np.uint64, parts: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`grouped`'s loop: count the values of each partition (the top bits, ``values >> shift``), then
    place each value after those of its partition before it."""
    counts = np.zeros(parts, dtype=np.int64)
    for i in range(values.size):
        counts[values[i] >> shift] += 1
    at = np.zeros(parts, dtype=np.int64)
    for p in range(1, parts):
        at[p] = at[p - 1] + counts[p - 1]
    out = np.empty_like(values)
    for i in range(values.size):
        p = values[i] >> shift
        out[at[p]] = values[i]
        at[p] += 1
    return out, counts


@compiled
def _ungrouped_loop(values: np.ndarray, shift: np.uint64, parts: int, items: np.ndarray) -> np.ndarray:
    """:func:`ungrouped`'s loop: where each partition's items start, then each value takes the next item
    of its partition."""
    at = np.zeros(parts, dtype=np.int64)
    for i in range(values.size):
        p = values[i] >> shift
        if p + 1 < parts:
            at[p + 1] += 1
    for p in range(1, parts):
        at[p] += at[p - 1]
    out = np.empty(values.size, dtype=items.dtype)
    for i in range(values.size):
        p = values[i] >> shift
        out[i] = items[at[p]]
        at[p] += 1
    return out


def corpus_size(root: str | os.PathLike[str]) -> int:
    """The number of documents of the work directory ``root`` (from the header of its joined ``offsets.npy``)."""
    return array_shape(Path(root) / "offsets.npy")[0] - 1


def split_values(root: str, index: int, lo: int, hi: int, parts: int) -> None:
    """Split ``index`` of the weights stage: values ``lo:hi`` of the work directory's ``values.npy`` grouped by
    hash partition, and the count per partition. One read of the values file serves every partition."""
    values, counts = grouped(read_rows(Path(root) / "values.npy", lo, hi), parts)
    save_array(Path(root) / SPLIT_DIR / f"{index:05d}.values.npy", values)
    save_array(Path(root) / SPLIT_DIR / f"{index:05d}.counts.npy", counts.astype(np.int64))


def _split_counts(split: Path, n_splits: int) -> np.ndarray:
    return np.stack([load_array(split / f"{i:05d}.counts.npy", mmap=False) for i in range(n_splits)])


def partition_frequencies(root: str, part: int, n_splits: int) -> None:
    """Document frequency of each value in hash partition ``part`` (read from every split), in split order,
    into ``f-PART.npy`` of the splits' folder: a value's count here, since every document's values are
    distinct. 32-bit counts (half the bytes of the weights they become, written and read back once each)."""
    split = Path(root) / SPLIT_DIR
    counts = _split_counts(split, n_splits)
    starts = np.cumsum(counts, axis=1) - counts
    vals = np.concatenate([read_rows(split / f"{i:05d}.values.npy", int(starts[i, part]),
                                     int(starts[i, part] + counts[i, part])) for i in range(n_splits)])
    n = corpus_size(root)
    if vals.size:
        codes, df = value_codes(vals)
        del vals
        frequencies = df.astype(frequency_dtype(n))[codes]
    else:
        frequencies = np.empty(0, frequency_dtype(n))
    save_array(split / f"f-{part:05d}.npy", frequencies)
    trim_heap()


def frequency_dtype(n: int) -> type:
    """The integer type of document frequencies in a corpus of ``n`` documents.

    >>> frequency_dtype(10**7).__name__, frequency_dtype(2**32).__name__
    ('uint32', 'int64')
    """
    return np.uint32 if n < 2**32 else np.int64


def assemble_weights(root: str, index: int, lo: int, hi: int, parts: int, n_splits: int, idf_power: float) -> None:
    """Split ``index``'s document frequencies taken from every partition's and put back in the order of the
    values ``lo:hi``, turned into IDF weights and written there into ``weights.npy.tmp`` (one contiguous
    write; splits never overlap)."""
    split = Path(root) / SPLIT_DIR
    counts = _split_counts(split, n_splits)
    before, mine = counts[:index].sum(axis=0), counts[index]  # rows of each f-PART before this split's, its own
    items = np.concatenate([read_rows(split / f"f-{p:05d}.npy", int(before[p]), int(before[p] + mine[p]))
                            for p in range(parts)])
    df = ungrouped(read_rows(Path(root) / "values.npy", lo, hi), parts, items)
    del items
    n = corpus_size(root)
    write_rows(Path(root) / "weights.npy.tmp", lo, idf_of_frequencies(df, n, idf_power))
    trim_heap()


def partition_of(keys: np.ndarray, parts: int) -> np.ndarray:
    """The hash partition of each 64-bit key: its top ``log2(parts)`` bits (``parts`` a power of two).

    >>> partition_of(np.array([0, 2**63, 2**62], dtype=np.uint64), 4).tolist()
    [0, 2, 1]
    """
    if parts <= 1:
        return np.zeros(keys.size, dtype=np.int64)
    return (np.asarray(keys, dtype=np.uint64) >> np.uint64(64 - int(math.log2(parts)))).astype(np.int64)


def weights_partition(root: str, part: int, parts: int, idf_power: float, span: int = 1 << 20) -> None:
    """IDF weights of the values in hash partition ``part``, written in place into ``weights.npy.tmp``
    (partitions are disjoint sets of positions, so workers never overlap). Writes go ``span`` file
    positions at a time, each block's mapped pages dropped after it. (The weights stage runs this for a
    single partition; several go through :func:`split_values`, which reads the values once.)"""
    n = corpus_size(root)
    vals, pos = value_partition(Path(root) / "values.npy", part, parts)
    if vals.size:
        codes, counts = value_codes(vals)
        del vals
        weights = idf_weights_of_codes(codes, counts, n, idf_power)
        del codes
        out = np.load(Path(root) / "weights.npy.tmp", mmap_mode="r+")
        cuts = np.searchsorted(pos, np.arange(0, int(pos[-1]) + 1 + span, span))
        for lo, hi in zip(cuts[:-1], cuts[1:]):  # positions ascend: each block dirties one span of the file
            if hi > lo:
                out[pos[lo:hi]] = weights[lo:hi]
                release(out)
        out.flush()
    trim_heap()


def _value_chunks(root: str, lo: int, hi: int) -> Iterator[tuple[int, np.ndarray]]:
    """Values ``lo:hi`` of the work directory's ``values.npy``, :data:`TABLE_CHUNK_VALUES` at a time (where each
    chunk starts, the chunk), read into one buffer: a chunk is valid until the next."""
    path, buffer = Path(root) / "values.npy", np.empty(TABLE_CHUNK_VALUES, dtype=np.uint64)
    for a in range(lo, hi, TABLE_CHUNK_VALUES):
        yield a, read_rows(path, a, min(hi, a + TABLE_CHUNK_VALUES), buffer)


def _counts_files(root: str, index: int) -> tuple[Path, Path]:
    """Where split ``index`` of the weights stage's table path keeps its entries: values, counts."""
    split = Path(root) / SPLIT_DIR
    return split / f"{index:05d}.keys.npy", split / f"{index:05d}.counts.npy"


def count_values(root: str, index: int, lo: int, hi: int, max_bytes: int) -> int:
    """Split ``index`` of the weights stage counted in a hash table: the document frequencies of values
    ``lo:hi`` of the work directory's ``values.npy``, written as the table's entries (``NNNNN.keys.npy`` and
    ``NNNNN.counts.npy`` in the splits' folder); returns their number, or -1 when the table would need more
    than ``max_bytes`` (the stage then counts by hash partition)."""
    table = FrequencyTable(max_bytes)
    for _, chunk in _value_chunks(root, lo, hi):
        if not table.add(chunk):
            return -1
    keys, counts = table.entries()
    del table
    for path, array in zip(_counts_files(root, index), (keys, counts)):
        save_array(path, array)
    trim_heap()
    return int(keys.size)


def idf_table(root: str, n_splits: int, idf_power: float, max_bytes: int) -> bool:
    """The IDF weight of every distinct value, from every split's counts (:func:`count_values`) merged in one
    hash table, saved as the table's slots (:data:`~neardup.engine.tiles.IDF_TABLE`: verification looks up
    the values it reads there, :func:`~neardup.engine.tiles.load_idf_table`); False, nothing written, when that
    table would need more than ``max_bytes``."""
    table = FrequencyTable(max_bytes)
    for i in range(n_splits):
        if not table.add(*(load_array(path, mmap=False) for path in _counts_files(root, i))):
            return False
    n = corpus_size(root)
    table.map_counts(lambda df: idf_of_frequencies(df, n, idf_power))
    table.compact()
    save_array(Path(root) / IDF_TABLE, table.slots)
    del table
    trim_heap()
    return True


def weights_of_table(root: str, lo: int, hi: int) -> None:
    """IDF weights of values ``lo:hi`` looked up in the work directory's table (:func:`idf_table`), written
    there into ``weights.npy.tmp``: for a method that scores the joined representation in one process."""
    table = load_idf_table(root)
    assert table is not None, "weights_of_table: the weights stage saved no table"
    weights = np.empty(TABLE_CHUNK_VALUES, dtype=np.float64)
    for a, chunk in _value_chunks(root, lo, hi):
        write_rows(Path(root) / "weights.npy.tmp", a, table.lookup(chunk, weights[: chunk.size]))
    trim_heap()


def table_keys(method: KeyedMethod, rep: Representation, docs: np.ndarray, tables: range, part: int = 0,
               parts: int = 1) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """``(table, keys, docs)`` of each table in ``tables``, only the keys in hash partition ``part``;
    computed over ``docs`` a block at a time, memory-mapped pages dropped after each block. A
    fixed-width method's keys are one matrix whose documents every table shares."""
    if method.fixed_width:
        per_block = max(1, min(DOCS_PER_BLOCK, ROWS_PER_BLOCK // max(1, len(tables))))
        matrix = np.empty((docs.size, len(tables)), dtype=np.uint64)
        for lo in range(0, docs.size, per_block):
            matrix[lo : lo + per_block] = method.table_keys(rep, docs[lo : lo + per_block], tables)
            _release(rep)
        for j, t in enumerate(tables):
            keys = matrix[:, j]
            if parts > 1:
                sel = partition_of(keys, parts) == part
                yield t, keys[sel], docs[sel]
            else:
                yield t, keys, docs
        return
    cum = np.cumsum(method.key_counts(rep, docs) * len(tables) // max(1, method.n_tables()))
    rows: dict[int, tuple[list[np.ndarray], list[np.ndarray]]] = {t: ([], []) for t in tables}
    lo = 0
    while lo < docs.size:
        hi = max(lo + 1, int(np.searchsorted(cum, (cum[lo - 1] if lo else 0) + ROWS_PER_BLOCK, side="right")))
        for t, keys, key_docs in method.table_rows(rep, docs[lo:hi], tables):
            if parts > 1:
                sel = partition_of(keys, parts) == part
                keys, key_docs = keys[sel], key_docs[sel]
            rows[t][0].append(keys)
            rows[t][1].append(key_docs)
        _release(rep)
        lo = hi
    for t, (keys_list, docs_list) in rows.items():
        if keys_list:
            yield t, np.concatenate(keys_list), np.concatenate(docs_list)


def _release(rep: Representation) -> None:
    for arr in (rep.sketch, rep.sets.values):
        if arr is not None:
            release(arr)


#: Candidate pairs whose sketch rows are read at once (two rows a pair: 16 MiB of MinHash's 128 32-bit values).
SKETCH_PAIRS_PER_BLOCK = 1 << 14


def sketch_pairs(path: str, left: np.ndarray, right: np.ndarray,
                 block: int = SKETCH_PAIRS_PER_BLOCK) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """``(start, rows, left's, right's)`` of the sketch file ``path`` for the pairs, ``block`` pairs at a time:
    the rows of the block's documents, each once, and where each pair's two are among them. Read by plain reads
    (:func:`~neardup.engine.tiles.gather_rows`), never mapped: gathered at random through a map, every touched
    folio of the file stays in the worker's resident set (about 450 MB a worker at a million
    character-shingled documents, past the memory limit)."""
    for lo in range(0, left.size, block):
        a, b = left[lo : lo + block], right[lo : lo + block]
        rows = distinct(np.concatenate([a, b]))
        yield lo, gather_rows(path, rows), np.searchsorted(rows, a), np.searchsorted(rows, b)


def score_codes(root: str, codes: np.ndarray, n: int, config: DedupConfig,
                floor: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Verify distinct candidate pairs, given as codes ``left * n + right``, against the joined arrays
    of the work directory ``root``; returns the pairs whose score passes the threshold (or the lower ``floor``:
    the scored candidates a re-threshold decides from), and the number of candidates (after the method's own
    filter, e.g. SimHash's Hamming distance).

    Shared by the local and the Ray engine. Set scores read two document tiles at a time
    (:mod:`neardup.engine.tiles`), so memory stays bounded.
    """
    method = methods.get(config)
    by_sketch = method.scores_from == "sketch"
    left, right, s = _screened(root, codes // n, codes % n, method, by_sketch)
    if not by_sketch:
        s = score_tiled(root, left, right, method.score_name, load_tiles(root))
    keep = passes(s, method.threshold if floor is None else floor)
    return left[keep], right[keep], s[keep], int(left.size)


def score_unscreened(root: str, codes: np.ndarray, n: int, config: DedupConfig) -> np.ndarray:
    """The method's score of every pair of ``codes`` (``left * n + right``, any order), without its screen (as the
    memory engine's :meth:`~neardup.methods.base.Method.score` gives them): what the threshold read from the candidate
    scores samples (:mod:`neardup.calibrate_scores`)."""
    method = methods.get(config)
    left, right = codes // n, codes % n
    if method.scores_from != "sketch":
        return score_tiled(root, left, right, method.score_name, load_tiles(root))
    out = np.empty(left.size, dtype=np.float64)
    for lo, rows, ia, ib in sketch_pairs(os.path.join(root, "sketch.npy"), left, right):
        out[lo : lo + ia.size] = method.score_sketches(rows[ia], rows[ib])
    return out


def sample_partition(root: str, part: int, max_codes: int, min_shared: int, k: int) -> np.ndarray:
    """Partition ``part``'s distinct candidate codes (its spilled pair files, as :func:`verify_partition` reads them)
    sampled by :func:`~neardup.calibrate_scores.sample_codes` to at most ``k``: the bottom of each pass, then of them
    all (the bottom ``k`` of a union is the bottom ``k`` of its parts' bottoms)."""
    parts = [sample_codes(codes, k) for codes in _partition_codes(WorkDir(root), part, max_codes, min_shared)]
    return sample_codes(np.concatenate(parts), k) if parts else np.empty(0, dtype=np.int64)


def screen_codes(root: str, codes: np.ndarray, n: int, config: DedupConfig) -> np.ndarray:
    """The candidate codes the method's own filter keeps (e.g. the MinHash estimate floor; all where it has none),
    read from the run's sketch as :func:`score_codes` reads it."""
    left, right, _ = _screened(root, codes // n, codes % n, methods.get(config), False)
    return left * n + right


def _screened(root: str, left: np.ndarray, right: np.ndarray, method: Any, by_sketch: bool
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs the method's sketch screen keeps, with their sketch scores where it scores by sketch."""
    sketch = os.path.join(root, "sketch.npy")
    kept: list[np.ndarray] = []
    scored: list[np.ndarray] = [np.empty(0, dtype=np.float64)]
    if os.path.exists(sketch) and left.size:  # one pass over the pairs' sketch rows: screen, and score by sketch
        screen = getattr(method.config.minhash, "estimate_floor", None) is not None  # set sizes only for screening
        off = load_array(os.path.join(root, "offsets.npy")) if screen else None  # mapped: 8 bytes a document
        for lo, rows, ia, ib in sketch_pairs(sketch, left, right):
            hi = lo + ia.size
            sizes = (None, None) if off is None else (off[left[lo:hi] + 1] - off[left[lo:hi]],
                                                      off[right[lo:hi] + 1] - off[right[lo:hi]])
            keep = method.keep_rows(rows, ia, ib, *sizes)
            if keep is None and not kept and not by_sketch:  # screens nothing, scores by sets: no more blocks read
                break
            kept.append(np.ones(ia.size, dtype=bool) if keep is None else keep)
            if by_sketch:
                scored.append(method.score_sketches(rows[ia[kept[-1]]], rows[ib[kept[-1]]]))
    elif by_sketch:
        assert not left.size, "a method scoring by sketch needs the run's sketch"
    if kept:
        keep = np.concatenate(kept)
        left, right = left[keep], right[keep]
    return left, right, np.concatenate(scored)


def distinct_codes(codes: np.ndarray, min_shared: int) -> np.ndarray:
    """The distinct candidate codes, those repeated at least ``min_shared`` times when it is > 1.

    >>> distinct_codes(np.array([5, 3, 5, 9, 5]), 2).tolist(), distinct_codes(np.array([5, 3, 5]), 1).tolist()
    ([5], [3, 5])
    """
    if min_shared <= 1:
        return distinct(codes)
    codes, counts = np.unique(codes, return_counts=True)
    return codes[counts >= min_shared]


def _partition_codes(wd: WorkDir, part: int, max_codes: int, min_shared: int) -> Iterator[np.ndarray]:
    """The distinct candidate codes of partition ``part`` (its spilled pair files), in as many passes as keep each
    at ``max_codes`` codes (repeats included): each pass takes the codes with one value of ``code % passes``
    (repeats of a pair always fall in the same pass), so memory stays bounded whatever the number of candidates."""
    files = sorted(wd.pairs.glob(f"{part:03d}-*.npy"))
    total = sum(array_shape(f)[0] for f in files)
    passes = max(1, math.ceil(total / max(1, max_codes)))
    for sub in range(passes):
        chunk = []
        for f in files:
            codes = load_array(f, mmap=False)
            chunk.append(codes[codes % passes == sub] if passes > 1 else codes)
        codes = distinct_codes(np.concatenate(chunk), min_shared) if chunk else np.empty(0, dtype=np.int64)
        del chunk
        yield codes


#: The work directory's files of greedy's two verification passes (:func:`neardup.cluster.verify_order`): each
#: document's place in the representative policy's order, the roots (nothing comes before them), and the copies
#: settled by the first pass.
ORDER_FILES = ("ranks.npy", "roots.npy", "settled.npy")


def later_ends(root: str, part: int, n: int, config: DedupConfig, max_codes: int) -> int:
    """Greedy's first look at partition ``part``: its distinct candidates that the method's screen keeps
    (:func:`screen_codes`), into ``screened-NNN-K.npy`` (one file a pass of :func:`_partition_codes`), and their
    later ends in the policy's order (``ranks.npy``), each once, into ``later-NNN.npy``: what
    :func:`neardup.cluster.roots_of` reads. Returns the number of candidates; a partition already done is skipped
    (resume)."""
    wd = WorkDir(root)
    out = wd.pairs / f"later-{part:03d}.npy"
    if not out.exists():
        ranks = load_array(os.path.join(root, ORDER_FILES[0]), mmap=False)
        ends = []
        for k, codes in enumerate(_partition_codes(wd, part, max_codes, methods.get(config).min_shared)):
            codes = screen_codes(root, codes, n, config)
            save_array(wd.pairs / f"screened-{part:03d}-{k:04d}.npy", codes)
            ends.append(distinct(ordered(codes // n, codes % n, ranks)[1]))
        save_array(out, distinct(np.concatenate(ends)) if ends else np.empty(0, dtype=np.int64))
    return sum(array_shape(f)[0] for f in wd.pairs.glob(f"screened-{part:03d}-*.npy"))


def in_order(root: str, codes: np.ndarray, n: int, select: int) -> np.ndarray:
    """The codes greedy scores in its pass ``select`` (1 or 2; :func:`neardup.cluster.verify_order`)."""
    ranks, roots = (load_array(os.path.join(root, name), mmap=False) for name in ORDER_FILES[:2])
    settled = load_array(os.path.join(root, ORDER_FILES[2]), mmap=False) if select == 2 else None
    return codes[verify_order(ordered(codes // n, codes % n, ranks)[0], roots, settled)]


def verify_partition(root: str, part: int, n: int, config: DedupConfig, max_codes: int,
                     floor: float | None = None, select: int = 0) -> int:
    """Verify candidate partition ``part`` (its spilled pair files) into ``verified-NNN.npz``: every candidate, or
    (``select`` 1 or 2) those of greedy's first or second pass into ``verified-NNN-S.npz`` (:func:`later_ends`
    and the driver wrote the order's files, :data:`ORDER_FILES`, first).

    Memory stays bounded by ``max_codes`` whatever the number of candidates (:func:`_partition_codes`). Returns
    the number of candidates scored; a partition already verified is skipped (resume).
    """
    wd = WorkDir(root)
    out = wd.pairs / (f"verified-{part:03d}.npz" if not select else f"verified-{part:03d}-{select}.npz")
    if out.exists():
        return int(np.load(out)["n_candidates"][0])
    lefts, rights, scores, n_candidates = [], [], [], 0
    chunks: Iterable[np.ndarray] = (
        _partition_codes(wd, part, max_codes, methods.get(config).min_shared) if not select else
        (in_order(root, load_array(f, mmap=False), n, select)
         for f in sorted(wd.pairs.glob(f"screened-{part:03d}-*.npy"))))
    for codes in chunks:
        left, right, score, count = score_codes(root, codes, n, config, floor)
        lefts.append(left)
        rights.append(right)
        scores.append(score)
        n_candidates += count
    save_npz(out, left=np.concatenate(lefts), right=np.concatenate(rights), score=np.concatenate(scores),
             n_candidates=np.array([n_candidates]))
    del lefts, rights, scores
    trim_heap()
    return n_candidates


__all__ = ["ORDER_FILES", "SPLIT_DIR", "assemble_weights", "corpus_size", "distinct_codes", "frequency_dtype", "grouped",
           "idf_table", "in_order", "later_ends", "map_shard", "partition_frequencies", "partition_of", "sample_partition", "score_codes",
           "score_unscreened", "screen_codes", "sketch_pairs",
           "split_values", "table_keys", "ungrouped", "value_partition", "verify_partition",
           "weights_of_table", "weights_partition"]
