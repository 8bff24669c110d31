"""Text normalization: decide which differences between two texts do not count.

Owns the string-to-string clean-up applied before shingling or embedding; must not tokenize or hash.

Steps, each switchable in :class:`neardup.config.NormalizeConfig` and all on by default:

* ``nfkc`` - Unicode NFKC (full-width letters, ligatures, compatibility forms fold to plain ones);
* ``invisible`` - drop zero-width and other format characters (U+200B, U+00AD soft hyphen, ...);
* ``homoglyphs`` - fold Cyrillic/Greek look-alikes of Latin letters back to Latin (spam hash-busting);
* ``dehyphenate`` - join words split by a hyphen at a line break (``exam-\\nple`` -> ``example``);
* ``casefold`` - Unicode case folding;
* ``punctuation`` - replace punctuation and symbols by spaces (keeps letters, digits, whitespace);
* ``whitespace`` - fold runs of whitespace to one space and strip the ends.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from neardup.config import NormalizeConfig

# Look-alike letters used to defeat exact hashing, mapped to the Latin letter they imitate.
HOMOGLYPHS: dict[str, str] = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p",
    "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "һ": "h",
    "ԁ": "d", "ɡ": "g", "ԛ": "q", "ԝ": "w", "ѡ": "w", "ү": "y",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C",
    "Т": "T", "Х": "X", "У": "Y", "Ѕ": "S", "І": "I", "Ј": "J", "Ԛ": "Q", "Ԝ": "W",
    # Greek
    "α": "a", "ο": "o", "ρ": "p", "ν": "v", "υ": "u", "ι": "i", "κ": "k", "τ": "t", "χ": "x",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Latin look-alikes outside ASCII
    "ı": "i", "ɩ": "i", "ℓ": "l", "ǀ": "l",
}
# Zero-width and other invisible format characters (soft hyphen, joiners, bidi marks, BOM, ...).
INVISIBLE: frozenset[str] = frozenset(
    chr(c) for lo, hi in [(0xAD, 0xAD), (0x34F, 0x34F), (0x61C, 0x61C), (0x115F, 0x1160), (0x17B4, 0x17B5),
                          (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F),
                          (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0)]
    for c in range(lo, hi + 1)
)
# One str.translate pass per combination of the two character-level steps.
_TABLES = {
    (True, True): str.maketrans({**HOMOGLYPHS, **{ch: None for ch in INVISIBLE}}),
    (True, False): str.maketrans({ch: None for ch in INVISIBLE}),
    (False, True): str.maketrans(HOMOGLYPHS),
}


class _NonWordToSpace(dict):  # type: ignore[type-arg]
    """str.translate table: every character that is not alphanumeric becomes a space (cached per code point).

    ``not ch.isalnum()`` is exactly the regex class ``[\\W_]`` of Python's Unicode ``re``.
    """

    def __missing__(self, code: int) -> int:
        value = code if chr(code).isalnum() else 32
        self[code] = value
        return value


_NON_WORD_TO_SPACE = _NonWordToSpace()
# The same mapping for ASCII text, as a bytes table (much faster than a str table).
_ASCII_NON_WORD_TO_SPACE = bytes(c if chr(c).isalnum() else 32 for c in range(256))
_DEHYPHEN_RE = re.compile(r"(\w)-[ \t]*\r?\n[ \t]*(\w)")
_PUNCT_RE = re.compile(r"[^\w\s]|_")
_WS_RE = re.compile(r"\s+")


def normalize(text: str, config: NormalizeConfig | None = None) -> str:
    """Return ``text`` with the differences that should not count removed.

    >>> normalize("The  Quick-\\nbrown FOX!")
    'the quickbrown fox'
    """
    cfg = config or NormalizeConfig()
    if not cfg.enabled:
        return text
    if text.isascii():
        return _normalize_ascii(text, cfg)
    if cfg.nfkc:
        text = unicodedata.normalize("NFKC", text)
    table = _TABLES.get((cfg.invisible, cfg.homoglyphs))
    if table is not None:
        text = text.translate(table)
    if cfg.dehyphenate and "-" in text and "\n" in text:
        text = _DEHYPHEN_RE.sub(r"\1\2", text)
    if cfg.casefold:
        text = text.casefold()
    if cfg.punctuation and cfg.whitespace:
        return " ".join(text.translate(_NON_WORD_TO_SPACE).split())  # both steps, no regex
    if cfg.punctuation:
        text = _PUNCT_RE.sub(" ", text)
    if cfg.whitespace:
        text = _WS_RE.sub(" ", text).strip()
    return text


def _normalize_ascii(text: str, cfg: NormalizeConfig) -> str:
    """The same steps for pure-ASCII text, where NFKC, invisible characters and homoglyphs are no-ops."""
    if cfg.dehyphenate and "-" in text and "\n" in text:
        text = _DEHYPHEN_RE.sub(r"\1\2", text)
    if cfg.casefold:
        text = text.lower()  # casefold() equals lower() on ASCII
    if cfg.punctuation and cfg.whitespace:
        return " ".join(text.encode("ascii").translate(_ASCII_NON_WORD_TO_SPACE).decode("ascii").split())
    if cfg.punctuation:
        text = _PUNCT_RE.sub(" ", text)
    if cfg.whitespace:
        text = _WS_RE.sub(" ", text).strip()
    return text


def only_words_and_spaces(config: NormalizeConfig) -> bool:
    """True when normalized text holds nothing but word characters and single spaces,
    so ``str.split()`` tokenizes it exactly like the ``\\w+`` tokenizer.

    >>> only_words_and_spaces(NormalizeConfig())
    True
    """
    return config.enabled and config.punctuation and config.whitespace


def normalize_many(texts: Iterable[str], config: NormalizeConfig | None = None) -> list[str]:
    """Normalize every text with the same settings.

    >>> normalize_many(["A  b", "C!"])
    ['a b', 'c']
    """
    cfg = config or NormalizeConfig()
    return [normalize(t, cfg) for t in texts]
