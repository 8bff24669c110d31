"""Noise characters (what the ``cleanest`` representative policy counts), and the policy choosing the clean
copy of a text over noisy copies made by the noise generator."""

from __future__ import annotations

import numpy as np
import pytest

from neardup.cluster import cluster_pairs, representative_keys
from neardup.config import ClusterConfig
from neardup.synth import apply_noise
from neardup.text.noise import noise_chars, noise_ratio

CLEAN = ("The harbour authority said on Tuesday that the new container terminal would open in March, two months "
         "later than planned, after storms delayed work on the quay. \"We expect the first ships in spring,\" a "
         "spokeswoman said; the cost rose by 4% to 120 million euros.")


@pytest.mark.parametrize("text, count", [
    (CLEAN, 0),
    ("naïve café — “quoted” … 50% off", 0),  # accents, dashes, curly quotes, ellipsis: clean
    ("Москва и Рим", 0),  # Cyrillic text is not noise
    ("fr\u0435e m\u043eney", 2),  # Cyrillic look-alikes inside Latin words
    ("free\u200b money\u00ad\ufeff", 3),  # invisible characters
    ("ＦＲＥＥ ﬁne", 5),  # full-width letters and a ligature
    ("price | ~ ^ {x} \\ `", 7),  # stray ASCII symbols
    ("■ deal ● now © \ufffd \x07", 5),  # other symbols, a replacement and a control character
])
def test_noise_characters(text, count):
    assert noise_chars(text) == count


@pytest.mark.parametrize("preset", ["adversarial-spam", "ocr-1930s"])
def test_cleanest_picks_the_clean_copy_over_noisy_ones(preset):
    noisy = [apply_noise(CLEAN, preset, seed=s, doc_id=str(s)).text for s in range(6)]
    noisy = [t for t in noisy if noise_ratio(t) > 0]
    assert len(noisy) >= 3
    texts = [*noisy[:2], CLEAN, *noisy[2:]]
    n = len(texts)
    left, right = np.zeros(n - 1, dtype=np.int64), np.arange(1, n)
    lengths = np.array([len(t) for t in texts])
    cfg = ClusterConfig(algorithm="components", representative="cleanest")  # the policy's choice over a whole group
    clusters = cluster_pairs(n, left, right, np.ones(n - 1), lengths, cfg, representative_keys(texts, None, cfg))
    assert clusters.labels.tolist() == [2] * n  # the clean copy, whatever the lengths
    longest = cluster_pairs(n, left, right, np.ones(n - 1), lengths, ClusterConfig(algorithm="components"))
    assert longest.labels[0] == int(np.argmax(lengths))  # the default is unchanged: the longest


def test_field_policies_rank_numbers_and_dates_and_missing_values_last():
    first = ClusterConfig(representative="first", representative_field="date")
    keys = representative_keys(["a"] * 4, ["2024-05-02", "2024-05-01T23:00:00+02:00", None, 1714500000], first)
    assert keys.tolist()[2] == np.inf and np.argmin(keys) == 3
    largest = ClusterConfig(algorithm="components", representative="largest", representative_field="votes")
    clusters = cluster_pairs(3, np.array([0, 0]), np.array([1, 2]), np.ones(2), np.array([9, 1, 1]), largest,
                             representative_keys(["x", "y", "z"], ["2", 7, "n/a"], largest))
    assert clusters.labels.tolist() == [1, 1, 1]
