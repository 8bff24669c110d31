"""Re-thresholding a finished run from the scored candidates it kept: the same result as a fresh run at the new
threshold, on every engine, from the Python API and the command line."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import neardup
from neardup.cli import build_app
from neardup.config import EngineConfig

LOCAL = EngineConfig(name="local", workers=1, progress=False, evidence=False, score_ceiling=None)
COLUMNS = ["id", "kept", "copy_of", "score", "cluster", "cluster_size", "is_representative", "oversized", "length"]


def _tables(folder):
    return (pq.read_table(folder / "clusters.parquet", columns=COLUMNS),
            pq.read_table(folder / "pairs.parquet", columns=["left", "right", "score"]))


@pytest.mark.parametrize("engine", ["memory", "local"])
@pytest.mark.parametrize("threshold", [0.36, 0.4, 0.6, 0.95])
def test_a_rethreshold_equals_a_fresh_run_at_that_threshold(example_path, tmp_path, engine, threshold):
    """Word 4-grams (the default on clean text) at .45 keep the scored candidates down to .36 and, with no score
    ceiling, every pair up to 1: any threshold from there up gives the files a run at it writes (decisions, links,
    scores), below and above the run's own. (How many pairs passed, ``n_pairs``, counts the pairs scored, and
    greedy scores those its decisions read: a fresh run at another threshold scores others.)"""
    eng = LOCAL if engine == "local" else EngineConfig(evidence=False, score_ceiling=None)
    run = neardup.dedup(example_path, method="minhash", engine=eng, output=tmp_path / "run")
    assert run.summary["decision"]["score_floor"] == pytest.approx(0.36)
    neardup.DedupResult.load(tmp_path / "run").rethreshold(threshold).write(tmp_path / "again")
    neardup.dedup(example_path, method="minhash", threshold=threshold, engine=eng, output=tmp_path / "fresh")
    again, fresh = _tables(tmp_path / "again"), _tables(tmp_path / "fresh")
    assert again[0].equals(fresh[0]) and again[1].equals(fresh[1])
    a, f = (json.loads((tmp_path / d / "summary.json").read_text()) for d in ("again", "fresh"))
    for key in ("n_clusters", "n_duplicates", "n_pairs_written", "largest_clusters"):
        assert a[key] == f[key], key
    assert {**a["decision"], "score_floor": None} == {**f["decision"], "score_floor": None}
    assert a["decision"]["score_floor"] == pytest.approx(0.36)  # the candidates it has
    assert a["params"]["threshold"] == threshold and a["rethreshold"]["from"] == 0.45


@pytest.mark.parametrize("engine", ["memory", "local"])
def test_by_default_greedy_scores_fewer_pairs_and_rethresholds_up_to_its_ceiling(example_path, tmp_path, engine):
    """The default ceiling (1.25 of the threshold): the pairs that a copy, settled by a document nothing comes
    before, comes first in are not scored; every threshold from the floor to the ceiling still gives a fresh run's
    files, and one above it is refused, naming the ceiling."""
    eng = (LOCAL if engine == "local" else EngineConfig(evidence=False)).replace(score_ceiling=1.25)
    every = neardup.dedup(example_path, method="minhash", engine=eng.replace(all_pairs=True))  # every pair scored
    run = neardup.dedup(example_path, method="minhash", engine=eng, output=tmp_path / "run")
    assert run.summary["decision"]["score_ceiling"] == pytest.approx(0.5625)
    assert run.summary["n_scored"] < every.summary["n_scored"] == every.summary["n_candidates"]
    assert run.summary["n_candidates"] == every.summary["n_candidates"]
    assert run.decisions == every.decisions
    for threshold in (0.36, 0.5, 0.5625):
        again = neardup.DedupResult.load(tmp_path / "run").rethreshold(threshold)
        fresh = neardup.dedup(example_path, method="minhash", threshold=threshold, engine=eng.replace(score_ceiling=None))
        assert again.decisions == fresh.decisions, threshold
    with pytest.raises(ValueError, match="0.36 and 0.5625"):
        run.rethreshold(0.6)


def test_a_rethreshold_is_refused_below_the_floor_and_keeps_its_own_candidates(example_path):
    run = neardup.dedup(example_path, method="minhash", engine=EngineConfig(score_ceiling=None))
    with pytest.raises(ValueError, match="score floor 0.36"):
        run.rethreshold(0.3)
    twice = run.rethreshold(0.9).rethreshold(0.5)  # the scored candidates travel with the result
    assert twice.decisions == run.rethreshold(0.5).decisions
    assert neardup.dedup(example_path, method="minhash", threshold=0.5).decisions == twice.decisions


def test_the_command_writes_beside_the_run_never_into_it(example_path, tmp_path):
    runner = CliRunner()
    app = build_app("rethreshold")
    dedup = CliRunner().invoke(build_app("dedup"), ["dedup", str(example_path), "-o", str(tmp_path / "run"), "--silent"])
    assert dedup.exit_code == 0, dedup.output
    before = {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir() if p.is_file()}
    into = runner.invoke(app, ["rethreshold", str(tmp_path / "run"), "-t", "0.5", "-o", str(tmp_path / "run")])
    assert into.exit_code == 2 and "not into it" in into.output
    low = runner.invoke(app, ["rethreshold", str(tmp_path / "run"), "-t", "0.1", "-o", str(tmp_path / "low")])
    assert low.exit_code == 2 and "score floor" in low.output and not (tmp_path / "low" / "summary.json").exists()
    high = runner.invoke(app, ["rethreshold", str(tmp_path / "run"), "-t", "0.9", "-o", str(tmp_path / "high")])
    assert high.exit_code == 2 and "ceiling" in high.output and not (tmp_path / "high").exists()
    ok = runner.invoke(app, ["rethreshold", str(tmp_path / "run"), "-t", "0.5", "-o", str(tmp_path / "new")])
    assert ok.exit_code == 0, ok.output
    assert "at threshold 0.5" in ok.output
    assert {p.name for p in (tmp_path / "new").iterdir()} >= {"clusters.parquet", "pairs.parquet", "scores.parquet",
                                                             "summary.json"}
    assert not (tmp_path / "new" / "evidence.parquet").exists()
    again = runner.invoke(app, ["rethreshold", str(tmp_path / "run"), "-t", "0.55", "-o", str(tmp_path / "new")])
    assert again.exit_code == 2 and "--overwrite" in again.output
    assert before == {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir() if p.is_file()}  # untouched
