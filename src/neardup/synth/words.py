"""Word-level noise: words deleted, inserted, substituted, swapped, repeated, and spam junk words.

Owns splitting lines into words, editing them in place and drawing replacement words (also used by
:mod:`neardup.synth.negatives`); must not touch characters inside a word or whole sentences.

Every op is ``op(text, rng, rate) -> str`` with ``rate`` the per-word probability.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from neardup.synth.edits import TOKEN_RE, events, first_sentence
from neardup.synth.lexicon import COMMON_WORDS, JUNK_WORDS

__all__ = ["junk_words", "word_delete", "word_insert", "word_repeat", "word_substitute", "word_swap"]

_CORE_RE = re.compile(r"^(\W*)(.*?)(\W*)$", re.S)


def edit_words(text: str, rng: random.Random, rate: float,
               fn: Callable[[list[str | None], int], None]) -> str:
    """Run ``fn(row, i)`` on the space-separated words hit at ``rate``; a ``None`` word is removed.

    Words are split per line on single spaces (fast, keeps every other character in place); at
    least one word is always kept.

    >>> edit_words("a b\\nc", random.Random(0), 1.0, lambda row, i: row.__setitem__(i, row[i].upper()))
    'A B\\nC'
    """
    lines = text.split("\n")
    rows = [ln.split(" ") for ln in lines]
    sizes = [len(r) for r in rows]
    hits = events(sum(sizes), rate, rng)
    if not hits:
        return text
    touched: set[int] = set()
    r = 0
    base = 0
    for k in hits:
        while k >= base + sizes[r]:
            base += sizes[r]
            r += 1
        row = rows[r]
        i = k - base
        if row[i]:
            fn(row, i)
            touched.add(r)
    if not touched:
        return text
    out = "\n".join(" ".join([w for w in rows[j] if w is not None]) if j in touched else lines[j]
                    for j in range(len(lines)))
    return out if out.strip() else first_sentence(text)


def _match_case(src: str, word: str) -> str:
    if len(src) > 1 and src.isupper():
        return word.upper()
    if src[:1].isupper():
        return word[:1].upper() + word[1:]
    return word.lower() if src.islower() else word


def replace_core(word: str, new: str) -> str:
    """``word`` with its core (what is left without leading/trailing punctuation) replaced, case matched.

    >>> replace_core('"Hello,', "world")
    '"World,'
    """
    m = _CORE_RE.match(word)
    assert m is not None
    pre, core, post = m.groups()
    if not core:
        return word
    return pre + _match_case(core, new) + post


def doc_words(text: str) -> list[str]:
    """The document's words worth reusing: longer than two characters, not numbers.

    >>> doc_words("It is 2024 and the year ends")
    ['and', 'the', 'year', 'ends']
    """
    return [w for w in TOKEN_RE.findall(text) if len(w) > 2 and not w.isdigit()]


class LazyWords:
    """The document's own words, tokenised only if a word is actually drawn."""

    __slots__ = ("text", "words")

    def __init__(self, text: str) -> None:
        self.text = text
        self.words: list[str] | None = None

    def get(self) -> list[str]:
        if self.words is None:
            self.words = doc_words(self.text)
        return self.words


def pick_word(rng: random.Random, doc: LazyWords | Sequence[str]) -> str:
    """A word from the document (1/2) or from the built-in common-word list (1/2)."""
    rnd = rng.random
    if rnd() < 0.5:
        words = doc.get() if isinstance(doc, LazyWords) else doc
        if words:
            return words[int(rnd() * len(words))]
    return COMMON_WORDS[int(rnd() * len(COMMON_WORDS))]


def word_delete(text: str, rng: random.Random, rate: float) -> str:
    """Delete words (at least one word is kept).

    >>> word_delete("one two three", random.Random(0), 0.0)
    'one two three'
    """
    def fn(items: list[str | None], i: int) -> None:
        items[i] = None
    return edit_words(text, rng, rate, fn)


def word_insert(text: str, rng: random.Random, rate: float) -> str:
    """Insert words drawn from the document itself or a small built-in word list.

    >>> len(word_insert("a b c", random.Random(0), 1.0).split())
    6
    """
    doc = LazyWords(text)

    def fn(items: list[str | None], i: int) -> None:
        items[i] = f"{items[i]} {pick_word(rng, doc)}"
    return edit_words(text, rng, rate, fn)


def word_substitute(text: str, rng: random.Random, rate: float) -> str:
    """Replace words (keeping attached punctuation and capitalisation) by other words.

    >>> word_substitute("Hello, world.", random.Random(3), 1.0).count(",")
    1
    """
    doc = LazyWords(text)

    def fn(items: list[str | None], i: int) -> None:
        w = items[i]
        if w is not None:
            items[i] = replace_core(w, pick_word(rng, doc))
    return edit_words(text, rng, rate, fn)


def word_swap(text: str, rng: random.Random, rate: float) -> str:
    """Swap a word with its right neighbour.

    >>> word_swap("a b", random.Random(0), 1.0)
    'b a'
    """
    def fn(items: list[str | None], i: int) -> None:
        if i + 1 < len(items) and items[i + 1]:
            items[i], items[i + 1] = items[i + 1], items[i]
    return edit_words(text, rng, rate, fn)


def word_repeat(text: str, rng: random.Random, rate: float) -> str:
    """Repeat words ("the the").

    >>> word_repeat("the cat", random.Random(0), 1.0)
    'the the cat cat'
    """
    def fn(items: list[str | None], i: int) -> None:
        w = items[i]
        if w is not None:
            m = _CORE_RE.match(w)
            core = m.group(2) if m else w
            items[i] = f"{core} {w}" if core else w
    return edit_words(text, rng, rate, fn)


def junk_words(text: str, rng: random.Random, rate: float) -> str:
    """Insert spam junk tokens ("FREE", "click", "bit.ly/...").

    >>> len(junk_words("a b", random.Random(0), 1.0).split())
    4
    """
    def fn(items: list[str | None], i: int) -> None:
        items[i] = f"{items[i]} {JUNK_WORDS[int(rng.random() * len(JUNK_WORDS))]}"
    return edit_words(text, rng, rate, fn)
