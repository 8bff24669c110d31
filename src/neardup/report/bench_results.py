"""The results folder of a benchmark run: its file names, and reading it back.

Owns the layout that :func:`neardup.eval.suite.run_suite` writes and :mod:`neardup.report.html` reads (here, so
that the report imports nothing from :mod:`neardup.eval`); must not run methods or render anything.

Files: ``results.jsonl`` (one row per method x set), ``trials.jsonl`` (every validation trial),
``sets.json`` (the sets' sizes and statistics) and ``run.json`` (settings, notes, machine).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from neardup.io.read import read_json, read_jsonl

__all__ = ["RESULTS_FILE", "RUN_FILE", "SETS_FILE", "TRIALS_FILE", "load_results"]

RESULTS_FILE = "results.jsonl"
TRIALS_FILE = "trials.jsonl"
SETS_FILE = "sets.json"
RUN_FILE = "run.json"


def load_results(out: str | os.PathLike[str]
                 ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """``results.jsonl`` rows, ``trials.jsonl`` rows, ``sets.json`` and ``run.json`` of a results folder
    (a missing file reads as empty; a broken one is an error naming file and line).

    >>> import tempfile; load_results(tempfile.mkdtemp())
    ([], [], {}, {})
    """
    out = Path(out)
    rows = read_jsonl(out / RESULTS_FILE) if (out / RESULTS_FILE).exists() else []
    trials = read_jsonl(out / TRIALS_FILE) if (out / TRIALS_FILE).exists() else []
    sets = read_json(out / SETS_FILE) if (out / SETS_FILE).exists() else {}
    run = read_json(out / RUN_FILE) if (out / RUN_FILE).exists() else {}
    return rows, trials, sets, run
