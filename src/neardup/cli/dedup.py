"""``neardup dedup`` and ``neardup match``: find the duplicates of a corpus, or of queries in a corpus.

Owns these commands' arguments, what they print and their exit codes; must not contain pipeline logic:
each builds the typed configuration from its options and calls :func:`neardup.dedup` or
:func:`neardup.match`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from neardup.cli.common import guard, interrupted_run, print_result, report_skipped
from neardup.cli.options import (
    ENGINE_OPTIONS,
    METHOD_OPTIONS,
    READ_OPTIONS,
    FormatOpt,
    OverwriteOpt,
    QuietOpt,
    dedup_config,
    engine_config,
    engine_name,
    read_config,
    with_options,
)


@with_options(ENGINE_OPTIONS, "engine_opts")
@with_options(READ_OPTIONS, "read_opts")
@with_options(METHOD_OPTIONS, "method_opts")
def dedup(
    inputs: Annotated[list[str], typer.Argument(help="One or more, read as one corpus in the order given: JSONL(.gz), a JSON array (.json), Parquet or CSV files; folders of them (shards) or of .txt files; globs ('data/*.jsonl', quoted); - for JSONL on stdin; fsspec URLs (s3://..., gs://...; needs the store's package, e.g. s3fs).")],
    outdir: Annotated[Path, typer.Option("--output", "-o", help="Folder for clusters.parquet, pairs.parquet, summary.json.")],
    method_opts: dict[str, Any],
    read_opts: dict[str, Any],
    engine_opts: dict[str, Any],
    keep: Annotated[Optional[Path], typer.Option("--keep", help="Also write the documents to keep (one per cluster), each input record as it was, in the format the name ends in: .jsonl, .jsonl.gz, .parquet, .csv.")] = None,
    drop_oversized: Annotated[bool, typer.Option("--drop-oversized", help="With --keep: also drop every document of an oversized cluster.")] = False,
    overwrite: OverwriteOpt = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars (the one-line result summary stays).")] = False,
    silent: Annotated[bool, typer.Option("--silent", help="Print nothing (errors and skipped input aside).")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the run plan as JSON (inputs, read settings, the method with auto's calibration on the first documents, the engine and its memory plan) and stop: nothing is written.")] = False,
) -> None:
    """De-duplicate a corpus: write clusters, verified pairs, their evidence and a summary to OUTDIR."""

    state: dict[str, Any] = {}  # what an interrupt names: whether the run keeps its work to resume
    inputs = ["-" if name == "/dev/stdin" else name for name in inputs]  # read more than once: spooled as -

    def go() -> None:
        import neardup
        from neardup.api import check_dedup_outputs
        from neardup.io.keep import keep_format
        from neardup.io.read import resolve_sources
        from neardup.io.sources import StdinSpool
        from neardup.io.write import output_lock

        if keep is not None:
            keep_format(keep)  # a name whose format is unknown is refused before any work
        read = read_config(read_opts)
        with StdinSpool(inputs, outdir) as stdin:  # stdin is read more than once: spooled, removed at the end
            source = resolve_sources(inputs, read.encoding, stdin=stdin)
            engine_name_ = engine_name(engine_opts, source)
            state["resumable"] = engine_name_ != "memory"
            engine = engine_config({**engine_opts, "engine": engine_name_}, not (quiet or silent))
            if dry_run:  # what the run would do, resolved as the run resolves it
                from neardup.run_plan import plan_run

                typer.echo(str(plan_run(source, dedup_config(method_opts), engine, read, outdir)))
                return
            also = [keep] if keep is not None else None
            # the output folder is this run's until the keep file too is written (a second run is refused at once)
            with output_lock(outdir, lambda: check_dedup_outputs(source, outdir, engine, overwrite, also=also,
                                                                 clear=False)):
                result = neardup.dedup(source, config=dedup_config(method_opts), engine=engine, read=read,
                                       output=outdir, overwrite=overwrite)
                s = result.summary
                line = (f"{s['n_docs']} documents, {s['n_duplicate_clusters']} duplicate clusters, "
                        f"{s['n_duplicates']} duplicates ({100 * s['duplicate_ratio']:.1f}%) -> {outdir}")
                if keep is not None:
                    line += f"; kept {result.write_kept(keep, drop_oversized, overwrite=overwrite)} -> {keep}"
        report_skipped(s["n_skipped_records"], outdir / "summary.json")  # lost input is said even when silent
        if not silent:
            typer.echo(line, err=True)

    from neardup.api import work_folder

    def interrupted() -> str:
        resumable = state.get("resumable", engine_opts.get("engine") not in (None, "memory"))
        return interrupted_run(f"dedup of {' '.join(inputs)}",
                               work_folder(outdir, engine_opts.get("work_dir")) if resumable else None)

    guard(go, interrupted=interrupted)


@with_options(READ_OPTIONS, "read_opts", exclude=("on_error",))
@with_options(METHOD_OPTIONS, "method_opts", exclude=("cluster", "max_cluster_size", "representative",
                                                     "representative_field"))
def match(
    queries: Annotated[str, typer.Argument(help="The collection to check (e.g. a test set), read whole; a path, a folder of shards, a quoted glob or an fsspec URL.")],
    corpus: Annotated[str, typer.Argument(help="The collection to search (e.g. a training corpus), streamed; a path, a folder of shards, a quoted glob ('train/*.parquet') or an fsspec URL (s3://...).")],
    outdir: Annotated[Path, typer.Option("--output", "-o", help="Folder for matches.parquet and summary.json.")],
    method_opts: dict[str, Any],
    read_opts: dict[str, Any],
    group_field: Annotated[Optional[str], typer.Option("--group-field", help="Query field naming its query set; leakage is reported per set.")] = None,
    overwrite: OverwriteOpt = False,
    fmt: FormatOpt = "text",
    quiet: QuietOpt = False,
) -> None:
    """Find each query document's near-duplicates in CORPUS (test-set leakage), without de-duplicating CORPUS."""

    def go() -> None:
        import neardup

        result = neardup.match(queries, corpus, outdir, config=dedup_config(method_opts), overwrite=overwrite,
                               group_field=group_field,
                               read=read_config(read_opts), progress=not quiet and fmt != "json")
        summary = result.summary
        print_result({k: v for k, v in summary.items() if k != "params"} if fmt == "text" else summary, fmt)

    guard(go)


__all__ = ["dedup", "match"]
