"""The benchmark report: one self-contained HTML file (tables + inline SVG plots, no external assets).

Owns laying out a results folder (``results.jsonl``, ``trials.jsonl``, ``sets.json``, ``run.json``
written by :func:`neardup.eval.suite.run_suite`, read by :mod:`neardup.report.bench_results`) as ``report.html``;
must not run anything.

Sections: test ARI per set x method, the full results table (ARI, pairwise P/R/F1, docs/s, peak
memory, chosen parameters), ARI as OCR noise grows (ocr-light -> medium -> heavy; a run without those
sets, such as ``--quick``, shows each set's ARI as bars instead, with a note), validation
precision/recall against threshold, and the true cluster-size histograms. Exactly three ``<svg``
plots; a plot without data shows a message instead.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from neardup.report.bench_results import RESULTS_FILE, load_results
from neardup.io.write import atomic_text

__all__ = ["render_report", "write_report"]

PROGRESSION: tuple[str, ...] = ("ocr-light", "ocr-medium", "ocr-heavy")

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
table{border-collapse:collapse;font-size:12px;margin:6px 0}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right;white-space:nowrap}
td.p{text-align:left;white-space:normal;min-width:180px;max-width:320px}
th{background:#2f4b7c;color:#fff;position:sticky;top:0} td.l,th.l{text-align:left}
tr:nth-child(even) td{background:#f4f6fa} td.best{font-weight:bold;background:#d8f0d8 !important}
.meta{color:#555;font-size:12px} .note{background:#fff6d9;border-left:4px solid #e6b800;padding:6px 10px;font-size:12px;margin:6px 0}
figure{margin:8px 0 20px} figure svg{max-width:100%;height:auto}
code{background:#eef;padding:0 3px}
"""


def _f(x: Any, digits: int = 3) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return html.escape(str(x))


def _params(p: dict[str, Any]) -> str:
    return html.escape(", ".join(f"{k}={v}" for k, v in p.items()))


def _pivot(rows: Sequence[dict[str, Any]]) -> str:
    methods = list(dict.fromkeys(r["method"] for r in rows))
    sets = list(dict.fromkeys(r["set"] for r in rows))
    cell = {(r["set"], r["method"]): r for r in rows}
    out = ['<table id="ari-pivot"><thead><tr><th class="l">set</th>']
    out += [f"<th>{html.escape(m)}</th>" for m in methods]
    out.append("</tr></thead><tbody>")
    for s in sets:
        vals = [cell[(s, m)]["ari"] for m in methods if (s, m) in cell and cell[(s, m)]["ari"] is not None]
        best = max(vals) if vals else None
        out.append(f'<tr><td class="l">{html.escape(s)}</td>')
        for m in methods:
            r = cell.get((s, m))
            if r is None or r["ari"] is None:
                out.append("<td>–</td>")
                continue
            mark = "*" if r.get("subsampled") else ""
            cls = ' class="best"' if best is not None and abs(r["ari"] - best) < 1e-12 else ""
            out.append(f"<td{cls}>{r['ari']:.3f}{mark}</td>")
        out.append("</tr>")
    means = []
    for m in methods:
        vals = [cell[(s, m)]["ari"] for s in sets if (s, m) in cell and cell[(s, m)]["ari"] is not None]
        means.append(f"<td>{sum(vals) / len(vals):.3f}</td>" if vals else "<td>–</td>")
    out.append('<tr><td class="l"><b>mean</b></td>' + "".join(means) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _results_table(rows: Sequence[dict[str, Any]]) -> str:
    head = ["set", "method", "ARI", "precision", "recall", "F1", "docs/s", "peak MB", "val ARI", "n val", "n test",
            "pred pairs", "true pairs", "params"]
    out = ['<table id="results"><thead><tr>']
    out += [f'<th class="{"l" if h in ("set", "method", "params") else ""}">{h}</th>' for h in head]
    out.append("</tr></thead><tbody>")
    for r in rows:
        sizes = r.get("split_sizes") or {}
        val = (r.get("validation") or {}).get("ari")
        mark = " (subsampled)" if r.get("subsampled") else ""
        cells = [
            f'<td class="l">{html.escape(r["set"])}</td>', f'<td class="l">{html.escape(r["method"])}{mark}</td>',
            f"<td>{_f(r.get('ari'))}</td>", f"<td>{_f(r.get('precision'))}</td>", f"<td>{_f(r.get('recall'))}</td>",
            f"<td>{_f(r.get('f1'))}</td>", f"<td>{_f(r.get('docs_per_second'), 0)}</td>",
            f"<td>{_f(r.get('peak_memory_mb'), 1)}</td>", f"<td>{_f(val)}</td>",
            f"<td>{_f(sizes.get('validation'))}</td>", f"<td>{_f(sizes.get('test'))}</td>",
            f"<td>{_f(r.get('n_pred_pairs'))}</td>", f"<td>{_f(r.get('n_true_pairs'))}</td>",
            f'<td class="p">{_params(r.get("params") or {})}</td>',
        ]
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _sizes_by_source(sets: dict[str, Any]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for name, info in sets.items():
        key = info.get("source") or name
        if key in out:  # every preset of a source uses the same sources and sizes: one set per source
            continue
        sizes = info.get("cluster_sizes") or {}
        out[key] = [int(s) for split in ("validation", "test") for s in sizes.get(split, [])]
    return out


def _levels(sets: dict[str, Any]) -> dict[str, str]:
    """Tick labels for the noise plot: mean word-3-gram Jaccard of (original, noisy copy) per preset."""
    acc: dict[str, list[float]] = {}
    for info in sets.values():
        j3 = (info.get("similarity") or {}).get("mean_j3_original_copy")
        if j3 is not None and info.get("preset") in PROGRESSION:
            acc.setdefault(info["preset"], []).append(float(j3))
    return {p: f"J3 {sum(v) / len(v):.2f}" for p, v in acc.items()}


def render_report(rows: Sequence[dict[str, Any]], trials: Sequence[dict[str, Any]] = (),
                  sets: dict[str, Any] | None = None, run: dict[str, Any] | None = None,
                  title: str = "neardup benchmark") -> str:
    """The report as one HTML string."""
    from neardup.report.plots import ari_bars_svg, cluster_size_svg, noise_curve_svg, pr_threshold_svg

    run = run or {}
    sets = sets or {}
    machine = run.get("machine") or {}
    meta = []
    if run.get("finished"):
        meta.append(f"finished {html.escape(str(run['finished']))}")
    if run.get("seconds") is not None:
        meta.append(f"{run['seconds']} s")
    if machine:
        meta.append(f"{machine.get('cpus')} CPUs, Python {html.escape(str(machine.get('python')))}"
                    + (f", load average {machine['load_average']}" if machine.get("load_average") else ""))
    if run.get("methods"):
        meta.append("methods: " + html.escape(", ".join(run["methods"])))
    notes = [html.escape(s["reason"]) for s in run.get("skipped", [])]
    notes += [html.escape(n) for n in dict.fromkeys(run.get("notes", []))]
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>", f'<p class="meta">{" · ".join(meta)}</p>',
        '<p class="meta">Protocol: every method picks its setting by validation ARI (ties: F1, then the higher '
        "threshold) and is reported once on the disjoint test split. ARI and pairwise precision/recall/F1 over "
        "all document pairs. docs/s = test documents / wall time from texts to clusters; peak memory = peak RSS "
        "growth during that run (sampled every 2 ms). * = splits subsampled (whole clusters).</p>",
    ]
    parts += [f'<div class="note">{n}</div>' for n in notes]
    if rows:
        parts += ["<h2>Test ARI (set × method)</h2>", _pivot(rows),
                  "<h2>Results</h2>", _results_table(rows)]
    else:
        parts += ["<h2>Results</h2>", '<table id="results"><tr><td>no results</td></tr></table>']
    if any(r.get("preset") in PROGRESSION and r.get("ari") is not None for r in rows):
        parts += ["<h2>ARI as noise grows</h2>", f"<figure>{noise_curve_svg(rows, PROGRESSION, _levels(sets))}</figure>"]
    else:  # no OCR progression (a --quick run): each set's ARI, not an empty chart
        parts += ["<h2>Test ARI per set</h2>",
                  f"<figure>{ari_bars_svg(rows)}<figcaption class=\"meta\">no {' / '.join(PROGRESSION)} sets in this run "
                  "(run `neardup bench make` with those presets for ARI as noise grows)</figcaption></figure>"]
    parts += ["<h2>Precision and recall against threshold</h2>", f"<figure>{pr_threshold_svg(trials)}</figure>",
              "<h2>Cluster sizes</h2>", f"<figure>{cluster_size_svg(_sizes_by_source(sets))}</figure>"]
    stats = _stats_table(sets)
    if stats:
        parts += ["<h2>Sets</h2>", stats]
    parts.append("</body></html>")
    return "\n".join(parts)


def _stats_table(sets: dict[str, Any]) -> str:
    if not any(info.get("stats") for info in sets.values()):
        return ""
    out = ['<table id="sets"><thead><tr><th class="l">set</th><th>split</th><th>docs</th><th>clusters</th>'
           "<th>singletons</th><th>dup clusters</th><th>mean dup size</th><th>max size</th><th>true pairs</th>"
           "</tr></thead><tbody>"]
    for name, info in sets.items():
        for split, st in (info.get("stats") or {}).items():
            out.append(f'<tr><td class="l">{html.escape(name)}</td><td>{split}</td><td>{st["n_docs"]}</td>'
                       f'<td>{st["n_clusters"]}</td><td>{st["n_singletons"]}</td><td>{st["n_duplicate_clusters"]}</td>'
                       f'<td>{st["mean_duplicate_size"]}</td><td>{st["max_size"]}</td><td>{st["true_pairs"]}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def write_report(out: str | Path, path: str | Path | None = None, title: str = "neardup benchmark") -> Path:
    """Render the results folder ``out`` into ``out/report.html`` (or ``path``), atomically."""
    out = Path(out)
    rows, trials, sets, run = load_results(out)
    if not rows and not (out / RESULTS_FILE).exists():
        raise FileNotFoundError(2, "no results.jsonl (run `neardup bench run` first)", str(out / RESULTS_FILE))
    target = Path(path) if path is not None else out / "report.html"
    text = render_report(rows, trials, sets, run, title=title)
    with atomic_text(target) as fh:
        fh.write(text)
    return target

