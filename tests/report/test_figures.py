import json

import numpy as np
import pandas as pd
import pytest
import torch

from ansel.config import ConfigError
from ansel.data.canonical import Dataset
from ansel.data.vocab import Vocab
from ansel.evaluation.metrics import write_trec_run
from ansel.models import build_model
from ansel.report.figures import length_curves, render_figure, sweep_curves
from ansel.specs import figure_spec

# Answer lengths 2, 4, 6, 8 tokens; question i's only correct answer is a{i}, the others are wrong.
N = 4


def fake_dataset() -> Dataset:
    questions = pd.DataFrame(
        {
            "qid": [f"q{i}" for i in range(N)],
            "text": [""] * N,
            "category": [None] * N,
            "tokens": [["what", "about", f"w{i}"] for i in range(N)],
        }
    )
    answers = pd.DataFrame(
        {
            "aid": [f"a{i}" for i in range(N)],
            "text": [""] * N,
            "tokens": [[f"w{i}"] + ["about"] * (2 * i + 1) for i in range(N)],
        }
    )
    test = pd.DataFrame(
        [(f"q{i}", f"a{j}", int(i == j)) for i in range(N) for j in range(N)], columns=["qid", "aid", "label"]
    )
    return Dataset("syn", questions, answers, {"train": test, "test": test})


def write_run(path, hits: set[int]) -> None:
    """A run.trec (qids prefixed with the split) ranking the correct answer first for the questions in ``hits``."""
    rows = [(f"test:q{i}", f"a{j}", 1.0 if (i == j) == (i in hits) else 0.0) for i in range(N) for j in range(N)]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_trec_run(pd.DataFrame(rows, columns=["qid", "aid", "score"]), path, "fake")


@pytest.fixture
def workdir(tmp_path, monkeypatch, repo_root):
    monkeypatch.setenv("ANSEL_ROOT", str(repo_root))  # specs from the checkout, outputs here
    monkeypatch.chdir(tmp_path)
    ds = fake_dataset()
    ds.save(tmp_path / "data/processed/syn")
    Vocab.build([list(t) for t in ds.questions.tokens] + [list(t) for t in ds.answers.tokens]).save(
        tmp_path / "data/processed/syn/vocab.json"
    )
    return tmp_path


CONFIG = {"seeds": 2, "datasets": {"syn": {"source": "syn"}}, "dataset_alias": {"wiki": "syn"}}


def test_accuracy_by_length_is_the_mean_over_seeds(workdir):
    write_run(workdir / "results/runs/syn/m/seed1/run.trec", {0, 1, 2, 3})
    write_run(workdir / "results/runs/syn/m/seed2/run.trec", {0, 2})
    spec = {
        "id": "f",
        "kind": "accuracy_by_length",
        "dataset": "wiki",
        "split": "test",
        "step": 4,
        "models": ["m"],
        "labels": {"m": "M"},
    }
    spec = figure_spec(CONFIG, "p", spec)
    curve = length_curves(CONFIG, spec)["M"]
    assert curve["max_length"].tolist() == [4, 8]
    # seed 1: all hits; seed 2: q0 (2 tokens) and q2 (6) hit, q1 (4) and q3 (8) miss
    assert curve["p_at_1"].tolist() == pytest.approx([np.mean([1, 0.5]), np.mean([1, 0.5])])
    assert curve["p_at_1_std"].tolist() == pytest.approx([np.std([1, 0.5], ddof=1)] * 2)
    render_figure(CONFIG, spec, workdir / "figures/p/f")
    assert (workdir / "figures/p/f.png").stat().st_size > 0 and (workdir / "figures/p/f.pdf").stat().st_size > 0


def test_missing_run_file_and_split_are_named(workdir):
    spec = figure_spec(
        CONFIG, "p", {"id": "f", "kind": "accuracy_by_length", "dataset": "wiki", "split": "test", "models": ["m"]}
    )
    with pytest.raises(FileNotFoundError, match="results/runs/syn/m/seed1/run.trec: missing"):
        length_curves(CONFIG, spec)
    write_run(workdir / "results/runs/syn/m/seed1/run.trec", {0})
    with pytest.raises(KeyError, match="no split 'test1'"):
        length_curves(CONFIG, {**spec, "split": "test1"})
    with pytest.raises(KeyError, match="no rows of split 'dev'; it has test"):
        from ansel.report.tables import split_run

        split_run(workdir / "results/runs/syn/m/seed1/run.trec", "dev")


def test_attention_map_of_a_trained_ap_cnn(workdir):
    run = workdir / "results/runs/syn/ap/seed2"
    cfg = {
        "model": "ap",
        "arch": "ap_cnn",
        "hparams": {"embedding_dim": 8, "filters": 6, "kernel": 3},
        "max_len_q": 10,
        "max_len_a": 5,
    }
    vocab = Vocab.load(workdir / "data/processed/syn/vocab.json")
    run.mkdir(parents=True)
    torch.save(build_model(cfg["arch"], cfg["hparams"], len(vocab)).state_dict(), run / "model.pt")
    (run / "config.json").write_text(json.dumps(cfg))
    write_run(run / "run.trec", {1, 3})
    spec = {
        "id": "att",
        "kind": "attention_maps",
        "dataset": "wiki",
        "split": "test",
        "model": "ap",
        "seed": 2,
        "example": 1,
        "min_answer_tokens": 3,
    }
    render_figure(
        CONFIG, figure_spec(CONFIG, "p", spec), workdir / "figures/p/att"
    )  # q3's 8-token answer, truncated to max_len_a
    assert (workdir / "figures/p/att.png").stat().st_size > 0


def test_attention_map_without_a_long_correct_answer_says_so(workdir, capsys):
    run = workdir / "results/runs/syn/ap/seed1"
    write_run(run / "run.trec", {0})
    spec = {
        "id": "att",
        "kind": "attention_maps",
        "dataset": "wiki",
        "split": "test",
        "model": "ap",
        "example": 1,
        "min_answer_tokens": 100,
    }
    render_figure(CONFIG, figure_spec(CONFIG, "p", spec), workdir / "figures/p/att")
    assert "only 0 question(s) answered correctly" in capsys.readouterr().err
    assert (workdir / "figures/p/att.pdf").stat().st_size > 0


def test_sweep_points_are_means_over_seeds_of_the_derived_runs(workdir):
    config = {
        **CONFIG,
        "scale": {},
        "models": {"g": {"arch": "ggsa", "hparams": {"embedding_dim": 12, "heads": 2, "group_size": 10}}},
    }
    values = {"g@group_size=4": [0.5, 0.7], "g": [0.6, 0.6], "g@group_size=20": [0.2, 0.4], "ref": [0.55, 0.65]}
    for model, per_seed in values.items():
        for seed, v in enumerate(per_seed, start=1):
            d = workdir / f"results/runs/syn/{model}/seed{seed}"
            d.mkdir(parents=True)
            (d / "metrics.json").write_text(json.dumps({"test1": {"P@1": v}}))
    spec = {
        "id": "figure8_group_size",
        "kind": "sweep",
        "dataset": "insuranceqa_v1",
        "splits": ["test1"],
        "metric": "P@1",
        "x": "group_size",
        "values": [4, 10, 20],
        "base_model": "g",
        "reference_model": "ref",
        "reference_published": {"table": "figure8_baseline", "label": "global self-attention with max-pooling"},
        "paper": "ggsa",
    }
    config["dataset_alias"] = {"insuranceqa_v1": "syn"}
    spec = figure_spec(config, "ggsa", spec)
    curves = sweep_curves(config, spec)
    assert curves["model"].tolist() == ["g@group_size=4", "g", "g@group_size=20", "ref"]
    assert curves["mean"].tolist() == pytest.approx([np.mean(v) for v in values.values()])
    assert curves["std"].tolist() == pytest.approx([np.std(v, ddof=1) for v in values.values()])
    render_figure(config, spec, workdir / "figures/ggsa/fig8")  # published reference from the real CSV
    assert (workdir / "figures/ggsa/fig8.png").stat().st_size > 0


def test_unknown_figure_kind_is_named(workdir):
    with pytest.raises(ConfigError, match="figure x: unknown kind 'pie'; known: accuracy_bars, "):
        render_figure(CONFIG, {"id": "x", "kind": "pie"}, workdir / "x")
    assert not (workdir / "x.png").exists()


def test_every_figure_kind_is_drawn_by_a_function_of_the_report():
    from ansel import figure_kinds
    from ansel.report import figures

    assert figures.drawn() == figure_kinds.known()


HEATMAP_SPEC = """
paper: mini
title: two models, a ranking and a classification dataset
tables:
  - id: grid
    rows:
      - {label: Ranker, model: r, models: {pairs: null}}
      - {label: Both, model: b, models: {pairs: b_pairs}}
      - {label: Prior}
    columns:
      - {dataset: wiki, split: test, metric: MAP}
      - {dataset: pairs, split: test, metric: accuracy}
figures:
  - {id: grid_heatmap, kind: heatmap, table: grid}
"""


def test_heatmap_prints_each_mean_colours_it_within_its_column_and_greys_na(tmp_path, monkeypatch, repo_root):
    from ansel.paper_targets import spec_figure
    from ansel.report import figures

    checkout = tmp_path / "checkout"  # a checkout of its own: the figure reads its table from the spec
    (checkout / "workflow/papers").mkdir(parents=True)
    (checkout / "workflow/schemas").mkdir()
    (checkout / "params.yaml").write_text("{}\n")
    (checkout / "workflow/papers/mini.yaml").write_text(HEATMAP_SPEC)
    schema = "workflow/schemas/paper.schema.yaml"
    (checkout / schema).write_text((repo_root / schema).read_text())
    monkeypatch.setenv("ANSEL_ROOT", str(checkout))
    monkeypatch.chdir(tmp_path)
    values = {
        ("syn", "r"): ("MAP", [0.6, 0.7]),
        ("syn", "b"): ("MAP", [0.5, 0.5]),
        ("pairs", "b_pairs"): ("accuracy", [0.8, 0.9]),
    }
    for (ds, model), (metric, per_seed) in values.items():
        for seed, v in enumerate(per_seed, start=1):
            d = tmp_path / f"results/runs/{ds}/{model}/seed{seed}"
            d.mkdir(parents=True)
            (d / "metrics.json").write_text(json.dumps({"test": {metric: v}}))
    drawn = {}
    monkeypatch.setattr(
        figures,
        "save",
        lambda fig, prefix: drawn.update(
            texts=[t.get_text() for t in fig.axes[0].texts],
            image=fig.axes[0].images[0].get_array(),
            columns=[t.get_text() for t in fig.axes[0].get_xticklabels()],
        ),
    )
    config = {
        "seeds": 2,
        "preset": "smoke",
        "datasets": {"syn": {"source": "syn"}, "pairs": {"source": "pairs"}},
        "dataset_alias": {"wiki": "syn"},
    }
    render_figure(config, spec_figure(config, "mini", "grid_heatmap"), tmp_path / "figures/mini/grid_heatmap")
    assert drawn["texts"] == ["0.650", "n/a", "0.500", "0.850", "", ""]  # row by row; Prior has no runs
    # per column: Ranker is wiki's best (1), Both its worst (0); one accuracy value: the middle; n/a grey
    assert drawn["image"].tolist() == [[1.0, None], [0.0, 0.5], [None, None]]
    # wiki's values are its stand-in's (the preset aliases wiki onto syn): the column says so
    assert drawn["columns"] == ["syn\n(stand-in for wiki) test MAP", "pairs\ntest accuracy"]

    monkeypatch.undo()  # the real writer, on the repository's checkout again
    monkeypatch.setenv("ANSEL_ROOT", str(checkout))
    monkeypatch.chdir(tmp_path)
    render_figure(config, spec_figure(config, "mini", "grid_heatmap"), tmp_path / "figures/mini/grid_heatmap")
    assert (tmp_path / "figures/mini/grid_heatmap.png").stat().st_size > 0


def test_a_heatmap_of_a_table_that_is_not_of_metrics_is_refused(monkeypatch, repo_root):
    from ansel.config import ConfigError, load
    from ansel.figure_kinds import heatmap_table

    monkeypatch.setenv("ANSEL_ROOT", str(repo_root))
    with pytest.raises(ConfigError, match="figure h: table 'table1' is of kind 'dataset_stats'"):
        heatmap_table(load(), {"id": "h", "kind": "heatmap", "paper": "ggsa", "table": "table1"})
