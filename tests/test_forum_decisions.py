"""Issue 56's check on forum text, from the files as a user's script reads them: on 20 Newsgroups with the
default, every removed post is a verified copy of the post kept for it, on every engine.

Replies there quote other posts, so chains of pairs link posts that copy nothing kept; the check is the one an
outside script makes from ``clusters.parquet`` and ``pairs.parquet`` alone: each removed document names a kept
document (``copy_of``) that is not shorter, and their pair, at or above the threshold, is in ``pairs.parquet``.
"""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

import neardup
from neardup.calibrate import QUOTED_FROM, QUOTED_THRESHOLD
from neardup.config import EngineConfig

from tests.conftest import shared_file

pytestmark = pytest.mark.shared_data


def removals_are_verified_copies(out) -> dict[str, int]:
    """Assert the invariant from ``out``'s files; returns the removal count and the largest cluster."""
    summary = json.loads((out / "summary.json").read_text())
    threshold = summary["decision"]["threshold"]
    docs = pq.read_table(out / "clusters.parquet", columns=["id", "kept", "copy_of", "score", "cluster",
                                                            "length"]).to_pydict()
    pairs = pq.read_table(out / "pairs.parquet", columns=["left", "right", "score"]).to_pydict()
    linked = {(a, b): s for a, b, s in zip(pairs["left"], pairs["right"], pairs["score"])}
    kept = dict(zip(docs["id"], docs["kept"]))
    length = dict(zip(docs["id"], docs["length"]))
    removed = 0
    for i, is_kept, copy_of, score, cluster in zip(docs["id"], docs["kept"], docs["copy_of"], docs["score"],
                                                   docs["cluster"]):
        if is_kept:
            assert copy_of is None and cluster == i, i
            continue
        removed += 1
        assert kept[copy_of], f"{i} is removed as a copy of {copy_of}, which is removed too"
        assert cluster == copy_of, i
        assert (copy_of, i) in linked, f"{i}: no verified pair with the post kept for it, {copy_of}"
        assert linked[(copy_of, i)] == pytest.approx(score) and score >= threshold - 1e-9, i
        assert length[copy_of] >= length[i], f"{i} is kept out by a shorter post, {copy_of}"
    assert removed == summary["n_duplicates"] == summary["n_pairs_written"]
    return {"removed": removed, "largest": summary["largest_clusters"][0]["size"] if removed else 1}


@pytest.mark.parametrize("engine", ["memory", "local", "ray"])
def test_every_removed_post_is_a_verified_copy_of_the_post_kept_for_it(engine, tmp_path):
    if engine == "ray":
        pytest.importorskip("ray")
    path = shared_file("20newsgroups/docs.jsonl.gz")
    eng = EngineConfig(name=engine, progress=False, evidence=False,
                       **({"workers": 2} if engine == "local" else {}))
    result = neardup.dedup(path, engine=eng, output=tmp_path / "out")
    got = removals_are_verified_copies(tmp_path / "out")
    # Chains no longer remove forum replies (the components of such pairs held 25-34 posts), and replies that
    # quote each other are read as such: a copy holds the removed post whole (calibrate.QUOTED_THRESHOLD).
    assert result.summary["calibration"]["profile"]["quoted"] >= QUOTED_FROM
    assert result.summary["decision"]["threshold"] == QUOTED_THRESHOLD
    assert 0 < got["removed"] < 0.1 * 18_846 and got["largest"] <= 8
