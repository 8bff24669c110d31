"""The command line starts light: ``import neardup``, ``neardup --help`` and every ``neardup COMMAND --help``
import neither NumPy nor PyArrow (nor the other libraries only a run needs), while every public name of the
package still resolves. Checked in fresh interpreters (no timings: what is imported, not how long it takes)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import neardup

#: Libraries only a run needs: none may be imported to start the command line or print its help.
HEAVY = ("numpy", "pyarrow", "pandas", "igraph", "leidenalg", "xxhash", "tqdm", "rensa", "fsspec", "torch",
         "onnxruntime", "sentence_transformers", "faiss", "usearch", "ray")


def _python(*args: str) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` importing the same neardup as this test process."""
    src = str(Path(neardup.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=120)


def _loaded(code: str) -> list[str]:
    """The modules loaded after running ``code`` in a fresh interpreter."""
    proc = _python("-c", code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def _heavy(modules: list[str]) -> list[str]:
    return sorted({m.split(".")[0] for m in modules} & set(HEAVY))


def test_import_neardup_loads_only_the_package_module():
    modules = _loaded("import neardup; neardup.__version__, neardup.__all__, dir(neardup)")
    assert [m for m in modules if m.startswith("neardup")] == ["neardup"]
    assert _heavy(modules) == []
    assert "typer" not in modules and "rich" not in modules


def test_python_m_neardup_help_imports_no_heavy_library():
    proc = _python("-X", "importtime", "-m", "neardup", "--help")
    assert proc.returncode == 0, proc.stderr
    assert "Usage" in proc.stdout and "dedup" in proc.stdout
    imported = [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()
                if line.startswith("import time:") and not line.rstrip().endswith("imported package")]
    assert "neardup.cli" in imported
    assert _heavy(imported) == []
    # Click's plain help, not Typer's Rich panels (importing and drawing those took 0.13-0.18 s of each --help)
    assert not any(m.split(".")[0] in ("rich", "markdown_it") for m in imported)
    assert "╭" not in proc.stdout


def test_a_usage_error_is_one_plain_line_on_stderr(tmp_path):
    """A mistyped command line (an option missing or unknown) exits 2 with Click's ``Error: ...`` line, no
    panel drawn around it, and imports no Rich either."""
    example = Path(__file__).resolve().parents[1] / "examples" / "news.jsonl"
    for args, message in [([str(example)], "Error: Missing option '--output' / '-o'."),
                          ([str(example), "-o", str(tmp_path / "o"), "--no-such-option"],
                           "Error: No such option: --no-such-option")]:
        proc = _python("-X", "importtime", "-m", "neardup", "dedup", *args)
        assert proc.returncode == 2
        assert message in proc.stderr and "Try 'neardup dedup --help' for help." in proc.stderr
        assert "╭" not in proc.stderr and "rich" not in {line.rsplit("|", 1)[-1].strip().split(".")[0]
                                                          for line in proc.stderr.splitlines()
                                                          if line.startswith("import time:")}
        assert not (tmp_path / "o").exists()


def test_every_command_help_imports_no_heavy_library():
    """``--help`` of every command and sub-command (found by walking the command tree), and ``--version``."""
    code = """
import typer.main
from typer.testing import CliRunner

from neardup.cli import app

runner = CliRunner()
paths, todo = [], [((), typer.main.get_command(app))]
while todo:
    path, cmd = todo.pop()
    paths.append(path)
    todo += [((*path, name), sub) for name, sub in getattr(cmd, "commands", {}).items()]
for args in [*([*path, "--help"] for path in paths), ["--version"]]:
    res = runner.invoke(app, args)
    assert res.exit_code == 0 and res.output, (args, res.output)
assert len(paths) > 15, paths
"""
    modules = _loaded(code)
    assert "neardup.cli.dedup" in modules and "neardup.cli.train" in modules
    assert _heavy(modules) == [] and "rich" not in modules


def test_a_small_dedup_loads_no_validation_library(tmp_path):
    """``neardup dedup`` on the bundled example loads no pydantic: Typer 0.29 builds a pydantic validator for
    each of the command's ~40 options on every run (about 0.1 s of every command: ``dedup --help`` 0.30 vs
    0.21 s, docs/speed.md, "Start-up"), hence neardup's ``typer<0.29``. The run itself is checked too."""
    example = Path(__file__).resolve().parents[1] / "examples" / "news.jsonl"
    proc = _python("-X", "importtime", "-m", "neardup", "dedup", str(example), "-o", str(tmp_path / "o"), "-q")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "o" / "clusters.parquet").exists() and "300 documents" in proc.stderr
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in proc.stderr.splitlines()
                if line.startswith("import time:")}
    assert {"neardup", "numpy", "pyarrow"} <= imported
    assert "pydantic" not in imported and "pydantic_core" not in imported
    assert "tqdm" not in imported  # --quiet: no bar, so no tqdm (neardup.progress)


def test_a_small_dedup_imports_no_pandas_where_it_is_installed(tmp_path):
    """PyArrow imports pandas, where installed, on a process's first conversion of NumPy or Python objects
    (0.15-0.3 s, 0.9 s from a cold disk: more than the rest of a small run's start-up). The in-memory run's
    tables (clusters, pairs, evidence) are built from buffers (``neardup.io.arrow``), so the README's run, with
    ``--keep``, imports none; and its tables are those PyArrow would make (``tests/io/test_arrow.py``)."""
    pytest.importorskip("pandas")
    example = Path(__file__).resolve().parents[1] / "examples" / "news.jsonl"
    out = tmp_path / "o"
    proc = _python("-X", "importtime", "-m", "neardup", "dedup", str(example), "-o", str(out), "-q",
                   "--keep", str(out / "kept.jsonl"))
    assert proc.returncode == 0, proc.stderr
    assert (out / "evidence.parquet").exists() and (out / "kept.jsonl").exists()
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in proc.stderr.splitlines()
                if line.startswith("import time:")}
    assert "pyarrow" in imported and "pandas" not in imported


def test_a_run_that_shows_progress_draws_tqdm_bars(tmp_path):
    """The other side of the quiet run above: without ``--quiet`` the stages draw tqdm bars on stderr."""
    example = Path(__file__).resolve().parents[1] / "examples" / "news.jsonl"
    code = ("import sys, neardup; neardup.dedup(sys.argv[1], engine='local', output=sys.argv[2], progress=True); "
            "print('tqdm' in sys.modules)")
    proc = _python("-c", code, str(example), str(tmp_path / "o"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True"]
    assert "reading + representing" in proc.stderr and "doc" in proc.stderr


def test_every_public_name_still_resolves():
    names = _loaded("import neardup\nfor n in neardup.__all__: getattr(neardup, n)")
    assert "neardup.api" in names and "neardup.config" in names
    namespace: dict[str, object] = {}
    exec("from neardup import *", namespace)
    assert set(neardup.__all__) <= set(namespace)
    api, config, read, results = map(importlib.import_module, ("neardup.api", "neardup.config", "neardup.io.read",
                                                               "neardup.results"))
    assert neardup.dedup is api.dedup and neardup.match is api.match
    assert neardup.DedupConfig is config.DedupConfig and neardup.ConfigError is config.ConfigError
    assert neardup.read_corpus is read.read_corpus and neardup.DedupResult is results.DedupResult
    assert set(neardup.__all__) <= set(dir(neardup)) and "__version__" in dir(neardup)
    assert isinstance(neardup.__version__, str)


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        neardup.no_such_name  # noqa: B018


def test_a_command_runs_from_a_tree_of_itself_alone():
    """``neardup NAME ...`` builds only NAME (``neardup.cli.main``): its help is the same as in the whole tree,
    and the other commands' modules are not even imported."""
    from typer.testing import CliRunner

    from neardup.cli import COMMANDS, app, build_app

    runner = CliRunner()
    for name in COMMANDS:
        alone = runner.invoke(build_app(name), [name, "--help"], prog_name="neardup")
        whole = runner.invoke(app, [name, "--help"], prog_name="neardup")
        assert alone.exit_code == whole.exit_code == 0, name
        assert alone.output == whole.output and f"neardup {name}" in alone.output, name
    loaded = set(_loaded("from neardup.cli import main\ntry:\n    main(['dedup', '--help'])\nexcept SystemExit as e:\n"
                         "    assert e.code == 0, e"))
    assert "neardup.cli.dedup" in loaded
    assert not loaded & {"neardup.cli.train", "neardup.cli.online", "neardup.cli.evaluate", "neardup.cli.bench"}


def test_show_and_keep_of_a_run_import_no_pandas_where_it_is_installed(tmp_path):
    """``neardup show OUTDIR`` and ``neardup dedup --keep`` read a run's Parquet files through the file's own reader
    and its columns from their buffers (``neardup.io.parquet``, ``neardup.io.arrow.numpy_of``):
    ``pyarrow.parquet.read_table`` and ``to_numpy`` import pandas first (0.35 s of a 0.7 s ``show``)."""
    pytest.importorskip("pandas")
    example = Path(__file__).resolve().parents[1] / "examples" / "news.jsonl"
    out = tmp_path / "o"
    assert _python("-m", "neardup", "dedup", str(example), "-o", str(out), "-q").returncode == 0
    proc = _python("-X", "importtime", "-m", "neardup", "show", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "300 documents, 52 duplicate clusters" in proc.stdout and "largest clusters" in proc.stdout
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in proc.stderr.splitlines()
                if line.startswith("import time:")}
    assert "pyarrow" in imported and "pandas" not in imported
    code = (f"from neardup.io.keep import kept_ids; import sys; ids = kept_ids({str(out / 'clusters.parquet')!r}); "
            "print(len(ids), 'pandas' in sys.modules)")
    assert _python("-c", code).stdout.split() == ["230", "False"]
