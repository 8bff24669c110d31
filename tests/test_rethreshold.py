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

LOCAL = EngineConfig(name="local", workers=1, progress=False, evidence=False)
COLUMNS = ["id", "kept", "copy_of", "score", "cluster", "cluster_size", "is_representative", "oversized", "length"]


def _tables(folder):
    return (pq.read_table(folder / "clusters.parquet", columns=COLUMNS),
            pq.read_table(folder / "pairs.parquet", columns=["left", "right", "score"]))


@pytest.mark.parametrize("engine", ["memory", "local"])
@pytest.mark.parametrize("threshold", [0.36, 0.4, 0.6, 0.95])
def test_a_rethreshold_equals_a_fresh_run_at_that_threshold(example_path, tmp_path, engine, threshold):
    """Word 4-grams (the default on clean text) at .45 keep the scored candidates down to .36: any threshold from
    there up gives the files a run at it writes (decisions, links, scores), below and above the run's own."""
    eng = LOCAL if engine == "local" else EngineConfig(evidence=False)
    run = neardup.dedup(example_path, method="minhash", engine=eng, output=tmp_path / "run")
    assert run.summary["decision"]["score_floor"] == pytest.approx(0.36)
    neardup.DedupResult.load(tmp_path / "run").rethreshold(threshold).write(tmp_path / "again")
    neardup.dedup(example_path, method="minhash", threshold=threshold, engine=eng, output=tmp_path / "fresh")
    again, fresh = _tables(tmp_path / "again"), _tables(tmp_path / "fresh")
    assert again[0].equals(fresh[0]) and again[1].equals(fresh[1])
    a, f = (json.loads((tmp_path / d / "summary.json").read_text()) for d in ("again", "fresh"))
    for key in ("n_clusters", "n_duplicates", "n_pairs", "n_pairs_written", "largest_clusters"):
        assert a[key] == f[key], key
    assert {**a["decision"], "score_floor": None} == {**f["decision"], "score_floor": None}
    assert a["decision"]["score_floor"] == pytest.approx(0.36)  # the candidates it has
    assert a["params"]["threshold"] == threshold and a["rethreshold"]["from"] == 0.45


def test_a_rethreshold_is_refused_below_the_floor_and_keeps_its_own_candidates(example_path):
    run = neardup.dedup(example_path, method="minhash")
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
    into = runner.invoke(app, ["rethreshold", str(tmp_path / "run"), "-t", "0.6", "-o", str(tmp_path / "run")])
    assert into.exit_code == 2 and "not into it" in into.output
    low = runner.invoke(app, ["rethreshold", str(tmp_path / "run"), "-t", "0.1", "-o", str(tmp_path / "low")])
    assert low.exit_code == 2 and "score floor" in low.output and not (tmp_path / "low" / "summary.json").exists()
    ok = runner.invoke(app, ["rethreshold", str(tmp_path / "run"), "-t", "0.6", "-o", str(tmp_path / "new")])
    assert ok.exit_code == 0, ok.output
    assert "at threshold 0.6" in ok.output
    assert {p.name for p in (tmp_path / "new").iterdir()} >= {"clusters.parquet", "pairs.parquet", "scores.parquet",
                                                             "summary.json"}
    assert not (tmp_path / "new" / "evidence.parquet").exists()
    again = runner.invoke(app, ["rethreshold", str(tmp_path / "run"), "-t", "0.7", "-o", str(tmp_path / "new")])
    assert again.exit_code == 2 and "--overwrite" in again.output
    assert before == {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir() if p.is_file()}  # untouched
