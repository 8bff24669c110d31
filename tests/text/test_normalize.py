from neardup.config import NormalizeConfig
from neardup.text.normalize import HOMOGLYPHS, normalize


def test_default_folds_case_punctuation_and_whitespace():
    assert normalize("  The QUICK,  brown\tfox!! ") == "the quick brown fox"


def test_nfkc_folds_fullwidth_and_ligatures():
    assert normalize("ｆｕｌｌ ﬁne") == "full fine"


def test_dehyphenates_line_breaks_but_keeps_inner_hyphens_as_separators():
    assert normalize("exam-\nple co-operate") == "example co operate"


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
