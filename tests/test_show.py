"""``neardup show``: the largest clusters, a cluster side by side in the terminal (representative marked,
shared passages highlighted), and the HTML run report rendered by a real browser with its diffs."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

import neardup
from neardup.audit import cluster_view, near_threshold, run_view
from neardup.cli import app
from neardup.config import EngineConfig
from neardup.report.run import render_run_report

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


def _run(*args, env=None):
    return CliRunner().invoke(app, [str(a) for a in args], env=env)


@pytest.fixture(scope="module")
def out(tmp_path_factory, example_path_module) -> Path:
    folder = tmp_path_factory.mktemp("show") / "out"
    res = _run("dedup", example_path_module, "-o", folder, "--silent")
    assert res.exit_code == 0, res.output
    return folder


@pytest.fixture(scope="module")
def example_path_module() -> Path:
    from tests.conftest import EXAMPLE

    return EXAMPLE


def test_show_lists_the_largest_clusters(out):
    res = _run("show", out, "--width", "140")
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    top = summary["largest_clusters"][0]
    assert "largest clusters" in res.stdout and re.search(rf"{re.escape(top['cluster'])}\s+│\s+{top['size']}\b", res.stdout)
    assert f"{summary['n_docs']} documents" in res.stdout


def test_show_a_cluster_side_by_side_with_the_shared_passages_highlighted(out):
    result = neardup.DedupResult.load(out)
    cluster = result.summary["largest_clusters"][0]["cluster"]
    view = cluster_view(result, cluster)
    passage = max((s for p in view.pairs for s in p.spans), key=lambda s: s["words"])
    res = _run("show", out, cluster, "--width", "200", "--chars", "5000", env={"FORCE_COLOR": "1", "TERM": "xterm"})
    assert res.exit_code == 0, res.output
    text = res.stdout
    assert "\x1b[30;43m" in text  # the first passage's highlight (black on yellow)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert f"★ {cluster} (representative)" in plain and f"cluster {cluster}: {view.size} documents" in plain
    first_words = passage["text"].split()[:2]
    assert all(w in plain for w in first_words)
    scores = re.findall(r"score (\d\.\d+)", plain)
    assert scores and all(len(s.split(".")[1]) == 3 for s in scores)  # rounded when printed


def test_without_colour_the_passages_are_bracketed_and_a_document_id_finds_its_cluster(out):
    result = neardup.DedupResult.load(out)
    cluster = result.summary["largest_clusters"][0]["cluster"]
    member = next(i for g in result.groups() if cluster in g for i in g if i != cluster)
    res = _run("show", out, member, "--width", "200")
    assert res.exit_code == 0, res.output
    assert f"cluster {cluster}:" in res.stdout and "[[" in res.stdout and "]]" in res.stdout
    assert "\x1b[" not in res.stdout
    bad = _run("show", out, "no-such-doc")
    assert bad.exit_code == 2 and "no document or cluster 'no-such-doc'" in bad.output


def test_show_reads_a_chunked_run_and_an_input_that_moved(example_path, tmp_path):
    moved = tmp_path / "moved.jsonl"
    shutil.copyfile(example_path, moved)
    neardup.dedup(moved, engine=EngineConfig(name="local", workers=1, progress=False), output=tmp_path / "o")
    cluster = json.loads((tmp_path / "o" / "summary.json").read_text())["largest_clusters"][0]["cluster"]
    moved.rename(tmp_path / "elsewhere.jsonl")
    missing = _run("show", tmp_path / "o", cluster)
    assert missing.exit_code == 2 and "moved.jsonl" in missing.output
    res = _run("show", tmp_path / "o", cluster, "--input", tmp_path / "elsewhere.jsonl", "--width", "160")
    assert res.exit_code == 0 and "(representative)" in res.stdout


def test_the_sample_near_the_threshold_is_seeded_and_near(example_path):
    result = neardup.dedup(example_path, cluster__algorithm="components")  # the graph: more pairs near the threshold
    threshold = result.summary["params"]["threshold"]
    a, n = near_threshold(result, n=5, seed=1)
    assert a == near_threshold(result, n=5, seed=1)[0] and n == int((result.scores < threshold + 0.05).sum()) > 5
    assert all(threshold <= s < threshold + 0.05 for _, _, s in a) and [s for *_, s in a] == sorted(s for *_, s in a)
    assert a != near_threshold(result, n=5, seed=2)[0]


def test_run_report_holds_the_largest_the_oversized_and_the_near_pairs_with_diffs(example_path, tmp_path):
    # a small maximum cluster size, so some clusters are flagged oversized
    result = neardup.dedup(example_path, cluster__max_cluster_size=3, output=tmp_path / "o")
    html = render_run_report(run_view(result, clusters=4, sample=6, seed=0))
    assert html.startswith("<!DOCTYPE html>") and not re.search(r"<(script|link|img|iframe)\b", html)
    sections = re.split(r'<h2 id="(weakest|near|oversized|largest)">', html)
    assert sections[1::2] == ["weakest", "near", "oversized", "largest"]  # what an audit reads first, first
    weakest, near, oversized, largest = sections[2], sections[4], sections[6], sections[8]
    shown = [float(s) for s in re.findall(r"score (\d\.\d+) \(", weakest)]
    assert len(shown) == 6 and shown == sorted(shown) and shown[0] == pytest.approx(min(result.clusters.link_scores), abs=1e-3)
    assert weakest.count("(kept)") == 6 and "<svg" in sections[0]  # the plots, before the sections
    assert largest.count('<section class="cluster">') == 4 and "★" in largest
    assert oversized.count('<section class="cluster">') >= 1 and 'class="flag">oversized' in oversized
    assert near.count('<table class="diff">') == min(6, int((result.scores < result.summary["params"]["threshold"] + 0.05).sum()))
    assert "seed 0" in near
    assert "<del>" in html and "<ins>" in html


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_the_html_report_renders_in_headless_chromium_with_its_diffs(out, tmp_path):
    from PIL import Image

    report = tmp_path / "run.html"
    res = _run("show", out, "--html", report, "--sample", "8")
    assert res.exit_code == 0 and report.exists(), res.output
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", report.resolve().as_uri()], capture_output=True,
                         text=True, timeout=120).stdout
    assert dom.count('<table class="diff">') >= 10 and "<del>" in dom and "<ins>" in dom  # parsed by the browser
    png = tmp_path / "run.png"
    proc = subprocess.run([CHROMIUM, *flags, f"--screenshot={png}", "--window-size=1200,2400",
                           report.resolve().as_uri()], capture_output=True, text=True, timeout=120)
    assert png.exists(), proc.stderr[-2000:]
    colours = Image.open(png).convert("RGB").getcolors(maxcolors=1200 * 2400) or []
    count = {c: n for n, c in colours}

    def near(target: tuple[int, int, int]) -> int:
        return sum(n for c, n in count.items() if all(abs(x - y) <= 6 for x, y in zip(c, target)))

    # the diff is drawn: words only the left document holds on red, only the right one on green
    assert near((0xFF, 0xC9, 0xC4)) > 200 and near((0xB8, 0xF0, 0xC4)) > 200
    assert near((0x2F, 0x4B, 0x7C)) > 1000  # the diff tables' header rows


def test_a_singleton_is_said_to_be_one(out):
    result = neardup.DedupResult.load(out)
    lone = next(i for i, size in zip(result.ids, result.clusters.sizes) if size == 1)
    res = _run("show", out, lone)
    assert res.exit_code == 0 and f"{lone} is a singleton" in res.stdout


def test_a_pair_stored_the_other_way_round_is_shown_from_the_representative(out):
    from neardup.audit import pair_view

    result = neardup.DedupResult.load(out)
    row = result.evidence()[0]
    texts = result.texts([row["left"], row["right"]])
    view = pair_view(row["right"], row["left"], texts, {(row["left"], row["right"]): row})
    assert view.score == row["score"] and len(view.spans) == len(row["spans"])
    for s in view.spans:  # offsets and passage text now from the representative's (the left) side
        assert s["text"] == texts[row["right"]][s["left_start"] : s["left_end"]][:200]


def test_the_html_report_is_checked_before_any_work_and_never_replaces_the_runs_files(example_path, tmp_path,
                                                                                      monkeypatch):
    """Issue 55, case 2: ``--html PATH`` once wrote over any file, the input and ``OUT/summary.json`` included. An
    existing file is replaced only with ``--overwrite``; the run's own files and its input never, with one line;
    all of it before the report is made."""
    src = tmp_path / "in.jsonl"
    shutil.copyfile(example_path, src)
    out = tmp_path / "out"
    assert _run("dedup", src, "-o", out, "--silent").exit_code == 0
    made = []
    monkeypatch.setattr("neardup.audit.run_view", lambda *a, **k: made.append(1))
    for target in (src, out / "summary.json", out / "clusters.parquet", out / "evidence.parquet"):
        before = target.read_bytes()
        for extra in ([], ["--overwrite"]):
            res = _run("show", out, "--html", target, *extra)
            assert res.exit_code == 2, (target, extra, res.output)
            assert len(res.stderr.strip().splitlines()) == 1 and "refusing to write over it" in res.stderr
            assert target.read_bytes() == before
    report = tmp_path / "report.html"
    report.write_text("mine")
    res = _run("show", out, "--html", report)
    assert res.exit_code == 2 and "exists: give --overwrite" in res.stderr and report.read_text() == "mine"
    assert made == []  # every refusal came before the report was made
    monkeypatch.undo()
    res = _run("show", out, "--html", report, "--overwrite")
    assert res.exit_code == 0, res.output
    assert report.read_text().startswith("<!DOCTYPE html>") and neardup.DedupResult.load(out).groups()
