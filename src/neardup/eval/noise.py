r"""Seeded, realistic noise: clean documents -> noisy near-duplicates and hard negatives for benchmarks.
Owns the noise ops, presets and JSONL noising; must not detect, score or cluster duplicates.

Every op is ``op(text, rng, rate) -> str`` (by name in ``OPS``). A ``NoiseSpec`` lists ops with rates;
``apply_noise`` runs it on one ``random.Random`` per document, seeded with xxh64(seed, spec name,
doc id) -- never Python's randomised ``hash()`` -- so output is the same in every process.
Rates: char-level ops = per-character event probability; word-level = per word; sentence-level =
per sentence; ``abridge``/``drop_lead`` = fraction of the text cut (``ops`` records the realised
fraction); header/footer ops ignore the rate (use ``OpSpec.prob``). ``severity_sigma`` > 0 draws one
lognormal multiplier per document (median 1) for every scaled rate (rates then capped at 0.5 for
char ops, 0.9 otherwise): OCR quality varies page to page, which is why some pairs share no long
n-gram at all.

Presets (op:rate; ``a-b`` = uniform per document; ``p=`` = probability the op is applied at all):

================  =====  ==========================================================================
preset            sigma  ops, in order
================  =====  ==========================================================================
clean             0      whitespace:0.01, quotes:0.5 (formatting only; every word n-gram kept)
ocr-1970s         0.5    ocr_spec(0.30): light OCR
ocr-1930s         0.75   ocr_spec(1.00): heavy OCR, calibrated to NEWS-COPY (see below)
ocr-light         0.5    ocr_spec(0.15)  \
ocr-medium        0.5    ocr_spec(0.45)   > a progression for "quality as noise grows" plots;
ocr-heavy         0.5    ocr_spec(1.30)  /  ``ocr_spec(level)`` gives any other level
web-aggregator    0      abridge:0.1-0.5 p=0.5, drop_lead:0.05-0.25 p=0.3, typo:0.002,
                         add_dateline p=0.5, add_byline p=0.4, add_headline p=0.6,
                         add_boilerplate p=0.4
adversarial-spam  0      junk_words:0.05, word_repeat:0.01, homoglyph:0.04, invisible:0.02,
                         punctuation:0.01, case_change:0.005
typos             0      typo:0.01, case_change:0.002, spacing:0.002
================  =====  ==========================================================================

``ocr_spec(level)`` = word_delete:0.0075, ocr_confusion:0.044, char_drop:0.0045, case_change:0.0015,
spacing:0.0075, punctuation:0.003, hyphenate:0.003, each multiplied by ``level``.

Measured on /work/shared/data/bbc_news/docs.jsonl (2,225 BBC articles, ~2.3 kB each; seed 0):
mean word-3-gram Jaccard between article and noisy copy (lower-cased ``\w+`` tokens) and the
fraction of pairs sharing no word 10-gram. NEWS-COPY reports 0.30 and ~19% for its 1930s scans;
ocr-1930s over seeds 0/1/2 gives 0.301/0.296/0.298 and 20.3%/19.4%/19.6%.

================  ========  =================
preset            mean J3   no shared 10-gram
================  ========  =================
clean             1.000     0.000
ocr-1970s         0.618     0.000
ocr-1930s         0.301     0.203
ocr-light         0.767     0.000
ocr-medium        0.502     0.005
ocr-heavy         0.218     0.227
web-aggregator    0.722     0.000
adversarial-spam  0.293     0.003   (0.668 after ``strip_invisible`` + ``fold_homoglyphs``)
typos             0.729     0.000
================  ========  =================

Throughput (``apply_noise`` on the BBC docs, one core, CPU time on a loaded 2-core box):
ocr-1930s ~2,900 docs/s, ocr-heavy ~2,600, adversarial-spam ~2,400, typos ~11,000.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import random
import re
import tempfile
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import xxhash

__all__ = [
    "ALL_HARD_NEGATIVE_KINDS",
    "HOMOGLYPHS",
    "HOMOGLYPH_FOLD",
    "INVISIBLE_CHARS",
    "OCR_CONFUSIONS",
    "OPS",
    "PRESETS",
    "HARD_NEGATIVE_KINDS",
    "NoisyText",
    "NoiseSpec",
    "OpSpec",
    "apply_noise",
    "derive_seed",
    "fold_homoglyphs",
    "get_preset",
    "list_presets",
    "make_hard_negative",
    "ngram_jaccard",
    "noise_file",
    "noise_records",
    "ocr_spec",
    "preset_stats",
    "strip_invisible",
    # ops (also reachable through OPS) and hard negatives
    "abridge", "add_boilerplate", "add_byline", "add_dateline", "add_headline", "case_change",
    "char_drop", "drop_lead", "entity_swap", "homoglyph", "hyphenate", "invisible", "junk_words", "ocr_confusion",
    "punctuation", "quotes", "same_event_rewrite", "sentence_delete", "sentence_insert",
    "sentence_swap", "spacing", "template_sibling", "typo", "update", "whitespace", "word_delete",
    "word_insert", "word_repeat", "word_substitute", "word_swap",
]

Op = Callable[[str, random.Random, float], str]

# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------

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

_QWERTY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_QWERTY: dict[str, str] = {}
for _r, _row in enumerate(_QWERTY_ROWS):
    for _c, _ch in enumerate(_row):
        _nb = []
        for _dr in (-1, 0, 1):
            _rr = _r + _dr
            if 0 <= _rr < len(_QWERTY_ROWS):
                for _dc in (-1, 0, 1):
                    _cc = _c + _dc
                    if (_dr, _dc) != (0, 0) and 0 <= _cc < len(_QWERTY_ROWS[_rr]):
                        _nb.append(_QWERTY_ROWS[_rr][_cc])
        _QWERTY[_ch] = "".join(_nb)

_COMMON_WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which "
    "but have an they more one had there been has were their all would will year new people said "
    "also about after could first two time them other its into than some only market government "
    "company last over most may any week report where while those million state world official "
    "before under such between both during plan group since still however number part country"
).split()
_JUNK_WORDS = (
    "FREE", "click", "casino", "crypto", "winner", "discount", "bonus", "deal", "offer",
    "subscribe", "urgent", "limited", "100%", "$$$", "!!!", "bit.ly/3xQz9", "www.best-deals.example",
    "cheap", "loans", "viagra", "BUY", "NOW", "xq7zv", "promo", "giveaway", "#ad", "SALE",
)
_FILLER_SENTENCES = (
    "The details were not immediately clear.",
    "Officials declined to comment further.",
    "More information is expected later this week.",
    "The announcement came as a surprise to many observers.",
    "It was not clear how the decision would affect customers.",
    "Analysts said the move had been widely expected.",
    "A spokesperson did not respond to a request for comment.",
    "The figures will be reviewed again next month.",
)
_NAMES = (
    "Anderson", "Baxter", "Castillo", "Dawson", "Ellison", "Fletcher", "Garrido", "Hartley",
    "Ingram", "Jennings", "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov",
    "Quinlan", "Rasmussen", "Sorensen", "Tanaka", "Underwood", "Vasquez", "Whitfield", "Yilmaz",
    "Zimmer", "Ashford", "Brampton", "Carlow", "Dunmore", "Eastleigh", "Fairhaven", "Glenrock",
    "Harwick", "Ironbridge", "Kingsmere", "Lakeshore", "Millbrook", "Northgate", "Oakridge",
    "Pinecrest", "Redfield", "Stonebury", "Thornton", "Westbrook", "Alicia", "Bernard", "Chloe",
    "Dmitri", "Elena", "Farid", "Greta", "Hugo", "Imogen", "Jonas", "Keira", "Lucas", "Marta",
    "Nikhil", "Olga", "Pablo", "Rosa", "Stefan", "Tomas", "Valerie", "Walter", "Xavier", "Yusuf",
)
_CITIES = ("LONDON", "NEW YORK", "WASHINGTON", "PARIS", "BERLIN", "TOKYO", "BRUSSELS", "MOSCOW",
           "SYDNEY", "MADRID", "ROME", "BEIJING", "GENEVA", "FRANKFURT", "CHICAGO", "DUBLIN")
_AGENCIES = ("Reuters", "AP", "AFP", "Bloomberg", "PA", "dpa")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_FOOTERS = (
    "Copyright {y} {a}. All rights reserved.",
    "Share this article: Facebook | Twitter | Email | Print",
    "Click here to subscribe to our daily newsletter.",
    "Reporting by {n}; Editing by {m}",
    "This story was automatically generated from a wire feed and has not been edited.",
    "Related: More stories from {a} >>",
)
_UPDATE_TEMPLATES = (
    "{name} said on {day} that the figure had since risen to {num}%.",
    "Later figures showed a further {num}% change, {name} said.",
    "In a statement on {day}, {name} said a further review would be published within {small} weeks.",
    "The total was later revised to {num} million, according to {name}.",
    "{name} added that {small} more cases had been reported since the original announcement.",
    "Shares closed {num}% higher on {day} after the latest news.",
)
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

# --------------------------------------------------------------------------------------------
# Regexes
# --------------------------------------------------------------------------------------------

_OCR_PAIR_FIRST = frozenset(k[0] for k in OCR_CONFUSIONS if len(k) == 2)
_LETTER_RE = re.compile(r"[^\W\d_]")
_ALNUM_RE = re.compile(r"[^\W_]")
_LONGWORD_RE = re.compile(r"[^\W\d_]{5,}")
_INWORD_RE = re.compile(r"(?<=\w)(?=\w)")
_PUNCT_RE = re.compile(r"[.,;:!?'\"]")
_SPACE_RE = re.compile(r" ")
_WS_RE = re.compile(r"\s+")
_WS_RUN = re.compile(r"[ \t]+|\n[ \t]*\n\s*|\n")
_SENT_SPLIT = re.compile(
    r"((?:(?<=[.!?])|(?<=[.!?][\"'\u201d\u2019)\]]))"
    r"(?<!\b[A-Z]\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bSt\.)(?<!\bMrs\.)"
    r"[ \t]+(?=[\"'\u201c\u2018(\[]?[A-Z0-9])|[ \t]*\n\s*)"
)
_PARA_SPLIT = re.compile(r"(\n[ \t]*\n\s*)")
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")
_CAPWORD_RE = re.compile(r"\b[A-Z][A-Za-z]*\b")
_CORE_RE = re.compile(r"^(\W*)(.*?)(\W*)$", re.S)
_TOKEN_RE = re.compile(r"\w+")
_QUOTES = {"'": "\u2019", '"': "\u201d", "\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'}
_QUOTE_RE = re.compile("[" + "".join(_QUOTES) + "]")

# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def derive_seed(seed: int, *parts: str) -> int:
    """Stable 64-bit seed from an integer seed and string parts (xxh64, not ``hash()``).

    >>> derive_seed(1, "doc-7") == derive_seed(1, "doc-7") != derive_seed(2, "doc-7")
    True
    """
    h = xxhash.xxh64(str(int(seed)).encode())
    for p in parts:
        h.update(b"\x1f")
        h.update(p.encode("utf-8", "surrogatepass"))
    return h.intdigest()


def _events(n: int, rate: float, rng: random.Random) -> list[int]:
    """Sorted indices in ``range(n)`` hit by independent Bernoulli(rate) events.

    Few expected events: geometric skipping in Python; many: one block of ``rng.randbytes``
    compared in NumPy. Both consume only ``rng``, so results are reproducible.
    """
    if n <= 0 or rate <= 0.0:
        return []
    if rate >= 1.0:
        return list(range(n))
    if n * rate > 12.0:
        if rate >= 0.01:  # 16-bit draws: threshold error <= 1.5e-5 absolute, <= 0.15% relative
            u16 = np.frombuffer(rng.randbytes(2 * n), dtype=np.uint16)
            return np.flatnonzero(u16 < round(rate * 65536.0)).tolist()
        u32 = np.frombuffer(rng.randbytes(4 * n), dtype=np.uint32)
        return np.flatnonzero(u32 < round(rate * 4294967296.0)).tolist()
    log1m = math.log1p(-rate)
    if log1m == 0.0:
        return []
    rnd = rng.random
    out: list[int] = []
    i = -1
    while True:
        gap = math.log(1.0 - rnd()) / log1m
        if gap >= n:
            return out
        i += 1 + int(gap)
        if i >= n:
            return out
        out.append(i)


def _safe_pos(text: str, p: int) -> int:
    """Move an insertion point forward so it never splits a surrogate pair, CRLF or a base+mark."""
    n = len(text)
    while 0 < p < n:
        ch = text[p]
        if ch < "\x80":
            if ch == "\n" and text[p - 1] == "\r":
                p += 1
                continue
            return p
        if unicodedata.combining(ch) or ("\udc00" <= ch <= "\udfff" and "\ud800" <= text[p - 1] <= "\udbff"):
            p += 1
            continue
        if ch in "\u200d\ufe0f" or "\U0001f3fb" <= ch <= "\U0001f3ff":  # ZWJ sequences, modifiers
            p += 1
            continue
        if text[p - 1] == "\u200d":
            p += 1
            continue
        return p
    return p


def _safe_delete(text: str, end: int) -> bool:
    """True if deleting/replacing a character ending at ``end`` leaves no dangling mark."""
    return end >= len(text) or text[end] < "\x80" or not unicodedata.combining(text[end])


def _apply_edits(text: str, edits: list[tuple[int, int, str]]) -> str:
    """Apply sorted (start, end, replacement) edits, skipping any that overlap an earlier one."""
    if not edits:
        return text
    parts: list[str] = []
    last = 0
    for s, e, r in edits:
        if s < last:
            continue
        parts.append(text[last:s])
        parts.append(r)
        last = e
    parts.append(text[last:])
    out = "".join(parts)
    return out if out.strip() or not text.strip() else text  # never empty a non-empty text


def _stronger(a: str, b: str) -> str:
    return b if b.count("\n") > a.count("\n") else a


def _join(items: Sequence[str | None], seps: Sequence[str]) -> str:
    """Join items with separators; a ``None`` item is removed and its two separators merged
    (keeping the one with more newlines, so paragraph breaks survive)."""
    parts: list[str] = [""] * (2 * len(items) - 1)
    parts[0::2] = items  # type: ignore[assignment]
    parts[1::2] = seps
    dead = [i for i, w in enumerate(items) if w is None] if None in items else []
    if not dead:
        return "".join(parts)
    lead = 0
    while lead < len(items) and items[lead] is None:
        lead += 1
    trail = len(items) - 1
    while trail >= 0 and items[trail] is None:
        trail -= 1
    last = len(parts) - 1
    for i in dead:
        j = 2 * i
        parts[j] = ""
        if i < lead or i > trail:
            if j > 0:
                parts[j - 1] = ""
            if j < last:
                parts[j + 1] = ""
        else:
            a, b = parts[j - 1], parts[j + 1]
            parts[j - 1] = ""
            parts[j + 1] = _stronger(a, b)
    return "".join(parts)


def _split(regex: re.Pattern[str], text: str) -> tuple[list[str], list[str]]:
    parts = regex.split(text)
    return parts[0::2], parts[1::2]


def _sentences(text: str) -> list[str]:
    return [s for s in _SENT_SPLIT.split(text)[0::2] if s.strip()]


def _first_sentence(text: str) -> str:
    for s in _SENT_SPLIT.split(text)[0::2]:
        if s.strip():
            return s
    return text


def _match_case(src: str, word: str) -> str:
    if len(src) > 1 and src.isupper():
        return word.upper()
    if src[:1].isupper():
        return word[:1].upper() + word[1:]
    return word.lower() if src.islower() else word


def _doc_words(text: str) -> list[str]:
    return [w for w in _TOKEN_RE.findall(text) if len(w) > 2 and not w.isdigit()]


# --------------------------------------------------------------------------------------------
# Character-level ops (rate = per-character event probability)
# --------------------------------------------------------------------------------------------


def _site_op(text: str, rng: random.Random, rate: float, regex: re.Pattern[str],
             make: Callable[[re.Match[str]], tuple[int, int, str] | None]) -> str:
    edits: list[tuple[int, int, str]] = []
    last = 0
    search = regex.search
    for p in _events(len(text), rate, rng):
        m = search(text, p if p > last else last)
        if m is None:
            break
        e = make(m)
        if e is not None:
            edits.append(e)
        last = m.end()
    return _apply_edits(text, edits)


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
    for p in _events(n, rate, rng):
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
    return _apply_edits(text, edits)


def char_drop(text: str, rng: random.Random, rate: float) -> str:
    """Drop letters/digits (faded or broken type).

    >>> char_drop("abc", random.Random(0), 0.0)
    'abc'
    """
    def make(m: re.Match[str]) -> tuple[int, int, str] | None:
        return (m.start(), m.end(), "") if _safe_delete(text, m.end()) else None
    return _site_op(text, rng, rate, _ALNUM_RE, make)


def spacing(text: str, rng: random.Random, rate: float) -> str:
    """Dropped spaces (words run together) and added spaces (words split), 50/50.

    >>> spacing("a b", random.Random(0), 0.0)
    'a b'
    """
    edits: list[tuple[int, int, str]] = []
    n = len(text)
    for p in _events(n, rate, rng):
        if rng.random() < 0.5:
            m = _SPACE_RE.search(text, p)
            if m is not None and 0 < m.start() and m.end() < n:
                edits.append((m.start(), m.end(), ""))
        else:
            m = _INWORD_RE.search(text, p)
            if m is not None:
                q = _safe_pos(text, m.start())
                edits.append((q, q, " "))
    edits.sort(key=lambda e: e[0])
    return _apply_edits(text, edits)


def hyphenate(text: str, rng: random.Random, rate: float) -> str:
    """Line-break hyphenation: insert "-\\n" inside words of 5+ letters.

    >>> "-\\n" in hyphenate("extraordinary", random.Random(0), 1.0)
    True
    """
    def make(m: re.Match[str]) -> tuple[int, int, str] | None:
        k = m.start() + rng.randint(2, len(m.group()) - 2)
        return (k, k, "-\n") if _safe_pos(text, k) == k else None
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
    for s in _events(n, rate, rng):
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
        elif not _safe_delete(text, e):
            continue
        elif r < 0.5:
            edits.append((s, e, ""))
        elif r < 0.8 or e >= n or text[e].lower() not in qw or not _safe_delete(text, e + 1):
            edits.append((s, e, nb))
        else:
            edits.append((s, e + 1, text[e] + c))
            e += 1
        last = e
    return _apply_edits(text, edits)


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
    for p in _events(len(text), rate, rng):
        opts = get(text[p])
        if opts is not None:
            edits.append((p, p + 1, opts[int(rnd() * len(opts))]))
    return _apply_edits(text, edits)


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
    for p in _events(n, rate, rng):
        if p == 0:
            continue
        ch = text[p]
        q = p if (ch < "\x80" and ch != "\n") else _safe_pos(text, p)
        if q < last or q >= n:
            continue
        edits.append((q, q, INVISIBLE_CHARS[int(rnd() * k)]))
        last = q
    return _apply_edits(text, edits)


def punctuation(text: str, rng: random.Random, rate: float) -> str:
    """Random punctuation: stray marks inserted (3/4) or existing ones deleted (1/4).

    >>> punctuation("a b", random.Random(0), 0.0)
    'a b'
    """
    edits: list[tuple[int, int, str]] = []
    last = 0
    for p in _events(len(text), rate, rng):
        if rng.random() < 0.75:
            q = _safe_pos(text, p)
            if q >= last:
                edits.append((q, q, rng.choice(".,;:'`-\"!")))
                last = q
        else:
            m = _PUNCT_RE.search(text, max(p, last))
            if m is not None:
                edits.append((m.start(), m.end(), ""))
                last = m.end()
    return _apply_edits(text, edits)


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
    edits = [(sites[i].start(), sites[i].end(), _QUOTES[sites[i].group()]) for i in _events(len(sites), rate, rng)]
    return _apply_edits(text, edits)


# --------------------------------------------------------------------------------------------
# Word-level ops (rate = per-word probability)
# --------------------------------------------------------------------------------------------


def _word_op(text: str, rng: random.Random, rate: float,
             fn: Callable[[list[str | None], int], None]) -> str:
    """Run ``fn(row, i)`` on the space-separated words hit at ``rate``; a ``None`` word is removed.

    Words are split per line on single spaces (fast, keeps every other character in place); at
    least one word is always kept.
    """
    lines = text.split("\n")
    rows = [ln.split(" ") for ln in lines]
    sizes = [len(r) for r in rows]
    hits = _events(sum(sizes), rate, rng)
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
    return out if out.strip() else _first_sentence(text)


def _replace_core(word: str, new: str) -> str:
    m = _CORE_RE.match(word)
    assert m is not None
    pre, core, post = m.groups()
    if not core:
        return word
    return pre + _match_case(core, new) + post


def word_delete(text: str, rng: random.Random, rate: float) -> str:
    """Delete words (at least one word is kept).

    >>> word_delete("one two three", random.Random(0), 0.0)
    'one two three'
    """
    def fn(items: list[str | None], i: int) -> None:
        items[i] = None
    return _word_op(text, rng, rate, fn)


class _LazyWords:
    """The document's own words, tokenised only if a word is actually drawn."""

    __slots__ = ("text", "words")

    def __init__(self, text: str) -> None:
        self.text = text
        self.words: list[str] | None = None

    def get(self) -> list[str]:
        if self.words is None:
            self.words = _doc_words(self.text)
        return self.words


def _pick_word(rng: random.Random, doc: _LazyWords | Sequence[str]) -> str:
    """A word from the document (1/2) or from the built-in common-word list (1/2)."""
    rnd = rng.random
    if rnd() < 0.5:
        words = doc.get() if isinstance(doc, _LazyWords) else doc
        if words:
            return words[int(rnd() * len(words))]
    return _COMMON_WORDS[int(rnd() * len(_COMMON_WORDS))]


def word_insert(text: str, rng: random.Random, rate: float) -> str:
    """Insert words drawn from the document itself or a small built-in word list.

    >>> len(word_insert("a b c", random.Random(0), 1.0).split())
    6
    """
    doc = _LazyWords(text)

    def fn(items: list[str | None], i: int) -> None:
        items[i] = f"{items[i]} {_pick_word(rng, doc)}"
    return _word_op(text, rng, rate, fn)


def word_substitute(text: str, rng: random.Random, rate: float) -> str:
    """Replace words (keeping attached punctuation and capitalisation) by other words.

    >>> word_substitute("Hello, world.", random.Random(3), 1.0).count(",")
    1
    """
    doc = _LazyWords(text)

    def fn(items: list[str | None], i: int) -> None:
        w = items[i]
        if w is not None:
            items[i] = _replace_core(w, _pick_word(rng, doc))
    return _word_op(text, rng, rate, fn)


def word_swap(text: str, rng: random.Random, rate: float) -> str:
    """Swap a word with its right neighbour.

    >>> word_swap("a b", random.Random(0), 1.0)
    'b a'
    """
    def fn(items: list[str | None], i: int) -> None:
        if i + 1 < len(items) and items[i + 1]:
            items[i], items[i + 1] = items[i + 1], items[i]
    return _word_op(text, rng, rate, fn)


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
    return _word_op(text, rng, rate, fn)


def junk_words(text: str, rng: random.Random, rate: float) -> str:
    """Insert spam junk tokens ("FREE", "click", "bit.ly/...").

    >>> len(junk_words("a b", random.Random(0), 1.0).split())
    4
    """
    def fn(items: list[str | None], i: int) -> None:
        items[i] = f"{items[i]} {_JUNK_WORDS[int(rng.random() * len(_JUNK_WORDS))]}"
    return _word_op(text, rng, rate, fn)


# --------------------------------------------------------------------------------------------
# Sentence / paragraph-level ops
# --------------------------------------------------------------------------------------------


def _sent_op(text: str, rng: random.Random, rate: float,
             fn: Callable[[list[str | None], int, list[int]], None]) -> str:
    sents, seps = _split(_SENT_SPLIT, text)
    cand = [i for i, s in enumerate(sents) if s.strip()]
    hits = _events(len(cand), rate, rng)
    if not hits:
        return text
    items: list[str | None] = list(sents)
    for k in hits:
        fn(items, k, cand)
    if all(items[i] is None for i in cand):
        items[cand[0]] = sents[cand[0]]
    return _join(items, seps)


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
    own = _sentences(text)

    def fn(items: list[str | None], k: int, cand: list[int]) -> None:
        i = cand[k]
        extra = rng.choice(own) if own and rng.random() < 0.25 else rng.choice(_FILLER_SENTENCES)
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
    ends = _boundaries(_SENT_SPLIT, text, starts=False)
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
    for regex in (_PARA_SPLIT, _SENT_SPLIT):
        starts = _boundaries(regex, text, starts=True)
        if starts:
            break
    if not starts:
        return text
    cut = next((s for s in starts if s >= target), starts[-1])
    return text[cut:]


def _headline_from(text: str, rng: random.Random) -> str:
    words = _TOKEN_RE.findall(_first_sentence(text))[: rng.randint(4, 9)]
    if not words:
        return "News update"
    style = rng.random()
    head = " ".join(words)
    if style < 0.4:
        head = " ".join(w[:1].upper() + w[1:] for w in words)
    elif style < 0.6:
        head = head.upper()
    elif style < 0.8:
        head = f"UPDATE {rng.randint(1, 3)}-" + head[:1].upper() + head[1:]
    else:
        head = "BREAKING: " + head[:1].upper() + head[1:]
    return head


def add_headline(text: str, rng: random.Random, rate: float = 1.0) -> str:
    """Prepend an aggregator headline built from the first words (``rate`` ignored).

    >>> add_headline("Stocks rose sharply today.", random.Random(0)).endswith("\\n\\nStocks rose sharply today.")
    True
    """
    return f"{_headline_from(text, rng)}\n\n{text}" if text.strip() else text


def add_dateline(text: str, rng: random.Random, rate: float = 1.0) -> str:
    """Add a wire dateline ("LONDON, March 3 (Reuters) - ") before the first body paragraph.

    >>> add_dateline("Title\\n\\nStocks rose, traders said.", random.Random(0)).startswith("Title\\n\\n")
    True
    """
    if not text.strip():
        return text
    city, agency = rng.choice(_CITIES), rng.choice(_AGENCIES)
    month, day = rng.choice(_MONTHS), rng.randint(1, 28)
    line = rng.choice((f"{city}, {month} {day} ({agency}) - ", f"{city} ({agency}) \u2014 ",
                       f"{city}, {day} {month} /{agency}/ - "))
    paras, seps = _split(_PARA_SPLIT, text)
    k = next((i for i, p in enumerate(paras)  # skip headline-like paragraphs
              if len(p) >= 80 or ". " in p or p.rstrip()[-1:] in (".", "!", "?", '"', "\u201d")), 0)
    paras[k] = line + paras[k].lstrip()
    return _join(paras, seps)


def add_byline(text: str, rng: random.Random, rate: float = 1.0) -> str:
    """Prepend a byline ("By Elena Moreau, Reuters").

    >>> add_byline("Body.", random.Random(0)).startswith("By ")
    True
    """
    if not text.strip():
        return text
    name = f"{rng.choice(_NAMES[44:])} {rng.choice(_NAMES[:44])}"
    line = rng.choice((f"By {name}", f"By {name}, {rng.choice(_AGENCIES)}", f"By {name.upper()}\nStaff Writer"))
    return f"{line}\n\n{text}"


def add_boilerplate(text: str, rng: random.Random, rate: float = 1.0) -> str:
    """Append a site footer (copyright, share links, editing credits).

    >>> add_boilerplate("Body.", random.Random(0)).startswith("Body.\\n\\n")
    True
    """
    if not text.strip():
        return text
    foot = rng.choice(_FOOTERS).format(y=rng.randint(1990, 2024), a=rng.choice(_AGENCIES),
                                       n=rng.choice(_NAMES[44:]) + " " + rng.choice(_NAMES[:44]),
                                       m=rng.choice(_NAMES[44:]) + " " + rng.choice(_NAMES[:44]))
    return f"{text.rstrip()}\n\n{foot}"


# --------------------------------------------------------------------------------------------
# Hard negatives
# --------------------------------------------------------------------------------------------


def _new_number(s: str, rng: random.Random) -> str:
    if re.fullmatch(r"(?:19|20)\d\d", s):
        return str(int(s) + rng.choice((-3, -2, -1, 1, 2, 3)))
    decimals = 0
    body = s
    sep_thousands = False
    if "." in s and not re.fullmatch(r"\d{1,3}(?:\.\d{3})+", s):
        decimals = len(s.rsplit(".", 1)[1])
        body = s.replace(",", "")
    elif "," in s:
        if re.fullmatch(r"\d{1,3}(?:,\d{3})+", s):
            sep_thousands = True
            body = s.replace(",", "")
        else:
            decimals = len(s.rsplit(",", 1)[1])
            body = s.replace(".", "").replace(",", ".")
    try:
        value = float(body)
    except ValueError:
        value = 0.0
    if value == 0:
        new_val = float(rng.randint(1, 9))
    else:
        new_val = value * (1.0 + rng.choice((-1, 1)) * rng.uniform(0.1, 0.6))
    if decimals:
        out = f"{new_val:.{decimals}f}"
        if "," in s and "." not in s:
            out = out.replace(".", ",")
    else:
        iv = max(0, int(round(new_val)))
        out = f"{iv:,}" if sep_thousands else str(iv)
        if len(s) > 1 and s[0] == "0":
            out = out.zfill(len(s))
    if out == s or out.replace(",", "") == s.replace(",", ""):
        out = str(int(s.replace(",", "").replace(".", "")[-9:] or "0") + 1) if not decimals else out + "1"
    return out


def _change_numbers(text: str, rng: random.Random, rate: float) -> tuple[str, int]:
    count = 0

    def repl(m: re.Match[str]) -> str:
        nonlocal count
        if rate < 1.0 and rng.random() >= rate:
            return m.group()
        count += 1
        return _new_number(m.group(), rng)
    return _NUMBER_RE.sub(repl, text), count


def _names_in(text: str) -> list[str]:
    """Capitalised words that are used as names: seen capitalised somewhere not sentence-initially."""
    names: dict[str, None] = {}
    for m in _CAPWORD_RE.finditer(text):
        w = m.group()
        if w == "I":
            continue
        before = text[max(0, m.start() - 3): m.start()].rstrip(" \t\"'\u201c\u2018(")
        initial = not before or before[-1] in ".!?\n:" or m.start() == 0
        if not initial or (len(w) > 1 and w.isupper()):
            names[w] = None
    return list(names)


def _replace_names(text: str, rng: random.Random, rate: float) -> tuple[str, int]:
    names = _names_in(text)
    taken = set(names)
    mapping: dict[str, str] = {}
    pool = [n for n in _NAMES if n not in taken]
    rng.shuffle(pool)
    for w in names:
        if rate < 1.0 and rng.random() >= rate:
            continue
        if w in _DAYS or w in _MONTHS:
            same = _DAYS if w in _DAYS else _MONTHS
            new = rng.choice([x for x in same if x != w])
        elif len(w) > 1 and w.isupper():
            new = "".join(rng.choice("ABCDEFGHJKLMNPRSTVWXZ") for _ in w)
            if new == w:
                new = new[::-1] if new[::-1] != w else "Q" + new[1:]
        else:
            new = pool.pop() if pool else "".join(rng.choice("bcdfghklmnprstvz") for _ in w).capitalize()
        mapping[w] = new
    if not mapping:
        return text, 0
    return _CAPWORD_RE.sub(lambda m: mapping.get(m.group(), m.group()), text), len(mapping)


def _update(text: str, rng: random.Random, rate: float = 1.0) -> tuple[str, list[str]]:
    out, n_num = _change_numbers(text, rng, rate)
    names = _names_in(text) or ["officials"]
    k = rng.randint(1, 3)
    templates = rng.sample(_UPDATE_TEMPLATES, k)
    extra = [t.format(name=rng.choice(names), day=rng.choice(_DAYS), num=rng.randint(2, 95),
                      small=rng.randint(2, 12)) for t in templates]
    out = f"{out.rstrip()}\n\n{' '.join(extra)}"
    return out, [f"change_numbers:{n_num}", f"append_sentences:{k}"]


def update(text: str, rng: random.Random, rate: float = 1.0) -> str:
    """Hard negative: same story, every number changed (``rate`` = fraction), 1-3 new sentences appended.

    >>> "12" not in update("Sales rose 12% in May.", random.Random(0)).split("\\n\\n")[0]
    True
    """
    if not text.strip():
        return text
    return _update(text, rng, rate)[0]


def _template_sibling(text: str, rng: random.Random, rate: float = 1.0) -> tuple[str, list[str]]:
    out, n_names = _replace_names(text, rng, rate)
    out, n_num = _change_numbers(out, rng, rate)
    return out, [f"replace_names:{n_names}", f"change_numbers:{n_num}"]


def template_sibling(text: str, rng: random.Random, rate: float = 1.0) -> str:
    """Hard negative: same boilerplate/structure, all numbers and capitalised names replaced.

    >>> template_sibling("Order 123 shipped to John Smith.", random.Random(0)).startswith("Order ")
    True
    """
    if not text.strip():
        return text
    return _template_sibling(text, rng, rate)[0]


def _entity_swap(text: str, rng: random.Random) -> tuple[str, list[str]]:
    # One or two of the first four names (the entity a notice is about comes first: FRANKLIN MICHIGAN
    # INSURED SETS PAYOUT) in every case variant, so a headline's MICHIGAN follows the body's Michigan, and
    # about half the figures change; later template words, days and months stay.
    names = [w for w in _names_in(text) if w not in _DAYS and w not in _MONTHS]
    if not names and not _NUMBER_RE.search(text):
        return _update(text, rng)
    out, n_names = text, 0
    if names:
        folded = list(dict.fromkeys(w.lower() for w in names))[:4]
        picks = rng.sample(folded, min(len(folded), 1 if len(folded) < 3 else rng.randint(1, 2)))
        taken = {w.lower() for w in _CAPWORD_RE.findall(text)}
        pool = [n for n in _NAMES if n.lower() not in taken]
        mapping = {w: rng.choice(pool) for w in picks}

        def rename(m: re.Match[str]) -> str:
            w = m.group()
            new = mapping.get(w.lower())
            if new is None:
                return w
            return new.upper() if len(w) > 1 and w.isupper() else new
        out = re.sub(r"\b[A-Za-z]+\b", rename, out)
        n_names = len(mapping)
    changed = 0
    numbers = list(_NUMBER_RE.finditer(out))
    if numbers:
        keep = [rng.random() < 0.5 for _ in numbers]
        if all(keep):
            keep[rng.randrange(len(numbers))] = False
        edits = [(m.start(), m.end(), _new_number(m.group(), rng)) for m, k in zip(numbers, keep) if not k]
        out, changed = _apply_edits(out, edits), len(edits)
    return out, [f"replace_names:{n_names}", f"change_numbers:{changed}"]


def entity_swap(text: str, rng: random.Random) -> str:
    """Hard negative, a *near* template sibling: one or two names and about half the figures replaced.

    Real wire template siblings (a fund family's dividend notices, one line per fund) share the template
    words and differ in an entity and a figure or two; :func:`template_sibling` replaces every name and
    number, which leaves an all-capitals headline unrecognisable.

    >>> entity_swap("FRANKLIN OHIO FUND SETS PAYOUT. Mthly div 6.1 cts. Pay March 31.", random.Random(1))
    'HARWICK OHIO FUND SETS PAYOUT. Mthly div 6.1 cts. Pay March 44.'
    """
    if not text.strip():
        return text
    return _entity_swap(text, rng)[0]


def _same_event_rewrite(text: str, rng: random.Random, rate: float = 0.5,
                        pool: Sequence[str] | None = None) -> tuple[str, list[str]]:
    own = _sentences(text)
    others = [p for p in (pool or ()) if p and p.strip() and p != text]
    other_sents = _sentences(rng.choice(others)) if others else []
    ops: list[str] = []
    sents = list(own)
    n_mix = 0
    if other_sents:
        rng.shuffle(other_sents)
        for i in range(len(sents)):
            if other_sents and rng.random() < rate:
                sents[i] = other_sents.pop()
                n_mix += 1
        # a rewrite also adds material of its own
        sents.extend(other_sents[: max(1, len(other_sents) // 4)])
        ops.append(f"mix_sentences:{n_mix}")
    else:
        k = max(1, int(len(sents) * rate / 2))
        sents.extend(rng.sample(_FILLER_SENTENCES, min(k, len(_FILLER_SENTENCES))))
        ops.append(f"filler_sentences:{min(k, len(_FILLER_SENTENCES))}")
    rng.shuffle(sents)
    ops.append("shuffle_sentences")
    words_src = _doc_words(" ".join(sents))
    sub_rate = max(0.3, rate * 0.6)
    paras: list[str] = []
    i = 0
    while i < len(sents):
        k = rng.randint(1, 3)
        paras.append(" ".join(s.strip() for s in sents[i:i + k]))
        i += k
    body = "\n\n".join(paras)
    doc = words_src or _COMMON_WORDS

    def fn(items: list[str | None], j: int) -> None:
        w = items[j]
        if w is not None:
            items[j] = _replace_core(w, _pick_word(rng, doc))
    body = _word_op(body, rng, sub_rate, fn)
    ops.append(f"word_substitute:{sub_rate:.2f}")
    return body, ops


def same_event_rewrite(text: str, rng: random.Random, rate: float = 0.5,
                       pool: Sequence[str] | None = None) -> str:
    """Hard negative: same topic, different text (sentences mixed from ``pool``, shuffled, reworded).

    >>> r = same_event_rewrite("A b c. D e f. G h i.", random.Random(0), 0.5, ["X y z. W v u."])
    >>> r != "A b c. D e f. G h i."
    True
    """
    if not text.strip():
        return text
    return _same_event_rewrite(text, rng, rate, pool)[0]


#: The hard negatives of the benchmark sets (cycled in this order; changing it changes every shared set).
HARD_NEGATIVE_KINDS: tuple[str, ...] = ("update", "same_event_rewrite", "template_sibling")
#: Every kind :func:`make_hard_negative` makes.
ALL_HARD_NEGATIVE_KINDS: tuple[str, ...] = HARD_NEGATIVE_KINDS + ("entity_swap",)

# --------------------------------------------------------------------------------------------
# Registry, specs and presets
# --------------------------------------------------------------------------------------------

#: Every noise op by name: ``op(text, rng, rate) -> str``.
OPS: dict[str, Op] = {
    "ocr_confusion": ocr_confusion, "char_drop": char_drop, "spacing": spacing,
    "hyphenate": hyphenate, "typo": typo, "case_change": case_change, "homoglyph": homoglyph,
    "invisible": invisible, "punctuation": punctuation, "whitespace": whitespace, "quotes": quotes,
    "word_delete": word_delete, "word_insert": word_insert, "word_substitute": word_substitute,
    "word_swap": word_swap, "word_repeat": word_repeat, "junk_words": junk_words,
    "sentence_delete": sentence_delete, "sentence_insert": sentence_insert,
    "sentence_swap": sentence_swap, "abridge": abridge, "drop_lead": drop_lead,
    "add_headline": add_headline, "add_dateline": add_dateline, "add_byline": add_byline,
    "add_boilerplate": add_boilerplate,
}
# Maximum effective rate per op after severity scaling; ops whose recorded parameter is the
# realised cut fraction; ops that take no rate.
_MAX_RATE = {"abridge": 0.95, "drop_lead": 0.9}
_CHAR_MAX = 0.5
_WORD_MAX = 0.9
_CUT_OPS = frozenset({"abridge", "drop_lead"})
_NO_RATE_OPS = frozenset({"add_headline", "add_dateline", "add_byline", "add_boilerplate"})
_CHAR_OPS = frozenset({"ocr_confusion", "char_drop", "spacing", "hyphenate", "typo", "case_change",
                       "homoglyph", "invisible", "punctuation", "quotes"})


@dataclass(frozen=True)
class OpSpec:
    """One op in a spec: ``rate`` (or uniform in ``[rate, rate_max]``), applied with probability ``prob``.

    >>> OpSpec("typo", 0.01).op
    'typo'
    """

    op: str
    rate: float = 0.0
    rate_max: float | None = None
    prob: float = 1.0
    scaled: bool = True  # multiply by the per-document severity

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise ValueError(f"unknown noise op {self.op!r}; known: {sorted(OPS)}")


@dataclass(frozen=True)
class NoiseSpec:
    """A named recipe: ops applied in order, plus per-document lognormal severity dispersion.

    >>> NoiseSpec("mine", (OpSpec("typo", 0.01),)).name
    'mine'
    """

    name: str
    ops: tuple[OpSpec, ...]
    severity_sigma: float = 0.0
    description: str = ""

    def to_dict(self) -> dict:
        """JSON-serialisable form.

        >>> PRESETS["typos"].to_dict()["name"]
        'typos'
        """
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> NoiseSpec:
        """Inverse of ``to_dict`` (e.g. a custom spec read from JSON).

        >>> NoiseSpec.from_dict(PRESETS["ocr-1930s"].to_dict()) == PRESETS["ocr-1930s"]
        True
        """
        ops = tuple(OpSpec(**o) for o in d.get("ops", ()))
        return cls(str(d["name"]), ops, float(d.get("severity_sigma", 0.0)), str(d.get("description", "")))


@dataclass
class NoisyText:
    """A noisy copy and the ops that changed it, e.g. ``["abridge:0.35", "typo:0.002"]``.

    >>> NoisyText("x", ["typo:0.01"]).ops
    ['typo:0.01']
    """

    text: str
    ops: list[str] = field(default_factory=list)


_OCR_BASE: tuple[tuple[str, float], ...] = (
    ("word_delete", 0.0075), ("ocr_confusion", 0.044), ("char_drop", 0.0045), ("case_change", 0.0015),
    ("spacing", 0.0075), ("punctuation", 0.003), ("hyphenate", 0.003),
)


def ocr_spec(level: float, severity_sigma: float = 0.5, name: str | None = None,
             description: str = "") -> NoiseSpec:
    """OCR noise scaled by ``level`` (1.0 = the ocr-1930s rates), for noise-vs-quality sweeps.

    >>> ocr_spec(0.5).ops[1].rate
    0.022
    """
    ops = tuple(OpSpec(op, round(rate * level, 6)) for op, rate in _OCR_BASE)
    return NoiseSpec(name or f"ocr-{level:g}", ops, severity_sigma, description or f"OCR noise at level {level:g}")


PRESETS: dict[str, NoiseSpec] = {
    "clean": NoiseSpec("clean", (OpSpec("whitespace", 0.01, scaled=False), OpSpec("quotes", 0.5, scaled=False)),
                       0.0, "formatting only (whitespace, quotes): every word n-gram kept"),
    "ocr-1970s": ocr_spec(0.3, 0.5, "ocr-1970s", "light OCR (1970s print)"),
    "ocr-1930s": ocr_spec(1.0, 0.75, "ocr-1930s", "heavy OCR (1930s newsprint), calibrated to NEWS-COPY"),
    "ocr-light": ocr_spec(0.15, 0.5, "ocr-light", "OCR sweep: light"),
    "ocr-medium": ocr_spec(0.45, 0.5, "ocr-medium", "OCR sweep: medium"),
    "ocr-heavy": ocr_spec(1.3, 0.5, "ocr-heavy", "OCR sweep: heavy"),
    "web-aggregator": NoiseSpec("web-aggregator", (
        OpSpec("abridge", 0.1, 0.5, prob=0.5), OpSpec("drop_lead", 0.05, 0.25, prob=0.3),
        OpSpec("typo", 0.002), OpSpec("add_dateline", prob=0.5), OpSpec("add_byline", prob=0.4),
        OpSpec("add_headline", prob=0.6), OpSpec("add_boilerplate", prob=0.4),
    ), 0.0, "republished by an aggregator: new headline/dateline/byline/footer, cut, light typos"),
    "adversarial-spam": NoiseSpec("adversarial-spam", (
        OpSpec("junk_words", 0.05), OpSpec("word_repeat", 0.01), OpSpec("homoglyph", 0.04),
        OpSpec("invisible", 0.02), OpSpec("punctuation", 0.01), OpSpec("case_change", 0.005),
    ), 0.0, "evasion: homoglyphs, zero-width characters, junk words, punctuation"),
    "typos": NoiseSpec("typos", (OpSpec("typo", 0.01), OpSpec("case_change", 0.002), OpSpec("spacing", 0.002)),
                       0.0, "keyboard typos"),
}


def list_presets() -> list[str]:
    """Names of the built-in presets.

    >>> "ocr-1930s" in list_presets()
    True
    """
    return list(PRESETS)


def get_preset(preset: str | NoiseSpec) -> NoiseSpec:
    """Resolve a preset name (or pass a ``NoiseSpec`` through).

    >>> get_preset("typos").name
    'typos'
    """
    if isinstance(preset, NoiseSpec):
        return preset
    try:
        return PRESETS[preset]
    except KeyError:
        raise ValueError(f"unknown noise preset {preset!r}; known: {', '.join(PRESETS)}") from None


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def apply_noise(text: str, preset: str | NoiseSpec, seed: int, doc_id: str = "") -> NoisyText:
    """Make a noisy copy of ``text``; reproducible from (seed, preset name, doc_id or text).

    >>> a = apply_noise("The modern line was clear.", "ocr-1930s", seed=1, doc_id="d1")
    >>> a == apply_noise("The modern line was clear.", "ocr-1930s", seed=1, doc_id="d1")
    True
    """
    spec = get_preset(preset)
    if not text.strip():
        return NoisyText(text, [])
    key = doc_id if doc_id else f"crc:{xxhash.xxh64_hexdigest(text.encode('utf-8', 'surrogatepass'))}"
    rng = random.Random(derive_seed(seed, spec.name, key))
    severity = math.exp(spec.severity_sigma * rng.gauss(0.0, 1.0)) if spec.severity_sigma > 0 else 1.0
    ops: list[str] = []
    for o in spec.ops:
        # the whole pipeline runs on one generator (seeding a Mersenne Twister costs ~5 us)
        apply = o.prob >= 1.0 or rng.random() < o.prob
        rate = o.rate if o.rate_max is None else rng.uniform(o.rate, o.rate_max)
        if not apply:
            continue
        if o.scaled:
            rate *= severity
        cap = _MAX_RATE.get(o.op, _CHAR_MAX if o.op in _CHAR_OPS else _WORD_MAX)
        rate = min(rate, cap)
        out = OPS[o.op](text, rng, rate)
        if out == text:
            continue
        if not out.strip():
            out = _first_sentence(text)
        if o.op in _CUT_OPS:
            ops.append(f"{o.op}:{1.0 - len(out) / len(text):.2f}")
        elif o.op in _NO_RATE_OPS:
            ops.append(o.op)
        else:
            ops.append(f"{o.op}:{_fmt(rate)}")
        text = out
    return NoisyText(text, ops)


def make_hard_negative(text: str, kind: str, seed: int, pool: Sequence[str] | None = None,
                       doc_id: str = "") -> NoisyText:
    """A similar-looking NON-duplicate: ``kind`` in ``update``, ``same_event_rewrite``, ``template_sibling``,
    ``entity_swap``.

    >>> make_hard_negative("Sales rose 5% at Acme, said Jo Ray.", "template_sibling", 0).ops
    ['template_sibling', 'replace_names:3', 'change_numbers:1']
    """
    if kind not in ALL_HARD_NEGATIVE_KINDS:
        raise ValueError(f"unknown hard-negative kind {kind!r}; known: {', '.join(ALL_HARD_NEGATIVE_KINDS)}")
    if not text.strip():
        return NoisyText(text, [])
    key = doc_id if doc_id else f"crc:{xxhash.xxh64_hexdigest(text.encode('utf-8', 'surrogatepass'))}"
    rng = random.Random(derive_seed(seed, "hard:" + kind, key))
    if kind == "update":
        out, ops = _update(text, rng)
    elif kind == "template_sibling":
        out, ops = _template_sibling(text, rng)
    elif kind == "entity_swap":
        out, ops = _entity_swap(text, rng)
    else:
        out, ops = _same_event_rewrite(text, rng, 0.5, pool)
    if not out.strip():
        out = _first_sentence(text)
    return NoisyText(out, [kind] + ops)


# --------------------------------------------------------------------------------------------
# Records and files
# --------------------------------------------------------------------------------------------


def _noise_record(rec: object, spec: NoiseSpec, seed: int, text_field: str, id_field: str) -> dict:
    if not isinstance(rec, dict):
        raise ValueError(f"record is not a JSON object: {type(rec).__name__}")
    if id_field not in rec:
        raise ValueError(f"record has no {id_field!r} field")
    text = rec.get(text_field)
    if not isinstance(text, str):
        raise ValueError(f"record {rec[id_field]!r} has no string {text_field!r} field")
    sid = str(rec[id_field])
    noisy = apply_noise(text, spec, seed, doc_id=sid)
    return {"id": f"{sid}~{spec.name}", "text": noisy.text, "source_id": sid, "ops": noisy.ops}


def noise_records(records: Iterable[dict], preset: str | NoiseSpec, seed: int,
                  text_field: str = "text", id_field: str = "id") -> Iterator[dict]:
    """One noisy copy per record: ``{"id": f"{id}~{preset}", "text", "source_id", "ops"}``.

    >>> next(noise_records([{"id": "a", "text": "Hello there."}], "clean", 0))["id"]
    'a~clean'
    """
    spec = get_preset(preset)
    for i, rec in enumerate(records):
        try:
            yield _noise_record(rec, spec, seed, text_field, id_field)
        except ValueError as e:
            raise ValueError(f"record {i}: {e}") from None


def _open_text(path: str, mode: str, gz: bool | None = None):  # noqa: ANN202
    if path.endswith(".gz") if gz is None else gz:
        return gzip.open(path, mode + "t", encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def noise_file(input_path: str, output_path: str, preset: str | NoiseSpec, seed: int,
               text_field: str = "text", id_field: str = "id") -> int:
    """Noise a JSONL(.gz) file into a JSONL(.gz) file atomically; returns the number of records.

    >>> import tempfile, os; d = tempfile.mkdtemp(); p = os.path.join(d, "in.jsonl")
    >>> _ = open(p, "w").write('{"id": 1, "text": "Hi there."}\\n')
    >>> noise_file(p, os.path.join(d, "out.jsonl"), "typos", 0)
    1
    """
    spec = get_preset(preset)
    out_dir = os.path.dirname(os.path.abspath(output_path))
    fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=f".{os.path.basename(output_path)}.", suffix=".tmp")
    os.close(fd)
    n = 0
    try:
        with _open_text(input_path, "r") as fin, _open_text(tmp, "w", gz=output_path.endswith(".gz")) as fout:
            for lineno, line in enumerate(fin, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                    out = _noise_record(rec, spec, seed, text_field, id_field)
                except (json.JSONDecodeError, ValueError) as e:
                    raise ValueError(f"{input_path}:{lineno}: {e}") from None
                fout.write(json.dumps(out, ensure_ascii=False) + "\n")
                n += 1
        os.replace(tmp, output_path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return n


# --------------------------------------------------------------------------------------------
# Measurement helpers (for calibrating presets)
# --------------------------------------------------------------------------------------------


def fold_homoglyphs(text: str) -> str:
    """Map the confusables in ``HOMOGLYPHS`` back to Latin.

    >>> fold_homoglyphs("\u0440\u0430y")
    'pay'
    """
    return text.translate(HOMOGLYPH_FOLD)


def strip_invisible(text: str) -> str:
    """Remove the characters in ``INVISIBLE_CHARS``.

    >>> strip_invisible("a\u200bb")
    'ab'
    """
    return text.translate(_INVISIBLE_DELETE)


def _ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    toks = _TOKEN_RE.findall(text.lower())
    return set(zip(*(toks[i:] for i in range(n))))


def ngram_jaccard(a: str, b: str, n: int = 3) -> float:
    """Jaccard of the word n-gram sets (lower-cased ``\\w+`` tokens).

    >>> ngram_jaccard("a b c d", "a b c e")
    0.3333333333333333
    """
    x, y = _ngrams(a, n), _ngrams(b, n)
    if not x and not y:
        return 1.0
    return len(x & y) / len(x | y)


def preset_stats(texts: Sequence[str], preset: str | NoiseSpec, seed: int = 0) -> dict[str, float]:
    """Mean word-3-gram Jaccard and fraction of pairs sharing no word 10-gram (original vs noisy).

    >>> preset_stats(["One two three four five."], "clean")["mean_jaccard3"]
    1.0
    """
    j3: list[float] = []
    none10 = 0
    for i, t in enumerate(texts):
        noisy = apply_noise(t, preset, seed, doc_id=str(i)).text
        j3.append(ngram_jaccard(t, noisy, 3))
        if not (_ngrams(t, 10) & _ngrams(noisy, 10)):
            none10 += 1
    k = max(len(j3), 1)
    return {"n": float(len(j3)), "mean_jaccard3": sum(j3) / k, "no_shared_10gram": none10 / k}
