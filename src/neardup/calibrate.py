"""The default that needs no labels: read the corpus's own statistics (how damaged its characters and
words are, which script it is written in) and choose the representation and threshold from them.

Owns the noise profile of a sample of texts and the shipped mapping from profile to configuration,
fitted once on the three labelled Reuters days under the noise generator's presets (see docs/quality.md)
and its character threshold capped for greedy clustering (``benchmarks/bench_decisions.py --calibrate``:
five Reuters days under every preset and spam campaigns, one noise model left out at a time);
must not run the pipeline (:func:`resolve` returns a configuration).

Two measures, both read from the first documents of the input:

* **character damage** ``damage``: the share of character 5-grams seen only once in the first
  :data:`SAMPLE_CHARS` normalized characters, minus the share clean text of that length has
  (:data:`CLEAN_RARE`; every corrupted character makes up to five new 5-grams). 0 on clean news,
  0.02 with light OCR noise, 0.10 to 0.16 with heavy;
* **variant rate** ``variant``: the share of words that are rare (seen once) yet one edit away from a
  frequent word (seen five times or more): typos, OCR errors and hash-busting make such near-misses,
  clean text hardly any (0.006 to 0.011 on clean news, 0.05 in hash-busting spam).

A third measure, ``quoted``: the share of lines that quote another message (``>`` first), as forum and mail
replies do; 0 in news.

Clean text gets word 4-grams at 0.45 (less as damage grows; at least 0.75 where replies quote each
other, :data:`QUOTED_THRESHOLD`); damaged or tampered text gets character
5-grams at ``min(0.60, 0.80 * exp(-7 * damage))`` (fitted on the presets; it also held under a noise model
of another library, docs/quality.md). The cap binds on tampered text with little damage (hash-busting
spam): under greedy clustering no chain rescues a copy that too high a threshold missed. Text written
without spaces between words (Chinese, Japanese, Thai, ...) is recognised by its script and gets character
shingles sized for it.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from neardup.config import DedupConfig, NormalizeConfig
from neardup.text.normalize import normalize
from neardup.text.shingle import char_shingle_sequence

#: Documents, words and normalized characters of the sample the profile is read from (the first ones).
SAMPLE_DOCS = 2000
SAMPLE_WORDS = 300_000
SAMPLE_CHARS = 400_000
#: Below this many characters the sample says too little: the clean default is kept.
MIN_CHARS = 20_000
#: Share of character 5-grams seen once in clean news of that many normalized characters (mean of BBC,
#: Reuters-21578, 20 Newsgroups and AG News): the baseline damage is measured against.
CLEAN_RARE: tuple[tuple[int, float], ...] = ((25_000, 0.304), (50_000, 0.217), (100_000, 0.157), (200_000, 0.105),
                                             (400_000, 0.069), (800_000, 0.044))
#: Word shingles while damage and the variant rate stay under these; character shingles above.
WORD_MAX_DAMAGE = 0.025
WORD_MAX_VARIANT = 0.035
#: Thresholds: ``top * exp(-decay * damage)`` for word 4-grams and for character 5-grams.
WORD_THRESHOLD = (0.45, 5.6)
CHAR_THRESHOLD = (0.80, 7.0)
#: The most a damaged or tampered profile's character threshold may be (refit for greedy, bench_decisions
#: --calibrate: it binds below damage 0.041; busted spam campaigns, damage 0, greedy ARI .011 at 0.8, .98 at 0.6).
#: A clean profile whose user chose characters keeps ``CHAR_THRESHOLD`` (clean Reuters: best near 0.8).
CHAR_MAX = 0.60
#: Scripts written without spaces between words, by code point range: character shingles of this size.
SPACELESS: tuple[tuple[str, int, int, int], ...] = (
    ("han", 0x3400, 0x9FFF, 2), ("han", 0xF900, 0xFAFF, 2), ("kana", 0x3040, 0x30FF, 2), ("kana", 0xFF66, 0xFF9F, 2),
    ("thai", 0x0E00, 0x0E7F, 4), ("lao", 0x0E80, 0x0EFF, 4), ("myanmar", 0x1000, 0x109F, 4), ("khmer", 0x1780, 0x17FF, 4),
)
#: Share of letters in such scripts from which a corpus is treated as spaceless.
SPACELESS_FROM = 0.3
#: Threshold of the weighted overlap of character shingles for spaceless text.
SPACELESS_THRESHOLD = 0.6
#: A line that quotes another message, as forum and mail replies mark it: ``>``, ``|`` or ``:`` first (after
#: blanks), or initials before ``>`` (``JS> ...``).
QUOTE_LINE = re.compile(r"^[ \t]*(?:[>|]|:(?!\w)|[A-Za-z]{1,4}>)")
#: Share of the sample's non-blank lines that quote (``quoted``) from which the corpus is read as replies that
#: quote each other (20 Newsgroups: 0.18; news, including the Reuters days: 0).
QUOTED_FROM = 0.05
#: The least threshold (containment) for such a corpus: two replies that quote the same message share that
#: quote, and a short post that a reply quotes in part is not its copy. On 20 Newsgroups at word 4-grams, 0.45
#: removed 3,744 posts, 21 of 50 sampled with 80% or more of their word 3-grams inside the post kept for them;
#: 0.75 removes 1,579, and 48 of 50 sampled are copies when read (docs/decisions.md).
QUOTED_THRESHOLD = 0.75
_WORD = re.compile(r"\w+")
#: Longest word (characters) the variant rate reads: its one-deletion variants cost the square of its length
#: (a 40 KB token took 1.3 GB), and a longer "word" is a blob or an address, not one a typo is made in.
MAX_WORD_CHARS = 64


@dataclass(frozen=True)
class NoiseProfile:
    """What a sample of texts says about the corpus.

    >>> p = profile(["The cat sat on the mat."] * 3)
    >>> p.words, p.script, p.damage, p.quoted  # too little text to measure damage: 0
    (15, 'spaced', 0.0, 0.0)
    >>> profile(["I agree.\\n> The cat sat on the mat.\\n> It was warm."]).quoted  # lines of a reply that quote
    0.667
    """

    docs: int
    words: int
    chars: int
    damage: float
    variant: float
    spaceless: float
    script: str
    quoted: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (rounded)."""
        return {k: round(v, 5) if isinstance(v, float) else v for k, v in dataclasses.asdict(self).items()}


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def _script(cps: np.ndarray) -> tuple[float, str]:
    """Share of letters in spaceless scripts, and the commonest such script."""
    letters = int(((cps >= 0x41) & ~((cps >= 0x5B) & (cps <= 0x60)) & ~((cps >= 0x7B) & (cps <= 0xBF))).sum())
    counts: Counter[str] = Counter()
    for name, lo, hi, _ in SPACELESS:
        counts[name] += int(((cps >= lo) & (cps <= hi)).sum())
    total = sum(counts.values())
    if not total or not letters:
        return 0.0, "spaced"
    return total / letters, counts.most_common(1)[0][0]


def _rare_grams(text: str, n: int = 5) -> float:
    """Share of the character ``n``-grams of ``text`` that occur once in it."""
    grams = char_shingle_sequence(text, n)
    if grams.size == 0:
        return 0.0
    _, counts = np.unique(grams, return_counts=True)
    return float((counts == 1).sum() / grams.size)


def _clean_rare(chars: int) -> float:
    xs, ys = zip(*CLEAN_RARE)
    return float(np.interp(math.log(max(chars, 1)), np.log(xs), ys))


def profile(texts: Iterable[str], normalize_config: NormalizeConfig | None = None, max_docs: int = SAMPLE_DOCS
            ) -> NoiseProfile:
    """The noise profile of the first ``max_docs`` texts (normalized as the pipeline normalizes them)."""
    sample: list[str] = []
    words: list[str] = []
    normalized = ""
    for text in texts:
        if len(sample) >= max_docs or (len(words) >= SAMPLE_WORDS and len(normalized) >= SAMPLE_CHARS):
            break
        sample.append(text)
        if len(words) < SAMPLE_WORDS:
            words.extend(w for w in _WORD.findall(text.lower()) if 3 <= len(w) <= MAX_WORD_CHARS and not w.isdigit())
        if len(normalized) < SAMPLE_CHARS:
            normalized += normalize(text, normalize_config) + " "
    normalized = normalized[:SAMPLE_CHARS]
    spaceless, script = _script(np.frombuffer(normalized.encode("utf-32-le", "surrogatepass"), dtype=np.uint32))
    counts = Counter(words)
    frequent = {w for w, c in counts.items() if c >= 5}
    near = set(frequent)
    for w in frequent:
        near |= _deletes(w)
    lines = [line for text in sample for line in text.splitlines() if line.strip()]
    quoted = round(sum(1 for line in lines if QUOTE_LINE.match(line)) / max(1, len(lines)), 3)
    variant = sum(1 for w, c in counts.items()
                  if c == 1 and len(w) >= 4 and (w in near or not near.isdisjoint(_deletes(w)))) / max(1, len(words))
    damage = max(0.0, _rare_grams(normalized) - _clean_rare(len(normalized))) if len(normalized) >= MIN_CHARS else 0.0
    return NoiseProfile(docs=len(sample), words=len(words), chars=len(normalized), damage=damage, variant=variant,
                        spaceless=spaceless, script=script if spaceless >= SPACELESS_FROM else "spaced", quoted=quoted)


def decay(top_and_rate: tuple[float, float], damage: float) -> float:
    """A threshold that falls with the damage: ``top * exp(-rate * damage)``, to 3 decimals."""
    top, rate = top_and_rate
    return round(top * math.exp(-rate * damage), 3)


def choose(p: NoiseProfile, char: bool | None = None) -> dict[str, Any]:
    """The configuration a profile calls for, as ``DedupConfig.replace`` keywords (method included).
    ``char`` fixes the shingling unit (the user chose words or characters): the size and threshold are
    then the ones measured for that unit. Character shingles bring MinHash's candidate budget and estimate
    floor for that unit (:meth:`neardup.methods.minhash.MinHash.unit_defaults`).

    >>> choose(NoiseProfile(docs=500, words=60000, chars=400000, damage=0.1, variant=0.07, spaceless=0.0,
    ...                     script="spaced"))
    {'method': 'minhash', 'shingle__char': True, 'shingle__n': 5, 'threshold': 0.397}
    >>> choose(NoiseProfile(docs=900, words=300000, chars=400000, damage=0.0, variant=0.036, spaceless=0.0,
    ...                     script="spaced"))["threshold"]  # hash-busting spam: tampered, not damaged
    0.6
    >>> choose(NoiseProfile(docs=900, words=300000, chars=400000, damage=0.0, variant=0.01, spaceless=0.0,
    ...                     script="spaced", quoted=0.18))["threshold"]  # forum replies that quote each other
    0.75
    """
    if p.script != "spaced" and char is not False:
        n = next(size for name, _, _, size in SPACELESS if name == p.script)
        return {"method": "minhash", "shingle__char": True, "shingle__n": n, "threshold": SPACELESS_THRESHOLD}
    clean = p.chars < MIN_CHARS or (p.damage < WORD_MAX_DAMAGE and p.variant < WORD_MAX_VARIANT)
    if char is False or (char is None and clean):  # replies that quote: a copy holds the removed text whole
        floor = QUOTED_THRESHOLD if p.quoted >= QUOTED_FROM else 0.0
        return {"method": "minhash", "shingle__char": False, "shingle__n": 4,
                "threshold": max(floor, decay(WORD_THRESHOLD, p.damage))}
    threshold = decay(CHAR_THRESHOLD, p.damage)
    return {"method": "minhash", "shingle__char": True, "shingle__n": 5,
            "threshold": threshold if clean else min(CHAR_MAX, threshold)}


def view_thresholds(p: NoiseProfile, views: Iterable[str], trained: dict[str, float] | None = None) -> tuple[float, ...]:
    """Each view's threshold under a profile (method multiview): word 4-grams' and character 5-grams'
    decayed with the damage as in :func:`choose`, without :data:`CHAR_MAX` (refit for character shingles
    alone under greedy, not for multiview's max rule); the trained views' (bi-encoder, cross-encoder) from
    ``trained`` (their models' own validated thresholds); RETSim's cosine at 0.95, not calibrated (above the
    retsim method's 0.9: in the max rule templated wire notices reach 0.9, docs/multiview.md).

    >>> view_thresholds(NoiseProfile(docs=500, words=60000, chars=400000, damage=0.1, variant=0.07,
    ...                              spaceless=0.0, script="spaced"), ("word", "char", "retsim"))
    (0.257, 0.397, 0.95)
    """
    table = {"word": decay(WORD_THRESHOLD, p.damage), "char": decay(CHAR_THRESHOLD, p.damage), "retsim": 0.95}
    return tuple(table[v] if v in table else (trained or {})[v] for v in views)


def needs_corpus(config: DedupConfig) -> bool:
    """Whether :func:`resolve` reads the texts for ``config`` (else it returns ``config`` unchanged).

    >>> needs_corpus(DedupConfig(method="auto")), needs_corpus(DedupConfig(method="minhash"))
    (True, False)
    """
    return config.method == "auto" or (config.method == "multiview" and config.multiview.view_thresholds is None)


def resolve(config: DedupConfig, texts: Iterable[str]) -> DedupConfig:
    """``config`` itself, or for ``method="auto"`` the configuration the texts' profile calls for, with the
    profile and the choice recorded in ``config.calibration`` (and so in a run's summary). Settings the
    user gave (anything but the method's defaults) are kept, and named in the record (``given``). The run's candidate
    scores may lower the threshold after this (:mod:`neardup.calibrate_scores`). For ``method="multiview"`` without
    ``view_thresholds``, each view's threshold the profile calls for (:func:`view_thresholds`)."""
    if config.method == "multiview" and config.multiview.view_thresholds is None:
        from neardup.methods.multiview import MultiView

        p = profile(texts)
        mv = MultiView(config)
        views = mv.kinds
        chosen = view_thresholds(p, views, dict(zip(views, mv.view_thresholds)))
        resolved = config.replace(multiview__view_thresholds=chosen)
        return dataclasses.replace(resolved, calibration={"profile": p.to_dict(),
                                                          "choice": {"views": list(views), "view_thresholds": list(chosen)}})
    if config.method != "auto":
        return config
    p = profile(texts)
    choice = choose(p, char=config.shingle.char if "shingle__char" in _given(config) else None)
    given = _given(config)
    keep = {k: v for k, v in choice.items() if k == "method" or k not in given}
    resolved = config.replace(**keep)
    record = {"profile": p.to_dict(), "choice": choice, **({"given": sorted(given)} if given else {})}
    return dataclasses.replace(resolved, calibration=record)


def _given(config: DedupConfig) -> set[str]:
    """The settings of ``config`` that were set, not taken from the method's defaults."""
    return {"threshold", "shingle__char", "shingle__n"} - set(config.defaulted)


__all__ = ["NoiseProfile", "choose", "needs_corpus", "profile", "resolve", "view_thresholds"]
