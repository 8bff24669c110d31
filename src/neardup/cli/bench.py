"""``neardup bench``: build labelled benchmark sets, run every method on them, write the report.

Owns the ``bench`` sub-commands' options, output and exit codes (mounted by the main CLI with
``app.add_typer(bench_app, name="bench")``); must not contain benchmark logic.
Exit codes: 0 success, 2 bad input or settings (one line on stderr, no traceback).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from neardup.cli.common import check_format as _check_format
from neardup.cli.common import guard, new_app
from neardup.cli.options import FormatOpt, QuietOpt

bench_app = new_app("bench", "Benchmark suite: build labelled sets from real texts, compare methods and peers, write a report.")



def _guard(fn: Callable[[], Any]) -> Any:
    """Shared error handling (:func:`neardup.cli.common.guard`)."""
    return guard(fn)


def _csv(value: str | None) -> list[str]:
    return [x.strip() for x in (value or "").split(",") if x.strip()]


@bench_app.command("make")
def make(
    sources: Annotated[str, typer.Option("--sources", help="Comma-separated: bbc, reuters, 20ng, ag.")] = "bbc,reuters,20ng,ag",
    presets: Annotated[Optional[str], typer.Option("--presets", help="Comma-separated noise presets (default: ocr-1970s, ocr-1930s, web-aggregator, adversarial-spam, ocr-light, ocr-medium, ocr-heavy).")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Folder for the sets (default $NEARDUP_BENCH_DIR or ./neardup-bench).")] = None,
    seed: Annotated[int, typer.Option("--seed", "-s", help="Random seed (same seed, same sets).")] = 0,
    size: Annotated[int, typer.Option("--size", help="Documents per split (validation and test each).")] = 1000,
    data_dir: Annotated[Optional[Path], typer.Option("--data-dir", help="Shared data folder (default $NEARDUP_SHARED_DATA or ../shared/data).")] = None,
    fmt: FormatOpt = "text",
    quiet: QuietOpt = False,
) -> None:
    """Build labelled sets (validation + disjoint test) from real texts at several noise presets."""
    _check_format(fmt)

    def go() -> None:
        from neardup.eval.benchsets import (
            DEFAULT_PRESETS,
            SOURCES,
            bench_dir,
            make_sets,
        )
        from neardup.synth import list_presets

        names = _csv(sources)
        for s in names:
            if s not in SOURCES:
                raise ValueError(f"--sources: unknown source {s!r}; known: {', '.join(SOURCES)}")
        chosen = _csv(presets) or list(DEFAULT_PRESETS)
        for p in chosen:
            if p not in list_presets():
                raise ValueError(f"--presets: unknown preset {p!r}; known: {', '.join(list_presets())}")
        if not names:
            raise ValueError("--sources: give at least one source")
        target = out or bench_dir()
        log = None if quiet or fmt == "json" else (lambda msg: typer.echo(msg, err=True))
        manifest = make_sets(target, names, chosen, seed=seed, size=size, root=data_dir, log=log)
        made = {n: e for n, e in manifest["sets"].items() if e["source"] in names and e["preset"] in chosen}
        summary = {
            "out": str(target), "manifest": str(target / "manifest.json"), "seed": seed, "size": size,
            "sets": {n: {"validation": e["splits"]["validation"]["n_docs"], "test": e["splits"]["test"]["n_docs"]}
                     for n, e in made.items()},
            "dropped": {s: {k: manifest["sources"][s][k] for k in ("exact_dropped", "near_dropped", "n_eligible")}
                        for s in names},
            "measured_mean_duplicate_size": manifest.get("measured_mean_duplicate_size"),
        }
        if fmt == "json":
            typer.echo(json.dumps(summary))
        else:
            typer.echo(f"{len(made)} sets -> {target} (manifest.json); mean duplicate-cluster size "
                       f"{summary['measured_mean_duplicate_size']}")

    _guard(go)


@bench_app.command("run")
def run(
    methods: Annotated[Optional[str], typer.Option("--methods", "-m", help="Comma-separated: neardup methods (minhash, ngram, simhash, ...) and peers (datasketch, rensa, unisim-retsim).")] = None,
    sets: Annotated[Optional[str], typer.Option("--sets", help="Comma-separated set names or globs (e.g. 'bbc-*'), or set folders; default all.")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Folder for results.jsonl and report.html (default: the sets folder, $NEARDUP_BENCH_DIR or ./neardup-bench).")] = None,
    sets_dir: Annotated[Optional[Path], typer.Option("--sets-dir", help="Where `bench make` put the sets (default $NEARDUP_BENCH_DIR or ./neardup-bench).")] = None,
    quick: Annotated[bool, typer.Option("--quick", help="Build a tiny set and run on it (under a minute); coarser grids.")] = False,
    max_docs: Annotated[Optional[int], typer.Option("--max-docs", help="Subsample every split to at most N documents (whole clusters).")] = None,
    slow_max_docs: Annotated[int, typer.Option("--slow-max-docs", help="Cap per split for slow peers (unisim-retsim); 0 = no cap.")] = 400,
    seed: Annotated[int, typer.Option("--seed", "-s", help="Seed for subsampling and the quick set.")] = 0,
    fmt: FormatOpt = "text",
    quiet: QuietOpt = False,
) -> None:
    """Tune every method on each set's validation split, report it on the test split; write results and report."""
    _check_format(fmt)

    def go() -> None:
        from neardup.eval.benchsets import bench_dir, list_sets
        from neardup.eval.suite import (
            DEFAULT_METHODS,
            QUICK_METHODS,
            resolve_methods,
            run_suite,
        )

        names = _csv(methods) or list(QUICK_METHODS if quick else DEFAULT_METHODS)
        resolve_methods(names)  # fail on a bad name before any work
        if max_docs is not None and max_docs < 2:
            raise ValueError(f"--max-docs must be at least 2, got {max_docs}")
        src = sets_dir or bench_dir()
        target = out or src
        chosen = None if quick else list_sets(src, _csv(sets) or None)
        log = None if quiet or fmt == "json" else (lambda msg: typer.echo(msg, err=True))
        summary = run_suite(chosen, names, out=target, sets_dir=src, quick=quick, max_docs=max_docs,
                            slow_max_docs=slow_max_docs or None, seed=seed, log=log)
        summary["report"] = _write_report(Path(summary["out"]), summary["notes"], log)
        if fmt == "json":
            typer.echo(json.dumps(summary, default=float))
            return
        typer.echo(_table(summary["rows"]))
        for s in summary["skipped"]:
            typer.echo(f"skipped: {s['reason']}")
        typer.echo(f"results: {summary['results']}  report: {summary.get('report')}")

    _guard(go)


@bench_app.command("report")
def report(
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Results folder (default $NEARDUP_BENCH_DIR or ./neardup-bench, where `bench run` writes).")] = None,
) -> None:
    """Re-render report.html from a results folder."""

    def go() -> None:
        from neardup.eval.benchsets import bench_dir
        from neardup.report.html import write_report

        typer.echo(str(write_report(out or bench_dir())))

    _guard(go)


def _write_report(out: Path, notes: list[str], log: Callable[[str], None] | None) -> str | None:
    """``out/report.html`` of the results just written, or None with a note (and a log line) when the
    report cannot be made (matplotlib missing): the results stand."""
    try:
        from neardup.report.html import write_report

        return str(write_report(out))
    except ImportError as exc:
        notes.append(f"report.html not written: {exc}")
        if log is not None:
            log(f"report.html not written: {exc}")
        return None


def _table(rows: list[dict[str, Any]]) -> str:
    head = f"{'set':30s} {'method':14s} {'ARI':>6s} {'P':>6s} {'R':>6s} {'F1':>6s} {'docs/s':>8s} {'MB':>7s}  params"
    lines = [head, "-" * len(head)]
    for r in rows:
        params = ", ".join(f"{k}={v}" for k, v in r["params"].items())
        lines.append(f"{r['set'][:30]:30s} {r['method'][:14]:14s} {r['ari']:6.3f} {r['precision']:6.3f} "
                     f"{r['recall']:6.3f} {r['f1']:6.3f} {r['docs_per_second'] or 0:8.0f} "
                     f"{r['peak_memory_mb'] or 0:7.1f}  {params}")
    return "\n".join(lines)
