"""The ``neardup`` command line: a thin layer over the Python API.

Owns argument parsing, output formats and exit codes; must not contain pipeline logic.
Exit codes: 0 success, 2 bad input or settings (one clear line on stderr, no traceback).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from neardup.cli_common import guard, print_result
from neardup.config import NEURAL_METHODS, ConfigError, DedupConfig

app = typer.Typer(
    name="neardup",
    help="Find near-duplicate texts in large, noisy corpora.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


MethodOpt = Annotated[str, typer.Option("--method", "-m", help="minhash | ngram | simhash | retsim | retsim-partial | biencoder | hybrid | rerank")]
ModelOpt = Annotated[Optional[str], typer.Option("--model", help="Neural methods: a local model (RETSim .onnx file or sentence-transformers folder); default: the packaged one.")]
CrossModelOpt = Annotated[Optional[str], typer.Option("--cross-model", help="Method rerank: a cross-encoder folder (from `neardup train crossencoder`); --model is its bi-encoder.")]
RerankFloorOpt = Annotated[float, typer.Option("--rerank-floor", help="Method rerank: bi-encoder cosine a neighbour needs to be re-scored by the cross-encoder.")]
HybridWeightOpt = Annotated[Optional[float], typer.Option("--hybrid-weight", help="Method hybrid: the linear rule, w * weighted overlap + (1 - w) * cosine (default 0.5); 1 and 0 are the n-gram and RETSim signals alone, which `neardup tune --method hybrid` may pick (params.hybrid_weight).")]
HybridCoefOpt = Annotated[Optional[str], typer.Option("--hybrid-coef", help="Method hybrid: the learned rule's 5 coefficients (weighted overlap, cosine, partial, length ratio, intercept), comma-separated, as `neardup tune --method hybrid` prints them in params.hybrid_coef; default: the linear rule.")]
KOpt = Annotated[int, typer.Option("--k", help="Neural methods: neighbours searched per document.")]
IndexOpt = Annotated[str, typer.Option("--index", help="Neural methods: flat (exact, FAISS) | hnsw (approximate, USearch).")]
ThresholdOpt = Annotated[Optional[float], typer.Option("--threshold", "-t", help="Similarity threshold in (0, 1] (default: per method).")]
NgramOpt = Annotated[Optional[int], typer.Option("--ngram", "-n", help="Shingle size (default 4 words, or 5 characters with --char-ngrams).")]
CharOpt = Annotated[bool, typer.Option("--char-ngrams", help="Character instead of word n-grams.")]
NumPermOpt = Annotated[int, typer.Option("--num-perm", help="MinHash permutations.")]
BandsOpt = Annotated[Optional[int], typer.Option("--bands", help="LSH bands (with --rows; default: derived from the threshold).")]
RowsOpt = Annotated[Optional[int], typer.Option("--rows", help="LSH rows per band (with --bands).")]
RuleOpt = Annotated[str, typer.Option("--rule", help="MinHash candidate rule: lsh | collisions.")]
LshThresholdOpt = Annotated[Optional[float], typer.Option("--lsh-threshold", help="Jaccard level the LSH bands are derived for (default 0.2).")]
CollisionsOpt = Annotated[Optional[int], typer.Option("--min-collisions", help="With --rule collisions: signature values that must agree.")]
VerifyOpt = Annotated[str, typer.Option("--verify", help="Pair score: weighted-overlap | weighted-jaccard | overlap | jaccard | none.")]
ClusterOpt = Annotated[Optional[str], typer.Option("--cluster", help="components | louvain | leiden (default: leiden for hybrid, components otherwise)")]
MaxClusterOpt = Annotated[int, typer.Option("--max-cluster-size", help="Flag clusters larger than this as oversized (0: never).")]
TextFieldOpt = Annotated[str, typer.Option("--text-field", help="Field holding the text.")]
IdFieldOpt = Annotated[str, typer.Option("--id-field", help="Field holding the document id.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")]
FormatOpt = Annotated[str, typer.Option("--format", "-f", help="json | text")]


_guard = guard  # local names kept short in the command bodies
_print = print_result


def build_config(method: str, threshold: float | None, ngram: int | None, char_ngrams: bool, num_perm: int,
                 bands: int | None, rows: int | None, rule: str, lsh_threshold: float | None,
                 min_collisions: int | None, verify: str, cluster: str | None, max_cluster_size: int,
                 model: str | None = None, k: int = 100, index: str = "flat", cross_model: str | None = None,
                 rerank_floor: float = 0.8, hybrid_coef: str | None = None,
                 hybrid_weight: float | None = None) -> DedupConfig:
    """The :class:`DedupConfig` the command-line options describe."""
    from neardup.config import (ClusterConfig, EmbedConfig, MinHashConfig, ShingleConfig, SimHashConfig,
                                VerifyConfig)

    n = ngram if ngram is not None else (5 if char_ngrams else ShingleConfig().n)
    simhash = SimHashConfig(n=ngram) if ngram is not None else SimHashConfig()
    return DedupConfig(
        method=method,
        threshold=threshold,
        shingle=ShingleConfig(n=n, char=char_ngrams),
        simhash=simhash,
        minhash=MinHashConfig(num_perm=num_perm, bands=bands, rows=rows, rule=rule,
                              lsh_threshold=lsh_threshold if lsh_threshold is not None else MinHashConfig().lsh_threshold,
                              min_collisions=min_collisions),
        verify=VerifyConfig(score="none" if method == "simhash" and verify == VerifyConfig().score else verify),
        cluster=ClusterConfig(algorithm=cluster, max_cluster_size=max_cluster_size or None),
        embed=EmbedConfig(model=model, k=k, index=index, cross_model=cross_model, rerank_floor=rerank_floor,
                          **_hybrid_options(hybrid_coef, hybrid_weight)),
    )


def _hybrid_options(text: str | None, weight: float | None = None) -> dict[str, object]:
    """``--hybrid-coef`` (the learned rule with these coefficients) or ``--hybrid-weight`` (the linear rule) as
    EmbedConfig fields.

    >>> _hybrid_options("5.2, 1.2,1.5,-0.15,-6.7")["hybrid_coef"]
    (5.2, 1.2, 1.5, -0.15, -6.7)
    >>> _hybrid_options(None, 1.0)
    {'hybrid_rule': 'linear', 'hybrid_weight': 1.0}
    """
    if text is not None and weight is not None:
        raise ConfigError("--hybrid-coef (the learned rule) and --hybrid-weight (the linear rule) exclude each other")
    if weight is not None:
        return {"hybrid_rule": "linear", "hybrid_weight": float(weight)}
    if text is None:
        return {}
    try:
        coef = tuple(float(x) for x in text.replace("[", "").replace("]", "").split(","))
    except ValueError:
        raise ConfigError(f"--hybrid-coef must be 5 comma-separated numbers, got {text!r}") from None
    return {"hybrid_rule": "logistic", "hybrid_coef": coef}


@app.command()
def dedup(
    input: Annotated[str, typer.Argument(help="JSONL(.gz), Parquet, CSV, or a folder of .txt files; or an fsspec URL of a file (s3://..., gs://...; needs the store's package, e.g. s3fs).")],
    outdir: Annotated[Path, typer.Option("--output", "-o", help="Folder for clusters.parquet, pairs.parquet, summary.json.")],
    method: MethodOpt = "minhash",
    model: ModelOpt = None,
    cross_model: CrossModelOpt = None,
    rerank_floor: RerankFloorOpt = 0.8,
    hybrid_coef: HybridCoefOpt = None,
    hybrid_weight: HybridWeightOpt = None,
    k: KOpt = 100,
    index: IndexOpt = "flat",
    threshold: ThresholdOpt = None,
    ngram: NgramOpt = None,
    char_ngrams: CharOpt = False,
    num_perm: NumPermOpt = 128,
    bands: BandsOpt = None,
    rows: RowsOpt = None,
    rule: RuleOpt = "lsh",
    lsh_threshold: LshThresholdOpt = None,
    min_collisions: CollisionsOpt = None,
    verify: VerifyOpt = "weighted-overlap",
    cluster: ClusterOpt = None,
    max_cluster_size: MaxClusterOpt = 1000,
    text_field: TextFieldOpt = "text",
    id_field: IdFieldOpt = "id",
    keep: Annotated[Optional[Path], typer.Option("--keep", help="Also write the documents to keep (one per cluster) as JSONL.")] = None,
    drop_oversized: Annotated[bool, typer.Option("--drop-oversized", help="With --keep: also drop every document of an oversized cluster.")] = False,
    on_error: Annotated[str, typer.Option("--on-error", help="raise | skip: what a bad record does (skips are counted in summary.json).")] = "raise",
    memory_limit: Annotated[str, typer.Option("--memory-limit", help="Peak memory of the whole run, e.g. 1GB (sets batch sizes and partitions).")] = "2GB",
    workers: Annotated[int, typer.Option("--workers", help="Worker processes (0: one per core).")] = 0,
    resume: Annotated[bool, typer.Option("--resume", help="Continue an interrupted run from its last completed shard/stage.")] = False,
    work_dir: Annotated[Optional[Path], typer.Option("--work-dir", help="Where shards and checkpoints go (default OUTDIR/.neardup-work).")] = None,
    keep_work: Annotated[bool, typer.Option("--keep-work", help="Keep the work directory after success.")] = False,
    batch_docs: Annotated[Optional[int], typer.Option("--batch-docs", help="Documents per shard (default: from --memory-limit).")] = None,
    engine_name: Annotated[str, typer.Option("--engine", help="local (chunked, this machine) | ray (a Ray cluster).")] = "local",
    address: Annotated[Optional[str], typer.Option("--address", help="With --engine ray: the cluster address (default: start a local one).")] = None,
    quiet: QuietOpt = False,
) -> None:
    """De-duplicate a corpus: write clusters, verified pairs and a summary to OUTDIR."""

    def go() -> None:
        from neardup.engine.local import EngineConfig, parse_size, run_chunked
        from neardup.io.keep import kept_ids, write_kept

        cfg = build_config(method, threshold, ngram, char_ngrams, num_perm, bands, rows, rule, lsh_threshold,
                           min_collisions, verify, cluster, max_cluster_size, model, k, index, cross_model, rerank_floor,
                           hybrid_coef, hybrid_weight)
        engine = EngineConfig(memory_limit=parse_size(memory_limit), workers=workers, resume=resume,
                              work_dir=str(work_dir) if work_dir else None, keep_work=keep_work, progress=not quiet,
                              batch_docs=batch_docs)
        if engine_name not in ("local", "ray"):
            raise ConfigError(f"--engine must be local or ray, got {engine_name!r}")
        if address is not None and engine_name != "ray":
            raise ConfigError("--address needs --engine ray")
        read = {"text_field": text_field, "id_field": id_field, "on_error": on_error}
        if cfg.method in NEURAL_METHODS:
            # Neural methods run in memory (embeddings and the vector index must fit); see README.
            from neardup.api import dedup as api_dedup

            if engine_name == "ray":
                raise ConfigError("--engine ray supports the hashing methods (minhash, ngram, simhash)")
            result = api_dedup(input, config=cfg, progress=not quiet, **read)
            result.write(outdir)
            summary = result.summary
        elif engine_name == "ray":
            from neardup.engine.ray import run_ray

            summary = run_ray(input, outdir, cfg, engine, address=address, **read)
        else:
            summary = run_chunked(input, outdir, cfg, engine, **read)
        line = (f"{summary['n_docs']} documents, {summary['n_duplicate_clusters']} duplicate clusters, "
                f"{summary['n_duplicates']} duplicates ({100 * summary['duplicate_ratio']:.1f}%) -> {outdir}")
        if keep is not None:
            n_kept = write_kept(input, kept_ids(outdir / "clusters.parquet", drop_oversized), keep, id_field=id_field)
            line += f"; kept {n_kept} -> {keep}"
        if not quiet:
            typer.echo(line, err=True)

    _guard(go)


@app.command("eval")
def eval_cmd(
    data: Annotated[Path, typer.Argument(help="Labelled JSONL: documents with a 'cluster' field, or pairs (a, b, label).")],
    method: MethodOpt = "minhash",
    model: ModelOpt = None,
    cross_model: CrossModelOpt = None,
    rerank_floor: RerankFloorOpt = 0.8,
    hybrid_coef: HybridCoefOpt = None,
    hybrid_weight: HybridWeightOpt = None,
    k: KOpt = 100,
    index: IndexOpt = "flat",
    threshold: ThresholdOpt = None,
    ngram: NgramOpt = None,
    char_ngrams: CharOpt = False,
    num_perm: NumPermOpt = 128,
    bands: BandsOpt = None,
    rows: RowsOpt = None,
    rule: RuleOpt = "lsh",
    lsh_threshold: LshThresholdOpt = None,
    min_collisions: CollisionsOpt = None,
    verify: VerifyOpt = "weighted-overlap",
    cluster: ClusterOpt = None,
    max_cluster_size: MaxClusterOpt = 1000,
    docs: Annotated[Optional[Path], typer.Option("--docs", help="Documents for a pair-labelled file (default: docs.jsonl beside it).")] = None,
    text_field: TextFieldOpt = "text",
    id_field: IdFieldOpt = "id",
    fmt: FormatOpt = "text",
    quiet: QuietOpt = False,
) -> None:
    """Run the pipeline on labelled data and print ARI, pairwise precision/recall/F1 and timings."""

    def go() -> None:
        from neardup.eval.evaluate import evaluate
        from neardup.eval.loaders import load_any as load_labelled

        cfg = build_config(method, threshold, ngram, char_ngrams, num_perm, bands, rows, rule, lsh_threshold,
                           min_collisions, verify, cluster, max_cluster_size, model, k, index, cross_model, rerank_floor,
                           hybrid_coef, hybrid_weight)
        labelled = load_labelled(data, docs=docs, text_field=text_field, id_field=id_field)
        _print(evaluate(labelled, cfg, progress=not quiet and fmt != "json"), fmt)

    _guard(go)


@app.command()
def tune(
    validation: Annotated[Path, typer.Argument(help="Labelled validation file (thresholds are chosen here).")],
    test: Annotated[list[Path], typer.Argument(help="Labelled test file(s), reported with the chosen setting (several are pooled).")],
    method: MethodOpt = "minhash",
    model: ModelOpt = None,
    cross_model: CrossModelOpt = None,
    rerank_floor: RerankFloorOpt = 0.8,
    k: KOpt = 100,
    index: IndexOpt = "flat",
    ngram: NgramOpt = None,
    char_ngrams: CharOpt = False,
    num_perm: NumPermOpt = 128,
    verify: VerifyOpt = "weighted-overlap",
    cluster: ClusterOpt = None,
    max_cluster_size: MaxClusterOpt = 1000,
    thresholds: Annotated[Optional[str], typer.Option("--thresholds", help="Comma-separated thresholds to sweep (default: a grid per method).")] = None,
    trials_out: Annotated[Optional[Path], typer.Option("--trials-out", help="Write every (setting, validation metrics) row as JSONL.")] = None,
    text_field: TextFieldOpt = "text",
    id_field: IdFieldOpt = "id",
    fmt: FormatOpt = "text",
    quiet: QuietOpt = False,
) -> None:
    """Tune on VALIDATION (best ARI), report the chosen setting on TEST: the NEWS-COPY protocol."""

    def go() -> None:
        from neardup.eval.evaluate import pool
        from neardup.eval.loaders import load_any as load_labelled
        from neardup.eval.tune import tune as run_tune
        from neardup.io.write import write_jsonl

        cfg = build_config(method, None, ngram, char_ngrams, num_perm, None, None, "lsh", None, None, verify,
                           cluster, max_cluster_size, model, k, index, cross_model, rerank_floor)
        grid = [float(x) for x in thresholds.split(",")] if thresholds else None
        if grid is not None:
            for x in grid:
                if not 0 < x <= 1:
                    raise ConfigError(f"--thresholds: every threshold must be in (0, 1], got {x}")
        val = load_labelled(validation, text_field=text_field, id_field=id_field)
        tests = pool([load_labelled(p, text_field=text_field, id_field=id_field) for p in test])
        out = run_tune(val, tests, cfg, thresholds=grid, progress=not quiet and fmt != "json")
        trials = out.pop("trials")
        if trials_out is not None:
            write_jsonl(trials_out, iter(trials))
        if fmt == "text":
            out = {"params": out["params"], "validation": out["validation"], "test": out["test"]}
        _print(out, fmt)

    _guard(go)


@app.command()
def match(
    queries: Annotated[str, typer.Argument(help="The collection to check (e.g. a test set), read whole; a path or an fsspec URL.")],
    corpus: Annotated[str, typer.Argument(help="The collection to search (e.g. a training corpus), streamed; a path or an fsspec URL (s3://...).")],
    outdir: Annotated[Path, typer.Option("--output", "-o", help="Folder for matches.parquet and summary.json.")],
    method: MethodOpt = "minhash",
    model: ModelOpt = None,
    k: KOpt = 100,
    index: IndexOpt = "flat",
    threshold: ThresholdOpt = None,
    ngram: NgramOpt = None,
    char_ngrams: CharOpt = False,
    num_perm: NumPermOpt = 128,
    bands: BandsOpt = None,
    rows: RowsOpt = None,
    lsh_threshold: LshThresholdOpt = None,
    verify: VerifyOpt = "weighted-overlap",
    group_field: Annotated[Optional[str], typer.Option("--group-field", help="Query field naming its query set; leakage is reported per set.")] = None,
    text_field: TextFieldOpt = "text",
    id_field: IdFieldOpt = "id",
    fmt: FormatOpt = "text",
    quiet: QuietOpt = False,
) -> None:
    """Find each query document's near-duplicates in CORPUS (test-set leakage), without de-duplicating CORPUS."""

    def go() -> None:
        from neardup.match import match as run_match

        cfg = build_config(method, threshold, ngram, char_ngrams, num_perm, bands, rows, "lsh", lsh_threshold, None,
                           verify, "components", 0, model, k, index)
        summary = run_match(queries, corpus, outdir, cfg, group_field=group_field, text_field=text_field,
                            id_field=id_field, progress=not quiet and fmt != "json")
        _print({k: v for k, v in summary.items() if k != "params"} if fmt == "text" else summary, fmt)

    _guard(go)


@app.command()
def embed(
    input: Annotated[Path, typer.Argument(help="JSONL(.gz), Parquet, CSV, or a folder of .txt files.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The .npy file: float32, L2-normalised, rows in input order.")],
    model: Annotated[str, typer.Option("--model", help="retsim | biencoder | a RETSim .onnx file | a sentence-transformers folder.")] = "retsim",
    text_field: TextFieldOpt = "text",
    id_field: IdFieldOpt = "id",
    quiet: QuietOpt = False,
) -> None:
    """Write the embeddings of every document (one row per document, input order) as a NumPy .npy file."""

    def go() -> None:
        import numpy as np

        from neardup.config import EmbedConfig
        from neardup.io.read import read_corpus
        from neardup.io.write import atomic_path
        from neardup.represent.embeddings import embed_texts

        if model in ("retsim", "biencoder"):
            method, path = model, None
        else:
            p = Path(model)
            if not p.exists():
                raise ConfigError(f"--model: no such file or folder: {p}")
            method, path = ("retsim", str(p)) if p.is_file() else ("biencoder", str(p))
        corpus = read_corpus(input, text_field=text_field, id_field=id_field)
        if corpus.n_empty:
            typer.echo(f"note: {corpus.n_empty} empty documents get all-zero rows", err=True)
        cfg = DedupConfig(method=method, embed=EmbedConfig(model=path))
        vectors = embed_texts(corpus.texts, cfg, max_chars=10**9, progress=not quiet).docs
        with atomic_path(output) as tmp:
            with open(tmp, "wb") as fh:
                np.save(fh, vectors.astype(np.float32))
        if not quiet:
            typer.echo(f"{vectors.shape[0]} x {vectors.shape[1]} float32 -> {output}", err=True)

    _guard(go)


@app.command()
def noise(
    input: Annotated[Path, typer.Argument(help="JSONL(.gz) of clean documents.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="JSONL of noisy copies (id, text, source_id, ops).")],
    preset: Annotated[str, typer.Option("--preset", "-p", help="Noise preset (see --list).")] = "ocr-1930s",
    seed: Annotated[int, typer.Option("--seed", "-s", help="Random seed (same seed, same output).")] = 0,
    text_field: TextFieldOpt = "text",
    id_field: IdFieldOpt = "id",
) -> None:
    """Write one realistic noisy copy of each input document (OCR, typos, abridgement, spam tricks ...)."""

    def go() -> None:
        from neardup.synth import list_presets, noise_file

        if preset not in list_presets():
            raise ConfigError(f"preset must be one of {', '.join(list_presets())}, got {preset!r}")
        count = noise_file(str(input), str(output), preset, seed, text_field=text_field, id_field=id_field)
        typer.echo(f"wrote {count} noisy copies ({preset}, seed {seed}) -> {output}", err=True)

    _guard(go)


def _mount() -> None:
    """Attach the sub-command groups that live beside their subsystems."""
    from neardup.eval.bench_cli import app as bench_app
    from neardup.online.cli import online_app, serve_command
    from neardup.train.cli import train_app

    app.add_typer(bench_app, name="bench")
    app.add_typer(online_app, name="online")
    app.command("serve")(serve_command)
    app.add_typer(train_app, name="train")


_mount()


def main() -> None:
    """Entry point for ``python -m neardup``."""
    app()


if __name__ == "__main__":
    sys.exit(main())
