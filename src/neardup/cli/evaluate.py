"""``neardup eval`` and ``neardup tune``: a method's figures on labelled data, and the configuration that
maximises them (written with ``--out`` as the file every command reads with ``--config``).

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
    OverwriteOpt,
    QuietOpt,
    dedup_config,
    with_options,
)

# The candidate rule and the threshold are searched, always: not options of `tune`. (The other method options
# fix what they name: the method, the shingle unit or size, the pair score, the clustering.)
SWEPT = ("threshold", "bands", "rows", "rule", "lsh_threshold", "min_collisions", "hybrid_weight", "hybrid_coef",
         "combine", "view_coef")


@with_options(READ_OPTIONS, "read_opts", exclude=("on_error", "encoding"))
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


@with_options(READ_OPTIONS, "read_opts", exclude=("on_error", "encoding"))
@with_options(METHOD_OPTIONS, "method_opts", exclude=SWEPT)
def tune(
    validation: Annotated[Path, typer.Argument(help="Labelled validation file (the configuration is chosen here).")],
    test: Annotated[list[Path], typer.Argument(help="Labelled test file(s), reported with the chosen configuration (several are pooled).")],
    method_opts: dict[str, Any],
    read_opts: dict[str, Any],
    docs: Annotated[Optional[Path], typer.Option("--docs", help="Documents for pair-labelled files (a, b, label) of VALIDATION and TEST (default: docs.jsonl beside each).")] = None,
    thresholds: Annotated[Optional[str], typer.Option("--thresholds", help="Comma-separated thresholds to sweep (default: a grid per method).")] = None,
    budget: Annotated[Optional[str], typer.Option("--budget", help="Stop starting new parts of the search after this long, e.g. 90s, 10m, 1h (default: search everything).")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Write the chosen configuration here (JSON), for --config of dedup, eval, match, online and serve.")] = None,
    overwrite: OverwriteOpt = False,
    trials_out: Annotated[Optional[Path], typer.Option("--trials-out", help="Write every (setting, validation metrics) row as JSONL.")] = None,
    fmt: FormatOpt = "text",
    quiet: QuietOpt = False,
) -> None:
    """Search the configuration on VALIDATION (best ARI), report the choice on TEST: the NEWS-COPY protocol.

    Searched: representation (word and character n-grams, RETSim, a bi-encoder given with --model; with --cross-model, rerank and multiview with the trained views),
    candidate rule, pair score, clustering and threshold, from the calibrated default; the method options
    given fix what they name (e.g. --method hybrid, --char-ngrams, --cluster leiden), --config is the base.
    """

    def go() -> None:
        from neardup.config import ConfigError, parse_duration
        from neardup.eval.evaluate import pool
        from neardup.eval.loaders import load_any as load_labelled
        from neardup.eval.search import SearchSpace, tune_config
        from neardup.io.write import check_outputs, write_jsonl

        grid = [float(x) for x in thresholds.split(",")] if thresholds else None
        for x in grid or ():
            if not 0 < x <= 1:
                raise ConfigError(f"--thresholds: every threshold must be in (0, 1], got {x}")
        try:
            seconds = parse_duration(budget) if budget is not None else None
        except ConfigError as exc:
            raise ConfigError(f"--budget: {exc}") from None
        targets = [path for path in (out, trials_out) if path is not None]
        if targets:  # before any work: never an input, an existing file only with --overwrite
            check_outputs(files=targets, inputs=[validation, *test, *([docs] if docs else [])], overwrite=overwrite)
        cfg = dedup_config(method_opts)
        space = SearchSpace.fixing(method=method_opts.get("method"), char=method_opts.get("char_ngrams"),
                                   n=method_opts.get("ngram"), score=method_opts.get("verify"),
                                   cluster=method_opts.get("cluster"), model=method_opts.get("model"), thresholds=grid,
                                   cross_model=method_opts.get("cross_model"))
        fields = {k: v for k, v in read_opts.items() if v is not None}
        val = load_labelled(validation, docs=docs, **fields)
        tests = pool([load_labelled(p, docs=docs, **fields) for p in test])
        res = tune_config(val, tests, cfg, space=space, budget=seconds, progress=not quiet and fmt != "json",
                          out=out, overwrite=overwrite)
        for warning in res["warnings"]:
            typer.echo(f"neardup: warning: {warning}", err=True)
        trials = res.pop("trials")
        res.pop("chosen")
        if trials_out is not None:
            write_jsonl(trials_out, iter(trials))
        if fmt == "text":
            res = _tune_text(res)
        print_result(res, fmt)
        if out is not None:
            typer.echo(f"neardup: chosen configuration -> {out}", err=True)

    guard(go)


def _tune_text(res: dict[str, Any]) -> dict[str, Any]:
    """What ``tune`` prints as text: the choice, its figures, the default's, and what the search did."""
    report = res["search"]
    default = res["default"]
    skipped = [f"{s['what']} ({s['reason']})" for s in report["skipped"]]
    return {
        "params": res["params"],
        "validation": {k: res["validation"][k] for k in ("ari", "precision", "recall", "f1", "n_docs")},
        "test": {k: res["test"][k] for k in ("ari", "precision", "recall", "f1", "n_docs")} if res["test"] else None,
        "default": {"params": " ".join(f"{k}={v}" for k, v in default["params"].items()),
                    "validation_ari": default["validation"]["ari"],
                    "test_ari": default["test"]["ari"] if default["test"] else None},
        "search": {"space_size": report["space_size"], "cells_tried": report["cells_tried"],
                   "points_tried": report["points_tried"], "seconds": report["seconds"],
                   "seconds_by_part": " ".join(f"{k}={v:.1f}" for k, v in report["seconds_by_part"].items()),
                   "skipped": "; ".join(skipped) or "nothing"},
        "representations": {label: f"best ari {row['best_ari']:.3f}, f1 {row['best_f1']:.3f}, {row['cells']} cells, "
                                   f"{row['seconds']:.1f}s" for label, row in report["by_representation"].items()},
    }


__all__ = ["eval_cmd", "tune"]
