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


@pytest.mark.parametrize("score", SCORES)
def test_tiled_scores_equal_whole_array_scores_to_the_bit(tmp_path, score):
    rng = np.random.default_rng(7)
    sets = _random_sets(rng)
    weights = idf_weights(sets)
    totals = doc_weight_totals(sets, weights)
    save_array(tmp_path / "values.npy", sets.values)
    save_array(tmp_path / "offsets.npy", sets.offsets)
    save_array(tmp_path / "weights.npy", weights)
    a, b = rng.integers(0, len(sets), size=(2, 3000))
    left, right = np.minimum(a, b), np.maximum(a, b)
    keep = left < right
    left, right = left[keep], right[keep]
    tiles = plan_tiles(sets.offsets, 200)
    assert len(tiles) > 10
    want = score_pairs(sets, left, right, score, weights=weights, totals=totals)
    got = score_tiled(tmp_path, left, right, score, tiles, totals if score.startswith("weighted-") else None)
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
