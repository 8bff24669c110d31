"""Command line of the online detector: ``online eval|tune|split|make-noisy|load`` and ``serve``.

Owns the detector's settings as options (:data:`SETTINGS`, shared by the commands), output formats and
exit codes for the online commands; must not contain detection or evaluation logic. Mounted by the main
CLI (``app.add_typer(online_app, name="online")`` and ``app.command("serve")(serve_command)``); also runs
alone as ``python -m neardup.online``.
Exit codes: 0 success, 2 bad input or settings (one line on stderr, no traceback).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from neardup.cli.common import check_format as _check_format
from neardup.cli.common import guard, new_app, report_skipped
from neardup.cli.common import print_result as _print
from neardup.cli.options import (
    READ_OPTIONS,
    FormatOpt,
    Option,
    QuietOpt,
    option,
    read_config,
    with_options,
)

online_app = new_app("online", "Online (streaming) near-duplicate detection: evaluate, tune and load stores.")

OrderOpt = Annotated[str, typer.Option("--order", help="given (file order) | time (by --time-field).")]
TimeFieldOpt = Annotated[str, typer.Option("--time-field", help="Field with the arrival time for --order time.")]
StoreOpt = Annotated[str, typer.Option("--store", help="sqlite:///PATH (relative) or sqlite:////abs/path, or postgresql://...")]


def _keyed_methods() -> str:
    """The registered batch methods with look-up keys, other than the online names (read without importing them)."""
    from neardup.methods import catalog

    online = ("auto", "sketch", "minhash")
    return " | ".join(sorted(d.name for d in catalog().values() if d.keyed and d.name not in online))


#: The detector's settings as options (not given: the settings file's, else the detector's defaults).
SETTINGS: tuple[Option, ...] = (
    option("method", Optional[str], ("--method", "-m"),
           "auto (default: calibrated on the first documents, recorded in the store) | sketch (the seed method) "
           "| minhash (ours) | a batch method with look-up keys, run as in neardup dedup: "
           + _keyed_methods() + " (its pair score must need no IDF weights)."),
    option("config", Optional[Path], ("--config",),
           "JSON file of online settings, an online tune output, or the batch configuration file "
           "(neardup tune --out chosen.json: its shingling, threshold and MinHash settings are mapped)."),
    option("char", Optional[bool], ("--char/--words",), "Character n-grams instead of word n-grams."),
    option("n", Optional[int], ("--ngram", "-n"), "n-gram size (default 4 words, 5 characters: as dedup's)."),
    option("k_sample", Optional[int], ("--k-sample",), "Shingles sampled for the sketch/MinHash (default 1600)."),
    option("p", Optional[int], ("--sketch-size",), "Method sketch: values kept of each document's sampled shingles (default 20)."),
    option("t", Optional[int], ("--sketch-agree",), "Method sketch: a stored document is a candidate when more than this many of the --sketch-size values agree (default 2)."),
    option("f", Optional[float], ("--verify-fraction",), "Fraction of each document (its beginning) verified against a candidate (default 0.4)."),
    option("f_short", Optional[float], ("--verify-fraction-short",), "--verify-fraction for short documents (--short-len; default 1.0)."),
    option("short_len", Optional[int], ("--short-len",), "Documents under this many tokens are short (default 100)."),
    option("r_overlap", Optional[float], ("--r-overlap",), "Overlap needed to be a duplicate (default 0.3)."),
    option("top_candidates", Optional[int], ("--top-candidates",), "Candidates verified exactly (seed: 1)."),
    option("update_rule", Optional[bool], ("--update-rule/--no-update-rule",), "New numbers or sentences make an update (a new original)."),
    option("num_perm", Optional[int], ("--num-perm",), "MinHash values (default 128)."),
    option("bands", Optional[int], ("--bands",), "LSH bands (with --rows; default derived from --lsh-threshold)."),
    option("rows", Optional[int], ("--rows",), "LSH rows per band (with --bands)."),
    option("lsh_threshold", Optional[float], ("--lsh-threshold",), "Jaccard level the LSH bands are derived for (default 0.2 words, 0.3 characters)."),
)
#: The settings a command that stores documents takes (the sampling and sketch size are fixed by the store).
STORE_SETTINGS: tuple[str, ...] = ("k_sample", "p", "f_short", "short_len", "num_perm", "bands", "rows")


def _guard(fn: Callable[[], Any], interrupted: str | None = None) -> Any:
    """Shared error handling (:func:`neardup.cli.common.guard`), plus store errors."""
    from neardup.online.store import StoreError

    return guard(fn, (StoreError,), interrupted)


def online_config(values: dict[str, Any]) -> Any:
    """An :class:`OnlineConfig` from a settings file and the options given (None = not given); the
    method defaults to :data:`~neardup.online.detector.DEFAULT_METHOD`. Notes on a batch configuration
    file's mapping go to stderr."""
    from neardup.online.detector import DEFAULT_METHOD, OnlineConfig
    from neardup.online.settings_file import read_settings

    options = dict(values)
    config_file = options.pop("config", None)
    settings: dict[str, Any] = {}
    if config_file is not None:
        settings, notes = read_settings(config_file)
        for note in notes:
            typer.echo(f"note: {note}", err=True)
    settings.update({k: v for k, v in options.items() if v is not None})
    settings.setdefault("method", DEFAULT_METHOD)
    return OnlineConfig.from_dict(settings)


@online_app.command("eval")
@with_options(SETTINGS, "settings")
def eval_command(
    data: Annotated[Path, typer.Argument(help="Labelled JSONL: documents with a 'cluster' field (null = singleton).")],
    settings: dict[str, Any],
    order: OrderOpt = "given", time_field: TimeFieldOpt = "date",
    store: Annotated[Optional[str], typer.Option("--store", help="Empty store to replay into (default: a temporary SQLite file).")] = None,
    fmt: FormatOpt = "text", quiet: QuietOpt = False,
) -> None:
    """Replay DATA as a stream through the detector; print precision, recall, F1 and latency."""

    def go() -> None:
        from neardup.online.evaluate import load_stream, replay

        _check_format(fmt)
        cfg = online_config(settings)
        stream = load_stream(data, order=order, time_field=time_field)
        out = replay(stream, cfg, store_url=store)
        out["config"] = cfg.to_dict()
        out["order"] = order
        if fmt == "text":
            out = {k: out[k] for k in ("method", "char", "n", "n_docs", "precision", "recall", "f1", "tp", "fp", "fn",
                                        "n_true_duplicates", "canonical", "latency", "docs_per_second")}
        _print(out, fmt)

    _guard(go)


@online_app.command("tune")
@with_options([o for o in SETTINGS if o.name in ("method", "config", "char", "top_candidates")], "settings")
def tune_command(
    validation: Annotated[Path, typer.Argument(help="Labelled stream the settings are chosen on.")],
    test: Annotated[Path, typer.Argument(help="Labelled stream the chosen settings are reported on.")],
    settings: dict[str, Any],
    update_rule: Annotated[Optional[bool], typer.Option("--update-rule/--no-update-rule", help="Fix the update rule (default: try both).")] = None,
    order: OrderOpt = "given", time_field: TimeFieldOpt = "date",
    trials_out: Annotated[Optional[Path], typer.Option("--trials-out", help="Write every grid point's validation metrics as JSONL.")] = None,
    fmt: FormatOpt = "text", quiet: QuietOpt = False,
) -> None:
    """Choose the shingling (words or characters, unless --char/--words), n, t (or the LSH threshold), f,
    r_overlap and the update rule on VALIDATION; report on TEST (and, per unit, what was tried)."""

    def go() -> None:
        from neardup.io.write import write_jsonl
        from neardup.online.evaluate import load_stream, tune

        _check_format(fmt)
        base = online_config(settings)
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
            out = {"method": out["method"], "params": out["params"], "tried": out["tried"],
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
@with_options(READ_OPTIONS, "read_opts")
@with_options(SETTINGS, "settings", exclude=STORE_SETTINGS)
def load_command(
    data: Annotated[str, typer.Argument(help="Documents to add: JSONL(.gz), a JSON array, Parquet, CSV, a folder of them (shards) or of .txt files, or a quoted glob.")],
    store: StoreOpt,
    settings: dict[str, Any],
    read_opts: dict[str, Any],
    batch: Annotated[int, typer.Option("--batch", help="Documents per transaction.")] = 500,
    workers: Annotated[int, typer.Option("--workers", help="Processes preparing batches ahead (0: none).")] = 1,
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
        read = read_config(read_opts)
        detector = Detector(open_store(store), online_config(settings))
        try:
            out = load(detector, data, read=read, batch_size=batch, workers=workers, progress=not quiet and fmt != "json")
        finally:
            detector.close()
        report_skipped(out["skipped"], "skipped_records of --format json")
        if fmt == "text":
            out.pop("skipped_records")
        _print(out, fmt)

    _guard(go, interrupted=f"load of {data} stopped; every batch committed before is kept in the store: run the "
                           "same command again to finish it")


@with_options(SETTINGS, "settings", exclude=STORE_SETTINGS)
def serve_command(
    settings: dict[str, Any],
    store: StoreOpt = "sqlite:///neardup-online.db",
    host: Annotated[str, typer.Option("--host", help="Address to bind (beyond loopback a token is required).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8000,
    token: Annotated[Optional[str], typer.Option("--token", envvar="NEARDUP_TOKEN", help="Bearer token clients must send (env NEARDUP_TOKEN).")] = None,
    max_body_bytes: Annotated[int, typer.Option("--max-body-bytes", help="Largest request body accepted (413 above).")] = 10 * 1024 * 1024,
    max_batch: Annotated[int, typer.Option("--max-batch", help="Most documents in one POST (413 above).")] = 1000,
    log_level: Annotated[str, typer.Option("--log-level", help="uvicorn log level.")] = "info",
    allowed_host: Annotated[Optional[list[str]], typer.Option("--allowed-host", help="Another name clients reach the server by, allowed in the Host header (repeatable). Without a token only localhost, loopback addresses and --host are (421 otherwise: DNS rebinding); with a token the Host is checked only when this is given.")] = None,
) -> None:
    """Run the HTTP service: POST /documents answers original or duplicate at once."""

    def go() -> None:
        from neardup.online.service import serve

        serve(store, host=host, port=port, token=token, config=online_config(settings), max_body_bytes=max_body_bytes,
              max_batch=max_batch, log_level=log_level, allowed_hosts=allowed_host or ())

    _guard(go)


def standalone_app() -> typer.Typer:
    """``online`` commands plus ``serve`` in one app (for ``python -m neardup.online`` and tests)."""
    app = new_app("neardup-online", "Online (streaming) near-duplicate detection and its HTTP service.")
    app.add_typer(online_app, name="online")
    app.command("serve")(serve_command)
    return app


def main() -> None:
    """Entry point of ``python -m neardup.online``."""
    standalone_app()()


if __name__ == "__main__":
    sys.exit(main())
