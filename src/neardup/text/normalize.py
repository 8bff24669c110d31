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
from collections.abc import Iterable, Sequence
from functools import cache

import numpy as np

from neardup.config import NormalizeConfig
from neardup.jit import compiled, pays

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


# Any character the invisible/homoglyph step would change (a cheap search decides whether to translate).
_SPECIAL_RE = re.compile("[" + re.escape("".join(sorted(set(HOMOGLYPHS) | INVISIBLE))) + "]")


@cache
def alnum_table() -> np.ndarray:
    """``chr(c).isalnum()`` for every code point (1.1 MB, built on first use by non-ASCII text): NumPy's string
    ufunc over every code point at once (30 ms), or where NumPy has none (before 2.0) Python's ``re``, in which
    ``not ch.isalnum()`` is exactly the class ``[\\W_]`` (220 ms). The tests check the two agree.
    """
    every_code = np.arange(0x110000, dtype=np.uint32)
    strings = getattr(np, "strings", None)
    if strings is not None:
        table = strings.isalnum(every_code.view("<U1"))  # each code point a one-character string (NUL: empty)
        table[0] = False
        return table
    return _alnum_table_re(every_code)


def _alnum_table_re(every_code: np.ndarray) -> np.ndarray:
    """:func:`alnum_table` by Python's ``re`` (``[\\W_]`` is exactly ``not ch.isalnum()``)."""
    every = every_code.tobytes().decode("utf-32-le", "surrogatepass")
    marked = re.sub(r"[\W_]", "\0", every).encode("utf-32-le", "surrogatepass")  # [\\W_] -> NUL
    table = np.frombuffer(marked, dtype=np.uint32) != 0
    table[0] = False  # NUL itself is not alphanumeric
    return table


def _non_word_to_space(text: str) -> str:
    """Every character that is not alphanumeric becomes a space (vectorised over code points)."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    spaced = np.where(alnum_table()[codes], codes, np.uint32(32))
    return spaced.tobytes().decode("utf-32-le", "surrogatepass")


# The same mapping for ASCII text, as a bytes table (much faster than a str table).
_ASCII_NON_WORD_TO_SPACE = bytes(c if chr(c).isalnum() else 32 for c in range(256))
# A hyphen at a line break; it is removed (joining the word) when a word character stands on both sides.
_HYPHEN_BREAK_RE = re.compile(r"-[ \t]*\r?\n[ \t]*")
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
    if only_words_and_spaces(cfg):
        return " ".join(normalize_words(text, cfg))
    text = _fold(text, cfg)
    if cfg.punctuation:
        text = _PUNCT_RE.sub(" ", text)
    if cfg.whitespace:
        text = _WS_RE.sub(" ", text).strip()
    return text


def normalize_words(text: str, config: NormalizeConfig | None = None) -> list[str]:
    """The words of the normalized text, for settings where it is nothing but words and single spaces
    (:func:`only_words_and_spaces`): ``" ".join(normalize_words(t)) == normalize(t)``, without building
    the joined string (the hashing path shingles these words directly).

    >>> normalize_words("The  Quick-\\nbrown FOX!")
    ['the', 'quickbrown', 'fox']
    """
    cfg = config or NormalizeConfig()
    if not only_words_and_spaces(cfg):
        raise ValueError("normalize_words needs the punctuation and whitespace steps on")
    text = _fold(text, cfg)
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_NON_WORD_TO_SPACE).decode("ascii").split()
    return _non_word_to_space(text).split()


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _joins(text: str, start: int, end: int) -> bool:
    """Whether the hyphen at a line break ``text[start:end]`` (a match of ``_HYPHEN_BREAK_RE``) stands between
    two word characters, and so joins them."""
    return 0 < start and end < len(text) and _is_word_char(text[start - 1]) and _is_word_char(text[end])


def _join_word(match: re.Match[str]) -> str:
    """Replacement for a hyphen at a line break: nothing between two word characters, else unchanged.

    The same as substituting ``(?<=\\w)-[ \\t]*\\r?\\n[ \\t]*(?=\\w)`` by "", about ten times faster
    (the pattern starts with a literal, so the scan skips straight to hyphens).
    """
    return "" if _joins(match.string, match.start(), match.end()) else match.group()


def line_break_joins(text: str) -> list[int]:
    """Where a hyphen at a line break joins the words on either side (the hyphens' offsets), as the
    ``dehyphenate`` step joins them.

    >>> line_break_joins("exam-\\nple, not -\\n here")
    [4]
    """
    if "-" not in text or "\n" not in text:
        return []
    return [m.start() for m in _HYPHEN_BREAK_RE.finditer(text) if _joins(text, m.start(), m.end())]


def _fold(text: str, cfg: NormalizeConfig) -> str:
    """The character-level steps before punctuation/whitespace (NFKC .. casefold); pure-ASCII text skips
    NFKC, invisible characters and homoglyphs (no-ops there) and uses ``lower()`` (equal to ``casefold()``)."""
    ascii_only = text.isascii()
    if not ascii_only:
        if cfg.nfkc:
            text = unicodedata.normalize("NFKC", text)
        table = _TABLES.get((cfg.invisible, cfg.homoglyphs))
        if table is not None and _SPECIAL_RE.search(text):
            text = text.translate(table)
    if cfg.dehyphenate and "-" in text:
        text = _HYPHEN_BREAK_RE.sub(_join_word, text)
    if cfg.casefold:
        text = text.lower() if ascii_only else text.casefold()
    return text


def normalized_code_points(texts: Sequence[str],
                           config: NormalizeConfig | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The normalized texts as one flat uint32 array of code points and each one's length:
    ``"".join(normalize_many(texts, config))`` without building the strings where it pays. On a large batch
    with settings where normalized text is nothing but words and single spaces (:func:`only_words_and_spaces`),
    a compiled loop does the word-level steps from the code points: for an ASCII text (most of a news corpus)
    all of them (the hyphen at a line break, lower case, every other character a space, runs of spaces
    folded); for another, what follows the character-level steps (:func:`_fold`, here first: NFKC, invisible
    characters, look-alikes, the hyphen at a line break, case folding), which is every character but a
    letter or digit a space and runs of spaces folded. Elsewhere texts are normalized here and the loop is
    not run.

    >>> units, lengths = normalized_code_points(["The  Quick-\\nbrown FOX!", "Ünï"])
    >>> units.tobytes().decode("utf-32-le"), lengths.tolist()
    ('the quickbrown foxünï', [18, 3])
    """
    cfg = config or NormalizeConfig()
    loop = only_words_and_spaces(cfg) and pays(sum(map(len, texts)))
    if loop:
        ascii_only = np.fromiter((t.isascii() for t in texts), dtype=np.bool_, count=len(texts))
        prepared = [t if plain else _fold(t, cfg) for t, plain in zip(texts, ascii_only)]
    else:
        prepared = [normalize(t, cfg) for t in texts]
    units = np.frombuffer("".join(prepared).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    lengths = np.fromiter(map(len, prepared), dtype=np.int64, count=len(prepared))
    if not loop:
        return units, lengths
    out = np.empty(units.size, dtype=np.uint32)  # by NumPy, in huge pages, and kept: no copy at the end
    used, lengths = _normalize_loop(units, lengths, ascii_only, cfg.dehyphenate, cfg.casefold,
                                    alnum_table() if not ascii_only.all() else np.zeros(0, dtype=np.bool_), out)
    return out[:used], lengths


@compiled
def _normalize_loop(units: np.ndarray, lengths: np.ndarray, ascii_only: np.ndarray, dehyphenate: bool,
                    casefold: bool, alnum: np.ndarray, out: np.ndarray) -> tuple[int, np.ndarray]:
    """:func:`normalized_code_points`' loop: each text as :func:`normalize_words` joined by spaces leaves it,
    written to the start of ``out`` (as long as ``units``); returns the code points written and each text's.
    (An array made here and copied to its length took as long again as the loop: numba's allocations fault
    in 4 KiB pages, NumPy's large ones in huge pages. The loop writes without branches where it can: with a
    branch at each word's end it took three times as long.)

    An ``ascii_only`` text is read as is. A hyphen, spaces or tabs, a line break (``\\r?\\n``) and spaces or
    tabs (``_HYPHEN_BREAK_RE``, leftmost first, matches never overlapping) vanish between two letters or digits
    of the text as read (``_join_word`` also joins at a ``_``, which then becomes a space: the same text);
    elsewhere they are, like every character but a letter or digit, a space; ``casefold`` lowers A-Z. Any other
    text went through :func:`_fold`: each character is kept where ``alnum`` (:func:`alnum_table`) says it is a
    letter or digit, else a space. Spaces fold to one between words, none at the ends."""
    ascii_words = np.zeros(128, dtype=np.uint32)  # an ASCII letter or digit: what it becomes; others 0
    for c in range(48, 58):
        ascii_words[c] = c
    for c in range(97, 123):
        ascii_words[c] = c
        ascii_words[c - 32] = c if casefold else c - 32
    out_lengths = np.empty(lengths.size, dtype=np.int64)
    start = 0
    w = 0
    for d in range(lengths.size):
        end = start + lengths[d]
        first = w
        plain = ascii_only[d]
        space = False  # a space is owed before the next letter or digit (never at the start)
        i = start
        while i < end:
            c = units[i]
            if c == 45 and plain and dehyphenate:  # "-": a hyphen at a line break?
                j = i + 1
                while j < end and (units[j] == 32 or units[j] == 9):
                    j += 1
                if j < end and units[j] == 13:
                    j += 1
                if j < end and units[j] == 10:
                    j += 1
                    while j < end and (units[j] == 32 or units[j] == 9):
                        j += 1
                    before = units[i - 1] if i > start else 0
                    after = units[j] if j < end else 0
                    if (48 <= before <= 57 or 65 <= before <= 90 or 97 <= before <= 122) \
                            and (48 <= after <= 57 or 65 <= after <= 90 or 97 <= after <= 122):
                        i = j  # the word goes on after the break
                        continue
                    space = w > first  # kept, and all of it punctuation or whitespace
                    i = j
                    continue
            if c < 128:
                m = ascii_words[c]
            elif not plain and alnum[c]:
                m = c
            else:
                m = np.uint32(0)
            word = m != 0
            # without branches (a word's end is a coin toss for the predictor): the owed space, then the
            # character, each written and counted only where due
            out[w] = 32
            w += word & space
            out[w] = m
            w += word
            space = (not word) & (w > first)
            i += 1
        out_lengths[d] = w - first
        start = end
    return w, out_lengths


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
