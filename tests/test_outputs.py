"""Outputs never destroy inputs or earlier results (issue 20, cases 4 and 8): an output that is an input
is refused, an existing file is replaced only with ``--overwrite`` (``overwrite=True``), and an output
folder that is a file or cannot be written is found before any work starts."""

import contextlib
import json
import os
import subprocess

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
