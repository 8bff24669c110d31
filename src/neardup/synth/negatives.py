"""Hard negatives: similar-looking texts that are NOT duplicates (an update, a template sibling, a rewrite).

Owns changing the facts of a text (numbers, names, sentences from another story); must not make
noisy copies (see :mod:`neardup.synth.presets`) or decide what counts as a duplicate.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from neardup.synth.edits import apply_edits, doc_rng, first_sentence, sentences
from neardup.synth.lexicon import COMMON_WORDS, DAYS, FILLER_SENTENCES, MONTHS, NAMES, UPDATE_TEMPLATES
from neardup.synth.presets import NoisyText
from neardup.synth.words import doc_words, edit_words, pick_word, replace_core

__all__ = ["ALL_HARD_NEGATIVE_KINDS", "HARD_NEGATIVE_KINDS", "entity_swap", "make_hard_negative",
           "same_event_rewrite", "template_sibling", "update"]

#: The hard negatives of the benchmark sets (cycled in this order; changing it changes every shared set).
HARD_NEGATIVE_KINDS: tuple[str, ...] = ("update", "same_event_rewrite", "template_sibling")
#: Every kind :func:`make_hard_negative` makes.
ALL_HARD_NEGATIVE_KINDS: tuple[str, ...] = HARD_NEGATIVE_KINDS + ("entity_swap",)

_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")
_CAPWORD_RE = re.compile(r"\b[A-Z][A-Za-z]*\b")


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
    pool = [n for n in NAMES if n not in taken]
    rng.shuffle(pool)
    for w in names:
        if rate < 1.0 and rng.random() >= rate:
            continue
        if w in DAYS or w in MONTHS:
            same = DAYS if w in DAYS else MONTHS
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
    templates = rng.sample(UPDATE_TEMPLATES, k)
    extra = [t.format(name=rng.choice(names), day=rng.choice(DAYS), num=rng.randint(2, 95),
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
    names = [w for w in _names_in(text) if w not in DAYS and w not in MONTHS]
    if not names and not _NUMBER_RE.search(text):
        return _update(text, rng)
    out, n_names = text, 0
    if names:
        folded = list(dict.fromkeys(w.lower() for w in names))[:4]
        picks = rng.sample(folded, min(len(folded), 1 if len(folded) < 3 else rng.randint(1, 2)))
        taken = {w.lower() for w in _CAPWORD_RE.findall(text)}
        pool = [n for n in NAMES if n.lower() not in taken]
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
        out, changed = apply_edits(out, edits), len(edits)
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
    own = sentences(text)
    others = [p for p in (pool or ()) if p and p.strip() and p != text]
    other_sents = sentences(rng.choice(others)) if others else []
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
        sents.extend(rng.sample(FILLER_SENTENCES, min(k, len(FILLER_SENTENCES))))
        ops.append(f"filler_sentences:{min(k, len(FILLER_SENTENCES))}")
    rng.shuffle(sents)
    ops.append("shuffle_sentences")
    words_src = doc_words(" ".join(sents))
    sub_rate = max(0.3, rate * 0.6)
    paras: list[str] = []
    i = 0
    while i < len(sents):
        k = rng.randint(1, 3)
        paras.append(" ".join(s.strip() for s in sents[i:i + k]))
        i += k
    body = "\n\n".join(paras)
    doc = words_src or COMMON_WORDS

    def fn(items: list[str | None], j: int) -> None:
        w = items[j]
        if w is not None:
            items[j] = replace_core(w, pick_word(rng, doc))
    body = edit_words(body, rng, sub_rate, fn)
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
    rng = doc_rng(seed, "hard:" + kind, text, doc_id)
    if kind == "update":
        out, ops = _update(text, rng)
    elif kind == "template_sibling":
        out, ops = _template_sibling(text, rng)
    elif kind == "entity_swap":
        out, ops = _entity_swap(text, rng)
    else:
        out, ops = _same_event_rewrite(text, rng, 0.5, pool)
    if not out.strip():
        out = first_sentence(text)
    return NoisyText(out, [kind] + ops)
