"""The join made as the map goes (ShardJoin): shards appended in order as they are done, their copies deleted,
the joined files those of the shards concatenated, and a resumed join exact after a killed append."""

import numpy as np
import pytest

from neardup.engine.sharded import JOIN_HEADER, ShardJoin
from neardup.engine.workdir import WorkDir, load_array, save_array


def _workdir(tmp_path):
    wd = WorkDir(tmp_path / "work")
    wd.shards.mkdir(parents=True)
    return wd


def _shards(wd, n, seed=0):
    """n shards of values (1-D, uneven sizes) and sketches (2-D), the first ``n`` marked done."""
    rng = np.random.default_rng(seed)
    values, sketches = [], []
    for i in range(n):
        v = rng.integers(0, 2**63, size=int(rng.integers(0, 900)), dtype=np.uint64)
        s = rng.integers(0, 2**32, size=(int(rng.integers(1, 40)), 16), dtype=np.uint32)
        save_array(wd.shard(i, "values.npy"), v)
        save_array(wd.shard(i, "sketch.npy"), s)
        values.append(v)
        sketches.append(s)
    return values, sketches


def _done(wd, i):
    wd.shard(i, "done").write_text("1 0 0\n")


def test_shards_are_appended_in_order_as_they_are_done_and_leave_the_shards(tmp_path):
    wd = _workdir(tmp_path)
    values, sketches = _shards(wd, 6)
    for i in (0, 1, 3):  # shard 2 still mapping: 3 waits for it
        _done(wd, i)
    join = ShardJoin(wd)
    join.catch_up(6)
    assert join.next == 2
    assert not wd.shard(1, "values.npy").exists() and not wd.shard(0, "sketch.npy").exists()
    assert wd.shard(2, "values.npy").exists() and wd.shard(3, "values.npy").exists()
    for i in (2, 4, 5):
        _done(wd, i)
    assert ShardJoin(wd).finish(6) == ["values.npy", "sketch.npy"]  # a new object: the state is on disk
    assert not list(wd.shards.glob("*.npy"))
    got_v, got_s = load_array(wd.root / "values.npy", mmap=False), np.load(wd.root / "sketch.npy")
    assert got_v.dtype == np.uint64 and np.array_equal(got_v, np.concatenate(values))
    assert got_s.shape == (sum(s.shape[0] for s in sketches), 16) and np.array_equal(got_s, np.concatenate(sketches))
    assert not (wd.root / "values.npy.tmp").exists()


def test_a_resumed_join_writes_over_what_a_killed_append_left(tmp_path):
    wd = _workdir(tmp_path)
    values, sketches = _shards(wd, 4, seed=1)
    for i in range(4):
        _done(wd, i)
    join = ShardJoin(wd)
    join.catch_up(2)
    with open(wd.root / "values.npy.tmp", "ab") as fh:  # shard 2's append cut short: bytes the state never counted
        fh.write(b"\xff" * 1000)
    save_array(wd.shard(1, "values.npy"), values[1])  # and shard 1's copy, as if killed before deleting it
    assert (wd.root / "values.npy.tmp").stat().st_size == JOIN_HEADER + values[0].nbytes + values[1].nbytes + 1000
    ShardJoin(wd).finish(4)
    wd.settle()
    assert not list(wd.shards.glob("*.npy"))
    assert (wd.root / "values.npy").stat().st_size == JOIN_HEADER + sum(v.nbytes for v in values)
    assert np.array_equal(np.load(wd.root / "values.npy"), np.concatenate(values))
    assert np.array_equal(np.load(wd.root / "sketch.npy"), np.concatenate(sketches))


def test_an_incomplete_shard_a_damaged_join_and_a_changed_dtype_are_errors(tmp_path):
    wd = _workdir(tmp_path)
    _shards(wd, 3, seed=2)
    _done(wd, 0)
    _done(wd, 1)
    with pytest.raises(RuntimeError, match="shard 2 of 3 is not complete"):
        ShardJoin(wd).finish(3)
    (wd.root / "sketch.npy.tmp").unlink()
    _done(wd, 2)
    with pytest.raises(RuntimeError, match="damaged"):
        ShardJoin(wd).finish(3)

    wd = _workdir(tmp_path / "b")
    _shards(wd, 2, seed=3)
    save_array(wd.shard(1, "values.npy"), np.arange(5, dtype=np.int32))
    _done(wd, 0)
    _done(wd, 1)
    with pytest.raises(RuntimeError, match="shard 1 holds int32"):
        ShardJoin(wd).finish(2)
