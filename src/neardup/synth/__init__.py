"""Synthetic data: seeded, realistic noisy copies of clean texts and hard negatives, for benchmarks and training.

Owns the noise ops, presets, hard negatives and noising of records and JSONL files; must not detect,
score or cluster duplicates, and must not import :mod:`neardup.eval`, ``train``, ``online`` or the CLI.

Modules, by the level the noise acts on: :mod:`~neardup.synth.chars` (characters),
:mod:`~neardup.synth.words`, :mod:`~neardup.synth.sentences` (sentences, paragraphs, cuts),
:mod:`~neardup.synth.layout` (headline, dateline, byline, footer); :mod:`~neardup.synth.presets`
(recipes and :func:`apply_noise`), :mod:`~neardup.synth.negatives` (:func:`make_hard_negative`),
:mod:`~neardup.synth.corpus` (records, files, calibration measures); shared machinery in
:mod:`~neardup.synth.edits` and word lists in :mod:`~neardup.synth.lexicon`. Every output is reproducible
from its seed: benchmark protocols commit them, so a change to any op changes the shared sets.

>>> apply_noise("Stocks rose in Tokyo.", "clean", seed=0).text
'Stocks rose in Tokyo.'
"""

from neardup.synth.chars import (
    HOMOGLYPH_FOLD,
    HOMOGLYPHS,
    INVISIBLE_CHARS,
    OCR_CONFUSIONS,
    case_change,
    char_drop,
    fold_homoglyphs,
    homoglyph,
    hyphenate,
    invisible,
    ocr_confusion,
    punctuation,
    quotes,
    spacing,
    strip_invisible,
    typo,
    whitespace,
)
from neardup.synth.corpus import ngram_jaccard, noise_file, noise_records, preset_stats
from neardup.synth.edits import derive_seed
from neardup.synth.layout import add_boilerplate, add_byline, add_dateline, add_headline
from neardup.synth.negatives import (
    ALL_HARD_NEGATIVE_KINDS,
    HARD_NEGATIVE_KINDS,
    entity_swap,
    make_hard_negative,
    same_event_rewrite,
    template_sibling,
    update,
)
from neardup.synth.presets import (
    OPS,
    PRESETS,
    NoiseSpec,
    NoisyText,
    OpSpec,
    apply_noise,
    get_preset,
    list_presets,
    ocr_spec,
)
from neardup.synth.sentences import abridge, drop_lead, sentence_delete, sentence_insert, sentence_swap
from neardup.synth.words import junk_words, word_delete, word_insert, word_repeat, word_substitute, word_swap

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
