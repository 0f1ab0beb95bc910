"""Table kind vector_variants: the vectors' measurements, each seed's first epoch and the metric,
against hand values; the collapse rule; a run logged before pos_score existed is named."""

import json

import pandas as pd
import pytest

from ansel.config import load, root, run_config
from ansel.report.vector_variants import render_vector_variants, variant_rows
from ansel.schema import check_schema
from ansel.settings import InputError
from ansel.specs import parse_table

SCHEMA = root() / "workflow/schemas/paper.schema.yaml"  # found before a test moves into tmp_path
TABLE = {
    "id": "vectors",
    "kind": "vector_variants",
    "caption": "c",
    "dataset": "synthetic_en",
    "split": "dev",
    "metric": "MAP",
    "rows": [{"label": "trained", "model": "qa_cnn"}, {"label": "random", "model": "rand"}],
}


@pytest.fixture
def config(tmp_path, monkeypatch):
    c = load(preset="smoke")
    c["models"]["rand"] = {**c["models"]["qa_cnn"], "embeddings": None}
    monkeypatch.chdir(tmp_path)
    margin = c["train"]["margin"]
    # qa_cnn: seed 1 collapses (loss at the margin, equal scores), seed 2 learns; rand learns
    first = {
        ("qa_cnn", 1): (margin, 0.95, 0.95),
        ("qa_cnn", 2): (0.1, 0.8, 0.3),
        ("rand", 1): (0.15, 0.6, 0.2),
        ("rand", 2): (0.12, 0.7, 0.2),
    }
    for (model, seed), (loss, pos, neg) in first.items():
        run = tmp_path / f"results/runs/synthetic_en/{model}/seed{seed}"
        run.mkdir(parents=True)
        pd.DataFrame(
            [
                {"epoch": 1, "lr": 0.1, "loss": loss, "pos_score": pos, "neg_score": neg, "dev_MAP": 0.5},
                {"epoch": 2, "lr": 0.1, "loss": 0.0, "pos_score": 1, "neg_score": 0, "dev_MAP": 0.6},
            ]
        ).to_csv(run / "log.csv", index=False)
        (run / "metrics.json").write_text(json.dumps({"dev": {"MAP": 0.5 + seed / 10 + (model == "rand") / 100}}))
        (run / "config.json").write_text(json.dumps(run_config(c, "synthetic_en", model, seed)))
        timings = tmp_path / f"results/timings/synthetic_en/{model}/seed{seed}.json"
        timings.parent.mkdir(parents=True, exist_ok=True)
        timings.write_text(json.dumps({"train": {"commit": "abc"}}))
    (tmp_path / "data/processed/synthetic_en").mkdir(parents=True)
    (tmp_path / "data/processed/synthetic_en/vocab.json").write_text(json.dumps(["<pad>", "<unk>", "w"]))
    (tmp_path / "data/raw/synthetic").mkdir(parents=True)
    (tmp_path / "data/raw/synthetic/manifest.json").write_text(json.dumps({"f.tsv": {"sha256": "0" * 64}}))
    dim = run_config(c, "synthetic_en", "qa_cnn", 1)["hparams"]["embedding_dim"]
    vectors = tmp_path / f"data/embeddings/synthetic_en/word2vec-{dim}.json"
    vectors.parent.mkdir(parents=True)
    vectors.write_text(
        json.dumps({"coverage": 1.0, "isotropy_top_2000": {"mean_norm_ratio": 0.9, "mean_pair_cosine": 0.8}})
    )
    return c


def test_rows_hold_the_vectors_measurements_each_seeds_first_epoch_and_the_metric(config):
    # as the table rule passes it: datasets reduced to their source (the runs' config.json say the rest)
    sliced = {**config, "datasets": {k: {"source": v["source"]} for k, v in config["datasets"].items()}}
    trained, rand = variant_rows(sliced, parse_table(sliced, "p", TABLE))
    margin = config["train"]["margin"]
    assert trained["vectors"] == "word2vec" and trained["mean_norm_ratio"] == 0.9 and trained["coverage"] == 1.0
    assert trained["vocabulary"] == rand["vocabulary"] == 3  # the dataset's: no recipe keeps the vectors' words
    assert trained["epoch1_loss"] == [margin, 0.1] and trained["epoch1_gap"] == pytest.approx([0.0, 0.5])
    assert trained["collapsed"] == 1 and trained["dev_MAP"] == [0.6, 0.7] and trained["last_epoch_loss"] == [0, 0]
    assert rand["vectors"] == "random" and rand["mean_norm_ratio"] is None and rand["collapsed"] == 0
    assert rand["dev_MAP"] == pytest.approx([0.61, 0.71])


def test_the_rendered_table_says_partly_collapsed_and_gives_mean_and_std(config, tmp_path):
    check_schema({"tables": [TABLE]} | {"paper": "p", "title": "t", "figures": []}, SCHEMA, "spec")
    render_vector_variants(config, parse_table(config, "p", TABLE), ["preset smoke"], tmp_path / "out/vectors")
    md = (tmp_path / "out/vectors.md").read_text()
    assert "partly (1/2)" in md and "no (0/2)" in md and "0.6500 ± 0.0707" in md
    assert "Provenance: runs trained at commit abc" in md
    assert json.loads((tmp_path / "out/vectors.json").read_text())["random"]["collapsed"] == 0


def test_a_run_logged_without_the_scores_is_named(config, tmp_path):
    log = tmp_path / "results/runs/synthetic_en/rand/seed2/log.csv"
    pd.read_csv(log).drop(columns=["pos_score", "neg_score"]).to_csv(log, index=False)
    with pytest.raises(InputError, match="rand/seed2/log.csv: no columns 'pos_score', 'neg_score' "):
        variant_rows(config, parse_table(config, "p", TABLE))
