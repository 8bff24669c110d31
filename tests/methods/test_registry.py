"""The method registry and the defaults each method owns: every method is one file, found by name, and a
config takes that method's defaults, whoever builds it (Python, the command line, a config file)."""

import dataclasses
import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import neardup
from neardup import methods
from neardup.cli import app
from neardup.config import CLUSTER_ALGORITHMS, METHODS, VERIFY_SCORES, ConfigError, DedupConfig, config_from_dict, config_to_dict
from neardup.config import method_stages as config_stages_of_methods
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


def test_the_command_line_reads_what_each_method_file_declares():
    """The registry's catalog (read from the files without importing them: the command line's options and
    ``--method`` help) says what the imported classes say: every name, and every setting with its flag and help."""
    from neardup.cli.options import METHOD_OPTIONS, method_help

    assert set(methods.catalog()) == set(methods.names())
    for name in methods.names():
        methods.check_declared(methods.method_class(name))
    assert [part.split(" ")[0] for part in method_help().rstrip(".").split(" | ")] == list(METHODS)
    offered = {o.key for o in METHOD_OPTIONS if o.key}
    for stage, settings in config_stages_of_methods().items():
        fields = [f.name for f in dataclasses.fields(settings) if "help" in f.metadata]
        assert {f"{stage}__{f}" for f in fields} <= offered


def test_a_method_file_owns_its_settings_and_every_entry_point_takes_them(example_path, tmp_path):
    """ngram's settings live in methods/ngram.py: the config's stage, the configuration file, summary.json's
    params and the option --ngram-max-df, the same in Python and on the command line."""
    from neardup.io.config_file import load_config, save_config

    cfg = DedupConfig(method="ngram").replace(ngram__max_df=3)
    assert cfg.ngram.max_df == 3 and type(cfg.ngram).__module__ == "neardup.methods.ngram"
    save_config(tmp_path / "c.json", cfg)
    assert load_config(tmp_path / "c.json") == cfg
    res = CliRunner().invoke(app, ["dedup", str(example_path), "-o", str(tmp_path / "o"), "-m", "ngram",
                                   "--ngram-max-df", "3", "-q"])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    api = neardup.dedup(example_path, config=cfg)
    assert summary["params"]["ngram"] == api.summary["params"]["ngram"] == {"max_df": 3}
    assert summary["n_pairs"] == api.summary["n_pairs"] < neardup.dedup(example_path, method="ngram").summary["n_pairs"]
    with pytest.raises(ConfigError, match="max_df must be >= 2"):
        DedupConfig().replace(ngram__max_df=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'nogram'"):
        DedupConfig(nogram=1)
