"""Tests for neardup.report: the self-contained HTML benchmark report, rendered by a real browser."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                                reason="the report needs matplotlib (bench extra)")

METHODS = ("minhash", "ngram", "datasketch")
PRESETS = ("ocr-light", "ocr-medium", "ocr-heavy", "web-aggregator")


def _results(out: Path) -> None:
    """A small results folder in the layout ``run_suite`` writes."""
    rows, trials, sets = [], [], {}
    for source in ("bbc", "ag"):
        for p, preset in enumerate(PRESETS):
            name = f"{source}-{preset}"
            sets[name] = {"name": name, "source": source, "preset": preset,
                          "split_sizes": {"validation": 300, "test": 300},
                          "cluster_sizes": {"validation": [40, 9, 5, 3, 2, 2] + [1] * 239,
                                            "test": [25, 12, 6, 4, 2] + [1] * 251}}
            for m, method in enumerate(METHODS):
                ari = round(0.95 - 0.2 * p * (1 + m) / 3, 3)
                rows.append({"method": method, "set": name, "source": source, "preset": preset, "ari": ari,
                             "precision": 0.97, "recall": ari, "f1": ari, "params": {"threshold": 0.3},
                             "docs_per_second": 1000.0 * (m + 1), "peak_memory_mb": 12.5, "split_sizes":
                             {"validation": 300, "test": 300}, "validation": {"ari": ari}, "subsampled": m == 2})
                for t in range(5, 100, 5):
                    trials.append({"method": method, "set": name, "source": source, "preset": preset,
                                   "threshold": t / 100, "precision": min(1.0, 0.5 + t / 100),
                                   "recall": max(0.0, 1.0 - t / 100 * (1 + p / 2)), "f1": 0.5, "ari": 0.5,
                                   "selected_setting": True})
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (out / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in trials))
    (out / "sets.json").write_text(json.dumps(sets))
    (out / "run.json").write_text(json.dumps({"methods": list(METHODS), "notes": ["a note"], "seconds": 1.0,
                                              "skipped": [{"method": "rensa", "reason": "rensa: not installed"}]}))


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from neardup.report.html import write_report

    out = tmp_path_factory.mktemp("results")
    _results(out)
    return write_report(out)


def test_report_is_self_contained(report: Path) -> None:
    text = report.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert '<table id="ari-pivot"' in text and '<table id="results"' in text
    assert text.count("<svg") == 3  # noise curve, precision/recall vs threshold, cluster sizes
    assert text.count("<tr>") >= 24 + 1  # one results row per method x set
    assert "rensa: not installed" in text and "a note" in text
    assert not re.search(r"<(script|link|img|iframe)\b", text)
    assert not re.search(r"""(src|href)=["']?(https?:|//|file:)""", text)  # no external assets
    assert "ocr-heavy" in text and "datasketch (subsampled)" in text


def test_report_without_progression_shows_message(tmp_path: Path) -> None:
    from neardup.report.html import render_report

    rows = [{"method": "minhash", "set": "s", "source": "s", "preset": "typos", "ari": 0.9, "precision": 1.0,
             "recall": 0.8, "f1": 0.9, "params": {"threshold": 0.5}, "docs_per_second": 10.0,
             "peak_memory_mb": 1.0, "split_sizes": {"validation": 5, "test": 5}}]
    text = render_report(rows)
    assert text.count("<svg") == 3 and "no ocr-light / ocr-medium / ocr-heavy sets" in text


CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_report_renders_in_headless_chromium(report: Path, tmp_path: Path) -> None:
    from PIL import Image

    png = tmp_path / "report.png"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={png}",
           "--window-size=1200,2400", report.resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert png.exists() and png.stat().st_size > 10_000, proc.stderr[-2000:]
    img = Image.open(png).convert("RGB")
    assert img.size == (1200, 2400)
    small = img.resize((300, 600))
    colours = small.getcolors(maxcolors=300 * 600)
    assert colours is not None and len(colours) > 50  # not a blank (single-colour) page
    # a few distinct colour regions: quantise and count colours that cover at least 0.1% of the page
    quant = small.quantize(colors=32).convert("RGB").getcolors(maxcolors=64) or []
    big = [c for n, c in quant if n >= 0.001 * 300 * 600]
    assert len(big) >= 4, big
    white = sum(n for n, c in small.getcolors(maxcolors=300 * 600) if min(c) > 245)
    assert white < 0.97 * 300 * 600  # something was drawn
    # the plots are drawn too: the bottom half (figures) is not empty
    bottom = small.crop((0, 300, 300, 600)).getcolors(maxcolors=300 * 300)
    assert bottom is not None and len(bottom) > 20


def test_a_run_without_the_noise_progression_shows_each_set_s_ari_not_an_empty_chart():
    from neardup.report.html import render_report

    rows = [{"method": m, "set": "example-news", "source": "example", "preset": "planted", "ari": a, "precision": 1.0,
             "recall": 0.8, "f1": 0.9, "params": {"threshold": 0.5}, "docs_per_second": 10.0, "peak_memory_mb": 1.0,
             "split_sizes": {"validation": 5, "test": 5}} for m, a in (("minhash", 0.947), ("ngram", 0.958))]
    trials = [{"method": "minhash", "set": "example-news", "preset": "planted", "threshold": t / 10, "precision": 0.9,
               "recall": 0.8, "selected_setting": True} for t in range(1, 10)]
    text = render_report(rows, trials)
    first = text.split("<svg", 2)[1]
    assert "Test ARI per set and method" in first and "0.95" in first and "0.96" in first  # bars, labelled
    assert "ARI as noise grows</h2>" not in text and "no ocr-light / ocr-medium / ocr-heavy sets" in text
    second = text.split("<svg", 3)[2]
    assert "planted copies (bundled example)" in second and "noise preset" in second  # no bare "planted"
    assert ">planted<" not in second


def test_cluster_size_axes_have_plain_integer_ticks():
    from neardup.report.plots import cluster_size_svg

    svg = cluster_size_svg({"example": [1] * 150 + [2] * 30 + [3] * 15 + [5]})
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", svg)  # mathtext labels ("2 x 10^0") would be paths
    assert labels[:3] == ["1", "2", "5"] and labels[4:9] == ["1", "3", "10", "30", "100"]
