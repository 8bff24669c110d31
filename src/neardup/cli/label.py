"""``neardup label``: a terminal loop that shows candidate pairs side by side and records y/n answers.

Owns the command's arguments, the prompt and what it prints; must not choose pairs or write the file
itself (:mod:`neardup.label`) or lay out a pair (:mod:`neardup.report.terminal`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from neardup.cli.common import guard
from neardup.cli.options import METHOD_OPTIONS, READ_OPTIONS, OverwriteOpt, dedup_config, read_config, with_options

#: Answers: a duplicate, not a duplicate, skip this pair, stop (answers so far are kept).
KEYS = {"y": True, "n": False}


@with_options(READ_OPTIONS, "read_opts", exclude=("on_error",))
@with_options(METHOD_OPTIONS, "method_opts", exclude=("cluster", "max_cluster_size", "representative",
                                                     "representative_field"))
def label(
    input: Annotated[str, typer.Argument(help="The documents whose candidate pairs are labelled.")],
    out: Annotated[Path, typer.Option("--output", "-o", help="Pair-label JSONL to append answers to (a, b, label, score); answered pairs are skipped next time. Another existing file is refused unless --overwrite.")],
    method_opts: dict[str, Any],
    read_opts: dict[str, Any],
    pairs: Annotated[int, typer.Option("--pairs", help="Pairs to draw (half near the threshold, half spread over the other candidates).")] = 50,
    floor: Annotated[float, typer.Option("--floor", help="Candidates scoring below this share of the threshold are not asked about.")] = 0.5,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the sample.")] = 0,
    chars: Annotated[int, typer.Option("--chars", help="Characters of each text shown.")] = 1200,
    width: Annotated[Optional[int], typer.Option("--width", help="Terminal width in characters (default: detected).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Start OUT afresh: the first answer replaces it (default: append to it).")] = False,
) -> None:
    """Label candidate pairs by hand: each shown side by side, answered y (duplicate), n (not), s (skip) or q (quit).

    The answers train a model (`neardup train biencoder --data OUT --docs INPUT`) and tune or evaluate
    a method (`neardup tune OUT`, with the documents beside it as docs.jsonl or given by --docs)."""

    def go() -> None:
        from rich.console import Console

        from neardup.audit import PairView
        from neardup.io.read import read_corpus
        from neardup.io.write import check_outputs
        from neardup.label import LabelFile, sample_pairs
        from neardup.report.terminal import pair_table
        from neardup.verify.passages import shared_passages

        if pairs < 1:
            raise ValueError(f"--pairs must be >= 1, got {pairs}")
        if not 0 < floor <= 1:
            raise ValueError(f"--floor must be in (0, 1], got {floor}")
        check_outputs(files=[out], inputs=[input], overwrite=True)  # appended to, never an input
        answers = LabelFile(out, fresh=overwrite)  # an existing file: a pair-label file, or --overwrite
        console = Console(width=width, highlight=False)
        corpus = read_corpus(input, read_config(read_opts))
        drawn, threshold = sample_pairs(corpus, dedup_config(method_opts), pairs, seed=seed, floor=floor)
        todo = [p for p in drawn if frozenset((p.a, p.b)) not in answers.done]
        console.print(f"{len(todo)} pairs to label ({len(drawn) - len(todo)} of the {len(drawn)} drawn already in "
                      f"{out}); threshold {threshold:.3f}. y = duplicate, n = not, s = skip, q = quit")
        asked = 0
        for k, p in enumerate(todo, 1):
            ta, tb = corpus.texts[p.left], corpus.texts[p.right]
            spans = [{"left_start": x.left_start, "left_end": x.left_end, "right_start": x.right_start,
                      "right_end": x.right_end, "words": x.words} for x in shared_passages(ta, tb)]
            view = PairView(left=p.a, right=p.b, left_text=ta, right_text=tb, score=p.score, spans=spans)
            console.print(pair_table(view, plain=not console.is_terminal, chars=chars))
            while True:
                answer = typer.prompt(f"[{k}/{len(todo)}] duplicate? (y/n/s/q)", default="s", show_default=False,
                                      err=True).strip().lower()
                if answer in ("y", "n", "s", "q"):
                    break
                typer.echo("answer y, n, s or q", err=True)
            if answer == "q":
                break
            if answer in KEYS:
                answers.add(p, KEYS[answer])
                asked += 1
        total, dups = answers.counts()
        console.print(f"{asked} answers recorded; {out} holds {total} labelled pairs ({dups} duplicates)")

    guard(go)


__all__ = ["label"]
