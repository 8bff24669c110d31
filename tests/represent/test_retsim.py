"""RETSimEncoder: parity with unisim's TextSim (document and chunk level), contract, edge cases.

unisim's Python API is used here only as the reference implementation.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

pytestmark = pytest.mark.neural
pytest.importorskip("onnxruntime")
pytest.importorskip("unisim")

from neardup.represent.encoder import Encoder, check_embeddings, require_extra  # noqa: E402
from neardup.represent.retsim import (  # noqa: E402
    DIM,
    RETSimEncoder,
    binarize,
    chunk_codepoints,
    chunk_count,
)

WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which "
    "market shares profit company government minister election football match season player film "
    "music album report quarter growth bank interest rates price oil dollar euro year week said"
).split()
UNICODE = [
    "café déjà vu naïve façade",
    "Привет, как дела? Всё хорошо.",
    "東京は日本の首都です。天気が良い。",
    "emoji 😀🎉👍🏽 and flags 🇫🇷🇯🇵",
    "combining e\u0301 a\u0308 n\u0303 and zero\u200bwidth",
    "العربية نص تجريبي قصير",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math 𝟙𝟚𝟛 and \U0010fffd plane-16",
]


def _sentence(rng: random.Random, n_words: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n_words)]
    return " ".join(words).capitalize() + "."


def _text(rng: random.Random, n_chars: int) -> str:
    parts: list[str] = []
    while sum(map(len, parts)) < n_chars:
        parts.append(_sentence(rng, rng.randint(4, 18)))
    return " ".join(parts)[:n_chars]


def _typos(rng: random.Random, text: str, rate: float) -> str:
    chars = list(text)
    for i in range(len(chars)):
        r = rng.random()
        if r < rate / 3:
            chars[i] = rng.choice("abcdefghijklmnopqrstuvwxyz")
        elif r < 2 * rate / 3:
            chars[i] = ""
        elif r < rate:
            chars[i] = chars[i] + rng.choice("abcdefghijklmnopqrstuvwxyz ")
    return "".join(chars)


def _corpus(seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    texts: list[str] = []
    texts += [_text(rng, rng.randint(1, 120)) for _ in range(90)]  # short
    texts += [_text(rng, rng.randint(121, 511)) for _ in range(40)]  # one chunk
    # chunk boundaries: exact 512 (extra padding chunk), dropped / padded last chunk, exact multiples
    texts += [_text(rng, n) for n in (511, 512, 513, 700, 768, 769, 1024, 1025, 1280, 1281, 1536, 2100)]
    texts += [_text(rng, rng.randint(513, 2600)) for _ in range(10)]  # several chunks
    texts += UNICODE + [u * rng.randint(20, 60) for u in UNICODE[:3]]  # unicode, incl. multi-chunk
    noisy = [_typos(rng, t, 0.08) for t in texts[:20]]
    noisy += [t.upper() for t in texts[20:25]] + [t.replace(" ", "\n\t ") for t in texts[25:30]]
    noisy += ["   ", "\n", "x", "0123456789" * 7, "!!!???...", "a" * 512, "\x00 nul \x7f del"]
    texts += noisy
    texts += texts[:6]  # exact duplicates (exercise chunk dedup)
    return texts


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return _corpus()


@pytest.fixture(scope="module")
def encoder():
    with RETSimEncoder() as enc:
        yield enc


@pytest.fixture(scope="module")
def textsim():
    from unisim import TextSim

    return TextSim(store_data=False)


@pytest.fixture(scope="module")
def ours(encoder, texts) -> np.ndarray:
    return encoder.encode(texts)


def test_corpus_is_varied(texts):
    lengths = [len(t) for t in texts]
    assert 200 <= len(texts) <= 260
    assert sum(chunk_count(n) > 1 for n in lengths) >= 20
    assert 512 in lengths and any(n > 2000 for n in lengths)
    assert any(ord(c) > 0xFFFF for t in texts for c in t)


def test_binarization_matches_unisim(texts):
    from unisim.embedder.text.binarizer import binarizer

    ref, chunk_ids = binarizer(texts)
    cp, offsets = chunk_codepoints(texts)
    assert np.array_equal(binarize(cp), ref)
    assert np.diff(offsets).tolist() == [len(ids) for ids in chunk_ids]


def test_document_parity_with_textsim(textsim, ours, texts):
    ref = np.asarray(textsim.embed(texts), dtype=np.float32)
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    cos = (ours * ref).sum(axis=1)
    assert cos.min() >= 0.999, f"worst text {int(cos.argmin())}: cosine {cos.min():.6f}"
    assert cos.mean() >= 0.9999


def test_chunk_parity_with_textsim(textsim, encoder, texts):
    from unisim.embedder.text.binarizer import binarizer

    sub = [t for t in texts if chunk_count(len(t)) > 1][:30] + texts[:10]
    batch, chunk_ids = binarizer(sub)
    ref = np.asarray(textsim.embedder.predict(batch), dtype=np.float32)
    chunks, offsets = encoder.encode_chunks(sub, keep_pad_chunks=True)
    assert chunks.shape == ref.shape
    assert np.diff(offsets).tolist() == [len(ids) for ids in chunk_ids]
    cos = (chunks * ref).sum(axis=1) / np.linalg.norm(ref, axis=1)
    assert cos.min() >= 0.999


def test_shape_dtype_norm(ours, texts, encoder):
    check_embeddings(ours, len(texts), DIM, atol=1e-5)
    assert isinstance(encoder, Encoder)
    assert (encoder.name, encoder.dim) == ("retsim-v1", 256)
    assert encoder.encode([]).shape == (0, DIM)
    chunks, offsets = encoder.encode_chunks([])
    assert chunks.shape == (0, DIM) and offsets.tolist() == [0]


def test_order_preserved_across_batching_windows_and_workers(ours, texts):
    rng = np.random.default_rng(3)
    perm = rng.permutation(len(texts))
    shuffled = [texts[i] for i in perm]
    with RETSimEncoder(batch_size=3, num_threads=2, window_chunks=17, dedup=False) as enc:
        got = enc.encode(shuffled)
    np.testing.assert_allclose(got, ours[perm], atol=2e-5)
    with RETSimEncoder(batch_size=64, num_threads=1) as enc:
        got = enc.encode(shuffled[:40])
    np.testing.assert_allclose(got, ours[perm[:40]], atol=2e-5)


def test_batch_composition_does_not_change_embeddings(encoder, texts, ours):
    # a chunk's embedding must not depend on the chunks it was batched with (nor on a lone
    # trailing chunk: onnxruntime computes a batch of one slightly differently)
    assert encoder.batch_size == 2
    for lo, hi in ((140, 143), (131, 132), (0, 5)):  # 131: 512 chars, 2 chunks
        np.testing.assert_allclose(encoder.encode(texts[lo:hi]), ours[lo:hi], atol=1e-6)


def test_chunks_average_to_document(encoder, texts, ours):
    sub = texts[130:150]
    chunks, offsets = encoder.encode_chunks(sub, keep_pad_chunks=True)
    np.testing.assert_allclose(np.linalg.norm(chunks, axis=1), 1.0, atol=1e-5)
    for i in range(len(sub)):
        mean = chunks[offsets[i] : offsets[i + 1]].mean(axis=0)
        np.testing.assert_allclose(mean / np.linalg.norm(mean), ours[130 + i], atol=2e-5)


def test_pad_chunks_dropped_by_default(encoder):
    exact = "b" * 512
    chunks, offsets = encoder.encode_chunks(["a" * 1100, exact, "", "c"], allow_empty=True)
    assert np.diff(offsets).tolist() == [2, 1, 0, 1]
    assert chunks.shape == (4, DIM)
    with_pad, off2 = encoder.encode_chunks([exact], keep_pad_chunks=True)
    assert np.diff(off2).tolist() == [2]
    np.testing.assert_allclose(with_pad[0], chunks[2], atol=1e-6)


def test_typo_copy_closer_than_unrelated(encoder):
    rng = random.Random(11)
    base = _text(rng, 700)
    noisy = _typos(rng, base, 0.05)
    unrelated = _text(rng, 700)
    a, b, c = encoder.encode([base, noisy, unrelated])
    assert float(a @ b) > float(a @ c) + 0.05
    assert float(a @ b) > 0.9


def test_empty_text_raises_with_index(encoder):
    with pytest.raises(ValueError, match="index 2"):
        encoder.encode(["a", "b", "", "d"])
    with pytest.raises(ValueError, match="index 0"):
        encoder.encode_chunks([""])
    with pytest.raises(TypeError, match="index 1"):
        encoder.encode(["a", None])  # type: ignore[list-item]


def test_allow_empty_matches_textsim(encoder, textsim):
    got = encoder.encode(["", "x"], allow_empty=True)
    ref = np.asarray(textsim.embed(["", "x"]), dtype=np.float32)
    np.testing.assert_allclose(got, ref / np.linalg.norm(ref, axis=1, keepdims=True), atol=1e-5)


def test_progress_bar(encoder, capsys):
    encoder.encode(["one", "two " * 300], progress=True)
    assert "chunk" in capsys.readouterr().err


def test_chunk_count_rules():
    assert [chunk_count(n) for n in (0, 1, 512, 513, 768, 769, 1024, 1025, 1281)] == [1, 1, 2, 1, 1, 2, 2, 2, 3]
    assert [chunk_count(n, pad_chunks=False) for n in (0, 1, 512, 1024)] == [0, 1, 1, 2]


def test_require_extra_message():
    with pytest.raises(ImportError, match=r"install neardup\[neural\]: pip install 'neardup\[neural\]'"):
        require_extra("neardup_no_such_module", "neural")


def test_quantized_option_close(texts, ours):
    sub = texts[:12] + texts[130:134]
    with RETSimEncoder(quantize=True) as enc:
        assert enc.name == "retsim-v1-int8"
        got = enc.encode(sub)
    idx = list(range(12)) + list(range(130, 134))
    cos = (got * ours[idx]).sum(axis=1)
    assert cos.min() >= 0.995
