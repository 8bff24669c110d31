import os

import numpy as np
import pytest

from neardup.engine.tiles import plan_tiles, read_rows, score_tiled, tile_of
from neardup.engine.workdir import save_array
from neardup.text.shingle import ShingleSets
from neardup.verify.overlap import SCORES, doc_weight_totals, idf_weights, score_pairs


def _random_sets(rng, n=120):
    vocab = rng.integers(0, 2**63, size=400, dtype=np.uint64)
    docs = [np.unique(rng.choice(vocab, size=int(rng.integers(0, 60)))) for _ in range(n)]
    offsets = np.concatenate([[0], np.cumsum([d.size for d in docs])]).astype(np.int64)
    return ShingleSets(np.concatenate(docs).astype(np.uint64), offsets)


def test_plan_tiles_respects_the_budget_and_covers_every_document():
    rng = np.random.default_rng(1)
    sets = _random_sets(rng)
    tiles = plan_tiles(sets.offsets, 150)
    assert tiles[0] == 0 and tiles[-1] == len(sets) and np.all(np.diff(tiles) >= 1)
    spans = sets.offsets[tiles[1:]] - sets.offsets[tiles[:-1]]
    one_doc = np.diff(tiles) == 1
    assert np.all((spans <= 150) | one_doc)  # a document larger than the budget gets a tile alone
    assert tile_of(tiles, np.arange(len(sets))).tolist() == np.repeat(np.arange(len(tiles) - 1), np.diff(tiles)).tolist()


def test_plan_tiles_gives_an_oversized_document_its_own_tile():
    assert plan_tiles(np.array([0, 2, 500, 502]), 100).tolist() == [0, 1, 2, 3]


def _save_weights(root, sets, weights, by):
    """The weights stage's output in work directory ``root``: a weight for each value and each document's
    total (``by="value"``), or the table of each distinct value's weight (``by="table"``: the tiles sum the
    totals of the documents they score; ``"table+totals"``: a work directory from before, with the totals)."""
    if by != "table":
        save_array(root / "totals.npy", doc_weight_totals(sets, weights))
    if by == "value":
        save_array(root / "weights.npy", weights)
        return
    from neardup.engine.tiles import IDF_TABLE
    from neardup.verify.frequencies import FrequencyTable
    from neardup.verify.overlap import idf_of_frequencies

    table = FrequencyTable(1 << 24)
    assert table.add(sets.values)
    table.map_counts(lambda df: idf_of_frequencies(df, len(sets), 2.0))
    table.compact()
    save_array(root / IDF_TABLE, table.slots)


@pytest.mark.parametrize("by", ["value", "table", "table+totals"])
@pytest.mark.parametrize("score", SCORES)
def test_tiled_scores_equal_whole_array_scores_to_the_bit(tmp_path, score, by):
    rng = np.random.default_rng(7)
    sets = _random_sets(rng)
    weights = idf_weights(sets)
    totals = doc_weight_totals(sets, weights)
    save_array(tmp_path / "values.npy", sets.values)
    save_array(tmp_path / "offsets.npy", sets.offsets)
    _save_weights(tmp_path, sets, weights, by)
    a, b = rng.integers(0, len(sets), size=(2, 3000))
    left, right = np.minimum(a, b), np.maximum(a, b)
    keep = left < right
    left, right = left[keep], right[keep]
    tiles = plan_tiles(sets.offsets, 200)
    assert len(tiles) > 10
    want = score_pairs(sets, left, right, score, weights=weights, totals=totals)
    got = score_tiled(tmp_path, left, right, score, tiles)
    assert np.array_equal(got, want)
    assert (want > 0).sum() > 100  # the pairs do share shingles


def test_read_rows_reads_a_slice_without_mapping_and_refuses_a_truncated_file(tmp_path):
    arr = np.arange(1000, dtype=np.uint64)
    save_array(tmp_path / "a.npy", arr)
    assert read_rows(tmp_path / "a.npy", 10, 20).tolist() == list(range(10, 20))
    assert read_rows(tmp_path / "a.npy", 5, 5).size == 0
    with open(tmp_path / "a.npy", "r+b") as fh:
        fh.truncate(500)
    with pytest.raises(ValueError, match="truncated"):
        read_rows(tmp_path / "a.npy", 0, 1000)


def test_weights_written_span_by_span_equal_idf_weights(tmp_path):
    from neardup.engine.tasks import weights_partition as _weights_part

    sets = _random_sets(np.random.default_rng(3))
    save_array(tmp_path / "values.npy", sets.values)
    save_array(tmp_path / "offsets.npy", sets.offsets)
    np.lib.format.open_memmap(tmp_path / "weights.npy.tmp", mode="w+", dtype=np.float64,
                              shape=sets.values.shape).flush()
    for part in range(4):
        _weights_part(str(tmp_path), part, 4, 2.0, span=7)
    assert np.array_equal(np.load(tmp_path / "weights.npy.tmp"), idf_weights(sets, 2.0))


@pytest.mark.parametrize("by", ["value", "table"])
def test_pairs_read_only_their_own_documents_and_score_to_the_bit(tmp_path, monkeypatch, by):
    import neardup.engine.tiles as tiles_mod

    rng = np.random.default_rng(11)
    sets = _random_sets(rng, n=2000)
    weights = idf_weights(sets)
    totals = doc_weight_totals(sets, weights)
    for name, arr in (("values", sets.values), ("offsets", sets.offsets)):
        save_array(tmp_path / f"{name}.npy", arr)
    _save_weights(tmp_path, sets, weights, by)
    a, b = rng.integers(0, len(sets), size=(2, 300))
    left, right = np.minimum(a, b), np.maximum(a, b)
    keep = left < right
    left, right = left[keep], right[keep]
    tiles = plan_tiles(sets.offsets, 2000)
    read: dict[str, int] = {}
    real = tiles_mod.os.preadv

    def preadv(fd, bufs, at):
        name = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
        read[name] = read.get(name, 0) + sum(len(b) for b in bufs)
        return real(fd, bufs, at)

    monkeypatch.setattr(tiles_mod.os, "preadv", preadv)
    sizes = np.diff(sets.offsets)
    tl, tr = tile_of(tiles, left), tile_of(tiles, right)
    held = [np.union1d(left[tl == t], right[(tl == t) & (tr == t)]) for t in np.unique(tl)]  # each tile's own
    others = [np.unique(right[(tl == t) & (tr == u)]) for t in np.unique(tl) for u in np.unique(tr[tl == t]) if u != t]
    values_read = 8 * sum(int(sizes[d].sum()) for d in held + others)
    assert values_read < 0.8 * sets.values.nbytes  # the test's pairs leave documents out
    for score in ("weighted-overlap", "jaccard"):
        read.clear()
        want = score_pairs(sets, left, right, score, weights=weights, totals=totals)
        got = score_tiled(tmp_path, left, right, score, tiles)
        assert np.array_equal(got, want)
        assert read.pop("values.npy") == values_read  # the documents of pairs, each once a tile, nothing between
        if by == "value" and score.startswith("weighted-"):  # the weights of the tiles' own documents only
            assert read.pop("weights.npy") == 8 * sum(int(sizes[d].sum()) for d in held)
        assert not read


def test_read_docs_gathers_documents_in_order_and_refuses_a_truncated_file(tmp_path):
    from neardup.engine.tiles import read_docs

    save_array(tmp_path / "v.npy", np.arange(100, dtype=np.uint64))
    offsets = np.array([0, 10, 10, 40, 95, 100])
    assert read_docs(tmp_path / "v.npy", offsets, np.array([0, 1, 3])).tolist() == list(range(10)) + list(range(40, 95))
    assert read_docs(tmp_path / "v.npy", offsets, np.array([], dtype=np.int64)).size == 0
    with open(tmp_path / "v.npy", "r+b") as fh:
        fh.truncate(400)
    with pytest.raises(ValueError, match="truncated"):
        read_docs(tmp_path / "v.npy", offsets, np.array([4]))


@pytest.mark.parametrize("seed", range(4))
def test_sketch_rows_of_pairs_are_read_block_by_block_equal_to_gathering(tmp_path, seed):
    from neardup.engine.tasks import sketch_pairs
    from neardup.engine.tiles import gather_rows

    rng = np.random.default_rng(seed)
    sketch = rng.integers(0, 2**32, size=(int(rng.integers(1, 400)), 16), dtype=np.uint32)
    save_array(tmp_path / "sketch.npy", sketch)
    rows = np.unique(rng.integers(0, len(sketch), size=int(rng.integers(0, 60))))  # runs of neighbours and gaps
    assert np.array_equal(gather_rows(tmp_path / "sketch.npy", rows), sketch[rows])
    left = np.sort(rng.integers(0, len(sketch), size=int(rng.integers(0, 500))))
    right = rng.integers(0, len(sketch), size=left.size)
    got = list(sketch_pairs(str(tmp_path / "sketch.npy"), left, right, block=int(rng.integers(1, 64))))
    starts = [lo for lo, _, _, _ in got]
    assert starts == sorted(starts) and (not got or starts[0] == 0)
    assert all(len(np.unique(rows, axis=0)) == len(rows) for _, rows, _, _ in got)  # each document's row once
    a = np.concatenate([rows[ia] for _, rows, ia, _ in got]) if got else np.empty((0, 16), np.uint32)
    b = np.concatenate([rows[ib] for _, rows, _, ib in got]) if got else np.empty((0, 16), np.uint32)
    assert np.array_equal(a, sketch[left]) and np.array_equal(b, sketch[right])


def test_sketch_rows_of_a_one_dimensional_file_are_its_elements_and_a_truncated_file_is_refused(tmp_path):
    from neardup.engine.tiles import gather_rows

    save_array(tmp_path / "v.npy", np.arange(10, dtype=np.uint64))  # SimHash: one fingerprint a document
    assert gather_rows(tmp_path / "v.npy", np.array([1, 2, 7])).tolist() == [1, 2, 7]
    save_array(tmp_path / "s.npy", np.arange(40, dtype=np.uint32).reshape(10, 4))
    with open(tmp_path / "s.npy", "r+b") as fh:
        fh.truncate(128 + 4 * 4 * 5)
    with pytest.raises(ValueError, match="truncated"):
        gather_rows(tmp_path / "s.npy", np.array([2, 8]))


def test_verification_never_maps_the_sketch(tmp_path, monkeypatch):
    """The character default screens candidates by their MinHash estimate: the sketch rows come from plain
    reads, not a memory map (gathered at random, a mapped file's touched folios stay resident)."""
    import neardup.engine.tasks as tasks
    from neardup.config import DedupConfig, EngineConfig
    from neardup.engine.local import run_chunked

    mapped = []
    real = tasks.load_array
    monkeypatch.setattr(tasks, "load_array", lambda path, mmap=True: (mapped.append(str(path)) if mmap else None)
                        or real(path, mmap=mmap))
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(300)]
    base = [" ".join(rng.choice(words, size=80)) for _ in range(40)]
    texts = base + [t[:-6] + " extra" for t in base]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(f'{{"id": {i}, "text": "{t}"}}\n' for i, t in enumerate(texts)))
    cfg = DedupConfig(method="minhash").replace(shingle__char=True)
    assert cfg.minhash.estimate_floor is not None  # the character unit's screening is on
    summary = run_chunked(src, tmp_path / "out", cfg, EngineConfig(workers=1, batch_docs=20, progress=False))
    assert summary["n_pairs"] >= 40 and summary["n_candidates"] > 0
    assert not [p for p in mapped if p.endswith("sketch.npy")]


def _weights_stage_dir(root, seed):
    """A work directory as the weights stage finds it: random sets' values and offsets, the weights file to
    fill, the splits' folder; returns the sets."""
    from neardup.engine.tasks import SPLIT_DIR

    sets = _random_sets(np.random.default_rng(seed), n=300)
    save_array(root / "values.npy", sets.values)
    save_array(root / "offsets.npy", sets.offsets)
    np.lib.format.open_memmap(root / "weights.npy.tmp", mode="w+", dtype=np.float64, shape=sets.values.shape).flush()
    (root / SPLIT_DIR).mkdir()
    return sets


def test_weights_from_splits_equal_idf_weights(tmp_path):
    from neardup.engine.tasks import SPLIT_DIR, assemble_weights, partition_frequencies, split_values

    sets = _weights_stage_dir(tmp_path, seed=5)
    n, step = sets.values.size, 997
    spans = [(lo, min(n, lo + step)) for lo in range(0, n, step)]
    assert len(spans) > 3
    for i, (lo, hi) in enumerate(spans):
        split_values(str(tmp_path), i, lo, hi, 8)
    for part in range(8):
        partition_frequencies(str(tmp_path), part, len(spans))
    for f in (tmp_path / SPLIT_DIR).glob("*.values.npy"):  # the weights stage drops the grouped copy here
        f.unlink()
    for i, (lo, hi) in reversed(list(enumerate(spans))):  # any order: each writes its own rows
        assemble_weights(str(tmp_path), i, lo, hi, 8, len(spans), 2.0)
    assert np.array_equal(np.load(tmp_path / "weights.npy.tmp"), idf_weights(sets, 2.0))


def test_weights_of_frequencies_equal_idf_to_the_bit():
    """A table of every frequency up to the largest, or the distinct ones: either way, idf of each."""
    from neardup.verify.overlap import idf, idf_of_frequencies

    rng = np.random.default_rng(7)
    for df in (rng.integers(1, 50, 5000), rng.integers(1, 10**6, 300), np.array([10**6]), np.array([], np.int64)):
        for power in (1.0, 2.0):
            got = idf_of_frequencies(df.astype(np.uint32), 10**6, power)
            assert got.dtype == np.float64 and np.array_equal(got, idf(df, 10**6, power))


def test_write_rows_writes_in_place_and_refuses_rows_that_do_not_fit(tmp_path):
    from neardup.engine.tiles import write_rows

    save_array(tmp_path / "a.npy", np.zeros(10))
    write_rows(tmp_path / "a.npy", 3, np.array([1.0, 2.0]))
    assert np.load(tmp_path / "a.npy").tolist() == [0, 0, 0, 1, 2, 0, 0, 0, 0, 0]
    with pytest.raises(ValueError, match="cannot write"):
        write_rows(tmp_path / "a.npy", 9, np.array([1.0, 2.0]))


def test_array_bytes_are_appended_by_the_kernel_or_by_plain_reads_alike(tmp_path, monkeypatch):
    import neardup.engine.workdir as workdir

    parts = [np.arange(i * 1000, i * 1000 + 1000 + i, dtype=np.uint32).reshape(-1, 1) for i in range(3)]
    for i, p in enumerate(parts):
        save_array(tmp_path / f"{i}.npy", p)
    want = np.concatenate(parts)
    for kernel in (True, False):
        if not kernel:
            monkeypatch.setattr(workdir.os, "copy_file_range", lambda *a: (_ for _ in ()).throw(OSError("EXDEV")),
                                raising=False)
        out = np.lib.format.open_memmap(tmp_path / "out.npy", mode="w+", dtype=np.uint32, shape=want.shape)
        at = int(out.offset)
        del out
        with open(tmp_path / "out.npy", "r+b") as dst:
            for i in range(3):
                at += workdir.append_array_bytes(tmp_path / f"{i}.npy", dst, at, block=1000)
        assert np.array_equal(np.load(tmp_path / "out.npy"), want)


@pytest.mark.parametrize("seed", range(3))
def test_compiled_reads_equal_the_python_reads_and_stop_where_the_file_ends(tmp_path, seed):
    """The compiled loop of pread calls (large reads) reads exactly the bytes of the plain preadv loop, and
    both report the runs read in full when the file ends early."""
    import os

    from neardup.engine.tiles import _compiled_reads, _read_runs

    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, size=200_000, dtype=np.uint8)
    (tmp_path / "f").write_bytes(data.tobytes())
    nbytes = rng.integers(1, 600, size=300).astype(np.int64)
    at = np.sort(rng.choice(200_000 - 600, size=300, replace=False)).astype(np.int64)
    into = (np.cumsum(nbytes) - nbytes).astype(np.int64)
    fd = os.open(tmp_path / "f", os.O_RDONLY)
    try:
        a, b = np.zeros(int(nbytes.sum()), np.uint8), np.ones(int(nbytes.sum()), np.uint8)
        assert _read_runs(fd, a, at, nbytes, into) == 300 == _compiled_reads()(fd, b, at, nbytes, into)
        assert np.array_equal(a, b)
        assert np.array_equal(a[into[7] : into[7] + nbytes[7]], data[at[7] : at[7] + nbytes[7]])
        past = at.copy()
        past[150:] += 200_000  # past the end from run 150 on
        assert _read_runs(fd, a, past, nbytes, into) == 150 == _compiled_reads()(fd, b, past, nbytes, into)
    finally:
        os.close(fd)


def test_a_large_gather_takes_the_compiled_reads_and_equals_the_small_path(tmp_path, monkeypatch):
    from neardup.engine.tiles import gather_rows

    sketch = np.random.default_rng(5).integers(0, 2**32, size=(5000, 128), dtype=np.uint32)
    save_array(tmp_path / "s.npy", sketch)
    rows = np.unique(np.random.default_rng(6).integers(0, 5000, size=3000))
    monkeypatch.setenv("NEARDUP_JIT", "1")
    big = gather_rows(tmp_path / "s.npy", rows)
    monkeypatch.setenv("NEARDUP_JIT", "0")
    small = gather_rows(tmp_path / "s.npy", rows)
    assert np.array_equal(big, sketch[rows]) and np.array_equal(small, sketch[rows])


@pytest.mark.parametrize("array", [
    np.zeros(0, dtype=np.uint64), np.arange(5, dtype=np.uint64), np.zeros((3, 128), dtype=np.uint32), np.array(3.5),
    np.zeros((2, 3, 4), dtype=np.float32), np.asfortranarray(np.arange(12).reshape(3, 4)),
    np.array([1, 2], dtype=">i4"), np.zeros((0, 128), dtype=np.uint32), np.array([True, False]),
    np.zeros(3, dtype="U5"), np.zeros(2, dtype=[("a", "<i4"), ("b", "<f8")]),
], ids=lambda a: f"{a.dtype}-{a.shape}")
def test_array_headers_and_loads_equal_numpys(tmp_path, array):
    """The fast header parse (NumPy's own layout) and its fallback give NumPy's answer and position, and
    load_array gives np.load's array, mapped or read."""
    from neardup.engine.workdir import load_array, npy_header

    path = tmp_path / "a.npy"
    save_array(path, array)
    with open(path, "rb") as fh:
        ours, at = npy_header(fh), fh.tell()
    with open(path, "rb") as fh:
        np.lib.format.read_magic(fh)
        assert (ours, at) == (np.lib.format.read_array_header_1_0(fh), fh.tell())
    for mmap in (True, False):
        got, want = load_array(path, mmap=mmap), np.load(path, mmap_mode="r" if mmap else None)
        assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
        assert got.flags.f_contiguous == want.flags.f_contiguous and np.array_equal(got, want)


def test_an_unusual_header_goes_to_numpys_reader_and_a_short_file_is_refused(tmp_path):
    """A version 2.0 header and a hand-written one (other key order, no padding rules) parse as NumPy parses
    them; an array file cut short is refused when read, not returned short."""
    from neardup.engine.workdir import load_array, npy_header

    array = np.arange(6, dtype=np.int16).reshape(2, 3)
    v2 = tmp_path / "v2.npy"
    with open(v2, "wb") as fh:
        np.lib.format.write_array(fh, array, version=(2, 0))
    header = b"{'shape': (2, 3), 'descr': '<i2', 'fortran_order': False}"
    header += b" " * (-(10 + len(header) + 1) % 64) + b"\n"
    odd = tmp_path / "odd.npy"
    odd.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + array.tobytes())
    for path in (v2, odd):
        with open(path, "rb") as fh:
            assert npy_header(fh) == ((2, 3), False, np.dtype("<i2"))
        assert np.array_equal(load_array(path, mmap=False), array) and np.array_equal(load_array(path), array)
    short = tmp_path / "short.npy"
    short.write_bytes(odd.read_bytes()[:-4])
    with pytest.raises(ValueError, match="short.npy: truncated"):
        load_array(short, mmap=False)


def test_headers_numpy_writes_are_parsed_without_numpys_reader(tmp_path, monkeypatch):
    from neardup.engine.workdir import load_array

    path = tmp_path / "a.npy"
    save_array(path, np.arange(10, dtype=np.uint64).reshape(5, 2))

    def refuse(*_: object) -> None:
        raise AssertionError("NumPy's header reader was called")

    monkeypatch.setattr(np.lib.format, "read_array_header_1_0", refuse)
    monkeypatch.setattr(np.lib.format, "read_array_header_2_0", refuse)
    assert load_array(path, mmap=False)[4].tolist() == [8, 9] and load_array(path)[0].tolist() == [0, 1]
    flat = tmp_path / "flat.npy"
    save_array(flat, np.arange(7, dtype=np.int64))
    assert read_rows(flat, 2, 5).tolist() == [2, 3, 4]


def test_weights_counted_in_tables_equal_idf_weights(tmp_path):
    """The weights stage's table path: each span's values counted, the counts merged and made weights in one
    table, saved; its lookups, and the weights written from it (spans in any order), equal the IDF weights to
    the bit."""
    from neardup.engine.tasks import count_values, idf_table, weights_of_table
    from neardup.engine.tiles import IDF_TABLE, load_idf_table

    sets = _weights_stage_dir(tmp_path, seed=6)
    n = sets.values.size
    cuts = [0, n // 3, n // 2, n]
    spans = list(zip(cuts[:-1], cuts[1:]))
    distinct = [count_values(str(tmp_path), i, lo, hi, 1 << 24) for i, (lo, hi) in enumerate(spans)]
    assert all(d > 0 for d in distinct) and sum(distinct) > np.unique(sets.values).size  # spans share values
    assert load_idf_table(tmp_path) is None
    assert idf_table(str(tmp_path), len(spans), 2.0, 1 << 24)
    table = load_idf_table(tmp_path)
    assert table.filled == np.unique(sets.values).size and table.filled * 2 <= table.slots.size // 2  # compact
    assert np.array_equal(table.lookup(sets.values), idf_weights(sets, 2.0))
    assert load_idf_table(tmp_path) is table  # loaded once a process
    for lo, hi in reversed(spans):
        weights_of_table(str(tmp_path), lo, hi)
    assert np.array_equal(np.load(tmp_path / "weights.npy.tmp"), idf_weights(sets, 2.0))
    save_array(tmp_path / IDF_TABLE, np.zeros(2 << 16, dtype=np.uint64))  # a new file: read again
    assert load_idf_table(tmp_path) is not table and load_idf_table(tmp_path).filled == 0


def test_read_rows_into_a_buffer_reads_the_same_rows_and_refuses_one_that_cannot_hold_them(tmp_path):
    save_array(tmp_path / "a.npy", np.arange(10, dtype=np.uint64))
    buffer = np.full(6, 99, dtype=np.uint64)
    got = read_rows(tmp_path / "a.npy", 3, 7, buffer)
    assert got.tolist() == [3, 4, 5, 6] and np.shares_memory(got, buffer)
    assert read_rows(tmp_path / "a.npy", 8, 10, buffer).tolist() == [8, 9]
    with pytest.raises(ValueError, match="cannot hold"):
        read_rows(tmp_path / "a.npy", 0, 7, buffer)
    with pytest.raises(ValueError, match="cannot hold"):
        read_rows(tmp_path / "a.npy", 0, 2, np.empty(6, dtype=np.int64))
    with pytest.raises(ValueError, match="truncated"):
        read_rows(tmp_path / "a.npy", 8, 12, buffer)
