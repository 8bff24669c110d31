"""A run in the terminal (rich): a cluster's representative beside each of its other documents with the
passages they share highlighted, or the list of the largest clusters.

Owns terminal layout and styles; must not choose what to show or read anything (:mod:`neardup.audit`
gathers it). Shared passages get one colour each (the same in both documents); without colour (output
piped to a file) they are bracketed ``[[...]]`` instead. Scores are printed rounded to 3 decimals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from neardup.audit import ClusterRow, ClusterView, PairView

#: One style per shared passage, longest first (the same in both documents of a pair).
PASSAGE_STYLES: tuple[str, ...] = ("black on yellow", "black on bright_cyan", "black on bright_magenta")
#: Characters of each text shown (the rest is cut, with a note of how much).
SHOW_CHARS = 1200


def _score(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def highlighted(text: str, spans: Sequence[tuple[int, int]], plain: bool, limit: int = SHOW_CHARS) -> Text:
    """``text`` (its first ``limit`` characters) with each ``(start, end)`` span styled (or bracketed when ``plain``).

    >>> highlighted("one two three", [(4, 7)], plain=True).plain
    'one [[two]] three'
    """
    shown = text[:limit]
    out = Text()
    at = 0
    for k, (start, end) in sorted(enumerate(spans), key=lambda x: x[1][0]):
        start, end = max(start, at), min(end, len(shown))
        if start >= end:
            continue
        out.append(shown[at:start])
        style = PASSAGE_STYLES[k % len(PASSAGE_STYLES)]
        out.append(f"[[{shown[start:end]}]]" if plain else shown[start:end], style=None if plain else style)
        at = end
    out.append(shown[at:])
    if len(text) > limit:
        out.append(f" … ({len(text) - limit} more characters)", style="dim")
    return out


def pair_table(pair: PairView, plain: bool, chars: int = SHOW_CHARS, left_title: str | None = None) -> Table:
    """Two documents side by side, their shared passages highlighted."""
    views = ", ".join(f"{v['view']} {_score(v['score'])}" for v in pair.views)
    caption = (f"score {_score(pair.score)}" + (f" ({views})" if views else "")) if pair.score is not None \
        else "not a verified pair: linked through other documents of the cluster"
    spans = "; ".join(f"[{s['left_start']}:{s['left_end']}] ↔ [{s['right_start']}:{s['right_end']}] {s['words']} words"
                      for s in pair.spans)
    caption += f"\nshared: {spans}" if spans else "\nno shared passage"
    table = Table(show_lines=False, expand=True, caption=caption, caption_justify="left")
    table.add_column(left_title or pair.left, ratio=1, overflow="fold")
    table.add_column(pair.right, ratio=1, overflow="fold")
    table.add_row(highlighted(pair.left_text, [(s["left_start"], s["left_end"]) for s in pair.spans], plain, chars),
                  highlighted(pair.right_text, [(s["right_start"], s["right_end"]) for s in pair.spans], plain, chars))
    return table


def render_cluster(view: ClusterView, console: Console, chars: int = SHOW_CHARS) -> None:
    """Print one cluster: a header line, its representative (marked ★) beside each shown member, the rest listed."""
    plain = console.color_system is None
    if view.size == 1:
        console.print(f"{view.cluster} is a singleton: no near-duplicate of it was found", highlight=False)
        return
    flag = "  [bold red]OVERSIZED[/]" if view.oversized else ""
    console.print(f"[bold]cluster {view.cluster}[/]: {view.size} documents, {view.n_pairs} verified pairs; "
                  f"representative ({view.policy}) ★ {view.cluster}{flag}", highlight=False)
    for pair in view.pairs:
        console.print(pair_table(pair, plain, chars, left_title=f"★ {pair.left} (representative)"))
    rest = view.members[1 + len(view.pairs):]
    if rest:
        more = ", ".join(rest[:50]) + (f" … (+{len(rest) - 50})" if len(rest) > 50 else "")
        console.print(f"also in the cluster: {more}", highlight=False)


def render_cluster_list(rows: Sequence[ClusterRow], console: Console, summary: dict[str, Any] | None = None) -> None:
    """Print the largest clusters: id (the representative's), size, oversized flag, the representative's opening."""
    if summary:
        console.print(f"{summary.get('n_docs')} documents, {summary.get('n_duplicate_clusters')} duplicate clusters, "
                      f"{summary.get('n_pairs')} pairs; input {summary.get('input')}", highlight=False)
    if not rows:
        console.print("no duplicate clusters")
        return
    table = Table(title="largest clusters (neardup show OUTDIR CLUSTER for one)", title_justify="left", expand=True)
    table.add_column("cluster", no_wrap=True)
    table.add_column("size", justify="right")
    table.add_column("", no_wrap=True)
    table.add_column("representative's text", ratio=1, overflow="ellipsis", no_wrap=True)
    for row in rows:
        table.add_row(row.cluster, str(row.size), "OVERSIZED" if row.oversized else "", row.text)
    console.print(table)


__all__ = ["PASSAGE_STYLES", "SHOW_CHARS", "highlighted", "pair_table", "render_cluster", "render_cluster_list"]
