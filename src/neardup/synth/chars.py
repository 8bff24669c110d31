"""Character-level noise: OCR misreadings, dropped type, spacing, hyphenation, typos, case, evasion, formatting.

Owns the character tables (OCR confusions, homoglyphs, invisible characters, the QWERTY layout), the
ops that use them and their inverses; must not change whole words or sentences.

Every op is ``op(text, rng, rate) -> str`` with ``rate`` the per-character event probability (for
``quotes``: per quote character).
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Callable

from neardup.synth.edits import apply_edits, events, safe_delete, safe_pos

__all__ = ["HOMOGLYPHS", "HOMOGLYPH_FOLD", "INVISIBLE_CHARS", "OCR_CONFUSIONS", "case_change", "char_drop",
           "fold_homoglyphs", "homoglyph", "hyphenate", "invisible", "ocr_confusion", "punctuation", "quotes",
           "spacing", "strip_invisible", "typo", "whitespace"]

#: OCR confusions: source substring -> possible misreadings (both directions are listed).
OCR_CONFUSIONS: dict[str, tuple[str, ...]] = {
    "rn": ("m",), "m": ("rn", "nn"), "cl": ("d",), "d": ("cl",), "li": ("h",), "h": ("li", "b"),
    "vv": ("w",), "w": ("vv",), "ii": ("u",), "u": ("ii", "n"), "n": ("u", "ri"), "ri": ("n",),
    "l": ("1", "I", "i"), "1": ("l", "I"), "I": ("l", "1"), "i": ("l", "1", "!"),
    "e": ("c", "o"), "c": ("e",), "o": ("0", "c", "a"), "O": ("0", "Q"), "0": ("O", "o"),
    "a": ("o", "e"), "S": ("5", "$"), "5": ("S",), "s": ("5",), "B": ("8",), "8": ("B", "3"),
    "t": ("f", "l"), "f": ("t",), "g": ("q", "9"), "q": ("g",), "E": ("F",), "F": ("E",),
    "G": ("C", "6"), "C": ("G",), "Z": ("2",), "2": ("Z",), "b": ("h", "6"), "6": ("b",),
    "y": ("v",), "v": ("y",), ".": (",",), ",": (".",),
}

#: Latin -> visually identical Cyrillic/Greek/Latin-extended code points.
HOMOGLYPHS: dict[str, tuple[str, ...]] = {
    "a": ("\u0430",), "c": ("\u0441", "\u03f2"), "d": ("\u0501",), "e": ("\u0435",),
    "h": ("\u04bb",), "i": ("\u0456",), "j": ("\u0458",), "o": ("\u043e", "\u03bf"),
    "p": ("\u0440",), "q": ("\u051b",), "s": ("\u0455",), "w": ("\u051d",), "x": ("\u0445",),
    "y": ("\u0443",), "A": ("\u0410", "\u0391"), "B": ("\u0412", "\u0392"),
    "C": ("\u0421", "\u03f9"), "E": ("\u0415", "\u0395"), "H": ("\u041d", "\u0397"),
    "I": ("\u0406", "\u0399"), "J": ("\u0408",), "K": ("\u041a", "\u039a"),
    "M": ("\u041c", "\u039c"), "N": ("\u039d",), "O": ("\u041e", "\u039f"),
    "P": ("\u0420", "\u03a1"), "S": ("\u0405",), "T": ("\u0422", "\u03a4"),
    "X": ("\u0425", "\u03a7"), "Y": ("\u03a5", "\u04ae"), "Z": ("\u0396",),
}
#: Inverse of ``HOMOGLYPHS`` (confusable -> Latin), for ``str.translate``.
HOMOGLYPH_FOLD: dict[int, str] = {ord(t): s for s, ts in HOMOGLYPHS.items() for t in ts}

#: Zero-width / invisible format characters (all Unicode category Cf).
INVISIBLE_CHARS: tuple[str, ...] = ("\u200b", "\u200c", "\u200d", "\u00ad", "\u2060", "\ufeff")
_INVISIBLE_DELETE = {ord(c): None for c in INVISIBLE_CHARS}


def _qwerty_neighbours(rows: tuple[str, ...]) -> dict[str, str]:
    """Each key's neighbours on the keyboard (row above, same row, row below; left to right)."""
    out: dict[str, str] = {}
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            nb = []
            for dr in (-1, 0, 1):
                rr = r + dr
                if 0 <= rr < len(rows):
                    for dc in (-1, 0, 1):
                        cc = c + dc
                        if (dr, dc) != (0, 0) and 0 <= cc < len(rows[rr]):
                            nb.append(rows[rr][cc])
            out[ch] = "".join(nb)
    return out


_QWERTY = _qwerty_neighbours(("qwertyuiop", "asdfghjkl", "zxcvbnm"))

_OCR_PAIR_FIRST = frozenset(k[0] for k in OCR_CONFUSIONS if len(k) == 2)
_LETTER_RE = re.compile(r"[^\W\d_]")
_ALNUM_RE = re.compile(r"[^\W_]")
_LONGWORD_RE = re.compile(r"[^\W\d_]{5,}")
_INWORD_RE = re.compile(r"(?<=\w)(?=\w)")
_PUNCT_RE = re.compile(r"[.,;:!?'\"]")
_SPACE_RE = re.compile(r" ")
_WS_RUN = re.compile(r"[ \t]+|\n[ \t]*\n\s*|\n")
_QUOTES = {"'": "\u2019", '"': "\u201d", "\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'}
_QUOTE_RE = re.compile("[" + "".join(_QUOTES) + "]")


def _site_op(text: str, rng: random.Random, rate: float, regex: re.Pattern[str],
             make: Callable[[re.Match[str]], tuple[int, int, str] | None]) -> str:
    edits: list[tuple[int, int, str]] = []
    last = 0
    search = regex.search
    for p in events(len(text), rate, rng):
        m = search(text, p if p > last else last)
        if m is None:
            break
        e = make(m)
        if e is not None:
            edits.append(e)
        last = m.end()
    return apply_edits(text, edits)


def ocr_confusion(text: str, rng: random.Random, rate: float) -> str:
    """OCR misreadings (rn<->m, l<->1<->I, e<->c, cl<->d, O<->0, li<->h, vv<->w, S<->5, B<->8 ...).

    Each character is hit with probability ``rate``; a hit on a confusable character (or on the
    first of a confusable pair such as "rn") replaces it by one of its misreadings.

    >>> ocr_confusion("modern", random.Random(0), 1.0) != "modern"
    True
    """
    edits: list[tuple[int, int, str]] = []
    last = 0
    n = len(text)
    rnd = rng.random
    get = OCR_CONFUSIONS.get
    for p in events(n, rate, rng):
        if p < last:
            continue
        c = text[p]
        opts = get(text[p:p + 2]) if c in _OCR_PAIR_FIRST else None
        if opts is None:
            opts = get(c)
            if opts is None:
                continue
            e = p + 1
        else:
            e = p + 2
        if e < n and text[e] >= "\x80" and unicodedata.combining(text[e]):
            continue
        edits.append((p, e, opts[int(rnd() * len(opts))]))
        last = e
    return apply_edits(text, edits)


def char_drop(text: str, rng: random.Random, rate: float) -> str:
    """Drop letters/digits (faded or broken type).

    >>> char_drop("abc", random.Random(0), 0.0)
    'abc'
    """
    def make(m: re.Match[str]) -> tuple[int, int, str] | None:
        return (m.start(), m.end(), "") if safe_delete(text, m.end()) else None
    return _site_op(text, rng, rate, _ALNUM_RE, make)


def spacing(text: str, rng: random.Random, rate: float) -> str:
    """Dropped spaces (words run together) and added spaces (words split), 50/50.

    >>> spacing("a b", random.Random(0), 0.0)
    'a b'
    """
    edits: list[tuple[int, int, str]] = []
    n = len(text)
    for p in events(n, rate, rng):
        if rng.random() < 0.5:
            m = _SPACE_RE.search(text, p)
            if m is not None and 0 < m.start() and m.end() < n:
                edits.append((m.start(), m.end(), ""))
        else:
            m = _INWORD_RE.search(text, p)
            if m is not None:
                q = safe_pos(text, m.start())
                edits.append((q, q, " "))
    edits.sort(key=lambda e: e[0])
    return apply_edits(text, edits)


def hyphenate(text: str, rng: random.Random, rate: float) -> str:
    """Line-break hyphenation: insert "-\\n" inside words of 5+ letters.

    >>> "-\\n" in hyphenate("extraordinary", random.Random(0), 1.0)
    True
    """
    def make(m: re.Match[str]) -> tuple[int, int, str] | None:
        k = m.start() + rng.randint(2, len(m.group()) - 2)
        return (k, k, "-\n") if safe_pos(text, k) == k else None
    return _site_op(text, rng, rate, _LONGWORD_RE, make)


def typo(text: str, rng: random.Random, rate: float) -> str:
    """Keyboard typos on ASCII letters: insert/substitute a QWERTY neighbour, delete, or transpose.

    >>> typo("keyboard", random.Random(1), 1.0) != "keyboard"
    True
    """
    edits: list[tuple[int, int, str]] = []
    n = len(text)
    last = 0
    rnd = rng.random
    qw = _QWERTY
    for s in events(n, rate, rng):
        if s < last:
            continue
        c = text[s]
        lc = c.lower()
        nbs = qw.get(lc) if c < "\x80" else None
        if nbs is None:
            continue
        e = s + 1
        nb = nbs[int(rnd() * len(nbs))]
        if c != lc:
            nb = nb.upper()
        r = rnd()
        if r < 0.25:
            edits.append((s, e, c + nb))
        elif not safe_delete(text, e):
            continue
        elif r < 0.5:
            edits.append((s, e, ""))
        elif r < 0.8 or e >= n or text[e].lower() not in qw or not safe_delete(text, e + 1):
            edits.append((s, e, nb))
        else:
            edits.append((s, e + 1, text[e] + c))
            e += 1
        last = e
    return apply_edits(text, edits)


def case_change(text: str, rng: random.Random, rate: float) -> str:
    """Flip the case of letters.

    >>> case_change("abc", random.Random(0), 1.0)
    'ABC'
    """
    def make(m: re.Match[str]) -> tuple[int, int, str] | None:
        c = m.group()
        sw = c.swapcase()
        return (m.start(), m.end(), sw) if len(sw) == 1 and sw != c else None
    return _site_op(text, rng, rate, _LETTER_RE, make)


def homoglyph(text: str, rng: random.Random, rate: float) -> str:
    """Replace Latin letters by visually identical Cyrillic/Greek ones (a->а, e->е, o->о, A->А ...).

    Each character is hit with probability ``rate``; hits on letters in ``HOMOGLYPHS`` are swapped.

    >>> fold_homoglyphs(homoglyph("poker", random.Random(0), 1.0))
    'poker'
    """
    edits: list[tuple[int, int, str]] = []
    rnd = rng.random
    get = HOMOGLYPHS.get
    for p in events(len(text), rate, rng):
        opts = get(text[p])
        if opts is not None:
            edits.append((p, p + 1, opts[int(rnd() * len(opts))]))
    return apply_edits(text, edits)


def invisible(text: str, rng: random.Random, rate: float) -> str:
    """Insert zero-width characters (ZWSP, ZWNJ, ZWJ, soft hyphen, word joiner, BOM).

    >>> strip_invisible(invisible("free money", random.Random(0), 0.5))
    'free money'
    """
    edits: list[tuple[int, int, str]] = []
    last = 0
    n = len(text)
    rnd = rng.random
    k = len(INVISIBLE_CHARS)
    for p in events(n, rate, rng):
        if p == 0:
            continue
        ch = text[p]
        q = p if (ch < "\x80" and ch != "\n") else safe_pos(text, p)
        if q < last or q >= n:
            continue
        edits.append((q, q, INVISIBLE_CHARS[int(rnd() * k)]))
        last = q
    return apply_edits(text, edits)


def punctuation(text: str, rng: random.Random, rate: float) -> str:
    """Random punctuation: stray marks inserted (3/4) or existing ones deleted (1/4).

    >>> punctuation("a b", random.Random(0), 0.0)
    'a b'
    """
    edits: list[tuple[int, int, str]] = []
    last = 0
    for p in events(len(text), rate, rng):
        if rng.random() < 0.75:
            q = safe_pos(text, p)
            if q >= last:
                edits.append((q, q, rng.choice(".,;:'`-\"!")))
                last = q
        else:
            m = _PUNCT_RE.search(text, max(p, last))
            if m is not None:
                edits.append((m.start(), m.end(), ""))
                last = m.end()
    return apply_edits(text, edits)


def whitespace(text: str, rng: random.Random, rate: float) -> str:
    """Formatting-only changes to whitespace (paragraph breaks <-> newlines, doubled spaces).

    >>> whitespace("a b", random.Random(0), 0.0)
    'a b'
    """
    def make(m: re.Match[str]) -> tuple[int, int, str] | None:
        g = m.group()
        if "\n" in g:
            new = "\n" if g.count("\n") > 1 else ("\n\n" if rng.random() < 0.5 else " ")
        else:
            new = ("  " if rng.random() < 0.5 else " \n") if g == " " else " "
        return (m.start(), m.end(), new)
    return _site_op(text, rng, rate, _WS_RUN, make)


def quotes(text: str, rng: random.Random, rate: float) -> str:
    """Swap straight and curly quotes/apostrophes.

    >>> quotes("it's", random.Random(0), 1.0)
    'it\u2019s'
    """
    sites = list(_QUOTE_RE.finditer(text))
    edits = [(sites[i].start(), sites[i].end(), _QUOTES[sites[i].group()]) for i in events(len(sites), rate, rng)]
    return apply_edits(text, edits)


def fold_homoglyphs(text: str) -> str:
    """Map the confusables in ``HOMOGLYPHS`` back to Latin (undoes :func:`homoglyph`).

    >>> fold_homoglyphs("\u0440\u0430y")
    'pay'
    """
    return text.translate(HOMOGLYPH_FOLD)


def strip_invisible(text: str) -> str:
    """Remove the characters in ``INVISIBLE_CHARS`` (undoes :func:`invisible`).

    >>> strip_invisible("a\u200bb")
    'ab'
    """
    return text.translate(_INVISIBLE_DELETE)
