"""Progress bars for long work: a tqdm bar where progress is shown, a silent stand-in where it is not.

Owns the choice between the two; must not decide when progress is shown (callers pass ``shown``: the
command line's ``--quiet``, an engine's ``progress``). A quiet run never imports tqdm (about 50 ms of a
small run's start-up).
"""

from __future__ import annotations

from typing import Any


class Silent:
    """What a hidden bar answers: every call does nothing.

    >>> with progress_bar(False, total=3) as bar:
    ...     bar.update(2); bar.set_postfix(duplicates=1); bar.close()
    >>> bar.n
    0
    """

    n = 0

    def update(self, n: float = 1) -> None:
        """Nothing."""

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        """Nothing."""

    def close(self) -> None:
        """Nothing."""

    def __enter__(self) -> Silent:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def progress_bar(shown: bool, **kwargs: Any) -> Any:
    """``tqdm(**kwargs)`` where ``shown``, else a :class:`Silent` bar (tqdm not imported).

    >>> type(progress_bar(False, total=10, desc="map")).__name__
    'Silent'
    """
    if not shown:
        return Silent()
    from tqdm.auto import tqdm

    return tqdm(**kwargs)


__all__ = ["Silent", "progress_bar"]
