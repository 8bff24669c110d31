"""Outputs never destroy inputs or earlier results (issue 20, cases 4 and 8): an output that is an input
is refused, an existing file is replaced only with ``--overwrite`` (``overwrite=True``), and an output
folder that is a file or cannot be written is found before any work starts."""

import contextlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

import neardup
from neardup.cli import app
from neardup.io.write import OutputError, check_outputs

runner = CliRunner()
DOCS = [{"id": str(i), "text": t} for i, t in enumerate(
    ["the harbour bridge will be rebuilt next year says council", "the harbour bridge will be rebuilt next year, says council",
     "farmers protest against new limits on grain imports", "the museum reopens after a long restoration"])]


def _run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def src(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    return path


def test_keep_onto_the_input_is_refused_and_the_input_is_untouched(src, tmp_path):
    before = src.read_bytes()
    for extra in ([], ["--overwrite"]):
        res = _run("dedup", src, "-o", tmp_path / "out", "--keep", src, "-q", *extra)
        assert res.exit_code == 2, res.output
        assert "is an input" in res.stderr and "Traceback" not in res.output
        assert src.read_bytes() == before
    assert not (tmp_path / "out").exists()  # refused before any work


def test_an_existing_output_is_replaced_only_with_overwrite(src, tmp_path):
    out, kept = tmp_path / "out", tmp_path / "kept.jsonl"
    assert _run("dedup", src, "-o", out, "--keep", kept, "-q").exit_code == 0
    stamp = {p.name: p.stat().st_mtime_ns for p in (out / "summary.json", kept)}
    for args in (["-o", out], ["-o", tmp_path / "other", "--keep", kept]):
        res = _run("dedup", src, *args, "-q")
        assert res.exit_code == 2 and "--overwrite" in res.stderr, res.output
        assert "exists" in res.stderr
    assert {p.name: p.stat().st_mtime_ns for p in (out / "summary.json", kept)} == stamp
    assert not (tmp_path / "other").exists()
    res = _run("dedup", src, "-o", out, "--keep", kept, "-q", "--overwrite")
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("engine", ["memory", "local"])
def test_the_api_refuses_too_and_takes_overwrite(src, tmp_path, engine):
    out = tmp_path / "out"
    neardup.dedup(src, engine=engine, output=out)
    with pytest.raises(OutputError, match="overwrite"):
        neardup.dedup(src, engine=engine, output=out)
    neardup.dedup(src, engine=engine, output=out, overwrite=True)
    result = neardup.dedup(src, engine=engine)
    with pytest.raises(OutputError, match="is an input"):
        result.write_kept(src, overwrite=True)


def test_match_embed_and_noise_refuse_to_overwrite(src, tmp_path):
    out = tmp_path / "m"
    assert _run("match", src, src, "-o", out, "-q").exit_code == 0
    res = _run("match", src, src, "-o", out, "-q")
    assert res.exit_code == 2 and "--overwrite" in res.stderr
    assert _run("match", src, src, "-o", out, "-q", "--overwrite").exit_code == 0
    with pytest.raises(OutputError):
        neardup.match(src, src, out)
    noisy = tmp_path / "noisy.jsonl"
    noisy.write_text("keep me\n")
    res = _run("noise", src, "-o", noisy)
    assert res.exit_code == 2 and "--overwrite" in res.stderr and noisy.read_text() == "keep me\n"
    res = _run("noise", src, "-o", src, "--overwrite")
    assert res.exit_code == 2 and "is an input" in res.stderr
    assert _run("noise", src, "-o", noisy, "--overwrite").exit_code == 0
    vectors = tmp_path / "v.npy"
    vectors.write_bytes(b"x")
    res = _run("embed", src, "-o", vectors)
    assert res.exit_code == 2 and "--overwrite" in res.stderr and vectors.read_bytes() == b"x"


def test_an_output_folder_that_is_a_file_is_one_clear_line(src, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for args in (["-o", afile], ["-o", tmp_path / "out", "--keep", afile / "kept.jsonl"],
                 ["-o", afile / "sub"]):
        res = _run("dedup", src, *args, "-q")
        assert res.exit_code == 2, res.output
        assert "Traceback" not in res.output and "not a folder" in res.stderr, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1
    assert afile.read_text() == "x"


@contextlib.contextmanager
def _read_only(folder):
    """A folder nobody may write to: chmod for a user, the immutable attribute for root."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True, check=False).returncode != 0:
        pytest.skip("running as root and chattr +i is not available: no folder is read-only")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


def test_an_unwritable_output_or_keep_folder_is_found_before_the_run(src, tmp_path, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    ran = []
    monkeypatch.setattr("neardup.engine.local.LocalRun.run", lambda self: ran.append(1) or {})
    with _read_only(ro):
        for args in (["-o", ro / "out"], ["-o", ro], ["-o", tmp_path / "out", "--keep", ro / "kept.jsonl"]):
            res = _run("dedup", src, *args, "-q")
            assert res.exit_code == 2, res.output
            assert "not writable" in res.stderr and ".tmp" not in res.stderr, res.stderr
        with pytest.raises(OutputError, match="not writable"):
            check_outputs(files=[ro / "x.parquet"])
    assert ran == []  # no run started
    assert not (tmp_path / "out").exists()


# ---- issue 55: commands that write one target check it before any work; a folder of two runs is refused ----

def test_label_appends_only_to_a_label_file_and_starts_one_over_only_with_overwrite(src, tmp_path):
    """``label -o`` appends to a pair-label file; another existing file is refused (it once crashed on it or would
    have been appended to); ``--overwrite`` starts the file afresh, replaced by the first answer."""
    other = tmp_path / "test-set.jsonl"
    other.write_text(src.read_text())
    res = _run("label", src, "-o", other, "--pairs", "2")
    assert res.exit_code == 2 and "not a pair-label file" in res.stderr and "--overwrite" in res.stderr, res.output
    assert other.read_text() == src.read_text()
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"a": "x", "b": "y", "label": 1}) + "\n")
    res = runner.invoke(app, ["label", str(src), "-o", str(labels), "--pairs", "2", "--overwrite"], input="q\n")
    assert res.exit_code == 0, res.output
    assert json.loads(labels.read_text()) == {"a": "x", "b": "y", "label": 1}  # nothing answered: left as it was
    res = runner.invoke(app, ["label", str(src), "-o", str(labels), "--pairs", "2", "--overwrite"], input="y\nq\n")
    assert res.exit_code == 0, res.output
    recs = [json.loads(line) for line in labels.read_text().splitlines()]
    assert len(recs) == 1 and recs[0]["label"] == 1 and recs[0]["a"] != "x"


def test_tune_checks_its_trials_file_before_the_search(example_path, tmp_path, monkeypatch):
    trials = tmp_path / "trials.jsonl"
    trials.write_text("mine\n")
    searched = []
    monkeypatch.setattr("neardup.eval.search.tune_config", lambda *a, **k: searched.append(1))
    res = _run("tune", example_path, example_path, "--thresholds", "0.5", "--trials-out", trials, "-q")
    assert res.exit_code == 2 and "exists: give --overwrite" in res.stderr, res.output
    res = _run("tune", example_path, example_path, "--thresholds", "0.5", "--trials-out", example_path,
               "--overwrite", "-q")
    assert res.exit_code == 2 and "is an input" in res.stderr, res.output
    assert trials.read_text() == "mine\n" and searched == []


def test_train_writes_into_an_existing_folder_only_with_overwrite_and_never_over_its_data(src, tmp_path, monkeypatch):
    trained = []
    monkeypatch.setattr("neardup.train.train_biencoder", lambda cfg, log=None: trained.append(cfg.out) or {})
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "config.json").write_text("{}")
    args = ("train", "biencoder", "--data", src, "--synthetic", "-q")
    res = _run(*args, "--out", busy)
    assert res.exit_code == 2 and "exists and is not empty" in res.stderr and "--overwrite" in res.stderr, res.output
    res = _run(*args, "--out", tmp_path, "--overwrite")  # the folder of its --data
    assert res.exit_code == 2 and "holds the input" in res.stderr, res.output
    assert trained == [] and (busy / "config.json").read_text() == "{}"
    _run(*args, "--out", busy, "--overwrite")
    _run(*args, "--out", tmp_path / "new")
    assert trained == [str(busy), str(tmp_path / "new")]


def _run_ids(out):
    import pyarrow.parquet as pq

    ids = {p.name: (pq.read_schema(p).metadata or {}).get(b"neardup.run_id") for p in sorted(out.glob("*.parquet"))}
    ids = {name: value.decode() if value else None for name, value in ids.items()}
    return {**ids, "summary.json": json.loads((out / "summary.json").read_text()).get("run_id")}


@pytest.mark.parametrize("engine", ["memory", "local"])
def test_every_file_of_a_run_carries_its_run_id_and_a_folder_of_two_runs_is_refused(src, tmp_path, engine):
    """Issue 55, case 3: an ``--overwrite`` stopped after ``clusters.parquet`` was replaced left new clusters beside
    the old pairs and summary, and every reader took them. Each file of a run carries its id; a folder whose files
    disagree is refused by ``DedupResult.load``, the result read lazily and ``neardup show``, with one line."""
    from neardup.results import DedupResult

    old, new = tmp_path / "old", tmp_path / "new"
    ref = neardup.dedup(src, engine=engine, output=old, threshold=0.9)
    neardup.dedup(src, engine=engine, output=new, threshold=0.3)
    assert DedupResult.load(old).groups() == ref.groups()  # a folder of one run loads
    for name in ("clusters.parquet", "pairs.parquet", "evidence.parquet"):
        mixed = tmp_path / f"mixed-{name}"
        shutil.copytree(old, mixed)
        shutil.copyfile(new / name, mixed / name)
        with pytest.raises(ValueError, match=f"different runs: .*{name}.*--overwrite"):  # a MixedRunError
            DedupResult.load(mixed)
        res = _run("show", mixed)
        assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1, res.output
        assert "holds files from different runs" in res.stderr and str(mixed) in res.stderr
    ids = _run_ids(old)
    assert set(ids) == {"clusters.parquet", "pairs.parquet", "scores.parquet", "evidence.parquet", "summary.json"}
    assert len(set(ids.values())) == 1 and None not in ids.values() and ids != _run_ids(new)
    lazy = neardup.dedup(src, engine=engine, output=tmp_path / "lazy", threshold=0.3)
    shutil.copyfile(old / "clusters.parquet", tmp_path / "lazy" / "clusters.parquet")  # replaced under it
    if engine == "local":  # read from the folder when first asked for
        with pytest.raises(ValueError, match="different runs"):
            lazy.groups()


@pytest.mark.parametrize("engine", ["memory", "local"])
def test_an_overwrite_stopped_before_its_summary_leaves_no_summary_and_nothing_loads(src, tmp_path, engine,
                                                                                     monkeypatch):
    """The old summary.json is removed before a run replaces any file, and the new one is written last: a run
    stopped in between leaves a folder without one, which ``DedupResult.load`` refuses."""
    from neardup.results import DedupResult

    out = tmp_path / "out"
    neardup.dedup(src, engine=engine, output=out, threshold=0.9)
    import neardup.engine.sharded as sharded
    import neardup.io.write as write

    def stopped(path, *args, **kwargs):
        if Path(path).name == "pairs.parquet":
            raise KeyboardInterrupt
        return real(path, *args, **kwargs)

    real = write.write_table
    monkeypatch.setattr(write, "write_table", stopped)
    monkeypatch.setattr(sharded, "write_table", stopped)
    with pytest.raises(KeyboardInterrupt):
        neardup.dedup(src, engine=engine, output=out, threshold=0.3, overwrite=True)
    assert not (out / "summary.json").exists()
    with pytest.raises(FileNotFoundError, match="did not finish"):
        DedupResult.load(out)
    res = _run("show", out)
    assert res.exit_code == 2 and "summary.json" in res.stderr


def test_a_folder_written_before_run_ids_still_loads(src, tmp_path):
    """Folders of older versions carry no run id anywhere: they load as before."""
    import pyarrow.parquet as pq

    from neardup.results import DedupResult

    out = tmp_path / "out"
    ref = neardup.dedup(src, output=out, threshold=0.5)
    for path in out.glob("*.parquet"):
        table = pq.read_table(path)
        pq.write_table(table.replace_schema_metadata(None), path)
    summary = json.loads((out / "summary.json").read_text())
    summary.pop("run_id")
    (out / "summary.json").write_text(json.dumps(summary))
    assert _run_ids(out) == dict.fromkeys(_run_ids(out))
    loaded = DedupResult.load(out)
    assert loaded.groups() == ref.groups() and len(loaded.evidence()) == len(ref.evidence())
    assert _run("show", out).exit_code == 0


def test_match_tags_its_files_with_one_run_id(src, tmp_path):
    neardup.match(src, src, tmp_path / "m")
    ids = _run_ids(tmp_path / "m")
    assert set(ids) == {"matches.parquet", "summary.json"} and len(set(ids.values())) == 1 and ids["summary.json"]
