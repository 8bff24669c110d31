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

    def set_postfix_str(self, *args: Any, **kwargs: Any) -> None:
        """Nothing."""

    def reset(self, total: float | None = None) -> None:
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


class ReadBar:
    """A bar over the bytes an input has been read to (its total: the input's size, so tqdm shows a rate and an
    ETA), with the documents done beside: :meth:`update` counts documents and moves the bar to ``position()``.

    >>> pos = [0]
    >>> bar = ReadBar(Silent(), lambda: pos[0]); pos[0] = 512; bar.update(3); bar.docs
    3
    """

    def __init__(self, bar: Any, position: Any) -> None:
        self.bar = bar
        self.position = position
        self.docs = 0

    def update(self, n: int = 1) -> None:
        """``n`` more documents done; the bar at the bytes read so far."""
        self.docs += n
        if isinstance(self.bar, Silent):
            return
        self.bar.set_postfix_str(f"{self.docs:,} docs", refresh=False)
        self.bar.update(max(0, self.position() - self.bar.n))

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        self.bar.set_postfix(*args, **kwargs)

    def close(self) -> None:
        """Close the bar."""
        self.bar.close()

    def __enter__(self) -> ReadBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["ReadBar", "Silent", "progress_bar"]
