"""``neardup eval`` and ``neardup tune``: a method's figures on labelled data, and the setting that maximises them.

Owns these commands' arguments, what they print and their exit codes; must not contain evaluation or
tuning logic (:mod:`neardup.eval`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from neardup.cli.common import guard, print_result
from neardup.cli.options import (
    METHOD_OPTIONS,
    READ_OPTIONS,
    FormatOpt,
    QuietOpt,
    dedup_config,
    with_options,
)
from neardup.config import ConfigError

# The candidate rule and the threshold are what tuning searches: not options of `tune`.
SWEPT = ("threshold", "bands", "rows", "rule", "lsh_threshold", "min_collisions", "hybrid_weight", "hybrid_coef",
         "combine", "view_coef")


@with_options(READ_OPTIONS, "read_opts", exclude=("on_error",))
@with_options(METHOD_OPTIONS, "method_opts")
def eval_cmd(
    data: Annotated[Path, typer.Argument(help="Labelled JSONL: documents with a 'cluster' field, or pairs (a, b, label).")],
    method_opts: dict[str, Any],
    read_opts: dict[str, Any],
    docs: Annotated[Optional[Path], typer.Option("--docs", help="Documents for a pair-labelled file (default: docs.jsonl beside it).")] = None,
    fmt: FormatOpt = "text",
    quiet: QuietOpt = False,
) -> None:
    """Run the pipeline on labelled data and print ARI, pairwise precision/recall/F1 and timings."""

    def go() -> None:
        from neardup.eval.evaluate import evaluate
        from neardup.eval.loaders import load_any as load_labelled

        cfg = dedup_config(method_opts)
        labelled = load_labelled(data, docs=docs, **{k: v for k, v in read_opts.items() if v is not None})
        print_result(evaluate(labelled, cfg, progress=not quiet and fmt != "json"), fmt)

    guard(go)


@with_options(READ_OPTIONS, "read_opts", exclude=("on_error",))
@with_options(METHOD_OPTIONS, "method_opts", exclude=SWEPT)
def tune(
    validation: Annotated[Path, typer.Argument(help="Labelled validation file (thresholds are chosen here).")],
    test: Annotated[list[Path], typer.Argument(help="Labelled test file(s), reported with the chosen setting (several are pooled).")],
    method_opts: dict[str, Any],
    read_opts: dict[str, Any],
    thresholds: Annotated[Optional[str], typer.Option("--thresholds", help="Comma-separated thresholds to sweep (default: a grid per method).")] = None,
    trials_out: Annotated[Optional[Path], typer.Option("--trials-out", help="Write every (setting, validation metrics) row as JSONL.")] = None,
    fmt: FormatOpt = "text",
    quiet: QuietOpt = False,
) -> None:
    """Tune on VALIDATION (best ARI), report the chosen setting on TEST: the NEWS-COPY protocol."""

    def go() -> None:
        from neardup.eval.evaluate import pool
        from neardup.eval.loaders import load_any as load_labelled
        from neardup.eval.tune import tune as run_tune
        from neardup.io.write import write_jsonl

        cfg = dedup_config(method_opts)
        grid = [float(x) for x in thresholds.split(",")] if thresholds else None
        for x in grid or ():
            if not 0 < x <= 1:
                raise ConfigError(f"--thresholds: every threshold must be in (0, 1], got {x}")
        fields = {k: v for k, v in read_opts.items() if v is not None}
        val = load_labelled(validation, **fields)
        tests = pool([load_labelled(p, **fields) for p in test])
        out = run_tune(val, tests, cfg, thresholds=grid, progress=not quiet and fmt != "json")
        for warning in out["warnings"]:
            typer.echo(f"neardup: warning: {warning}", err=True)
        trials = out.pop("trials")
        if trials_out is not None:
            write_jsonl(trials_out, iter(trials))
        if fmt == "text":
            out = {"params": out["params"], "validation": out["validation"], "test": out["test"]}
        print_result(out, fmt)

    guard(go)


__all__ = ["eval_cmd", "tune"]
