"""The method registry and the defaults each method owns: every method is one file, found by name, and a
config takes that method's defaults, whoever builds it (Python, the command line, a config file)."""

import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import neardup
from neardup import methods
from neardup.cli import app
from neardup.config import CLUSTER_ALGORITHMS, METHODS, VERIFY_SCORES, ConfigError, DedupConfig, config_from_dict, config_to_dict
from neardup.methods.base import KeyedMethod, Method, VectorMethod

RUNNABLE = [m for m in METHODS if m != "auto"]  # auto stands for the method calibration chooses


def test_every_method_name_is_a_registered_file_and_every_file_is_named():
    assert set(methods.names()) == set(METHODS), "add the new method's name to neardup.config.MethodName"
    for name in RUNNABLE:
        cls = methods.method_class(name)
        assert issubclass(cls, (KeyedMethod, VectorMethod)) and cls.name == name
        assert cls.__module__ == f"neardup.methods.{name.replace('-', '_')}"


@pytest.mark.parametrize("name", RUNNABLE)
def test_each_method_owns_sound_defaults(name):
    cls = methods.method_class(name)
    assert 0 < cls.default_threshold <= 1
    grid = list(cls.threshold_grid)
    assert grid == sorted(grid) and 0 < grid[0] and grid[-1] <= 1 and len(grid) >= 10
    assert cls.default_cluster in CLUSTER_ALGORITHMS and cls.default_score in VERIFY_SCORES
    from neardup.config import EmbedConfig

    cfg = DedupConfig(method=name, embed=EmbedConfig(cross_model="ce" if name == "rerank" else None))
    assert cfg.threshold == cls.default_threshold and cfg.cluster.algorithm == cls.default_cluster
    method = methods.get(cfg)
    assert isinstance(method.params(), dict) and method.describe()["method"] == name
    assert config_from_dict(json.loads(json.dumps(config_to_dict(cfg)))) == cfg


def test_defaults_follow_the_method_and_the_shingle_unit():
    assert DedupConfig().shingle.n == 4 and DedupConfig().replace(shingle__char=True).shingle.n == 5
    assert DedupConfig(method="simhash").shingle.char is True and DedupConfig(method="simhash").shingle.n == 4
    simhash = DedupConfig().replace(method="simhash")
    assert (simhash.threshold, simhash.verify.score, simhash.shingle.char) == (0.85, "none", True)
    back = simhash.replace(method="minhash")
    assert (back.threshold, back.verify.score, back.shingle.char) == (0.45, "weighted-overlap", False)
    chosen = DedupConfig(threshold=0.3).replace(shingle__n=7, method="ngram")  # what was set stays set
    assert (chosen.threshold, chosen.shingle.n) == (0.3, 7)
    with pytest.raises(ConfigError, match="verify score must be 'none'"):
        DedupConfig(method="simhash").replace(verify__score="jaccard")
    with pytest.raises(ConfigError, match="method must be one of"):
        DedupConfig(method="shingles")


def test_char_ngrams_on_the_command_line_equal_char_shingles_in_python(example_path, tmp_path):
    res = CliRunner().invoke(app, ["dedup", str(example_path), "-o", str(tmp_path / "o"), "--char-ngrams", "-q"])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    api = neardup.dedup(example_path, shingle__char=True)
    assert summary["params"]["shingle"] == api.summary["params"]["shingle"] == {"n": 5, "char": True, "sample": 1}
    assert summary["params"]["bands"] == api.summary["params"]["bands"]
    cli_pairs = [(p["left"], p["right"]) for p in pq.read_table(tmp_path / "o" / "pairs.parquet").to_pylist()]
    assert cli_pairs == [(a, b) for a, b, _ in api.pairs_by_id()]
    simhash = CliRunner().invoke(app, ["dedup", str(example_path), "-o", str(tmp_path / "s"), "-m", "simhash", "-q"])
    assert simhash.exit_code == 0 and json.loads((tmp_path / "s" / "summary.json").read_text())["params"]["verify"][
        "score"] == neardup.dedup(example_path, method="simhash").summary["params"]["verify"]["score"] == "none"


def test_a_method_is_added_by_registering_a_class(monkeypatch):
    """What a new file in neardup/methods does: the class below, registered, is a method every entry point runs."""
    import numpy as np

    from neardup.methods.ngram import Ngram

    class Prefix(Ngram):
        """Pairs of documents with as many shingles, scored by plain overlap."""

        name = "prefix"
        default_threshold = 0.3
        default_score = "overlap"

        def key_counts(self, rep, docs):
            return np.ones(docs.size, dtype=np.int64)

        def keys(self, rep, docs, tables):
            sizes = np.asarray(rep.sets.sizes)[docs].astype(np.uint64)
            return sizes, docs, np.zeros(docs.size, dtype=np.int64)

    monkeypatch.setitem(methods._REGISTRY, "prefix", Prefix)
    texts = ["a b c d e f", "a b c d x y", "q r s t u v w x"]
    result = neardup.dedup(texts, method="prefix")
    assert result.groups() == [[0, 1]]
    assert result.summary["params"]["method"] == "prefix" and result.summary["params"]["verify"]["score"] == "overlap"
    assert neardup.dedup(texts, method="prefix", engine=neardup.EngineConfig(name="local", workers=1)).groups() == \
        [[0, 1]]
    assert isinstance(methods.get(DedupConfig(method="prefix")), Method)


@pytest.mark.parametrize("name", ["minhash", "simhash", "multiview"])
def test_in_memory_preparation_is_the_map_step_of_every_batch_joined(name):
    """``prepare`` is the method's own map step (``Method.represent``) over batches, joined: any batch size
    gives the same sets and sketches as representing each batch the way a chunked engine's worker does."""
    from neardup.io.read import Corpus
    from neardup.methods.base import Representation
    from neardup.pipeline import prepare

    texts = [f"story {i} about the {'harbour' if i % 3 else 'market'} and item {i % 5} of the day" for i in range(23)]
    texts[4] = ""
    cfg = DedupConfig(method=name)
    one = prepare(Corpus.from_texts(texts), cfg).rep
    small = prepare(Corpus.from_texts(texts), cfg, batch_size=5).rep
    method = methods.get(cfg)
    by_worker = Representation.concat([method.represent(texts[i : i + 5], 10_000) for i in range(0, len(texts), 5)])
    for rep in (small, by_worker):
        assert (rep.sets.values == one.sets.values).all() and (rep.sets.offsets == one.sets.offsets).all()
        assert (rep.sketch == one.sketch).all() and (rep.lengths == one.lengths).all()
    assert one.empty.tolist() == [i == 4 for i in range(23)]
