"""Sentence- and paragraph-level noise: sentences deleted, inserted or swapped; the end cut or the lead dropped.

Owns edits whose unit is a sentence or a paragraph; must not edit inside a sentence or add headers or footers.

``rate`` is the per-sentence probability, except for ``abridge`` / ``drop_lead``, where it is the
fraction of the text to cut.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from neardup.synth.edits import PARA_SPLIT, SENT_SPLIT, events, join_units, sentences, split_units
from neardup.synth.lexicon import FILLER_SENTENCES

__all__ = ["abridge", "drop_lead", "sentence_delete", "sentence_insert", "sentence_swap"]

_WS_RE = re.compile(r"\s+")


def _sent_op(text: str, rng: random.Random, rate: float,
             fn: Callable[[list[str | None], int, list[int]], None]) -> str:
    sents, seps = split_units(SENT_SPLIT, text)
    cand = [i for i, s in enumerate(sents) if s.strip()]
    hits = events(len(cand), rate, rng)
    if not hits:
        return text
    items: list[str | None] = list(sents)
    for k in hits:
        fn(items, k, cand)
    if all(items[i] is None for i in cand):
        items[cand[0]] = sents[cand[0]]
    return join_units(items, seps)


def sentence_delete(text: str, rng: random.Random, rate: float) -> str:
    """Delete sentences (the first sentence is kept if all would go).

    >>> sentence_delete("A b. C d.", random.Random(0), 0.0)
    'A b. C d.'
    """
    def fn(items: list[str | None], k: int, cand: list[int]) -> None:
        items[cand[k]] = None
    return _sent_op(text, rng, rate, fn)


def sentence_insert(text: str, rng: random.Random, rate: float) -> str:
    """Insert a generic filler sentence (3/4) or repeat one of the document's sentences (1/4).

    >>> sentence_insert("A b.", random.Random(0), 1.0).startswith("A b. ")
    True
    """
    own = sentences(text)

    def fn(items: list[str | None], k: int, cand: list[int]) -> None:
        i = cand[k]
        extra = rng.choice(own) if own and rng.random() < 0.25 else rng.choice(FILLER_SENTENCES)
        if items[i] is not None:
            items[i] = f"{items[i]} {extra.strip()}"
    return _sent_op(text, rng, rate, fn)


def sentence_swap(text: str, rng: random.Random, rate: float) -> str:
    """Swap a sentence with the next one.

    >>> sentence_swap("A b. C d.", random.Random(0), 1.0)
    'C d. A b.'
    """
    def fn(items: list[str | None], k: int, cand: list[int]) -> None:
        if k + 1 < len(cand):
            i, j = cand[k], cand[k + 1]
            items[i], items[j] = items[j], items[i]
    return _sent_op(text, rng, rate, fn)


def _content_span(text: str) -> tuple[int, int]:
    """(index of the first non-space character, index after the last one)."""
    return len(text) - len(text.lstrip()), len(text.rstrip())


def _boundaries(regex: re.Pattern[str], text: str, starts: bool) -> list[int]:
    """Ends (or starts) of the split units that leave non-space text on both sides."""
    lo, hi = _content_span(text)
    out: list[int] = []
    pos = 0
    want = 1 if starts else 0
    for k, part in enumerate(regex.split(text)):
        pos += len(part)
        if k % 2 == want and lo < pos < hi:
            out.append(pos)
    return out


def abridge(text: str, rng: random.Random, rate: float) -> str:
    """Keep a prefix: cut about ``rate`` of the text from the end, at a sentence (else word) boundary.

    >>> abridge("One. Two. Three. Four.", random.Random(0), 0.5)
    'One. Two.'
    """
    if rate <= 0 or not text.strip():
        return text
    target = len(text) * (1.0 - min(rate, 1.0))
    ends = _boundaries(SENT_SPLIT, text, starts=False)
    if not ends:  # a single sentence: cut at a word boundary instead
        lo, hi = _content_span(text)
        ends = [m.start() for m in _WS_RE.finditer(text, lo, hi)]
        if not ends:
            return text
    cut = min(ends, key=lambda e: (abs(e - target), e))
    return text[:cut].rstrip()


def drop_lead(text: str, rng: random.Random, rate: float) -> str:
    """Missing lead ("continued from another page"): drop leading paragraphs (else sentences).

    At least one unit is dropped and at least one kept; ``rate`` is the target dropped fraction.

    >>> drop_lead("Lead para.\\n\\nBody text.", random.Random(0), 0.1)
    'Body text.'
    """
    if not text.strip():
        return text
    target = len(text) * max(rate, 0.0)
    starts: list[int] = []
    for regex in (PARA_SPLIT, SENT_SPLIT):
        starts = _boundaries(regex, text, starts=True)
        if starts:
            break
    if not starts:
        return text
    cut = next((s for s in starts if s >= target), starts[-1])
    return text[cut:]
