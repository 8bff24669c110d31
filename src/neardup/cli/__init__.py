"""The ``neardup`` command line: a thin layer over the Python API (:func:`neardup.dedup`, :func:`neardup.match`,
the evaluation, online, training and benchmark modules).

Owns the command tree (one module per group of commands, the shared option definitions in
:mod:`neardup.cli.options`, the error and output conventions in :mod:`neardup.cli.common`); must not
contain pipeline logic. Exit codes: 0 success, 2 bad input or settings (one clear line on stderr, no
traceback).
"""

from __future__ import annotations

import importlib
import sys
from typing import Annotated, Any

import typer

from neardup import jit
from neardup.cli.common import new_app

jit.quiet_blas()  # this process's own, before any command imports NumPy

#: Every command, in the order ``neardup --help`` lists them: name -> (module, attribute), the attribute a
#: command function or, for a group of sub-commands, a Typer app. A run builds only the command it names
#: (:func:`main`): importing every command module and building all of their options cost each run ~0.08 s.
COMMANDS: dict[str, tuple[str, str]] = {
    "dedup": ("neardup.cli.dedup", "dedup"),
    "show": ("neardup.cli.show", "show"),
    "rethreshold": ("neardup.cli.rethreshold", "rethreshold"),
    "eval": ("neardup.cli.evaluate", "eval_cmd"),
    "tune": ("neardup.cli.evaluate", "tune"),
    "match": ("neardup.cli.dedup", "match"),
    "label": ("neardup.cli.label", "label"),
    "embed": ("neardup.cli.data", "embed"),
    "noise": ("neardup.cli.data", "noise"),
    "bench": ("neardup.cli.bench", "bench_app"),
    "online": ("neardup.cli.online", "online_app"),
    "serve": ("neardup.cli.online", "serve_command"),
    "train": ("neardup.cli.train", "train_app"),
}


def _print_version(value: bool) -> None:
    if value:
        from neardup import __version__

        typer.echo(f"neardup {__version__}")
        raise typer.Exit()


def _options(version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                                   help="Print the version and exit.")] = False) -> None:
    """Find near-duplicate texts in large, noisy corpora."""


def build_app(only: str | None = None) -> typer.Typer:
    """The ``neardup`` command tree: every command, or (``only``) the one named, with the same top-level
    options, so that it parses, helps and fails exactly as it does in the whole tree.

    >>> sorted(typer.main.get_command(build_app("dedup")).commands)
    ['dedup']
    """
    app = new_app("neardup", "Find near-duplicate texts in large, noisy corpora.")
    app.callback()(_options)
    for name, (module, attribute) in COMMANDS.items():
        if only is None or name == only:
            target = getattr(importlib.import_module(module), attribute)
            if isinstance(target, typer.Typer):
                app.add_typer(target, name=name)
            else:
                app.command(name)(target)
    return app


def main(args: list[str] | None = None) -> Any:
    """The ``neardup`` command (and ``python -m neardup``): builds only the command its first argument
    names, the whole tree for anything else (``--help``, ``--version``, an unknown command)."""
    args = sys.argv[1:] if args is None else args
    first = args[0] if args else None
    return build_app(first if first in COMMANDS else None)(args=args, prog_name="neardup")


def __getattr__(name: str) -> Any:
    """``app``: the whole command tree (built on first use; tests and ``typer.testing`` invoke it)."""
    if name == "app":
        app = build_app()
        globals()["app"] = app
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["COMMANDS", "app", "build_app", "main"]
