"""``neardup embed`` and ``neardup noise``: data made from a corpus (its embeddings; noisy copies of it).

Owns these commands' arguments, what they print and their exit codes; must not embed or make noise
itself (:mod:`neardup.represent.embeddings`, :mod:`neardup.synth`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from neardup.cli.common import guard
from neardup.cli.options import (
    READ_OPTIONS,
    OverwriteOpt,
    QuietOpt,
    read_config,
    with_options,
)


@with_options(READ_OPTIONS, "read_opts", exclude=("on_error",))
def embed(
    input: Annotated[Path, typer.Argument(help="JSONL(.gz), Parquet, CSV, or a folder of .txt files.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The .npy file: float32, L2-normalised, rows in input order.")],
    read_opts: dict[str, Any],
    model: Annotated[str, typer.Option("--model", help="retsim | biencoder | a RETSim .onnx file | a sentence-transformers folder.")] = "retsim",
    overwrite: OverwriteOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Write the embeddings of every document (one row per document, input order) as a NumPy .npy file."""

    def go() -> None:
        import numpy as np

        from neardup.config import ConfigError, EmbedConfig
        from neardup.io.read import read_corpus
        from neardup.io.write import atomic_path, check_outputs
        from neardup.represent.embeddings import embed_texts

        check_outputs(files=[output], inputs=[input], overwrite=overwrite)
        if model in ("retsim", "biencoder"):
            kind, path = model, None
        else:
            p = Path(model)
            if not p.exists():
                raise ConfigError(f"--model: no such file or folder: {p}")
            kind, path = ("retsim", str(p)) if p.is_file() else ("biencoder", str(p))
        corpus = read_corpus(input, read_config(read_opts))
        if corpus.n_empty:
            typer.echo(f"note: {corpus.n_empty} empty documents get all-zero rows", err=True)
        vectors = embed_texts(corpus.texts, kind, EmbedConfig(model=path), max_chars=10**9,  # type: ignore[arg-type]
                              progress=not quiet).docs
        with atomic_path(output) as tmp:
            with open(tmp, "wb") as fh:
                np.save(fh, vectors.astype(np.float32))
        if not quiet:
            typer.echo(f"{vectors.shape[0]} x {vectors.shape[1]} float32 -> {output}", err=True)

    guard(go)


@with_options(READ_OPTIONS, "read_opts", exclude=("on_error", "encoding"))
def noise(
    input: Annotated[Path, typer.Argument(help="JSONL(.gz) of clean documents.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="JSONL of noisy copies (id, text, source_id, ops).")],
    read_opts: dict[str, Any],
    preset: Annotated[str, typer.Option("--preset", "-p", help="Noise preset (see --list).")] = "ocr-1930s",
    seed: Annotated[int, typer.Option("--seed", "-s", help="Random seed (same seed, same output).")] = 0,
    overwrite: OverwriteOpt = False,
) -> None:
    """Write one realistic noisy copy of each input document (OCR, typos, abridgement, spam tricks ...)."""

    def go() -> None:
        from neardup.config import ConfigError
        from neardup.io.write import check_outputs
        from neardup.synth import list_presets, noise_file

        check_outputs(files=[output], inputs=[input], overwrite=overwrite)
        if preset not in list_presets():
            raise ConfigError(f"preset must be one of {', '.join(list_presets())}, got {preset!r}")
        read = read_config(read_opts)
        count = noise_file(str(input), str(output), preset, seed, text_field=read.text_field, id_field=read.id_field)
        typer.echo(f"wrote {count} noisy copies ({preset}, seed {seed}) -> {output}", err=True)

    guard(go)


__all__ = ["embed", "noise"]
