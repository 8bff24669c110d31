"""Noise characters: the characters of a text that normalization drops or folds and a clean copy does
not need (what the ``cleanest`` representative policy counts, :func:`neardup.cluster.representative_keys`).

Owns the definition of a noise character and counting them; must not normalize text or rank documents.

A character is noise when it is

1. *invisible*: a format character (Unicode ``Cf``: zero-width spaces and joiners, soft hyphen, BOM, bidi
   marks) or a control character other than tab, newline and carriage return (``Cc``);
2. a *look-alike*: a Cyrillic or Greek letter, or a letter :data:`neardup.text.normalize.HOMOGLYPHS`
   folds to Latin, inside a word that also holds ASCII letters (mixed-script words are hash-busting;
   Russian or Greek text is not noise);
3. a *compatibility form* of a letter or digit that NFKC rewrites (full-width letters, ligatures,
   superscripts, circled numbers), not a space;
4. a replacement character (U+FFFD), a private-use, unassigned or surrogate code point;
5. a *stray symbol*: Unicode other and modifier symbols (``So``, ``Sk``: ``■ ● © ¨``, emoji) and the
   ASCII characters ``| ~ ^ ` { } \\``.

Letters, digits, whitespace and ordinary punctuation (``. , ; : ! ? ' " - ( ) / % $ & @ #``, dashes,
curly quotes, ellipses) are never noise. OCR misreadings that stay letters (``rn`` for ``m``) are not
counted: no character tells them apart.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from neardup.text.normalize import HOMOGLYPHS

#: ASCII noise: control characters (but tab, newline, carriage return, which are layout) and stray symbols.
_ASCII_NOISE = bytes(sorted((set(range(32)) - {9, 10, 13}) | {127} | set(b"|~^`{}\\")))
_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]")
_WORD_RE = re.compile(r"[^\W\d_]+")
_NOISE_CATEGORIES = frozenset({"Cf", "Cc", "Co", "Cn", "Cs", "So", "Sk"})


@cache
def _always_noise(ch: str) -> bool:
    """Classes 1, 3, 4 and 5 for one non-ASCII character (no context needed)."""
    if ch == "\ufffd" or unicodedata.category(ch) in _NOISE_CATEGORIES:
        return True
    if ch.isspace():
        return False
    folded = unicodedata.normalize("NFKC", ch)
    return folded != ch and folded.isalnum()


@cache
def _look_alike(ch: str) -> bool:
    """A letter that imitates a Latin one: a listed homoglyph, or any Cyrillic or Greek letter."""
    return ch in HOMOGLYPHS or (0x0370 <= ord(ch) <= 0x052F and ch.isalpha())


def _ascii_noise(data: bytes) -> int:
    return len(data) - len(data.translate(None, _ASCII_NOISE))


def noise_chars(text: str) -> int:
    """How many characters of ``text`` are noise (see the module docstring).

    >>> noise_chars("Free money"), noise_chars("Frее mоney\\u200b"), noise_chars("Москва и Рим")
    (0, 4, 0)
    """
    if text.isascii():
        return _ascii_noise(text.encode("ascii"))
    count = _ascii_noise(text.encode("ascii", "ignore"))
    count += sum(1 for ch in _NON_ASCII_RE.findall(text) if _always_noise(ch))
    for word in _WORD_RE.findall(text):
        if not word.isascii() and any(c.isascii() for c in word):
            count += sum(1 for c in word if not c.isascii() and _look_alike(c))
    return count


def noise_ratio(text: str) -> float:
    """Noise characters per character of ``text`` (0 for an empty text).

    >>> noise_ratio("ab|~"), noise_ratio("")
    (0.5, 0.0)
    """
    return noise_chars(text) / len(text) if text else 0.0


__all__ = ["noise_chars", "noise_ratio"]
