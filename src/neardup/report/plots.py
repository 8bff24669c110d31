"""Benchmark plots as inline SVG strings (matplotlib, Agg backend, no files, no external assets).

Owns drawing; must not compute metrics or read result files (see :mod:`neardup.report.html`).
Every function returns one ``<svg ...>...</svg>`` string (the XML prologue removed) ready to inline.
"""

from __future__ import annotations

import io
import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

__all__ = ["ari_bars_svg", "cluster_size_svg", "decisions_svg", "message_svg", "noise_curve_svg", "preset_label",
           "pr_threshold_svg"]

#: Legend names of presets that say nothing on their own.
PRESET_LABELS: dict[str, str] = {"planted": "planted copies (bundled example)"}


def preset_label(preset: str) -> str:
    """What a legend calls a noise preset.

    >>> preset_label("planted"), preset_label("ocr-heavy")
    ('planted copies (bundled example)', 'ocr-heavy')
    """
    return PRESET_LABELS.get(preset, preset)


def _integer_log_ticks(axis: Any, top: float) -> None:
    """Plain integer labels on a log axis (1, 2, 5, 10, ...: fewer per decade as the range grows), no
    minor labels, so labels never crowd."""
    import math

    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    decades = math.log10(max(top, 1.0))
    subs = (1.0, 2.0, 5.0) if decades < 1.5 else (1.0, 3.0) if decades < 2.5 else (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:.0f}" if x >= 1 else ""))
    axis.set_minor_formatter(NullFormatter())

_PROLOGUE = re.compile(r"^.*?(?=<svg)", re.S)
_COUNTER = [0]


def _plt() -> Any:
    try:
        import matplotlib
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("the benchmark report needs matplotlib: pip install 'neardup[bench]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "font.size": 9, "axes.grid": True, "grid.alpha": 0.3})
    return plt


def _to_svg(fig: Any) -> str:
    plt = _plt()
    _COUNTER[0] += 1
    buf = io.StringIO()
    # a distinct hash salt per figure keeps element ids unique when several SVGs share one page
    with plt.rc_context({"svg.hashsalt": f"neardup-{_COUNTER[0]}"}):
        fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    return _PROLOGUE.sub("", buf.getvalue(), count=1).strip()


def message_svg(title: str, message: str) -> str:
    """A small figure holding only a message (e.g. "no OCR progression sets in this run")."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 1.6))
    ax.axis("off")
    ax.set_title(title)
    ax.text(0.5, 0.4, message, ha="center", va="center", fontsize=10, color="#555")
    return _to_svg(fig)


def _grid_shape(n: int, cols: int = 3) -> tuple[int, int]:
    cols = max(1, min(cols, n))
    return (n + cols - 1) // cols, cols


def noise_curve_svg(rows: Sequence[dict[str, Any]], progression: Sequence[str],
                    levels: dict[str, str] | None = None) -> str:
    """Test ARI per method over the noise progression, one panel per source."""
    plt = _plt()
    by_source: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        if r.get("preset") in progression and r.get("ari") is not None:
            by_source[r.get("source") or r["set"]][r["method"]][r["preset"]] = r["ari"]
    if not by_source:
        return message_svg("ARI as noise grows", f"no {' / '.join(progression)} sets in this run "
                                                 "(run `neardup bench make` with those presets)")
    sources = sorted(by_source)
    nr, nc = _grid_shape(len(sources), 4)
    fig, axes = plt.subplots(nr, nc, figsize=(3.2 * nc + 1.5, 2.8 * nr), squeeze=False, sharey=True)
    xs = list(range(len(progression)))
    labels = [f"{p}\n{levels[p]}" if levels and p in levels else p for p in progression]
    methods = sorted({m for s in by_source.values() for m in s})
    colors = {m: plt.cm.tab10(i % 10) for i, m in enumerate(methods)}
    for k, source in enumerate(sources):
        ax = axes[k // nc][k % nc]
        for m in methods:
            pts = [(x, by_source[source][m][p]) for x, p in zip(xs, progression) if p in by_source[source].get(m, {})]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=colors[m], label=m)
        ax.set_title(source)
        ax.set_xticks(xs, labels)
        ax.set_xlim(-0.45, len(xs) - 0.55)  # room for the outer tick labels inside the panel
        ax.set_ylim(-0.05, 1.02)
        if k % nc == 0:
            ax.set_ylabel("test ARI")
    for k in range(len(sources), nr * nc):
        axes[k // nc][k % nc].axis("off")
    handles, names = axes[0][0].get_legend_handles_labels()
    for row in axes:
        for ax in row:
            h, n = ax.get_legend_handles_labels()
            for hh, nn in zip(h, n):
                if nn not in names:
                    handles.append(hh)
                    names.append(nn)
    fig.legend(handles, names, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False, title="method")
    fig.suptitle("ARI as OCR noise grows (tuned on validation, reported on test)")
    fig.tight_layout(w_pad=2.0)
    return _to_svg(fig)


def ari_bars_svg(rows: Sequence[dict[str, Any]], title: str = "Test ARI per set and method") -> str:
    """Test ARI of each method on each set, as grouped bars (what a run without the OCR progression
    shows instead of the noise curve)."""
    plt = _plt()
    import numpy as np

    cell = {(r["set"], r["method"]): r["ari"] for r in rows if r.get("ari") is not None}
    if not cell:
        return message_svg(title, "no results")
    sets = list(dict.fromkeys(s for s, _ in cell))
    methods = list(dict.fromkeys(m for _, m in cell))
    width = 0.8 / len(methods)
    fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * len(sets) * max(1, len(methods)) * 0.45 + 2), 2.8))
    for k, m in enumerate(methods):
        xs = np.arange(len(sets)) + (k - (len(methods) - 1) / 2) * width
        vals = [cell.get((s, m), np.nan) for s in sets]
        bars = ax.bar(xs, vals, width=width * 0.95, color=plt.cm.tab10(k % 10), label=m)
        ax.bar_label(bars, labels=[f"{v:.2f}" if v == v else "" for v in vals], fontsize=7, padding=1)
    ax.set_xticks(np.arange(len(sets)), sets)
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("test ARI")
    ax.grid(axis="x", visible=False)
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False, title="method")
    ax.set_title(title)
    fig.tight_layout()
    return _to_svg(fig)


def pr_threshold_svg(trials: Sequence[dict[str, Any]], chosen: dict[tuple[str, str], float] | None = None) -> str:
    """Validation precision (solid) and recall (dashed) against threshold, one panel per method,
    one colour per preset (averaged over sources), for each method's selected candidate setting."""
    plt = _plt()
    acc: dict[str, dict[str, dict[float, list[tuple[float, float]]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for t in trials:
        if not t.get("selected_setting", True) or t.get("threshold") is None:
            continue
        key = t.get("preset") or t.get("set", "")
        acc[t["method"]][key][float(t["threshold"])].append((t["precision"], t["recall"]))
    if not acc:
        return message_svg("Precision and recall against threshold", "no tuning trials recorded")
    methods = sorted(acc)
    nr, nc = _grid_shape(len(methods), 3)
    fig, axes = plt.subplots(nr, nc, figsize=(3.6 * nc + 1.8, 2.9 * nr), squeeze=False)
    presets = sorted({p for m in acc.values() for p in m})
    colors = {p: plt.cm.tab10(i % 10) for i, p in enumerate(presets)}
    for k, method in enumerate(methods):
        ax = axes[k // nc][k % nc]
        for preset, pts in sorted(acc[method].items()):
            ts = sorted(pts)
            prec = [sum(p for p, _ in pts[t]) / len(pts[t]) for t in ts]
            rec = [sum(r for _, r in pts[t]) / len(pts[t]) for t in ts]
            ax.plot(ts, prec, color=colors[preset], lw=1.4, label=preset_label(preset))
            ax.plot(ts, rec, color=colors[preset], lw=1.4, ls="--")
        ax.set_title(method)
        ax.set_xlabel("threshold")
        ax.set_ylim(-0.02, 1.02)
        if k % nc == 0:
            ax.set_ylabel("precision — / recall - -")
    for k in range(len(methods), nr * nc):
        axes[k // nc][k % nc].axis("off")
    fig.legend(handles=[plt.Line2D([], [], color=colors[p], label=preset_label(p)) for p in presets],
               loc="lower left", bbox_to_anchor=(1.0, 0.5), frameon=False, title="noise preset")
    fig.legend(handles=[plt.Line2D([], [], color="k", label="precision"),
                        plt.Line2D([], [], color="k", ls="--", label="recall")],
               loc="upper left", bbox_to_anchor=(1.0, 0.48), frameon=False, title="line")
    fig.suptitle("Validation precision / recall against threshold (mean over sources)")
    fig.tight_layout()
    return _to_svg(fig)


def _log_size_hist(ax: Any, sizes: Any, color: str) -> None:
    """A histogram of cluster sizes on ``ax``: log-spaced bins, log counts, plain integer ticks."""
    import numpy as np

    top = max(2, int(sizes.max()))
    bins = np.unique(np.round(np.logspace(0, np.log10(top + 1), 16)).astype(int))
    counts, _, _ = ax.hist(sizes, bins=bins, color=color, edgecolor="white")
    ax.set_xscale("log")
    ax.set_yscale("log")
    _integer_log_ticks(ax.xaxis, top + 1)
    _integer_log_ticks(ax.yaxis, float(max(counts.max(), 1)))
    ax.set_ylim(bottom=0.7)  # a bar of one cluster stays visible


def cluster_size_svg(sizes_by_group: dict[str, Sequence[int]]) -> str:
    """Histogram of true cluster sizes (log-spaced bins, log counts), one panel per source."""
    plt = _plt()
    import numpy as np

    groups = {k: [int(s) for s in v] for k, v in sizes_by_group.items() if v}
    if not groups:
        return message_svg("Cluster sizes", "no cluster-labelled sets")
    names = sorted(groups)
    nr, nc = _grid_shape(len(names), 4)
    fig, axes = plt.subplots(nr, nc, figsize=(3.2 * nc, 2.6 * nr), squeeze=False)
    for k, name in enumerate(names):
        ax = axes[k // nc][k % nc]
        sizes = np.asarray(groups[name])
        _log_size_hist(ax, sizes, "#4c72b0")
        dup = sizes[sizes > 1]
        mean = f"{dup.mean():.1f}" if dup.size else "-"
        ax.set_title(f"{name}\n{sizes.size} clusters, {int((sizes == 1).sum())} singletons, mean dup size {mean}",
                     fontsize=8)
        ax.set_xlabel("cluster size")
        if k % nc == 0:
            ax.set_ylabel("clusters")
    for k in range(len(names), nr * nc):
        axes[k // nc][k % nc].axis("off")
    fig.suptitle("True cluster sizes (validation + test)")
    fig.tight_layout()
    return _to_svg(fig)


def decisions_svg(link_scores: Sequence[float], threshold: float, sizes: Sequence[int]) -> str:
    """A run's decisions in three panels: the scores of the links behind the removals with the threshold marked
    (the weakest decisions lie at its left edge), the sizes of the clusters (a kept document and its copies),
    and how many removals a stricter threshold would leave resting on the same links."""
    plt = _plt()
    import numpy as np

    from neardup.cluster import passes

    scores = np.asarray(link_scores, dtype=np.float64)
    scores = scores[~np.isnan(scores)]
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(11, 2.8))
    if scores.size:
        a.hist(np.minimum(scores, 1.0), bins=np.linspace(min(threshold, float(scores.min())), 1.0, 31),
               color="#4c72b0", edgecolor="white")
    a.axvline(threshold, color="#c44e52", linestyle="--", label=f"threshold {threshold:.3f}")
    a.set_xlabel("score of the link behind a removal")
    a.set_ylabel("removed documents")
    a.legend(frameon=False, fontsize=8)
    a.set_title("Link scores")
    sz = np.asarray(sizes, dtype=np.int64)
    if sz.size:
        _log_size_hist(b, sz, "#55a868")
    b.set_xlabel("documents in the cluster")
    b.set_ylabel("clusters")
    b.set_title(f"Cluster sizes ({sz.size} with copies)")
    grid = np.linspace(threshold, 1.0, 41)
    c.plot(grid, [int(passes(scores, t).sum()) for t in grid], color="#8172b2")
    c.axvline(threshold, color="#c44e52", linestyle="--")
    c.set_xlabel("threshold")
    c.set_ylabel("removals whose link reaches it")
    c.set_title("Removed documents against the threshold")
    fig.tight_layout()
    return _to_svg(fig)
