"""The ``neardup`` command line: a thin layer over the Python API (:func:`neardup.dedup`, :func:`neardup.match`,
the evaluation, online, training and benchmark modules).

Owns the command tree (one module per group of commands, the shared option definitions in
:mod:`neardup.cli.options`, the error and output conventions in :mod:`neardup.cli.common`); must not
contain pipeline logic. Exit codes: 0 success, 2 bad input or settings (one clear line on stderr, no
traceback).
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from neardup.cli import data, dedup, evaluate, label, show
from neardup.cli.bench import bench_app
from neardup.cli.common import new_app
from neardup.cli.online import online_app, serve_command
from neardup.cli.train import train_app

app = new_app("neardup", "Find near-duplicate texts in large, noisy corpora.")


def _print_version(value: bool) -> None:
    if value:
        from neardup import __version__

        typer.echo(f"neardup {__version__}")
        raise typer.Exit()


@app.callback()
def _options(version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                                   help="Print the version and exit.")] = False) -> None:
    """Find near-duplicate texts in large, noisy corpora."""


app.command("dedup")(dedup.dedup)
app.command("show")(show.show)
app.command("eval")(evaluate.eval_cmd)
app.command("tune")(evaluate.tune)
app.command("match")(dedup.match)
app.command("label")(label.label)
app.command("embed")(data.embed)
app.command("noise")(data.noise)
app.add_typer(bench_app, name="bench")
app.add_typer(online_app, name="online")
app.command("serve")(serve_command)
app.add_typer(train_app, name="train")


def main() -> None:
    """Entry point for ``python -m neardup``."""
    app()


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["app", "main"]
