import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.text.xxh3 import MAX_LEN, word_hashes


@pytest.fixture(autouse=True)
def compiled_loops(monkeypatch):
    monkeypatch.setenv("NEARDUP_JIT", "1")


def _hashes(texts):
    units = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32)
    return word_hashes(units, np.array([len(t) for t in texts], dtype=np.int64))


def _expected(texts):
    return [xxhash.xxh3_64_intdigest(w.encode("utf-8")) for t in texts for w in t.split(" ") if w]


@pytest.mark.parametrize("alphabet", ["abcXYZ019_", "éñøß", "中文字", "😀𝔘"],
                         ids=["1 byte", "2 bytes", "3 bytes", "4 bytes"])
def test_every_length_equals_xxhash(alphabet):
    """Every byte length XXH3 treats apart (1-3, 4-8, 9-16, 17-128 in four steps, 129-240) and past it."""
    rng = np.random.default_rng(len(alphabet))
    width = len(alphabet[0].encode("utf-8"))
    words = ["".join(rng.choice(list(alphabet), size=n)) for n in range(1, (MAX_LEN + 40) // width + 1)
             for _ in range(3)]
    texts = [" ".join(words[i : i + 7]) for i in range(0, len(words), 7)]
    hashes, counts = _hashes(texts)
    assert hashes.tolist() == _expected(texts)
    assert counts.tolist() == [len(t.split(" ")) for t in texts]
    assert any(len(w.encode("utf-8")) > MAX_LEN for w in words)  # the long ones, hashed by xxhash


def test_spaces_and_empty_texts():
    texts = ["", "  a  bb ", " ", "c", ""]
    hashes, counts = _hashes(texts)
    assert hashes.tolist() == _expected(texts) and counts.tolist() == [0, 2, 0, 1, 0]


def test_the_most_words_a_batch_can_hold():
    """Texts of one letter, or letters between single spaces, hold a word per two code points and one more."""
    for texts in (["a"] * 9, ["a b c"] * 5 + ["d"]):
        hashes, counts = _hashes(texts)
        assert hashes.tolist() == _expected(texts) and counts.sum() == hashes.size


@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=60), max_size=8))
@settings(max_examples=60, deadline=None)
def test_random_texts_equal_xxhash(texts):
    hashes, counts = _hashes(texts)
    assert hashes.tolist() == _expected(texts)
    assert counts.tolist() == [len([w for w in t.split(" ") if w]) for t in texts]
