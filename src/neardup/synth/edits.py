"""Where and how noise lands: seeds, random event positions, safe edit sites, text units and applying edits.

Owns the low-level machinery every op shares; must not define an op, a word list or a preset.

Everything random here consumes only the ``random.Random`` it is given, so a document's noise is
reproducible from its seed (:func:`derive_seed`, xxh64, never Python's randomised ``hash()``).
"""

from __future__ import annotations

import math
import random
import re
import unicodedata
from collections.abc import Sequence

import numpy as np
import xxhash

__all__ = ["PARA_SPLIT", "SENT_SPLIT", "TOKEN_RE", "apply_edits", "derive_seed", "doc_rng", "events", "first_sentence",
           "join_units", "safe_delete", "safe_pos", "sentences", "split_units"]

SENT_SPLIT = re.compile(
    r"((?:(?<=[.!?])|(?<=[.!?][\"'\u201d\u2019)\]]))"
    r"(?<!\b[A-Z]\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bSt\.)(?<!\bMrs\.)"
    r"[ \t]+(?=[\"'\u201c\u2018(\[]?[A-Z0-9])|[ \t]*\n\s*)"
)
PARA_SPLIT = re.compile(r"(\n[ \t]*\n\s*)")
TOKEN_RE = re.compile(r"\w+")


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


def doc_rng(seed: int, salt: str, text: str, doc_id: str = "") -> random.Random:
    """The generator for one document: seeded with (seed, ``salt``, doc_id, or the text's hash without one).

    >>> doc_rng(0, "typos", "x", "d1").random() == doc_rng(0, "typos", "y", "d1").random()
    True
    """
    key = doc_id if doc_id else f"crc:{xxhash.xxh64_hexdigest(text.encode('utf-8', 'surrogatepass'))}"
    return random.Random(derive_seed(seed, salt, key))


def events(n: int, rate: float, rng: random.Random) -> list[int]:
    """Sorted indices in ``range(n)`` hit by independent Bernoulli(rate) events.

    Few expected events: geometric skipping in Python; many: one block of ``rng.randbytes``
    compared in NumPy. Both consume only ``rng``, so results are reproducible.

    >>> events(5, 1.0, random.Random(0)), events(5, 0.0, random.Random(0))
    ([0, 1, 2, 3, 4], [])
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


def safe_pos(text: str, p: int) -> int:
    """Move an insertion point forward so it never splits a surrogate pair, CRLF or a base+mark.

    >>> safe_pos("e\\u0301x", 1)
    2
    """
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


def safe_delete(text: str, end: int) -> bool:
    """True if deleting/replacing a character ending at ``end`` leaves no dangling mark.

    >>> safe_delete("e\\u0301", 1), safe_delete("ex", 1)
    (False, True)
    """
    return end >= len(text) or text[end] < "\x80" or not unicodedata.combining(text[end])


def apply_edits(text: str, edits: list[tuple[int, int, str]]) -> str:
    """Apply sorted (start, end, replacement) edits, skipping any that overlap an earlier one.

    >>> apply_edits("abcdef", [(0, 2, "X"), (1, 3, "skipped"), (4, 4, "-")])
    'Xcd-ef'
    """
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


def split_units(regex: re.Pattern[str], text: str) -> tuple[list[str], list[str]]:
    """Split ``text`` on a regex with one capturing group: (units, separators between them).

    >>> split_units(PARA_SPLIT, "a\\n\\nb")
    (['a', 'b'], ['\\n\\n'])
    """
    parts = regex.split(text)
    return parts[0::2], parts[1::2]


def join_units(items: Sequence[str | None], seps: Sequence[str]) -> str:
    """Join items with separators; a ``None`` item is removed and its two separators merged
    (keeping the one with more newlines, so paragraph breaks survive).

    >>> join_units(["a", None, "c"], [" ", "\\n\\n"])
    'a\\n\\nc'
    """
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


def sentences(text: str) -> list[str]:
    """The non-blank sentences of ``text``.

    >>> sentences("One here. Two there.")
    ['One here.', 'Two there.']
    """
    return [s for s in SENT_SPLIT.split(text)[0::2] if s.strip()]


def first_sentence(text: str) -> str:
    """The first non-blank sentence (the text itself if there is none): what is left when an op would empty it.

    >>> first_sentence("  \\nOne here. Two there.")
    'One here.'
    """
    for s in SENT_SPLIT.split(text)[0::2]:
        if s.strip():
            return s
    return text
