"""Real neighbours in synthetic training data (``load_training_set(neighbours=...)``, ``--neighbours``): pairs of
similar but not duplicate real texts become two clusters in one split group and explicit hard negatives.

The tiny corpus: random-word texts, ``pairs`` of texts that share one 22-word passage (plain overlap ~0.25, below
the source-dedup threshold 0.3: real neighbours) and near-exact re-sends (duplicates: collapsed, never neighbours).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from neardup.config import ConfigError
from neardup.train.common import TrainConfig
from neardup.train.dataset import split_by_cluster
from neardup.train.mining import mine_hard_negatives
from neardup.train.neighbours import NeighbourGraph, real_neighbours
from neardup.train.pairs import build_pairs
from neardup.train.sources import load_training_set

SHARED, UNIQUE = 22, 58


def _corpus(n_random: int = 30, n_pairs: int = 8, n_dups: int = 2, seed: int = 0
            ) -> tuple[list[dict[str, str]], set[frozenset[str]]]:
    rng = random.Random(seed)
    letters = "bcdfghklmnprstvz"
    vocab = [f"{rng.choice(letters)}{rng.choice('aeiou')}{rng.choice(letters)}{rng.choice('aeiou')}{k}" for k in range(5000)]

    def words(k: int) -> str:
        return " ".join(rng.choice(vocab) for _ in range(k))

    rows = [{"id": f"r{i}", "text": words(SHARED + UNIQUE)} for i in range(n_random)]
    truth: set[frozenset[str]] = set()
    for i in range(n_pairs):
        passage = words(SHARED)
        rows.append({"id": f"p{i}a", "text": passage + " " + words(UNIQUE)})
        rows.append({"id": f"p{i}b", "text": words(UNIQUE) + " " + passage})
        truth.add(frozenset((f"p{i}a", f"p{i}b")))
    for i in range(n_dups):
        text = words(SHARED + UNIQUE)
        rows.append({"id": f"d{i}a", "text": text})
        rows.append({"id": f"d{i}b", "text": text.replace(text.split()[5], "changed", 1)})
    return rows, truth


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def neighbour_corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, set[frozenset[str]]]:
    rows, truth = _corpus()
    folder = tmp_path_factory.mktemp("nb")
    exclude = _write(folder / "exclude.jsonl", [r for r in rows if r["id"] in ("r0", "p1a")])
    return _write(folder / "texts.jsonl", rows), exclude, truth


def _members(ts, source_id: str) -> list[int]:
    return [i for i, c in enumerate(ts.clusters) if c == source_id]


def test_the_tiny_corpus_has_in_band_pairs_and_duplicates():
    rows, truth = _corpus()
    g = real_neighbours([r["text"] for r in rows])
    ids = [r["id"] for r in rows]
    band = g.in_band()
    found = {frozenset((ids[a], ids[b])) for a, b in zip(g.left[band], g.right[band])}
    assert len(found) >= 6 and found <= truth
    dups = {frozenset((ids[a], ids[b])) for a, b in zip(g.left[~band], g.right[~band])}
    assert frozenset(("d0a", "d0b")) in dups  # the re-send: a duplicate, never a neighbour
    assert ((g.weighted[band] >= 0.15) & (g.weighted[band] < 0.6) & (g.overlap[band] < 0.3)).all()


def test_neighbours_land_as_two_clusters_in_one_group_and_as_hard_negatives(neighbour_corpus):
    path, exclude, truth = neighbour_corpus
    ts = load_training_set(path, synthetic=True, max_sources=24, seed=0, neighbours=0.5, exclude=[str(exclude)])
    pairs = ts.info["neighbour_pairs"]
    assert ts.info["n_neighbour_pairs"] == len(pairs) >= 4
    assert ts.info["n_neighbourhood_sources"] >= 8  # about half of the 24 sources come in neighbourhoods
    assert {frozenset((a, b)) for a, b, _, _ in pairs} <= truth  # only real neighbours, no random pair
    assert all(0.15 <= w < 0.6 and o < 0.3 for _, _, w, o in pairs)
    # excluded documents never enter, not even as a neighbour; re-sends are collapsed, not paired
    assert "p1a" not in ts.ids and "r0" not in ts.ids
    # excluded documents are blocked before neighbourhoods are drawn, so every drawn neighbour is kept
    assert ts.info["n_neighbourhood_sources_kept"] == ts.info["n_neighbourhood_sources"]
    assert not {"d0a", "d0b"} <= set(ts.ids) and not {"d1a", "d1b"} <= set(ts.ids)
    neg = {tuple(sorted(p)) for p in ts.negatives}
    nbn = {tuple(sorted(p)) for p in ts.neighbour_negatives}
    assert nbn and nbn <= neg
    for a, b, _, _ in pairs:
        ma, mb = _members(ts, a), _members(ts, b)
        assert ma and mb and ts.clusters[ma[0]] != ts.clusters[mb[0]]  # two clusters ...
        assert {ts.groups[i] for i in ma + mb} == {ts.groups[ma[0]]}  # ... in one split group (copies too)
        assert {tuple(sorted((x, y))) for x in ma for y in mb} <= nbn  # every member pair a hard negative
    # a source without a neighbour keeps its own group
    alone = [i for i, doc_id in enumerate(ts.ids) if doc_id.startswith("r") and "~" not in doc_id]
    assert any(ts.groups[i] == ts.ids[i] for i in alone)


def test_no_neighbourhood_straddles_the_split_and_training_uses_the_pairs(neighbour_corpus):
    path, exclude, _ = neighbour_corpus
    ts = load_training_set(path, synthetic=True, max_sources=24, seed=0, neighbours=0.5, exclude=[str(exclude)])
    for seed in range(4):
        train, val = split_by_cluster(ts, 0.3, seed=seed)
        assert len(train.neighbour_negatives) + len(val.neighbour_negatives) == len(ts.neighbour_negatives)
        for a, b, _, _ in ts.info["neighbour_pairs"]:
            assert (a in train.ids) == (b in train.ids) and (a in val.ids) == (b in val.ids)
    train, _ = split_by_cluster(ts, 0.3, seed=0)
    nbn = {tuple(sorted(p)) for p in train.neighbour_negatives}
    assert nbn
    # the existing MinHash mining finds them (close pairs of different clusters) ...
    ml, mr, _ = mine_hard_negatives(train.texts, train.clusters, "minhash", k=10)
    mined = [(int(a), int(b)) for a, b in zip(ml, mr)]
    assert {tuple(sorted(p)) for p in mined} & nbn
    # ... and they are among the hard negatives of the training pairs
    p = build_pairs(train, neg_per_pos=2.0, hard_fraction=1.0, mined=mined, seed=0)
    used = p.info["neighbour_negatives"]
    assert used["explicit"] + used["mined"] > 0 and used["mined_pool"] > 0
    hard = {tuple(sorted((int(a), int(b)))) for a, b, k in zip(p.a, p.b, p.kind) if k in ("hard", "mined")}
    assert hard & nbn
    lab = p.label.astype(bool)
    assert all(train.clusters[a] != train.clusters[b] for a, b in zip(p.a[~lab], p.b[~lab]))


def test_off_by_default_and_unchanged(neighbour_corpus):
    path, exclude, truth = neighbour_corpus
    default = load_training_set(path, synthetic=True, max_sources=24, seed=0, exclude=[str(exclude)])
    off = load_training_set(path, synthetic=True, max_sources=24, seed=0, exclude=[str(exclude)], neighbours=0.0)
    assert (default.ids, default.texts, default.clusters, default.groups) == (off.ids, off.texts, off.clusters, off.groups)
    assert not off.neighbour_negatives and "neighbour_pairs" not in off.info
    originals = [i for i, d in enumerate(off.ids) if "~" not in d]
    assert all(off.groups[i] == off.ids[i] for i in originals)  # every source its own group
    on = load_training_set(path, synthetic=True, max_sources=24, seed=0, exclude=[str(exclude)], neighbours=0.5)

    def both_in(ts) -> int:
        return sum(pair <= set(ts.ids) for pair in truth)

    assert both_in(on) > both_in(off)
    with pytest.raises(ValueError, match="neighbours"):
        load_training_set(path, synthetic=True, neighbours=1.5)


def test_neighbourhood_selection_keeps_band_dedup_exclusion_and_separation():
    # positions 0..6; (0,1) in band; (0,2) above the band; (0,3) a duplicate; (4,5) below the band;
    # (1,6) and (5,6) in band
    left = np.array([0, 0, 0, 4, 1, 5])
    right = np.array([1, 2, 3, 5, 6, 6])
    weighted = np.array([0.30, 0.70, 0.40, 0.10, 0.20, 0.25])
    overlap = np.array([0.20, 0.25, 0.35, 0.05, 0.20, 0.20])
    g = NeighbourGraph(list(range(100, 107)), left, right, weighted, overlap, (0.15, 0.6), 0.3)
    assert g.in_band().tolist() == [True, False, False, False, True, True]
    # 0 takes 1; 5 cannot take 6, which is close to 1 of another neighbourhood; corpus indices returned
    assert g.neighbourhoods(target=100, max_neighbours=2) == [[100, 101]]
    assert g.neighbourhoods(target=1) == [[100, 101]]  # at least one neighbour, then stop
    g.blocked = {1}  # excluded (e.g. a near-duplicate of a test document)
    assert g.n_pairs == 1 and g.neighbourhoods(target=100) == [[105, 106]]
    groups, pairs = g.groups_and_pairs(["a", "b", "c", "g"], [100, 101, 102, 106])
    assert groups == ["a", "a", "c", "a"]  # 0-1 and 1-6 are in band: one component, named after its first member
    assert sorted((x, y) for x, y, _, _ in pairs) == [("a", "b"), ("b", "g")]


def test_config_and_cli_option(tmp_path, neighbour_corpus, tiny_model):
    from neardup.cli.train import train_app

    path, exclude, _ = neighbour_corpus
    with pytest.raises(ConfigError, match="--neighbours"):
        TrainConfig(data=str(path), out=str(tmp_path), neighbours=0.3)  # needs --synthetic
    with pytest.raises(ConfigError, match="--neighbours"):
        TrainConfig(data=str(path), out=str(tmp_path), synthetic=True, neighbours=1.5)
    base = TrainConfig(data=str(path), out=str(tmp_path), synthetic=True)
    assert base.fingerprint() != TrainConfig(data=str(path), out=str(tmp_path), synthetic=True, neighbours=0.3).fingerprint()
    with pytest.raises(ConfigError, match="--hard-kinds"):
        TrainConfig(data=str(path), out=str(tmp_path), synthetic=True, hard_kinds=("entity_swap", "typo"))
    with pytest.raises(ConfigError, match="--hard-kinds"):
        TrainConfig(data=str(path), out=str(tmp_path), hard_kinds=("entity_swap",))  # needs --synthetic
    assert base.fingerprint() != TrainConfig(data=str(path), out=str(tmp_path), synthetic=True,
                                             hard_kinds=("entity_swap",)).fingerprint()
    res = CliRunner().invoke(train_app, ["biencoder", "--data", str(path), "--synthetic", "--base", tiny_model,
                                         "--out", str(tmp_path / "cli"), "--steps", "1", "--batch-size", "4",
                                         "--max-sources", "24", "--neighbours", "0.5", "--exclude", str(exclude),
                                         "--hard-kinds", "entity_swap, update",
                                         "--max-seq-length", "32", "--threads", "1", "--no-eval", "--quiet",
                                         "--format", "json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout.strip().splitlines()[-1])
    assert report["data"]["n_neighbour_pairs"] >= 4 and report["data"]["neighbours"] == 0.5
    assert report["data"]["hard_kinds"] == ["entity_swap", "update"]
    assert report["data"]["train"]["n_neighbour_negatives"] > 0
