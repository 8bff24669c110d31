"""The command line on bad input (issue 20): skips counted on stderr, a lone surrogate stops a run
before anything is written, --ngram 0 names the right parameter, tune warns on a validation set
without a true pair."""

import json

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
    skipped = f"neardup: skipped 3 bad records (see {tmp_path / 'o' / 'summary.json'})"
    assert res.stderr.splitlines()[0] == skipped and "3 documents" in res.stderr.splitlines()[1]
    res = _run("dedup", src, "-o", tmp_path / "o", "--engine", engine, "--on-error", "skip", "--keep", kept,
               "--silent", "--overwrite")
    assert res.exit_code == 0 and res.stderr.strip() == skipped  # lost input is said even when silent
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["n_docs"] == 3 and summary["n_skipped_records"] == 3
    assert [(s["file"], s["line"]) for s in summary["skipped_records"]] == [(str(src), 2), (str(src), 4), (str(src), 6)]
    assert all(s["reason"] and "error" in s for s in summary["skipped_records"])
    assert len(kept.read_text().splitlines()) == 2  # a and b are one cluster; the corrupt lines are passed over


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
    assert json.loads(res.stdout)["warnings"] == [] and "warning" not in res.stderr
