"""The work directory is neardup's own (issue 55, case 1): ``--work-dir`` once deleted whatever the folder held
(the input, an earlier run's results, the output folder itself). A folder neardup did not make and that is not
empty, the output folder, one inside or around it, and one holding an input are refused before any work with one
line; a folder neardup made is reused and resumed; neardup removes only what it wrote there, and the folder
itself only where it made it."""

import json
import shutil

import pytest
from typer.testing import CliRunner

from neardup.cli import app
from neardup.engine import workdir
from neardup.engine.workdir import WorkDir, WorkDirError

from ..test_outputs import DOCS

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, [str(a) for a in args])


def _tree(folder):
    """Every file under ``folder`` with its bytes (what must be left as it was)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def src(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    return path


def _refused(res, what):
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "--work-dir" in res.stderr and what in res.stderr, res.stderr


def test_a_work_dir_holding_the_input_and_other_files_is_refused_and_left_as_it_was(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "in.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    (data / "notes.txt").write_text("my notes\n")
    before = _tree(data)
    res = _run("dedup", data / "in.jsonl", "-o", tmp_path / "out", "--work-dir", data, "--engine", "local", "-q")
    _refused(res, "holds the input")
    assert _tree(data) == before and not (tmp_path / "out").exists()


def test_a_work_dir_holding_an_earlier_runs_results_is_refused_and_they_are_kept(src, tmp_path):
    prev = tmp_path / "prev"
    assert _run("dedup", src, "-o", prev, "-q").exit_code == 0
    before = _tree(prev)
    res = _run("dedup", src, "-o", tmp_path / "out", "--work-dir", prev, "--engine", "local", "-q")
    _refused(res, "files neardup did not write")
    assert _tree(prev) == before and not (tmp_path / "out").exists()


@pytest.mark.parametrize("case", ["same", "inside", "around"])
def test_a_work_dir_that_is_inside_or_around_the_output_folder_is_refused(src, tmp_path, case):
    out, work = {"same": (tmp_path / "same", tmp_path / "same"),
                 "inside": (tmp_path / "out", tmp_path / "out" / "work"),
                 "around": (tmp_path / "top" / "out", tmp_path / "top")}[case]
    res = _run("dedup", src, "-o", out, "--work-dir", work, "--engine", "local", "-q")
    _refused(res, {"same": "is the output folder", "inside": "is inside the output folder",
                   "around": "contains the output folder"}[case])
    assert not out.exists() and not work.exists()  # refused before any work: nothing made
    assert src.exists()


def test_an_empty_work_dir_is_used_and_kept_and_a_new_one_is_removed(src, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    res = _run("dedup", src, "-o", tmp_path / "a", "--work-dir", empty, "--engine", "local", "-q")
    assert res.exit_code == 0, res.output
    assert empty.is_dir() and not any(empty.iterdir())  # the user's folder stays, emptied of neardup's files
    new = tmp_path / "new" / "work"
    res = _run("dedup", src, "-o", tmp_path / "b", "--work-dir", new, "--engine", "local", "-q")
    assert res.exit_code == 0, res.output
    assert not new.exists()  # neardup made it: removed with its content


def test_a_work_dir_neardup_made_is_reused_and_resumed(src, tmp_path):
    work = tmp_path / "work"
    args = ("dedup", src, "--work-dir", work, "--engine", "local", "-q")
    assert _run(*args, "-o", tmp_path / "a", "--keep-work").exit_code == 0
    assert (work / workdir.MARKER).is_file() and (work / "manifest.json").is_file()
    res = _run(*args, "-o", tmp_path / "a", "--resume")
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "a" / "summary.json").read_text())["engine"]["resumed"] is True
    assert not work.exists()  # made by neardup: removed once the run is complete
    older = tmp_path / "older"  # an earlier version's work directory: a manifest, no marker
    (older / "shards").mkdir(parents=True)
    (older / "manifest.json").write_text(json.dumps({"input": {}, "config": {}, "batch_docs": 1}))
    res = _run("dedup", src, "-o", tmp_path / "b", "--work-dir", older, "--engine", "local", "-q")
    assert res.exit_code == 0, res.output


def test_clean_removes_only_a_claimed_folders_content_and_never_a_foreign_one(tmp_path):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "mine.txt").write_text("keep")
    WorkDir(foreign).clean()
    assert (foreign / "mine.txt").read_text() == "keep"
    with pytest.raises(WorkDirError, match="did not write"):
        WorkDir(foreign).prepare({"input": {}, "config": {}, "batch_docs": 1}, resume=False)
    assert _tree(foreign) == {"mine.txt": b"keep"}
    given = tmp_path / "given"
    given.mkdir()
    wd = WorkDir(given)
    wd.prepare({"input": {}, "config": {}, "batch_docs": 1}, resume=False)
    (wd.shards / "000000.done").write_text("1 0 0\n")
    wd.clean()
    assert given.is_dir() and not any(given.iterdir())


def test_the_api_refuses_such_a_work_dir_too(src, tmp_path):
    import neardup
    from neardup.config import EngineConfig

    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "x").write_text("x")
    with pytest.raises(WorkDirError, match="did not write"):
        neardup.dedup(src, engine=EngineConfig(name="local", work_dir=str(keep)), output=tmp_path / "out")
    with pytest.raises(WorkDirError, match="holds the input"):
        workdir.check_work_dir(tmp_path, tmp_path.parent / f"{tmp_path.name}-out", [src])
    assert (keep / "x").read_text() == "x" and src.exists()
    shutil.rmtree(keep)
