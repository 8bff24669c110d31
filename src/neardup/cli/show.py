"""``neardup show``: read a finished run: a cluster side by side in the terminal, the largest clusters, or
an HTML report of the run.

Owns this command's arguments, what it prints and its exit codes; must not choose what to show
(:mod:`neardup.audit`) or lay it out (:mod:`neardup.report.terminal`, :mod:`neardup.report.run`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from neardup.cli.common import guard
from neardup.cli.options import OverwriteOpt

if TYPE_CHECKING:
    from neardup.results import DedupResult


def show(
    outdir: Annotated[Path, typer.Argument(help="An output folder of `neardup dedup`.")],
    key: Annotated[Optional[str], typer.Argument(help="A cluster id, or the id of one of its documents (default: list the largest clusters).")] = None,
    html: Annotated[Optional[Path], typer.Option("--html", help="Write an HTML report of the run here: the largest clusters, the oversized ones and a sample of pairs near the threshold, each as a side-by-side diff. An existing file is replaced only with --overwrite, the run's own files and its input never.")] = None,
    docs: Annotated[int, typer.Option("--docs", help="Documents of a cluster shown (the representative and the next ones).")] = 4,
    chars: Annotated[int, typer.Option("--chars", help="Characters of each text shown in the terminal.")] = 1200,
    clusters: Annotated[int, typer.Option("--clusters", help="Clusters listed (and in the report: largest and oversized each).")] = 10,
    sample: Annotated[int, typer.Option("--sample", help="Report: pairs near the threshold drawn at random.")] = 20,
    seed: Annotated[int, typer.Option("--seed", help="Report: the random seed of that sample.")] = 0,
    input: Annotated[Optional[str], typer.Option("--input", help="The input file, if it is no longer where summary.json says.")] = None,
    width: Annotated[Optional[int], typer.Option("--width", help="Terminal width in characters (default: detected).")] = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Show a run: a cluster's documents side by side with their shared passages highlighted, the largest clusters, or an HTML report (--html)."""

    def go() -> None:
        from rich.console import Console

        from neardup.audit import largest_clusters, run_view
        from neardup.report.run import write_run_report
        from neardup.report.terminal import render_cluster, render_cluster_list
        from neardup.results import DedupResult

        if docs < 2:
            raise ValueError(f"--docs must be at least 2 (the representative and one other), got {docs}")
        result = DedupResult.load(outdir, source=input)
        if html is not None:
            check_report(html, result, overwrite)
        console = Console(width=width, highlight=False)
        if html is not None:
            path = write_run_report(run_view(result, clusters=clusters, docs=min(docs, 3), sample=sample, seed=seed),
                                    html, title=f"neardup run: {outdir}")
            console.print(f"report: {path}")
            if key is None:
                return
        if key is None:
            render_cluster_list(largest_clusters(result, clusters), console, result.summary)
        else:
            try:
                view = result.cluster(key, max_docs=docs)
            except KeyError as exc:
                raise ValueError(exc.args[0]) from None
            render_cluster(view, console, chars=chars)

    guard(go)


def check_report(html: Path, result: DedupResult, overwrite: bool) -> None:
    """Before any work: the report ``html`` must not be a file the run is read from (its output folder's files,
    its input), even with ``overwrite``, nor exist unless ``overwrite``
    (:func:`~neardup.io.write.check_outputs`, an :class:`~neardup.io.write.OutputError` naming it)."""
    from neardup.io.write import OutputError, check_outputs
    from neardup.results import OUTPUT_FILES, RUN_FILES

    assert result.output is not None
    for name in dict.fromkeys((*OUTPUT_FILES, *RUN_FILES)):
        own = result.output / name
        if html.resolve() == own.resolve() or (html.exists() and own.exists() and os.path.samefile(html, own)):
            raise OutputError(f"{html} is the run's {name}: refusing to write over it")
    named = result.summary.get("input")
    check_outputs(files=[html], inputs=[s for s in (result.source, named) if s and s != "<memory>"],
                  overwrite=overwrite)


__all__ = ["check_report", "show"]
