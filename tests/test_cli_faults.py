"""The command line on bad input (issue 20): skips counted on stderr, a lone surrogate stops a run
before anything is written, --ngram 0 names the right parameter, tune warns on a validation set
without a true pair."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from neardup.cli import app

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, [str(a) for a in args])


GOOD = ['{"id": "a", "text": "the harbour bridge will be rebuilt next year says council"}',
        '{"id": "b", "text": "the harbour bridge will be rebuilt next year, says council"}',
        '{"id": "c", "text": "farmers protest against new limits on grain imports"}']


@pytest.mark.parametrize("engine", ["local", "memory"])
def test_skip_mode_skips_corrupt_lines_lists_them_and_counts_them_on_stderr(tmp_path, engine):
    src = tmp_path / "in.jsonl"
    src.write_bytes(("\n".join([GOOD[0], "not json", GOOD[1]]) + "\n").encode() + b'{"id": "x", "text": "\xff"}\n'
                    + (GOOD[2] + "\n[1]\n").encode())
    res = _run("dedup", src, "-o", tmp_path / "o", "--engine", engine, "-q")
    assert res.exit_code == 2 and f"{src}, line 2: not valid JSON" in res.stderr
    kept = tmp_path / "kept.jsonl"
    res = _run("dedup", src, "-o", tmp_path / "o", "--engine", engine, "--on-error", "skip", "--keep", kept, "-q")
    assert res.exit_code == 0, res.output
    # the line with a byte that is not UTF-8 is read with it replaced (U+FFFD, issue 58), not skipped
    skipped = f"neardup: skipped 2 bad records (see {tmp_path / 'o' / 'summary.json'})"
    assert res.stderr.splitlines()[0] == skipped and "4 documents" in res.stderr.splitlines()[1]
    res = _run("dedup", src, "-o", tmp_path / "o", "--engine", engine, "--on-error", "skip", "--keep", kept,
               "--silent", "--overwrite")
    assert res.exit_code == 0 and res.stderr.strip() == skipped  # lost input is said even when silent
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["n_docs"] == 4 and summary["n_skipped_records"] == 2
    assert [(s["file"], s["line"]) for s in summary["skipped_records"]] == [(str(src), 2), (str(src), 6)]
    assert all(s["reason"] and "error" in s for s in summary["skipped_records"])
    lines = kept.read_text(encoding="utf-8").splitlines()  # a and b are one cluster; the corrupt lines passed over
    assert len(lines) == 3 and json.loads(lines[1]) == {"id": "x", "text": "\ufffd"}  # written anew, as UTF-8


def test_online_load_skips_corrupt_lines_and_counts_them_on_stderr(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join([GOOD[0], "{broken", GOOD[1], GOOD[2]]) + "\n")
    store = f"sqlite:///{tmp_path / 's.db'}"
    res = _run("online", "load", src, "--store", store, "--workers", "0", "-q")
    assert res.exit_code == 2 and f"{src}, line 2: not valid JSON" in res.stderr
    res = _run("online", "load", src, "--store", store, "--workers", "0", "--on-error", "skip", "-q", "-f", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["added"] == 3 and out["skipped"] == 1 and out["skipped_records"][0]["line"] == 2
    assert res.stderr.strip().startswith("neardup: skipped 1 bad record ")


@pytest.mark.parametrize("engine", ["local", "memory"])
@pytest.mark.parametrize("field", ["id", "text"])
def test_a_lone_surrogate_in_a_file_stops_the_run_before_anything_is_written(tmp_path, engine, field):
    src = tmp_path / "in.jsonl"
    bad = json.loads(GOOD[2])
    bad[field] += "\ud800"
    src.write_text("\n".join([GOOD[0], GOOD[1], json.dumps(bad)]) + "\n")
    out, kept = tmp_path / "o", tmp_path / "kept.jsonl"
    res = _run("dedup", src, "-o", out, "--keep", kept, "--engine", engine, "-q")
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith(f"neardup: error: {src}, line 3, field '{field}': lone surrogate"), res.stderr
    assert not out.exists() and not kept.exists()  # no stray .neardup-work, no outputs


def test_keep_copies_a_record_whose_other_fields_hold_a_lone_surrogate(tmp_path):
    src = tmp_path / "in.jsonl"
    rec = {**json.loads(GOOD[2]), "note": "odd \udc80"}
    src.write_text("\n".join([GOOD[0], GOOD[1], json.dumps(rec)]) + "\n")
    kept = tmp_path / "kept.jsonl"
    res = _run("dedup", src, "-o", tmp_path / "o", "--keep", kept, "-q")
    assert res.exit_code == 0, res.output
    assert json.loads(kept.read_text().splitlines()[-1]) == rec  # copied as the input had it (escaped)


def _disk_full(monkeypatch, where):
    """Simulate a full disk (ENOSPC) at one place: the work directory (a shard's ids written, or a join's append,
    whose error names no file), the output (pairs.parquet, after clusters.parquet), or the --keep file."""
    import errno
    import io

    import pyarrow.parquet as pq

    full = OSError(errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space left on device")
    if where in ("work", "output"):
        real, prefix = pq.write_table, ".000000.ids.parquet." if where == "work" else ".pairs.parquet."

        def write_table(table, dest, *args, **kwargs):
            if Path(str(dest)).name.startswith(prefix):
                raise full
            return real(table, dest, *args, **kwargs)

        monkeypatch.setattr(pq, "write_table", write_table)
    elif where == "join":
        import neardup.engine.sharded as sharded

        monkeypatch.setattr(sharded, "append_array_bytes", lambda *args, **kwargs: (_ for _ in ()).throw(full))
    else:
        import neardup.io.keep as keep

        class Full(io.FileIO):
            def write(self, data):
                raise full

        monkeypatch.setattr(keep, "open", lambda path, mode="r", *a, **k: Full(path, "w"), raising=False)


@pytest.mark.parametrize("where, engine", [("work", "local"), ("join", "local"), ("output", "local"),
                                           ("output", "memory"), ("keep", "local"), ("keep", "memory")])
def test_a_full_disk_is_one_line_naming_the_path_and_leaves_no_partial_outputs(example_path, tmp_path, monkeypatch,
                                                                                where, engine):
    """Issue 55: a full disk under the work directory, the output or --keep was a 94-line traceback, and on the
    output it left clusters.parquet and pairs.parquet without summary.json."""
    out, kept = tmp_path / "o", tmp_path / "kept.jsonl"
    _disk_full(monkeypatch, where)
    res = _run("dedup", example_path, "-o", out, "--keep", kept, "--engine", engine, "-q")
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.output  # no traceback
    path = {"work": out / ".neardup-work" / "shards" / "000000.ids.parquet", "join": out / ".neardup-work",
            "output": out / "pairs.parquet", "keep": kept}[where]
    assert res.stderr == f"neardup: error: {path}: no space left on device\n"
    assert not kept.exists()
    names = {p.name for p in out.iterdir()} if out.exists() else set()
    if where == "keep":  # the run's outputs are complete; only the keep file is missing
        assert {"clusters.parquet", "pairs.parquet", "summary.json"} <= names
    else:  # nothing partial: no output file at all (the work directory stays, for --resume)
        assert names <= {".neardup-work"}
    monkeypatch.undo()
    res = _run("dedup", example_path, "-o", out, "--keep", kept, "--engine", engine, "-q", "--overwrite")
    assert res.exit_code == 0, res.output
    assert (out / "summary.json").exists() and kept.exists()


def test_a_second_run_into_the_same_output_folder_is_refused_at_once(example_path, tmp_path):
    """Issue 55: two runs into one output folder at once both crashed with tracebacks. The first holds the folder's
    lock (.neardup.lock) until it ends; the second is refused at once, in one line naming the folder (exit 2)."""
    import subprocess
    import sys
    import time

    out, started, go = tmp_path / "o", tmp_path / "started", tmp_path / "go"
    first = subprocess.Popen([sys.executable, "-c", (
        "import pathlib, sys, time\n"
        "import neardup.engine.memory as memory\n"
        "real, started, go = memory.run_memory, pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])\n"
        "def held(*args, **kwargs):\n"
        "    started.touch()\n"
        "    while not go.exists():\n"
        "        time.sleep(0.02)\n"
        "    return real(*args, **kwargs)\n"
        "memory.run_memory = held\n"
        "sys.argv = ['neardup'] + sys.argv[3:]\n"
        "from neardup.cli import main\n"
        "main()\n"), str(started), str(go), "dedup", str(example_path), "-o", str(out), "-q"],
        stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 60
        while not started.exists() and first.poll() is None and time.time() < deadline:
            time.sleep(0.02)
        assert started.exists()
        for extra in ([], ["--overwrite"], ["--engine", "local"]):
            second = subprocess.run([sys.executable, "-m", "neardup", "dedup", str(example_path), "-o", str(out), "-q",
                                     *extra], capture_output=True, text=True, timeout=60)
            assert second.returncode == 2 and second.stderr == (
                f"neardup: error: {out}: another neardup run is writing to this output folder; wait for it to end or "
                "give another one\n"), second.stderr
        assert (out / ".neardup.lock").exists()
        go.touch()
        assert first.wait(timeout=120) == 0, first.stderr.read()
    finally:
        go.touch()
        first.kill()
        first.wait()
    assert json.loads((out / "summary.json").read_text())["n_docs"] == 300
    assert not (out / ".neardup.lock").exists()  # present only while a run holds it


def test_the_output_lock_is_no_foreign_file_and_a_refused_run_writes_none(example_path, tmp_path):
    out = tmp_path / "o"
    (out).mkdir()
    (out / ".neardup.lock").write_text("")  # left by a run killed with SIGKILL: no one holds it
    assert _run("dedup", example_path, "-o", out, "-q").exit_code == 0
    assert not (out / ".neardup.lock").exists()
    before = sorted(p.name for p in out.iterdir())
    res = _run("dedup", example_path, "-o", out, "-q")  # refused before it starts: outputs exist
    assert res.exit_code == 2 and "exists: give --overwrite" in res.stderr
    assert sorted(p.name for p in out.iterdir()) == before
    res = _run("dedup", tmp_path / "missing.jsonl", "-o", tmp_path / "new", "-q")
    assert res.exit_code == 2 and not (tmp_path / "new").exists()


@pytest.mark.parametrize("method", ["minhash", "simhash", "ngram"])
def test_ngram_0_names_the_ngram_setting(example_path, tmp_path, method):
    res = _run("dedup", example_path, "-o", tmp_path / "o", "--method", method, "--ngram", "0", "-q")
    assert res.exit_code == 2
    assert res.stderr.startswith("neardup: error: ngram must be an integer in 1..64, got 0")
    assert "simhash" not in res.stderr


def test_tune_warns_when_the_validation_set_has_no_true_pair(example_path, tmp_path):
    val = tmp_path / "val.jsonl"
    val.write_text("".join(json.dumps({"id": f"v{i}", "text": t, "cluster": f"c{i}"}) + "\n" for i, t in enumerate(
        ["one story about a harbour", "another about grain", "a third about a museum"])))
    res = _run("tune", val, example_path, "--format", "json", "-q", "--thresholds", "0.3,0.5", "--word-ngrams",
               "--cluster", "components")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert len(out["warnings"]) == 1 and "no true duplicate pair" in out["warnings"][0]
    assert res.stderr.strip() == f"neardup: warning: {out['warnings'][0]}"
    res = _run("tune", example_path, example_path, "--format", "json", "-q", "--thresholds", "0.5", "--word-ngrams",
               "--cluster", "components")
    # enough true pairs: the one warning left is that the test set is the validation set (issue 58)
    [warning] = json.loads(res.stdout)["warnings"]
    assert warning.startswith("the test set is the validation set") and res.stderr.count("warning") == 1
