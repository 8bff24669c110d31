"""``neardup train biencoder`` and ``neardup train crossencoder``: the Typer sub-app ``train_app``.

Owns the training options and their one-line errors (exit 2); must not contain training logic.
Mounted by :mod:`neardup.cli` as ``app.add_typer(train_app, name="train")``. Heavy imports (torch,
sentence-transformers) happen inside the commands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from neardup.cli.common import guard, new_app
from neardup.cli.options import REQUIRED, Option, option, with_options

train_app = new_app("train", "Train models for the corpus at hand: a fine-tuned bi-encoder, a cross-encoder re-ranker.")

#: The options both trainers take (the model-specific ones are the commands' own parameters).
TRAIN_OPTIONS: tuple[Option, ...] = (
    option("data", list[Path], ("--data",), "Labelled JSONL (documents with 'cluster', or pairs a,b,label[,reason] with docs.jsonl beside them); repeat for several files (labelled days), trained on together. With --synthetic one document file of any kind (JSONL(.gz), Parquet, CSV, folder of .txt).", default=REQUIRED),
    option("val_data", Optional[list[Path]], ("--val-data",), "Labelled file(s) to validate on (another day), instead of holding out --val-fraction of --data. Repeatable."),
    option("copies", int, ("--noisy-copies",), "Labelled data: add N noisy copies of every document (OCR, aggregator, typo, spam noise from the generator) to its cluster, in training and validation; a copy keeps its original's labelled negatives.", default=0),
    option("self_pairs", bool, ("--self-pairs/--no-self-pairs",), "With --noisy-copies: pair each document with its own noisy copies as positives (the default). --no-self-pairs keeps only pairs of different labelled documents, original or noisy, so the positives are the real duplicates (seen through noise) rather than 'one text and its noisy copy'.", default=True),
    option("out", Path, ("--out", "-o"), "Model folder to write (checkpoints go to OUT/checkpoints, the report to OUT/train_report.json).", default=REQUIRED),
    option("synthetic", bool, ("--synthetic",), "Make training clusters from the texts with the noise generator (noisy copies + hard negatives).", default=False),
    option("max_minutes", Optional[float], ("--max-minutes",), "Wall-clock budget of the whole command; training stops early (with a checkpoint) to fit it."),
    option("resume", bool, ("--resume",), "Continue from the last checkpoint in OUT (same data and options).", default=False),
    option("overwrite", bool, ("--overwrite",), "Write into an OUT that exists and is not empty (its model files are replaced); never one that holds or is an input.", default=False),
    option("epochs", int, ("--epochs",), "Passes over the training pairs.", default=1),
    option("steps", Optional[int], ("--steps",), "Planned optimiser steps (overrides --epochs)."),
    option("max_steps", Optional[int], ("--max-steps",), "Stop after this many steps in total, keeping the planned schedule (continue later with --resume)."),
    option("batch_size", int, ("--batch-size",), "Pairs (supcon: texts) per step.", default=16),
    option("lr", Optional[float], ("--lr",), "AdamW peak learning rate (after warm-up); default 2e-5 (bi-encoder), 3e-5 (cross-encoder)."),
    option("warmup", float, ("--warmup",), "Fraction of the steps spent warming the learning rate up.", default=0.1),
    option("max_seq_length", Optional[int], ("--max-seq-length",), "Tokens per text while training (cross-encoder: per pair); default 128 (bi-encoder), 256 (cross-encoder)."),
    option("checkpoint_every", int, ("--checkpoint-every",), "Checkpoint every N steps (and at the end).", default=50),
    option("val_fraction", float, ("--val-fraction",), "Share of the documents (whole clusters) held out for validation.", default=0.15),
    option("neg_per_pos", Optional[float], ("--neg-per-pos",), "Negative pairs per positive pair (default 2 for labelled data, 1 with --synthetic)."),
    option("hard_fraction", Optional[float], ("--hard-fraction",), "Share of negatives that are hard (generator/labelled/mined); the rest are random (default 0.8 for labelled data, 2/3 with --synthetic)."),
    option("mine", Optional[str], ("--mine",), "Hard-negative mining on the training split: minhash | encoder | both | none (default: minhash for a bi-encoder; for a cross-encoder, encoder = the --candidates bi-encoder's neighbours)."),
    option("max_sources", Optional[int], ("--max-sources",), "With --synthetic: source texts sampled (each becomes a cluster).", default=300),
    option("neighbours", float, ("--neighbours",), "With --synthetic: share of the sources drawn together with their real nearest neighbours in the file (MinHash candidates, IDF-weighted overlap 0.15-0.6, not duplicates by the source-dedup rule); each such pair becomes two clusters, an explicit hard negative and one split group. 0 = off.", default=0.0),
    option("hard_kinds", Optional[str], ("--hard-kinds",), "With --synthetic: the generated hard negatives, comma-separated, taken in turn: update, same_event_rewrite, template_sibling (every name and figure replaced), entity_swap (one or two names and about half the figures). Default: update,same_event_rewrite,template_sibling."),
    option("max_pairs", Optional[int], ("--max-pairs",), "Cap on training pairs."),
    option("exclude", Optional[list[Path]], ("--exclude",), "Drop training documents that are in, or near-duplicates of, this file (e.g. a test set). Repeatable."),
    option("seed", int, ("--seed",), "Seed of sampling, splits, pairs and batch order.", default=0),
    option("no_eval", bool, ("--no-eval",), "Skip the validation evaluation before and after training.", default=False),
    option("eval_max_tokens", Optional[int], ("--eval-max-tokens",), "Tokens per text when evaluating (default: a bi-encoder's --max-seq-length, as the pipeline applies a model trained here; the candidate bi-encoder's for a cross-encoder; 512 for others)."),
    option("threads", Optional[int], ("--threads",), "torch CPU threads (default: torch's choice)."),
    option("docs", Optional[Path], ("--docs",), "Documents for a pair-labelled --data file (default: docs.jsonl beside it)."),
    option("text_field", str, ("--text-field",), "Field holding the text.", default="text"),
    option("id_field", str, ("--id-field",), "Field holding the document id.", default="id"),
    option("fmt", str, ("--format", "-f"), "text | json", default="text"),
    option("quiet", bool, ("--quiet", "-q"), "No progress bar or log lines; print only the result.", default=False),
)


def _print(report: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        typer.echo(json.dumps(report, default=str))
        return
    from neardup.train.common import summary_line

    label = "bi-encoder alone" if report["kind"] == "crossencoder" else "base model"
    typer.echo(summary_line(f"validation before ({label})", report.get("validation_before")))
    typer.echo(summary_line("validation after", report.get("validation_after")))
    typer.echo(f"steps: {report['steps']}/{report['total_steps']} ({report['stopped']}); loss "
               f"{report['loss_first'] if report['loss_first'] is None else round(report['loss_first'], 4)} -> "
               f"{report['loss_last'] if report['loss_last'] is None else round(report['loss_last'], 4)}; "
               f"train {report['seconds_train'] / 60:.1f} min, total {report['seconds_total'] / 60:.1f} min")
    typer.echo(f"model: {report['out']}")


def _exit_if_interrupted(report: dict[str, Any]) -> None:
    """Ctrl-C / SIGTERM: the checkpoint and model are saved; say how to continue and exit 130."""
    if report.get("stopped") == "interrupted":
        typer.echo(f"interrupted at step {report['steps']}: continue with the same options and --resume", err=True)
        raise typer.Exit(130)


def _config(kind: str, **kw: Any) -> Any:
    from neardup.config import ConfigError
    from neardup.train.common import TrainConfig

    if kw["fmt"] not in ("text", "json"):
        raise ConfigError(f"--format must be json or text, got {kw['fmt']!r}")
    for flag, paths in (("--data", kw["data"]), ("--val-data", kw["val_data"] or [])):
        for path in paths:
            if not Path(path).exists():
                raise ConfigError(f"{flag}: no such file or folder: {path}")
    if kw["base"] is not None and not Path(kw["base"]).is_dir():
        raise ConfigError(f"--base: no such model folder: {kw['base']}")
    seq = kw["max_seq_length"] or (256 if kind == "crossencoder" else 128)
    return TrainConfig(
        data=tuple(str(p) for p in kw["data"]), out=str(kw["out"]), synthetic=kw["synthetic"],
        val_data=tuple(str(p) for p in kw["val_data"]) if kw["val_data"] else None, copies=kw["copies"], self_pairs=kw["self_pairs"], docs=str(kw["docs"]) if kw["docs"] else None,
        text_field=kw["text_field"], id_field=kw["id_field"], base=kw["base"], loss=kw.get("loss", "online-contrastive"),
        epochs=kw["epochs"], steps=kw["steps"], batch_size=kw["batch_size"], lr=kw["lr"], head_lr=kw.get("head_lr"),
        warmup=kw["warmup"],
        max_seq_length=seq, max_minutes=kw["max_minutes"], resume=kw["resume"], checkpoint_every=kw["checkpoint_every"],
        val_fraction=kw["val_fraction"], neg_per_pos=kw["neg_per_pos"], hard_fraction=kw["hard_fraction"],
        mine=kw["mine"], max_sources=kw["max_sources"], neighbours=kw["neighbours"], max_pairs=kw["max_pairs"],
        exclude=tuple(str(p) for p in (kw["exclude"] or ())), seed=kw["seed"], evaluate=not kw["no_eval"],
        eval_max_tokens=kw["eval_max_tokens"], candidates=kw.get("candidates"), rerank_floor=kw.get("rerank_floor"),
        align_pairs=kw.get("align", True), pair_view=kw.get("pair_view", "text"),
        hard_kinds=tuple(k.strip() for k in kw["hard_kinds"].split(",") if k.strip()) if kw["hard_kinds"] is not None else None,
        threads=kw["threads"], progress=not kw["quiet"], stop_at_step=kw["max_steps"])


def _check_out(kw: dict[str, Any]) -> None:
    """Before any work: OUT (the model folder) must be a folder that can be written, and must not be, hold or
    lie inside an input (the data, documents, excluded files, base and candidate models), even with
    --overwrite; one that exists and is not empty is written into only with --resume (its own checkpoints)
    or --overwrite. An :class:`~neardup.io.write.OutputError` naming it."""
    from neardup.io.write import OutputError, check_outputs

    out = Path(kw["out"])
    check_outputs(folders=[out])
    root = out.resolve()
    inputs = [*kw["data"], *(kw["val_data"] or []), *(kw["exclude"] or []), kw["docs"], kw["base"],
              kw.get("candidates")]
    for source in (Path(p) for p in inputs if p is not None):
        src = source.resolve()
        if src == root or root in src.parents:
            raise OutputError(f"{out}: --out holds the input {source}; give it a folder of its own")
        if src.is_dir() and src in root.parents:
            raise OutputError(f"{out}: --out is inside the input folder {source}; give it a folder of its own")
    if out.is_dir() and any(out.iterdir()) and not (kw["resume"] or kw["overwrite"]):
        raise OutputError(f"{out} exists and is not empty: give --overwrite to write the model into it "
                          "(or --resume to continue its training)")


def _train(kind: str, kw: dict[str, Any]) -> None:
    """Run ``neardup train KIND`` with the command's options; print the report."""

    def go() -> None:
        from neardup.train import train_biencoder, train_crossencoder

        job = train_biencoder if kind == "biencoder" else train_crossencoder
        cfg = _config(kind, **kw)
        _check_out(kw)  # before any work, after the settings' own checks
        report = job(cfg, log=None if kw["quiet"] else (lambda m: typer.echo(m, err=True)))
        _print(report, kw["fmt"])
        _exit_if_interrupted(report)

    guard(go)


@train_app.command("biencoder")
@with_options(TRAIN_OPTIONS, "common")
def biencoder(
    common: dict[str, Any],
    base: Annotated[Optional[str], typer.Option("--base", help="Starting model folder (sentence-transformers/BERT); default: the packaged all-MiniLM-L6-v2.")] = None,
    loss: Annotated[str, typer.Option("--loss", help="online-contrastive (margin 0.2, cosine) | mnrl | supcon.")] = "online-contrastive",
) -> None:
    """Fine-tune a bi-encoder (contrastive, with hard negatives); OUT loads with --method biencoder --model OUT."""
    _train("biencoder", {**common, "base": base, "loss": loss})


@train_app.command("crossencoder")
@with_options(TRAIN_OPTIONS, "common")
def crossencoder(
    common: dict[str, Any],
    base: Annotated[Optional[str], typer.Option("--base", help="Starting model folder (sentence-transformers/BERT); default: the --candidates bi-encoder, else the packaged all-MiniLM-L6-v2.")] = None,
    candidates: Annotated[Optional[str], typer.Option("--candidates", help="Bi-encoder folder whose neighbours are re-ranked in validation (default: the packaged model).")] = None,
    rerank_floor: Annotated[Optional[float], typer.Option("--rerank-floor", help="Cosine floor of the validation candidates (default: keep 98% of the true pairs).")] = None,
    align: Annotated[bool, typer.Option("--align/--no-align", help="Cut each pair so both texts start on the same passage (a dropped lead or an added headline otherwise shows the model different text on each side); recorded in OUT and applied when scoring.")] = True,
    pair_view: Annotated[str, typer.Option("--pair-view", help="What the model reads of a pair: text (both texts, from their aligned openings) | diff (the words each text lacks of the other, after their share); recorded in OUT and applied when scoring.")] = "text",
    head_lr: Annotated[Optional[float], typer.Option("--head-lr", help="Learning rate of the new classification head (default 1e-3; the encoder uses --lr).")] = None,
) -> None:
    """Train a cross-encoder pair classifier; OUT re-ranks with --method rerank --model BI --cross-model OUT."""
    _train("crossencoder", {**common, "base": base, "candidates": candidates, "rerank_floor": rerank_floor,
                            "align": align, "pair_view": pair_view, "head_lr": head_lr})


__all__ = ["train_app"]
