"""The HTML report of one de-duplication run (``neardup show OUTDIR --html report.html``): the largest
clusters, the oversized ones, and a seeded sample of the pairs nearest the threshold, each pair as a
side-by-side word diff, so a threshold can be audited by reading.

Owns the page: one self-contained HTML file (inline CSS, no script, no external asset); must not choose
what to show or read files (:func:`neardup.audit.run_view` gathers it). In a diff, words only the left
document holds are ``<del>`` (red), words only the right one holds ``<ins>`` (green); the rest is what
they share. Words are compared after normalization (:func:`neardup.verify.passages.words_of`), so case,
punctuation and invisible characters do not show as differences. Scores are printed to 3 decimals.
"""

from __future__ import annotations

import difflib
import html
import os
from pathlib import Path

from neardup.audit import ClusterView, PairView, RunView
from neardup.io.write import atomic_text
from neardup.verify.passages import words_of

#: Characters of each text a diff shows (the rest is cut, with a note of how much).
DIFF_CHARS = 3000

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:14px;margin:18px 0 6px} .meta{color:#555;font-size:12px}
.flag{background:#c62828;color:#fff;border-radius:3px;padding:0 5px;font-size:11px;margin-left:6px}
table.diff{border-collapse:collapse;width:100%;table-layout:fixed;margin:4px 0 2px;font-size:13px}
table.diff th{background:#2f4b7c;color:#fff;text-align:left;font-weight:normal;padding:3px 8px;font-size:12px}
table.diff td{border:1px solid #ccc;vertical-align:top;padding:6px 8px;white-space:pre-wrap;word-wrap:break-word;
  line-height:1.45}
del{background:#ffc9c4;text-decoration:none} ins{background:#b8f0c4;text-decoration:none}
.ev{color:#555;font-size:12px;margin:0 0 12px} .cut{color:#888;font-style:italic}
"""


def _score(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def diff_cells(left: str, right: str, limit: int = DIFF_CHARS) -> tuple[str, str]:
    """The HTML of two texts (their first ``limit`` characters) as a side-by-side word diff.

    >>> diff_cells("the cat sat", "The cat ran!")
    ('the cat <del>sat</del>', 'The cat <ins>ran</ins>!')
    """
    a, b = left[:limit], right[:limit]
    words = words_of([a, b])
    (ha, sa, ea), (hb, sb, eb) = words.of(0), words.of(1)
    changed_a, changed_b = [False] * ha.size, [False] * hb.size
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ha.tolist(), hb.tolist(), autojunk=False).get_opcodes():
        if tag != "equal":
            changed_a[i1:i2] = [True] * (i2 - i1)
            changed_b[j1:j2] = [True] * (j2 - j1)
    return (_marked(a, sa.tolist(), ea.tolist(), changed_a, "del", len(left) - len(a)),
            _marked(b, sb.tolist(), eb.tolist(), changed_b, "ins", len(right) - len(b)))


def _marked(text: str, starts: list[int], ends: list[int], changed: list[bool], tag: str, cut: int) -> str:
    """``text`` escaped, each run of changed words (with what separates them) wrapped in ``<tag>``."""
    out: list[str] = []
    at = k = 0
    while k < len(starts):
        if not changed[k]:
            k += 1
            continue
        j = k
        while j + 1 < len(starts) and changed[j + 1]:
            j += 1
        start = max(starts[k], at)
        out.append(html.escape(text[at:start]))
        out.append(f"<{tag}>{html.escape(text[start:ends[j]])}</{tag}>")
        at = max(at, ends[j])
        k = j + 1
    out.append(html.escape(text[at:]))
    if cut > 0:
        out.append(f'<span class="cut"> … ({cut} more characters)</span>')
    return "".join(out)


def pair_html(pair: PairView, left_title: str | None = None) -> str:
    """One pair: a two-column diff table and a line of evidence (score, views, shared passages)."""
    left, right = diff_cells(pair.left_text, pair.right_text)
    views = ", ".join(f"{html.escape(v['view'])} {_score(v['score'])}" for v in pair.views)
    spans = "; ".join(f"[{s['left_start']}:{s['left_end']}] ↔ [{s['right_start']}:{s['right_end']}] "
                      f"({s['words']} words)" for s in pair.spans)
    head = (f"score {_score(pair.score)}" + (f" ({views})" if views else "")) if pair.score is not None else \
        "not a verified pair: linked through other documents of the cluster"
    return (f'<table class="diff"><tr><th>{html.escape(left_title or pair.left)}</th>'
            f"<th>{html.escape(pair.right)}</th></tr><tr><td>{left}</td><td>{right}</td></tr></table>"
            f'<p class="ev">{head} · shared passages: {spans or "none"}</p>')


def cluster_html(view: ClusterView) -> str:
    """One cluster: a heading, then its representative beside each shown member."""
    flag = '<span class="flag">oversized</span>' if view.oversized else ""
    rest = len(view.members) - 1 - len(view.pairs)
    more = f" (and {rest} more)" if rest > 0 else ""
    out = [f'<section class="cluster"><h3>cluster {html.escape(view.cluster)}: {view.size} documents, '
           f"{view.n_pairs} verified pairs{flag}</h3>",
           f'<p class="meta">representative ({html.escape(view.policy)}): {html.escape(view.cluster)}; '
           f"shown beside {len(view.pairs)} of the others{more}</p>"]
    out += [pair_html(p, left_title=f"★ {p.left} (representative)") for p in view.pairs]
    out.append("</section>")
    return "\n".join(out)


def _plots_html(view: RunView) -> str:
    """The decisions' plots (:func:`~neardup.report.plots.decisions_svg`), or a line saying why there are none."""
    try:
        from neardup.report.plots import decisions_svg

        svg = decisions_svg(view.link_scores, view.threshold, view.cluster_sizes)
    except ImportError:
        return "<p class=\"meta\">plots need matplotlib: pip install 'neardup[bench]'</p>"
    return f'<div class="plots">{svg}</div>'


def render_run_report(view: RunView, title: str = "neardup run") -> str:
    """The report as one HTML string."""
    s = view.summary
    params = s.get("params") or {}
    cluster = params.get("cluster") or {}
    meta = [f"input {html.escape(str(s.get('input')))}", f"method {html.escape(str(params.get('method')))}",
            f"threshold {_score(view.threshold)}", f"clustering {html.escape(str(cluster.get('algorithm')))}",
            f"representative {html.escape(str(cluster.get('representative', 'longest')))}"]
    stats = (f"{s.get('n_docs')} documents, {s.get('n_duplicate_clusters')} duplicate clusters, "
             f"{s.get('n_duplicates')} duplicates, {s.get('n_pairs')} verified pairs, "
             f"{s.get('n_oversized_clusters', 0)} oversized clusters")
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>", f'<p class="meta">{" · ".join(meta)}</p>', f"<p>{stats}</p>",
             '<p class="meta">Each pair: the words only the left document holds in red, only the right one in green '
             "(compared after normalization: case, punctuation and invisible characters do not count).</p>",
             _plots_html(view),
             '<h2 id="weakest">Weakest decisions</h2>',
             f'<p class="meta">The {len(view.weakest)} removed documents whose link to the document kept for them '
             "scores lowest, lowest first: the kept document on the left, its removed copy on the right. If these "
             "are copies, the rest are.</p>"]
    parts += [pair_html(p, left_title=f"★ {p.left} (kept)") for p in view.weakest] or ["<p>no document removed</p>"]
    parts += ['<h2 id="near">Pairs near the threshold</h2>',
              f'<p class="meta">{len(view.near)} of the {view.n_near} pairs scoring below '
              f"{_score(view.threshold + view.near_band)} (threshold {_score(view.threshold)} + {view.near_band:g}), "
              f"drawn at random with seed {view.seed}, lowest score first. Read them to judge the threshold.</p>"]
    parts += [pair_html(p) for p in view.near] or ["<p>no pair scores that close to the threshold</p>"]
    parts.append('<h2 id="oversized">Oversized clusters</h2>')
    parts += [cluster_html(c) for c in view.oversized] or ["<p>none flagged (no cluster is larger than the "
                                                           "maximum cluster size)</p>"]
    parts.append('<h2 id="largest">Largest clusters</h2>')
    parts += [cluster_html(c) for c in view.largest] or ["<p>no duplicate clusters</p>"]
    parts.append("</body></html>")
    return "\n".join(parts)


def write_run_report(view: RunView, path: str | os.PathLike[str], title: str = "neardup run") -> Path:
    """Write the report to ``path`` (atomically); returns the path."""
    target = Path(path)
    with atomic_text(target) as fh:
        fh.write(render_run_report(view, title))
    return target


__all__ = ["DIFF_CHARS", "cluster_html", "diff_cells", "pair_html", "render_run_report", "write_run_report"]
