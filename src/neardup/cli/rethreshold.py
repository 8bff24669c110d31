"""``neardup rethreshold``: a finished run's decisions at another threshold, from its scored candidates, in seconds.

Owns this command's arguments, the checks of its output folder and what it prints; must not decide
(:meth:`neardup.results.DedupResult.rethreshold` does).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from neardup.cli.common import guard
from neardup.cli.options import OverwriteOpt


def rethreshold(
    outdir: Annotated[Path, typer.Argument(help="An output folder of `neardup dedup`.")],
    threshold: Annotated[float, typer.Option("--threshold", "-t", help="The new threshold: from the run's score floor to its ceiling (summary.json: decision.score_floor, decision.score_ceiling).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The folder to write the new result into (not OUTDIR).")],
    all_pairs: Annotated[bool, typer.Option("--all-pairs", help="Write every verified pair, not only the link behind each removal.")] = False,
    input: Annotated[Optional[str], typer.Option("--input", help="The input file, if it is no longer where summary.json says.")] = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Decide a run again at another threshold, from the scored candidates it kept: the files a run at that threshold writes (no evidence), without computing anything else."""

    def go() -> None:
        from neardup.io.write import OutputError, check_outputs
        from neardup.results import EVIDENCE_FILE, OUTPUT_FILES, SCORES_FILE, DedupResult

        if output.resolve() == outdir.resolve() or outdir.resolve() in output.resolve().parents:
            raise OutputError(f"{output}: write the new result beside {outdir}, not into it")
        names = (*OUTPUT_FILES, SCORES_FILE, EVIDENCE_FILE)
        check_outputs(files=[output / name for name in names], folders=[output],
                      inputs=[outdir / name for name in names], overwrite=overwrite)
        result = DedupResult.load(outdir, source=input).rethreshold(threshold, all_pairs=all_pairs)
        result.write(output)
        s = result.summary
        typer.echo(f"{s['n_docs']} documents, {s['n_duplicate_clusters']} duplicate clusters, {s['n_duplicates']} "
                   f"duplicates ({100 * s['duplicate_ratio']:.1f}%) at threshold {threshold:g} "
                   f"({s['rethreshold']['seconds']:.2f} s) -> {output}", err=True)

    guard(go)


__all__ = ["rethreshold"]
