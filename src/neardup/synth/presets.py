r"""Noise recipes: the op registry, ``OpSpec`` / ``NoiseSpec``, the built-in presets and ``apply_noise``.

Owns which ops run, in which order, at which rate, seeded how; must not implement an op (see
:mod:`neardup.synth.chars`, ``words``, ``sentences``, ``layout``) or read and write files.

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
fraction of pairs sharing no word 10-gram (:func:`neardup.synth.corpus.preset_stats`). NEWS-COPY
reports 0.30 and ~19% for its 1930s scans; ocr-1930s over seeds 0/1/2 gives 0.301/0.296/0.298 and
20.3%/19.4%/19.6%.

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

import math
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from neardup.synth.chars import (case_change, char_drop, homoglyph, hyphenate, invisible, ocr_confusion, punctuation,
                                 quotes, spacing, typo, whitespace)
from neardup.synth.edits import doc_rng, first_sentence
from neardup.synth.layout import add_boilerplate, add_byline, add_dateline, add_headline
from neardup.synth.sentences import abridge, drop_lead, sentence_delete, sentence_insert, sentence_swap
from neardup.synth.words import junk_words, word_delete, word_insert, word_repeat, word_substitute, word_swap

__all__ = ["OPS", "PRESETS", "NoiseSpec", "NoisyText", "OpSpec", "apply_noise", "get_preset", "list_presets",
           "ocr_spec"]

Op = Callable[[str, random.Random, float], str]

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
    """A noisy copy (or hard negative) and the ops that changed it, e.g. ``["abridge:0.35", "typo:0.002"]``.

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
    rng = doc_rng(seed, spec.name, text, doc_id)
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
            out = first_sentence(text)
        if o.op in _CUT_OPS:
            ops.append(f"{o.op}:{1.0 - len(out) / len(text):.2f}")
        elif o.op in _NO_RATE_OPS:
            ops.append(o.op)
        else:
            ops.append(f"{o.op}:{_fmt(rate)}")
        text = out
    return NoisyText(text, ops)
