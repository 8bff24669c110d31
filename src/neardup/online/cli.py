"""Command line of the online detector: ``online eval|tune|split|make-noisy|load`` and ``serve``.

Owns option parsing, output formats and exit codes for the online commands; must not contain
detection or evaluation logic. Mounted by the main CLI (``app.add_typer(online_app, name="online")``
and ``app.command("serve")(serve_command)``); also runs alone as ``python -m neardup.online``.
Exit codes: 0 success, 2 bad input or settings (one line on stderr, no traceback).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from neardup.cli_common import check_format as _check_format, guard, print_result as _print


online_app = typer.Typer(name="online", help="Online (streaming) near-duplicate detection: evaluate, tune and load stores.",
                         no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)

MethodOpt = Annotated[Optional[str], typer.Option("--method", "-m", help="sketch (the seed method) | minhash (ours).")]
ConfigOpt = Annotated[Optional[Path], typer.Option("--config", help="JSON file of online settings (or a tune output).")]
NOpt = Annotated[Optional[int], typer.Option("--ngram", "-n", help="Word n-gram size (default 3).")]
KOpt = Annotated[Optional[int], typer.Option("--k-sample", help="Shingles sampled for the sketch/MinHash (default 1600).")]
POpt = Annotated[Optional[int], typer.Option("--p", help="Sketch values (default 20).")]
TOpt = Annotated[Optional[int], typer.Option("--t", help="Sketch: candidates agree in more than t values (default 2).")]
FOpt = Annotated[Optional[float], typer.Option("--f", help="Fraction of each document verified (default 0.4).")]
FShortOpt = Annotated[Optional[float], typer.Option("--f-short", help="Fraction verified for short documents (default 1.0).")]
ShortOpt = Annotated[Optional[int], typer.Option("--short-len", help="Documents under this many tokens are short (default 100).")]
ROpt = Annotated[Optional[float], typer.Option("--r-overlap", help="Overlap needed to be a duplicate (default 0.3).")]
TopOpt = Annotated[Optional[int], typer.Option("--top-candidates", help="Candidates verified exactly (seed: 1).")]
UpdateOpt = Annotated[Optional[bool], typer.Option("--update-rule/--no-update-rule", help="New numbers or sentences make an update (a new original).")]
PermOpt = Annotated[Optional[int], typer.Option("--num-perm", help="MinHash values (default 128).")]
BandsOpt = Annotated[Optional[int], typer.Option("--bands", help="LSH bands (with --rows; default derived from --lsh-threshold).")]
RowsOpt = Annotated[Optional[int], typer.Option("--rows", help="LSH rows per band (with --bands).")]
LshOpt = Annotated[Optional[float], typer.Option("--lsh-threshold", help="Jaccard level the LSH bands are derived for (default 0.2).")]
OrderOpt = Annotated[str, typer.Option("--order", help="given (file order) | time (by --time-field).")]
TimeFieldOpt = Annotated[str, typer.Option("--time-field", help="Field with the arrival time for --order time.")]
FormatOpt = Annotated[str, typer.Option("--format", "-f", help="json | text")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress on stderr.")]


def _guard(fn: Callable[[], Any]) -> Any:
    """Shared error handling (:func:`neardup.cli_common.guard`), plus store errors."""
    from neardup.online.store import StoreError

    return guard(fn, (StoreError,))


def build_online_config(method: str | None = None, config_file: Path | None = None, **options: Any) -> Any:
    """An :class:`OnlineConfig` from a settings file and the options given (None = not given)."""
    from neardup.online.detector import OnlineConfig
    from neardup.online.evaluate import config_from_file

    values: dict[str, Any] = config_from_file(config_file) if config_file is not None else {}
    if method is not None:
        values["method"] = method
    values.update({k: v for k, v in options.items() if v is not None})
    return OnlineConfig.from_dict(values)


@online_app.command("eval")
def eval_command(
    data: Annotated[Path, typer.Argument(help="Labelled JSONL: documents with a 'cluster' field (null = singleton).")],
    method: MethodOpt = None, config: ConfigOpt = None, ngram: NOpt = None, k_sample: KOpt = None, p: POpt = None,
    t: TOpt = None, f: FOpt = None, f_short: FShortOpt = None, short_len: ShortOpt = None, r_overlap: ROpt = None,
    top_candidates: TopOpt = None, update_rule: UpdateOpt = None, num_perm: PermOpt = None, bands: BandsOpt = None,
    rows: RowsOpt = None, lsh_threshold: LshOpt = None, order: OrderOpt = "given", time_field: TimeFieldOpt = "date",
    store: Annotated[Optional[str], typer.Option("--store", help="Empty store to replay into (default: a temporary SQLite file).")] = None,
    fmt: FormatOpt = "text", quiet: QuietOpt = False,
) -> None:
    """Replay DATA as a stream through the detector; print precision, recall, F1 and latency."""

    def go() -> None:
        from neardup.online.evaluate import load_stream, replay

        _check_format(fmt)
        cfg = build_online_config(method, config, n=ngram, k_sample=k_sample, p=p, t=t, f=f, f_short=f_short,
                                  short_len=short_len, r_overlap=r_overlap, top_candidates=top_candidates,
                                  update_rule=update_rule, num_perm=num_perm, bands=bands, rows=rows,
                                  lsh_threshold=lsh_threshold)
        stream = load_stream(data, order=order, time_field=time_field)
        out = replay(stream, cfg, store_url=store)
        out["config"] = cfg.to_dict()
        out["order"] = order
        if fmt == "text":
            out = {k: out[k] for k in ("method", "n_docs", "precision", "recall", "f1", "tp", "fp", "fn",
                                        "n_true_duplicates", "canonical", "latency", "docs_per_second")}
        _print(out, fmt)

    _guard(go)


@online_app.command("tune")
def tune_command(
    validation: Annotated[Path, typer.Argument(help="Labelled stream the settings are chosen on.")],
    test: Annotated[Path, typer.Argument(help="Labelled stream the chosen settings are reported on.")],
    method: MethodOpt = None, config: ConfigOpt = None, top_candidates: TopOpt = None,
    update_rule: Annotated[Optional[bool], typer.Option("--update-rule/--no-update-rule", help="Fix the update rule (default: try both).")] = None,
    order: OrderOpt = "given", time_field: TimeFieldOpt = "date",
    trials_out: Annotated[Optional[Path], typer.Option("--trials-out", help="Write every grid point's validation metrics as JSONL.")] = None,
    fmt: FormatOpt = "text", quiet: QuietOpt = False,
) -> None:
    """Choose n, t (or the LSH threshold), f, r_overlap and the update rule on VALIDATION; report on TEST."""

    def go() -> None:
        from neardup.io.write import write_jsonl
        from neardup.online.evaluate import load_stream, tune

        _check_format(fmt)
        base = build_online_config(method, config, top_candidates=top_candidates)
        val = load_stream(validation, order=order, time_field=time_field)
        tst = load_stream(test, order=order, time_field=time_field)
        rules = (False, True) if update_rule is None else (update_rule,)
        show = None if quiet or fmt == "json" else (lambda msg: typer.echo(f"tuning {msg}", err=True))
        out = tune(val, tst, base, update_rules=rules, progress=show)
        trials = out.pop("trials")
        if trials_out is not None:
            write_jsonl(trials_out, iter(trials))
        if fmt == "text":
            keep = ("precision", "recall", "f1", "tp", "fp", "fn", "n_true_duplicates")
            out = {"method": out["method"], "params": out["params"],
                   "validation": {k: out["validation"][k] for k in keep},
                   "test": {k: out["test"][k] for k in keep}}
        _print(out, fmt)

    _guard(go)


@online_app.command("split")
def split_command(
    data: Annotated[Path, typer.Argument(help="Labelled JSONL to split (e.g. one labelled day).")],
    out_a: Annotated[Path, typer.Argument(help="First half (JSONL).")],
    out_b: Annotated[Path, typer.Argument(help="Second half (JSONL).")],
    ngram: Annotated[int, typer.Option("--ngram", "-n", help="Word n-gram size of the links.")] = 5,
    max_df: Annotated[int, typer.Option("--max-df", help="Ignore n-grams in more documents than this.")] = 60,
    min_overlap: Annotated[float, typer.Option("--min-overlap", help="Overlap coefficient that links two documents.")] = 0.01,
    fmt: FormatOpt = "text",
) -> None:
    """Split DATA into two halves with no shared-n-gram link between them (clusters kept whole)."""

    def go() -> None:
        from neardup.online.evaluate import split_components

        _check_format(fmt)
        _print(split_components(data, out_a, out_b, n=ngram, max_df=max_df, min_overlap=min_overlap), fmt)

    _guard(go)


@online_app.command("make-noisy")
def make_noisy_command(
    source: Annotated[Path, typer.Argument(help="Clean articles JSONL (e.g. bbc_news/docs.jsonl).")],
    out_a: Annotated[Path, typer.Argument(help="First half of the labelled noisy stream (JSONL).")],
    out_b: Annotated[Path, typer.Argument(help="Second half (JSONL).")],
    seed: Annotated[int, typer.Option("--seed", help="Random seed.")] = 0,
    copy_rate: Annotated[float, typer.Option("--copy-rate", help="Share of articles given a noisy copy.")] = 0.4,
    update_rate: Annotated[float, typer.Option("--update-rate", help="Share of articles given an update (not a duplicate).")] = 0.1,
    fmt: FormatOpt = "text",
) -> None:
    """Make a labelled noisy stream (typos, OCR, abridged copies, reprints, updates), split in two halves."""

    def go() -> None:
        from neardup.online.evaluate import make_noisy_stream

        _check_format(fmt)
        _print(make_noisy_stream(source, out_a, out_b, seed=seed, copy_rate=copy_rate, update_rate=update_rate), fmt)

    _guard(go)


@online_app.command("load")
def load_command(
    data: Annotated[str, typer.Argument(help="Documents to add: JSONL(.gz), Parquet, CSV or a folder of .txt files.")],
    store: Annotated[str, typer.Option("--store", help="sqlite:///PATH (relative) or sqlite:////abs/path, or postgresql://...")],
    method: MethodOpt = None, config: ConfigOpt = None, ngram: NOpt = None, t: TOpt = None, f: FOpt = None,
    r_overlap: ROpt = None, top_candidates: TopOpt = None, update_rule: UpdateOpt = None,
    lsh_threshold: LshOpt = None,
    text_field: Annotated[str, typer.Option("--text-field", help="Field holding the text.")] = "text",
    id_field: Annotated[str, typer.Option("--id-field", help="Field holding the document id.")] = "id",
    batch: Annotated[int, typer.Option("--batch", help="Documents per transaction.")] = 500,
    workers: Annotated[int, typer.Option("--workers", help="Processes preparing batches ahead (0: none).")] = 1,
    on_error: Annotated[str, typer.Option("--on-error", help="raise (stop at the first bad record) | skip (list it in the summary).")] = "raise",
    fmt: FormatOpt = "text", quiet: QuietOpt = False,
) -> None:
    """Add DATA to a store in file order, in batches (one transaction each), as the service would.

    Seeds a store with an archive. Running it again after an interruption finishes the load: stored documents are answered from the store (resubmitted), never added twice.
    """

    def go() -> None:
        from neardup.online.detector import Detector
        from neardup.online.load import load
        from neardup.online.store import open_store

        _check_format(fmt)
        if on_error not in ("raise", "skip"):
            raise ValueError(f"--on-error must be raise or skip, got {on_error!r}")
        cfg = build_online_config(method, config, n=ngram, t=t, f=f, r_overlap=r_overlap,
                                  top_candidates=top_candidates, update_rule=update_rule, lsh_threshold=lsh_threshold)
        detector = Detector(open_store(store), cfg)
        try:
            out = load(detector, data, text_field=text_field, id_field=id_field, batch_size=batch, workers=workers,
                       on_error=on_error, progress=not quiet and fmt != "json")
        finally:
            detector.close()
        if fmt == "text":
            out.pop("skipped_records")
        _print(out, fmt)

    _guard(go)


def serve_command(
    store: Annotated[str, typer.Option("--store", help="sqlite:///PATH (relative) or sqlite:////abs/path, or postgresql://...")] = "sqlite:///neardup-online.db",
    host: Annotated[str, typer.Option("--host", help="Address to bind (beyond loopback a token is required).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8000,
    token: Annotated[Optional[str], typer.Option("--token", envvar="NEARDUP_TOKEN", help="Bearer token clients must send (env NEARDUP_TOKEN).")] = None,
    method: MethodOpt = None, config: ConfigOpt = None, ngram: NOpt = None, t: TOpt = None, f: FOpt = None,
    r_overlap: ROpt = None, top_candidates: TopOpt = None, update_rule: UpdateOpt = None,
    lsh_threshold: LshOpt = None,
    max_body_bytes: Annotated[int, typer.Option("--max-body-bytes", help="Largest request body accepted (413 above).")] = 10 * 1024 * 1024,
    max_batch: Annotated[int, typer.Option("--max-batch", help="Most documents in one POST (413 above).")] = 1000,
    log_level: Annotated[str, typer.Option("--log-level", help="uvicorn log level.")] = "info",
) -> None:
    """Run the HTTP service: POST /documents answers original or duplicate at once."""

    def go() -> None:
        from neardup.online.service import serve

        cfg = build_online_config(method, config, n=ngram, t=t, f=f, r_overlap=r_overlap,
                                  top_candidates=top_candidates, update_rule=update_rule, lsh_threshold=lsh_threshold)
        serve(store, host=host, port=port, token=token, config=cfg, max_body_bytes=max_body_bytes,
              max_batch=max_batch, log_level=log_level)

    _guard(go)


def standalone_app() -> typer.Typer:
    """``online`` commands plus ``serve`` in one app (for ``python -m neardup.online`` and tests)."""
    app = typer.Typer(name="neardup-online", no_args_is_help=True, add_completion=False,
                      pretty_exceptions_enable=False)
    app.add_typer(online_app, name="online")
    app.command("serve")(serve_command)
    return app


def main() -> None:
    """Entry point of ``python -m neardup.online``."""
    standalone_app()()


if __name__ == "__main__":
    sys.exit(main())
