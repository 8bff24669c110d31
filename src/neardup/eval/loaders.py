"""Load labelled data in the formats users bring: our JSONL, pair-labelled JSONL, and the NEWS-COPY release.

Owns recognising a labelled file's layout and turning it into :class:`LabelledData`; must not score.

* **cluster-labelled JSONL** (``{"id", "text", "cluster"}``, null = singleton) and **pair-labelled
  JSONL** (``{"a", "b", "label"}`` with the documents beside it): :func:`neardup.eval.evaluate.load_labelled`.
* **NEWS-COPY** (Silcock et al., "Noise-Robust De-Duplication at Scale", ICLR 2023): a JSON file of
  articles -- a dict ``{article_id: {"article": ..., "byline": ..., "headline": ...}}`` or a list of
  records with an id (``id`` / ``article_id``) and a text (``article`` / ``text``) -- and a JSON file of
  ground-truth duplicate edges ``[[id, id], ...]`` (e.g. ``1955_inf_data.json`` + ``1955_gt.json``,
  ``test_inf_data.json`` + ``full_test_gt.json``). Clusters are the connected components of the edges;
  an article in no edge is a singleton. The text is ``byline`` and ``article`` joined by a space, as
  NEWS-COPY's own evaluation does (``headline`` is not used). A single JSON object
  ``{"articles": ..., "edges": ...}`` is accepted too.

:func:`load_any` dispatches on the path: a folder (``docs.jsonl``, ``pairs.jsonl``, or a NEWS-COPY
pair of files), a ``.json`` file holding one JSON value (NEWS-COPY), or anything else
``load_labelled`` reads.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from neardup.eval.evaluate import LabelledData, load_labelled
from neardup.io.read import InputError, read_json, read_records

__all__ = ["detect_layout", "find_edges_file", "load_any", "load_newscopy", "newscopy_records"]

ID_FIELDS = ("id", "article_id", "art_id", "doc_id")
TEXT_FIELDS = ("article", "text")
PREFIX_FIELDS = ("byline",)


def _is_newscopy_json(path: Path) -> bool:
    """True when a ``.json`` file holds one JSON value shaped like NEWS-COPY articles (not JSON lines)."""
    try:
        value = read_json(path)
    except InputError:
        return False  # JSON lines (or broken: the JSONL reader names the line)
    if isinstance(value, list):
        return True
    if isinstance(value, dict):
        return "articles" in value or (bool(value) and all(isinstance(v, dict) for v in value.values()))
    return False


def detect_layout(path: str | os.PathLike[str]) -> str:
    """``newscopy``, ``pairs``, ``clusters`` or ``folder``.

    >>> import tempfile; d = Path(tempfile.mkdtemp()); p = d / "x.jsonl"
    >>> _ = p.write_text('{"id": "a", "text": "t", "cluster": null}\\n')
    >>> detect_layout(p)
    'clusters'
    """
    from neardup.io.read import is_pair_file

    p = Path(path)
    if p.is_dir():
        return "folder"
    if not p.exists():
        raise InputError(p, None, "no such file or folder")
    name = p.name.lower()
    if name.endswith((".json", ".json.gz")) and _is_newscopy_json(p):
        return "newscopy"
    try:
        if is_pair_file(p):
            return "pairs"
    except InputError:
        pass
    return "clusters"


def find_edges_file(articles: Path) -> Path | None:
    """The ground-truth edges beside a NEWS-COPY articles file (``X_inf_data.json`` -> ``X_gt.json``)."""
    folder = articles.parent
    name = articles.name
    candidates: list[Path] = []
    for suffix in ("_inf_data.json", "_data.json", ".json"):
        if name.endswith(suffix):
            stem = name[: -len(suffix)]
            candidates += [folder / f"{stem}_gt.json", folder / f"full_{stem}_gt.json", folder / f"{stem}_edges.json"]
            break
    for c in candidates:
        if c.exists() and c != articles:
            return c
    gts = sorted(p for p in folder.glob("*gt*.json") if p != articles)
    return gts[0] if len(gts) == 1 else None


def _record_text(rec: dict[str, Any], where: Path, key: str) -> str:
    text = None
    for f in TEXT_FIELDS:
        if isinstance(rec.get(f), str):
            text = rec[f]
            break
    if text is None:
        raise InputError(where, None, f"article {key!r} has no string 'article' or 'text' field")
    prefix = [rec[f].strip() for f in PREFIX_FIELDS if isinstance(rec.get(f), str) and rec[f].strip()]
    return " ".join(prefix + [text]) if prefix else text


def newscopy_records(articles: Any, edges: Any, where: Path) -> list[dict[str, Any]]:
    """``{"id", "text", "cluster"}`` records from NEWS-COPY articles and edges (clusters = components)."""
    items: list[tuple[str, dict[str, Any]]] = []
    if isinstance(articles, dict):
        for key, rec in articles.items():
            if not isinstance(rec, dict):
                raise InputError(where, None, f"article {key!r} is not a JSON object")
            items.append((str(key), rec))
    elif isinstance(articles, list):
        for i, rec in enumerate(articles):
            if not isinstance(rec, dict):
                raise InputError(where, None, f"article #{i} is not a JSON object")
            key = next((rec[f] for f in ID_FIELDS if rec.get(f) is not None), None)
            if key is None:
                raise InputError(where, None, f"article #{i} has no id field ({', '.join(ID_FIELDS)})")
            items.append((str(key), rec))
    else:
        raise InputError(where, None, "NEWS-COPY articles must be a JSON object (id -> article) or a list")
    index = {key: i for i, (key, _) in enumerate(items)}
    if len(index) != len(items):
        raise InputError(where, None, "duplicate article ids")
    if not isinstance(edges, list):
        raise InputError(where, None, "ground-truth edges must be a JSON list of [id, id] pairs")
    parent = list(range(len(items)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for n, edge in enumerate(edges):
        if not isinstance(edge, (list, tuple)) or len(edge) != 2:
            raise InputError(where, None, f"edge #{n} is not an [id, id] pair: {edge!r}")
        a, b = (index.get(str(x)) for x in edge)
        if a is None or b is None:
            missing = edge[0] if a is None else edge[1]
            raise InputError(where, None, f"edge #{n} names article {missing!r}, which is not in the articles")
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    roots = [find(i) for i in range(len(items))]
    size: dict[int, int] = {}
    for r in roots:
        size[r] = size.get(r, 0) + 1
    return [{"id": key, "text": _record_text(rec, where, key),
             "cluster": items[roots[i]][0] if size[roots[i]] > 1 else None}
            for i, (key, rec) in enumerate(items)]


def load_newscopy(articles: str | os.PathLike[str], edges: str | os.PathLike[str] | None = None) -> LabelledData:
    """A NEWS-COPY split: the articles file plus its ground-truth edges (found beside it when not given)."""
    ap = Path(articles)
    data = read_json(ap)
    if isinstance(data, dict) and "articles" in data and ("edges" in data or "gt" in data):
        arts, gt = data["articles"], data.get("edges", data.get("gt"))
    else:
        ep = Path(edges) if edges is not None else find_edges_file(ap)
        if ep is None or not ep.exists():
            raise InputError(ap, None, "NEWS-COPY articles need their ground-truth edges file "
                                       "(e.g. 1955_gt.json beside 1955_inf_data.json)")
        arts, gt = data, read_json(ep)
    records = newscopy_records(arts, gt, ap)
    if not records:
        raise InputError(ap, None, "no articles found (empty input)")
    corpus = read_records(records, source=str(ap), label_field="cluster")
    return LabelledData(corpus=corpus, name=ap.stem.replace("_inf_data", ""))


def load_any(path: str | os.PathLike[str], docs: str | os.PathLike[str] | None = None,
             edges: str | os.PathLike[str] | None = None, text_field: str = "text", id_field: str = "id",
             label_field: str = "cluster") -> LabelledData:
    """Load labelled data in any supported layout (see the module docstring).

    >>> import json, tempfile; d = Path(tempfile.mkdtemp()); p = d / "split.json"
    >>> _ = p.write_text(json.dumps({"articles": {"a": {"article": "x y"}, "b": {"article": "x y z"},
    ...                                           "c": {"article": "q"}}, "edges": [["a", "b"]]}))
    >>> load_any(p).corpus.labels
    ['a', 'a', None]
    """
    p = Path(path)
    layout = detect_layout(p)
    if layout == "folder":
        for name in ("docs.jsonl", "docs.jsonl.gz", "pairs.jsonl"):
            if (p / name).exists():
                return load_any(p / name, docs=docs, text_field=text_field, id_field=id_field, label_field=label_field)
        data_files = sorted(p.glob("*_inf_data.json")) or sorted(p.glob("*data*.json"))
        if len(data_files) == 1:
            return load_newscopy(data_files[0], edges)
        raise InputError(p, None, "no labelled data found in folder (docs.jsonl, pairs.jsonl or a NEWS-COPY "
                                  "*_inf_data.json + *_gt.json pair)")
    if layout == "newscopy":
        return load_newscopy(p, edges)
    return load_labelled(p, docs=docs, text_field=text_field, id_field=id_field, label_field=label_field)
