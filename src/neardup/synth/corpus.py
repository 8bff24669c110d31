"""Noise a whole corpus (records or a JSONL file) and measure what a preset does to it.

Owns the noisy-copy record format, noising JSONL(.gz) files and the calibration measures (word n-gram
Jaccard, :func:`preset_stats`); must not implement noise or open files itself (see :mod:`neardup.io`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence

from neardup.io.read import InputError, iter_jsonl
from neardup.io.write import write_jsonl
from neardup.synth.edits import TOKEN_RE
from neardup.synth.presets import NoiseSpec, apply_noise, get_preset

__all__ = ["ngram_jaccard", "noise_file", "noise_records", "preset_stats"]


def _noise_record(rec: object, spec: NoiseSpec, seed: int, text_field: str, id_field: str) -> dict:
    if not isinstance(rec, dict):
        raise ValueError(f"record is not a JSON object: {type(rec).__name__}")
    if id_field not in rec:
        raise ValueError(f"record has no {id_field!r} field")
    text = rec.get(text_field)
    if not isinstance(text, str):
        raise ValueError(f"record {rec[id_field]!r} has no string {text_field!r} field")
    sid = str(rec[id_field])
    noisy = apply_noise(text, spec, seed, doc_id=sid)
    return {"id": f"{sid}~{spec.name}", "text": noisy.text, "source_id": sid, "ops": noisy.ops}


def noise_records(records: Iterable[dict], preset: str | NoiseSpec, seed: int,
                  text_field: str = "text", id_field: str = "id") -> Iterator[dict]:
    """One noisy copy per record: ``{"id": f"{id}~{preset}", "text", "source_id", "ops"}``.

    >>> next(noise_records([{"id": "a", "text": "Hello there."}], "clean", 0))["id"]
    'a~clean'
    """
    spec = get_preset(preset)
    for i, rec in enumerate(records):
        try:
            yield _noise_record(rec, spec, seed, text_field, id_field)
        except ValueError as e:
            raise ValueError(f"record {i}: {e}") from None


def noise_file(input_path: str | os.PathLike[str], output_path: str | os.PathLike[str], preset: str | NoiseSpec,
               seed: int, text_field: str = "text", id_field: str = "id") -> int:
    """Noise a JSONL(.gz) file into a JSONL(.gz) file atomically; returns the number of records.

    A bad line is a ``ValueError`` that starts ``{input_path}:{line}:``; no output is left behind.

    >>> import tempfile, os; d = tempfile.mkdtemp(); p = os.path.join(d, "in.jsonl")
    >>> _ = open(p, "w").write('{"id": 1, "text": "Hi there."}\\n')
    >>> noise_file(p, os.path.join(d, "out.jsonl"), "typos", 0)
    1
    """
    spec = get_preset(preset)

    def noisy() -> Iterator[dict]:
        lineno = 0
        try:
            for lineno, rec in iter_jsonl(input_path):
                yield _noise_record(rec, spec, seed, text_field, id_field)
        except InputError as e:  # invalid UTF-8 or JSON, or not an object
            raise ValueError(f"{input_path}:{e.line}: {e.reason}") from None
        except ValueError as e:  # a record without its id or text
            raise ValueError(f"{input_path}:{lineno}: {e}") from None

    return write_jsonl(output_path, noisy(), gz=str(output_path).endswith(".gz"))


def _ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    toks = TOKEN_RE.findall(text.lower())
    return set(zip(*(toks[i:] for i in range(n))))


def ngram_jaccard(a: str, b: str, n: int = 3) -> float:
    """Jaccard of the word n-gram sets (lower-cased ``\\w+`` tokens).

    >>> ngram_jaccard("a b c d", "a b c e")
    0.3333333333333333
    """
    x, y = _ngrams(a, n), _ngrams(b, n)
    if not x and not y:
        return 1.0
    return len(x & y) / len(x | y)


def preset_stats(texts: Sequence[str], preset: str | NoiseSpec, seed: int = 0) -> dict[str, float]:
    """Mean word-3-gram Jaccard and fraction of pairs sharing no word 10-gram (original vs noisy).

    >>> preset_stats(["One two three four five."], "clean")["mean_jaccard3"]
    1.0
    """
    j3: list[float] = []
    none10 = 0
    for i, t in enumerate(texts):
        noisy = apply_noise(t, preset, seed, doc_id=str(i)).text
        j3.append(ngram_jaccard(t, noisy, 3))
        if not (_ngrams(t, 10) & _ngrams(noisy, 10)):
            none10 += 1
    k = max(len(j3), 1)
    return {"n": float(len(j3)), "mean_jaccard3": sum(j3) / k, "no_shared_10gram": none10 / k}
