"""The eval readers go through neardup.io.read: a broken file is an error naming the file and the line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neardup.io.read import InputError


def _lines(path: Path, rows: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    return path


def test_source_reader_names_file_and_line(tmp_path: Path) -> None:
    from neardup.eval.benchsets import load_source

    good = json.dumps({"id": "1", "text": "x" * 300, "category": "tech"})
    _lines(tmp_path / "bbc_news" / "docs.jsonl", [good, "", '{"id": "2", "text": '])
    with pytest.raises(InputError, match=r"docs\.jsonl, line 3: not valid JSON"):
        load_source("bbc", tmp_path)


def test_results_reader_names_file_and_line(tmp_path: Path) -> None:
    from neardup.report.bench_results import load_results

    _lines(tmp_path / "results.jsonl", ['{"method": "minhash"}', "[1, 2]"])
    with pytest.raises(InputError, match=r"results\.jsonl, line 2: expected a JSON object"):
        load_results(tmp_path)
    _lines(tmp_path / "results.jsonl", ['{"method": "minhash"}'])
    (tmp_path / "run.json").write_text('{"seconds": 1.0,\n "notes": [}')
    with pytest.raises(InputError, match=r"run\.json, line 2: not valid JSON"):
        load_results(tmp_path)


def test_newscopy_reader_names_file_and_line(tmp_path: Path) -> None:
    from neardup.eval.loaders import load_newscopy

    (tmp_path / "x_inf_data.json").write_text(json.dumps({"a": {"article": "t"}}))
    (tmp_path / "x_gt.json").write_text('[\n["a", "a"],\n["a" "b"]\n]')
    with pytest.raises(InputError, match=r"x_gt\.json, line 3: not valid JSON"):
        load_newscopy(tmp_path / "x_inf_data.json")
