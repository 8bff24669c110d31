from neardup.config import NormalizeConfig
from neardup.text.normalize import HOMOGLYPHS, normalize


def test_default_folds_case_punctuation_and_whitespace():
    assert normalize("  The QUICK,  brown\tfox!! ") == "the quick brown fox"


def test_nfkc_folds_fullwidth_and_ligatures():
    assert normalize("ｆｕｌｌ ﬁne") == "full fine"


def test_dehyphenates_line_breaks_but_keeps_inner_hyphens_as_separators():
    assert normalize("exam-\nple co-operate") == "example co operate"


def test_dehyphenation_joins_every_break_between_word_characters():
    assert normalize("a-\nb-\nc co- \n op -\nx") == "abc coop x"


def test_invisible_characters_and_homoglyphs_are_removed():
    spam = "fr\u200bee mоney"  # zero-width space and a Cyrillic o
    assert normalize(spam) == "free money"
    for fake, real in HOMOGLYPHS.items():
        assert normalize(fake, NormalizeConfig(casefold=False)) == real


def test_each_step_can_be_switched_off():
    cfg = NormalizeConfig(casefold=False, punctuation=False)
    assert normalize("Hello,  World!", cfg) == "Hello, World!"
    assert normalize("A  B", NormalizeConfig(enabled=False)) == "A  B"


def test_empty_text_stays_empty():
    assert normalize("") == ""
    assert normalize(" \n\t ") == ""


def _reference(text, cfg):
    """The plain regex definition of each step, which the fast paths must reproduce exactly."""
    import re
    import unicodedata

    from neardup.text.normalize import INVISIBLE

    if not cfg.enabled:
        return text
    if cfg.nfkc:
        text = unicodedata.normalize("NFKC", text)
    if cfg.invisible:
        text = "".join(ch for ch in text if ch not in INVISIBLE)
    if cfg.homoglyphs:
        text = "".join(HOMOGLYPHS.get(ch, ch) for ch in text)
    if cfg.dehyphenate:
        text = re.sub(r"(?<=\w)-[ \t]*\r?\n[ \t]*(?=\w)", "", text)
    if cfg.casefold:
        text = text.casefold()
    if cfg.punctuation:
        text = re.sub(r"[^\w\s]|_", " ", text)
    if cfg.whitespace:
        text = re.sub(r"\s+", " ", text).strip()
    return text


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_alphabet = st.sampled_from(list("abcXYZ019 _-\n\t.,!?'\"éÉßﬁ\u200bаеоΑ\u00ad\u3000") + ["-\n"])


@given(st.lists(_alphabet, max_size=60).map("".join), st.booleans(), st.booleans(), st.booleans(), st.booleans())
@settings(max_examples=300, deadline=None)
def test_fast_paths_equal_the_reference_definition(text, casefold, punctuation, whitespace, homoglyphs):
    cfg = NormalizeConfig(casefold=casefold, punctuation=punctuation, whitespace=whitespace, homoglyphs=homoglyphs)
    assert normalize(text, cfg) == _reference(text, cfg)
    ascii_text = text.encode("ascii", "ignore").decode()
    assert normalize(ascii_text, cfg) == _reference(ascii_text, cfg)


def test_word_character_table_equals_python_isalnum_at_every_code_point():
    import numpy as np
    import pytest

    from neardup.text.normalize import _alnum_table_re, alnum_table

    if getattr(np, "strings", None) is None:
        pytest.skip("NumPy before 2.0 builds the table by re only")
    every = np.arange(0x110000, dtype=np.uint32)
    fast, by_re = alnum_table(), _alnum_table_re(every)
    assert fast.dtype == bool and fast.shape == (0x110000,)
    assert np.array_equal(fast, by_re)
    sample = list(range(0, 0x110000, 97)) + [0x660, 0x2155, 0x3007, 0x4E00, 0x5F, 0xAD, 0x200B, 0x1D7CE]
    assert [bool(fast[c]) for c in sample] == [chr(c).isalnum() for c in sample]
