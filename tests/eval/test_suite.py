"""Tests for neardup.eval.suite and the ``bench`` CLI: ``bench run --quick`` end to end."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from neardup.config import ConfigError
from neardup.cli.bench import bench_app
from neardup.eval.evaluate import LabelledData
from neardup.eval.suite import CONTRACT_KEYS, PeakMemory, resolve_methods, subsample
from neardup.io.read import read_records

HAS_MPL = importlib.util.find_spec("matplotlib") is not None


def _cli() -> typer.Typer:
    """The sub-app mounted the way the main CLI mounts it."""
    root = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    root.add_typer(bench_app, name="bench")

    @root.command()
    def version() -> None:  # a second command, so "bench" stays a sub-command
        typer.echo("0")

    return root


@pytest.fixture
def no_shared_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the shared data at an empty folder: --quick then uses the bundled example corpus (fast, fixed)."""
    monkeypatch.setenv("NEARDUP_SHARED_DATA", str(tmp_path / "no-shared-data"))
    monkeypatch.setenv("NEARDUP_BENCH_DIR", str(tmp_path / "bench-default"))
    return tmp_path


def test_bench_run_quick_end_to_end(no_shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from neardup.eval.peers import PEERS

    out = no_shared_data / "results"
    peers = [p for p in ("datasketch", "rensa") if importlib.util.find_spec(p)]
    methods = ["minhash", "ngram", "simhash", *peers]
    # a peer that is not installed is skipped with a note (RETSim is also too slow for this test)
    monkeypatch.setattr(PEERS["unisim-retsim"], "missing", lambda: "unisim-retsim: package 'unisim' is not installed")
    res = CliRunner().invoke(_cli(), ["bench", "run", "--quick", "--out", str(out), "--format", "json",
                                      "--methods", ",".join([*methods, "unisim-retsim"])])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)  # --format json prints one JSON object
    assert [s["method"] for s in summary["skipped"]] == ["unisim-retsim"]
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["method"] for r in rows] == methods and len(summary["rows"]) == len(rows)
    for r in rows:
        assert set(CONTRACT_KEYS) <= r.keys()
        assert r["set"] == "example-news"
        assert -1.0 <= r["ari"] <= 1.0 and 0.0 <= r["precision"] <= 1.0 and 0.0 <= r["recall"] <= 1.0
        assert r["ari"] > 0.5  # the example's planted copies are easy
        assert r["docs_per_second"] > 0 and r["peak_memory_mb"] is not None
        assert r["split_sizes"]["validation"] > 100 and r["split_sizes"]["test"] > 100
        assert "threshold" in r["params"]
    if HAS_MPL:
        report = (out / "report.html").read_text(encoding="utf-8")
        assert summary["report"] == str(out / "report.html")
        assert '<table id="results"' in report and report.count("<svg") == 3
        assert "unisim-retsim: package" in report
    else:  # the results stand without matplotlib; the report is skipped with a note
        assert summary["report"] is None and any("matplotlib" in n for n in summary["notes"])
    trials = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]
    assert {t["method"] for t in trials} == set(methods)


def test_bench_errors_are_one_line(no_shared_data: Path) -> None:
    res = CliRunner().invoke(_cli(), ["bench", "run", "--quick", "--methods", "minhash,nosuch",
                                      "--out", str(no_shared_data / "o")])
    assert res.exit_code == 2
    assert res.output.strip().count("\n") == 0 and "unknown method 'nosuch'" in res.output
    res = CliRunner().invoke(_cli(), ["bench", "run", "--sets-dir", str(no_shared_data / "empty")])
    assert res.exit_code == 2 and "bench make" in res.output
    res = CliRunner().invoke(_cli(), ["bench", "make", "--sources", "bbc,nope"])
    assert res.exit_code == 2 and "unknown source 'nope'" in res.output


def test_method_list_is_open(monkeypatch: pytest.MonkeyPatch) -> None:
    import neardup.methods as registry
    from neardup.methods.ngram import Ngram

    assert [m.kind for m in resolve_methods(["ngram", "rensa", "unisim-retsim"])] == ["neardup", "peer", "peer"]
    with pytest.raises(ConfigError, match="peers are datasketch"):
        resolve_methods(["hybridx"])
    # a method registered later (a new file in neardup/methods) is picked up without changes here
    monkeypatch.setitem(registry._REGISTRY, "hybridx", type("HybridX", (Ngram,), {"name": "hybridx"}))
    assert resolve_methods(["hybridx"])[0].kind == "neardup"


def test_subsample_keeps_whole_clusters() -> None:
    recs = [{"id": str(i), "text": "t", "cluster": f"c{i // 4}" if i < 40 else None} for i in range(60)]
    data = LabelledData(read_records(recs, label_field="cluster"), name="x")
    sub = subsample(data, 25, seed=1)
    assert len(sub.corpus) <= 25
    kept = [lab for lab in sub.corpus.labels if lab is not None]
    assert all(kept.count(lab) == 4 for lab in set(kept))
    assert subsample(data, 25, seed=1).corpus.ids == sub.corpus.ids
    assert subsample(data, 100).corpus is data.corpus
    # two presets of one source share labels: the same key keeps the same clusters in both
    other = LabelledData(read_records(recs, label_field="cluster"), name="y")
    assert subsample(other, 25, seed=1, key="src/test").corpus.ids == subsample(data, 25, seed=1, key="src/test").corpus.ids


def test_peak_memory_sees_numpy_allocations() -> None:
    import time

    with PeakMemory() as mem:
        a = np.ones(40 * 2**20 // 8)
        # the sampler thread polls every 2 ms; on a busy machine it may not run before a quick `del`, so hold
        # the array until it has been seen (or 10 s have passed: then the assertion below fails)
        deadline = time.monotonic() + 10
        while mem.read is not None and mem.peak - mem.base < 30 * 2**20 and time.monotonic() < deadline:
            time.sleep(0.005)
        del a
    assert mem.peak_mb is None or mem.peak_mb >= 30


def test_bench_writes_under_the_current_folder_by_default(no_shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --out or $NEARDUP_BENCH_DIR, `bench run` writes to ./neardup-bench (not a cache folder), and
    `bench report` re-renders from there: make, run and report share one default."""
    from neardup.eval.benchsets import bench_dir

    monkeypatch.delenv("NEARDUP_BENCH_DIR")
    work = no_shared_data / "here"
    work.mkdir()
    monkeypatch.chdir(work)
    assert bench_dir() == Path("neardup-bench")
    res = CliRunner().invoke(_cli(), ["bench", "run", "--quick", "--methods", "minhash", "--format", "json"])
    assert res.exit_code == 0, res.output
    assert (work / "neardup-bench" / "results.jsonl").exists() and (work / "neardup-bench" / "quick-sets").is_dir()
    if HAS_MPL:
        (work / "neardup-bench" / "report.html").unlink()
        res = CliRunner().invoke(_cli(), ["bench", "report"])
        assert res.exit_code == 0 and (work / "neardup-bench" / "report.html").exists()
