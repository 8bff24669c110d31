"""What every ``neardup`` sub-command shares: one-line errors with exit code 2, and result printing.

Owns the command-line error and output conventions; must not parse options or run pipelines.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import typer


def new_app(name: str, help: str) -> typer.Typer:
    """A Typer app (or sub-app) with the conventions of every ``neardup`` command group: help when run
    without arguments, no shell-completion commands, no decorated tracebacks, and Click's plain help and
    error messages (up to 120 columns wide where the terminal is), not Rich's panels: importing and drawing
    those took 0.13-0.18 s of every ``--help`` (docs/speed.md, start-up)."""
    return typer.Typer(name=name, help=help, no_args_is_help=True, add_completion=False,
                       pretty_exceptions_enable=False, rich_markup_mode=None,
                       context_settings={"max_content_width": 120})


def fail(message: str) -> NoReturn:
    """Print ``neardup: error: message`` on stderr and exit with code 2."""
    typer.echo(f"neardup: error: {message}", err=True)
    raise typer.Exit(2)


#: The exit code of a command stopped by Ctrl-C (SIGINT), as shells report it.
EXIT_INTERRUPTED = 130


def interrupted_run(what: str, work: Path | None = None) -> str:
    """What an interrupted command says: ``what`` stopped, and (for a resumable run whose work is kept
    in ``work``) how to continue."""
    if work is None:
        return f"{what} stopped; nothing was written"
    return f"{what} stopped; the work done so far is kept in {work}: run the same command with --resume to continue"


def report_skipped(n: int, where: Path | str) -> None:
    """One line on stderr when bad records were skipped (``--on-error skip``), pointing at their list."""
    if n:
        typer.echo(f"neardup: skipped {n} bad record{'s' if n != 1 else ''} (see {where})", err=True)


def guard(fn: Callable[[], Any], expected: tuple[type[BaseException], ...] = (),
          interrupted: str | Callable[[], str] | None = None) -> Any:
    """Run ``fn``; expected errors become one clear line and exit code 2 (never a traceback); Ctrl-C
    (SIGINT) says what was interrupted (``interrupted``, or what it returns then, see :func:`interrupted_run`)
    and exits 130.

    ``expected`` adds error types of a sub-command (e.g. a store error) to the usual ones.
    """
    from neardup.config import ConfigError
    from neardup.io.read import InputError

    try:
        return fn()
    except KeyboardInterrupt:
        said = interrupted() if callable(interrupted) else interrupted
        typer.echo(f"neardup: interrupted: {said or 'stopped before it finished'}", err=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except (InputError, ConfigError, *expected) as exc:
        fail(str(exc))
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        fail(f"{exc.filename}: {exc.strerror}")
    except OSError as exc:  # a full disk (ENOSPC), a quota, an I/O error: the file and the system's reason
        if exc.errno is None:
            raise
        reason = os.strerror(exc.errno)
        reason = reason[:1].lower() + reason[1:]
        fail(f"{exc.filename}: {reason}" if exc.filename is not None else reason)
    except ImportError as exc:
        fail(str(exc))
    except ValueError as exc:
        fail(str(exc))
    except MemoryError:
        fail("out of memory: process the input in smaller parts (--memory-limit, smaller sets)")


def check_format(fmt: str) -> None:
    """``--format`` must be json or text."""
    if fmt not in ("json", "text"):
        fail(f"--format must be json or text, got {fmt!r}")


def rounded(value: Any, digits: int = 3) -> Any:
    """``value`` with every float in it (nested in dicts, lists and tuples too) rounded to ``digits`` decimals,
    for reading; files and ``--format json`` keep full precision.

    >>> rounded({"ari": 0.825985017916975, "coef": [5.21234, -6.0], "n": 3})
    {'ari': 0.826, 'coef': [5.212, -6.0], 'n': 3}
    """
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(rounded(v, digits) for v in value)
    return value


def print_result(obj: dict[str, Any], fmt: str) -> None:
    """``json``: exactly one JSON object on stdout (full precision); ``text``: ``key: value`` lines (one level
    of nesting), numbers rounded to 3 decimals."""
    check_format(fmt)
    if fmt == "json":
        typer.echo(json.dumps(obj, default=float))
        return
    for key, value in rounded(obj).items():
        if isinstance(value, dict):
            typer.echo(f"{key}:")
            for k, v in value.items():
                typer.echo(f"  {k}: {v}")
        else:
            typer.echo(f"{key}: {value}")
