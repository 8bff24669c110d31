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
_HOMOGLYPH_TABLE = str.maketrans(HOMOGLYPHS)
_INVISIBLE_RE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
                           "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]")
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
    if cfg.nfkc:
        text = unicodedata.normalize("NFKC", text)
    if cfg.invisible:
        text = _INVISIBLE_RE.sub("", text)
    if cfg.homoglyphs:
        text = text.translate(_HOMOGLYPH_TABLE)
    if cfg.dehyphenate:
        text = _DEHYPHEN_RE.sub(r"\1\2", text)
    if cfg.casefold:
        text = text.casefold()
    if cfg.punctuation:
        text = _PUNCT_RE.sub(" ", text)
    if cfg.whitespace:
        text = _WS_RE.sub(" ", text).strip()
    return text


def normalize_many(texts: Iterable[str], config: NormalizeConfig | None = None) -> list[str]:
    """Normalize every text with the same settings.

    >>> normalize_many(["A  b", "C!"])
    ['a b', 'c']
    """
    cfg = config or NormalizeConfig()
    return [normalize(t, cfg) for t in texts]
