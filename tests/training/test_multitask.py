"""MTAS's joint training: (1 - alpha) * ranking loss + alpha * cross-entropy of the question's
category, the classifier alone ("only text classification"), and the category metrics."""

from pathlib import Path

import numpy as np
import pytest
import torch

import ansel.training.epoch as epoch_mod
import ansel.training.trainer as train_mod
from ansel.config import load, run_config
from ansel.data.batches import RunData
from ansel.data.vocab import Vocab, training_texts
from ansel.evaluation.config import EvalConfig
from ansel.evaluation.evaluate import dev_evaluator, evaluate_run
from ansel.evaluation.metrics import category_metrics
from ansel.settings import ConfigError, SettingError
from ansel.training.config import TrainConfig
from tests.data.reference_loading import assert_loads_as_reference
from tests.training.corpus import processed_synthetic

SMALL = {"train": 80, "dev": 20, "test": 20}
TINY = {"embedding_dim": 16, "hidden": 8, "attention": 8, "heads": 2}


@pytest.fixture(scope="module")
def processed(tmp_path_factory) -> Path:
    return processed_synthetic(tmp_path_factory.mktemp("raw"), tmp_path_factory.mktemp("processed"), SMALL, "zh")


def test_the_corpus_loads_for_a_run_as_the_per_text_references_give_it(processed):
    assert_loads_as_reference(processed)


def cfg(epochs=2, **train):
    c = run_config(load(), "synthetic_zh", "qa_cnn", 1)
    c.update(arch="mtas", model="mtas_test", embeddings=None, hparams=dict(TINY))
    c["eval"]["splits"] = ["dev", "test"]
    c["train"].update(epochs=epochs, batch_size=16, optimizer="adam", lr=0.01, **train)
    return c


def _data(c, processed):
    return RunData.load(processed, Vocab.load(processed / "vocab.json"), c["max_len_q"], c["max_len_a"])


def _train(c, processed, run_dir):
    """Trains the run; its dev-selected weights."""
    data = _data(c, processed)
    train_mod.train_run(c, data, None, run_dir, dev_evaluator(data, "dev", EvalConfig(["dev"])), progress=False)
    return torch.load(run_dir / "model.pt", weights_only=True)


def _init(c, processed):
    """The model's weights before training (built under the run's seed, as training builds it)."""
    data = _data(c, processed)
    t = TrainConfig(**{k: v for k, v in c["train"].items() if k not in ("negatives",)})
    model = train_mod._model_and_optimizer(c, t, data, None, "cpu")[0]
    return {k: v.clone() for k, v in model.state_dict().items()}


def test_categories_are_the_training_splits_sorted_and_unknown_ones_are_minus_one(processed):
    data = _data(cfg(), processed)
    q = data.dataset.questions
    train_qids = set(data.dataset.splits["train"].qid)
    assert data.categories == sorted(q[q.qid.isin(train_qids)].category.unique())
    assert len(data.categories) >= 2
    assert (data.q_category >= 0).all()
    idx = data.q_category[:5]
    assert [data.categories[i] for i in idx] == list(q.category[:5])


def test_category_metrics_are_macro_averages_over_the_training_classes():
    gold = np.array([0, 0, 1, 1, 2, 2])
    pred = np.array([0, 1, 1, 1, 0, 0])  # class 2 never predicted: precision 0 (not undefined)
    m = category_metrics(gold, pred, 4)  # class 3 is a training class with no question: P = R = F1 = 0
    p = [1 / 3, 2 / 3, 0, 0]  # class 0: 1 of 3 predictions right; class 1: 2 of 3
    r = [1 / 2, 1, 0, 0]
    f = [2 * a * b / (a + b) if a + b else 0 for a, b in zip(p, r)]
    assert m["category_accuracy"] == pytest.approx(3 / 6)
    assert m["category_precision"] == pytest.approx(np.mean(p))
    assert m["category_recall"] == pytest.approx(np.mean(r))
    assert m["category_F1"] == pytest.approx(np.mean(f))
    assert m["n_categorised"] == 6
    with pytest.raises(ValueError, match="no question"):
        category_metrics(np.array([], dtype=int), np.array([], dtype=int), 2)


def test_joint_training_reports_category_metrics_for_every_split(processed, tmp_path):
    c = cfg(category_weight=0.5)
    _train(c, processed, tmp_path)
    metrics = evaluate_run(tmp_path, processed)
    for split in ("dev", "test"):
        assert {"MAP", "category_F1", "category_precision", "category_recall", "category_accuracy"} <= set(
            metrics[split]
        )


def test_alpha_zero_leaves_the_classifier_untouched_and_the_category_loss_alone_leaves_the_ranker(processed, tmp_path):
    c = cfg(category_weight=0.0)
    init, trained = _init(c, processed), _train(c, processed, tmp_path / "rank")
    classifier = [k for k in init if k.startswith("classifier")]
    assert classifier and all(torch.equal(init[k], trained[k]) for k in classifier)
    assert not all(torch.equal(init[k], trained[k]) for k in init if k not in classifier)

    c = cfg(loss="category", select_metric="category_F1")
    init, trained = _init(c, processed), _train(c, processed, tmp_path / "cat")
    attention = [k for k in init if "attention" in k or "heads" in k]
    assert attention and all(torch.equal(init[k], trained[k]) for k in attention)
    assert not all(torch.equal(init[k], trained[k]) for k in classifier)


def test_the_category_classifier_learns_the_training_questions(processed, tmp_path):
    c = cfg(epochs=8, loss="category", select_metric="category_accuracy")
    _train(c, processed, tmp_path)
    data = _data(c, processed)
    metrics = evaluate_run(tmp_path, processed)
    chance = np.bincount(data.q_category).max() / len(data.q_category)  # always the largest class
    assert metrics["dev"]["category_accuracy"] > chance


def test_summed_ranking_loss_is_the_mean_times_the_batch():
    from ansel.training.losses import pair_loss

    s_pos, s_neg = torch.tensor([0.5, 0.1, 0.9]), torch.tensor([0.2, 0.3, 0.1])
    base = dict(epochs=1, batch_size=3, optimizer="sgd", lr=0.1, loss="hinge", margin=0.2, select_metric="MAP")
    mean = pair_loss(s_pos, s_neg, TrainConfig(**base))
    total = pair_loss(s_pos, s_neg, TrainConfig(**base, rank_reduction="sum"))
    assert total == pytest.approx(3 * mean)


def test_bad_multitask_settings_name_their_key():
    base = dict(epochs=1, batch_size=3, optimizer="sgd", lr=0.1, loss="hinge", margin=0.2, select_metric="MAP")
    with pytest.raises(SettingError, match="category_weight"):
        TrainConfig(**base | {"category_weight": 1.5})
    with pytest.raises(SettingError, match="category_weight"):
        TrainConfig(**base | {"loss": "category", "category_weight": 0.1})
    config = load()
    config["models"]["qa_cnn_joint"] = {**config["models"]["qa_cnn"], "train": {"category_weight": 0.1}}
    with pytest.raises(ConfigError, match=r"qa_cnn_joint\.train\.category_weight: .*'qa_cnn' has none"):
        run_config(config, "synthetic_zh", "qa_cnn_joint", 1)


def _lawqa_lines(questions: range, pool: int, rng: np.random.Generator) -> list[str]:
    """Lines in LawQA's six-field format (label qid:N q_tok_tok a_tok_tok q_cat a_cat): each question
    of category N % 3 with its answer first, then ``pool - 1`` answers of other questions."""

    def words(kind: str, i: int, cat: int) -> str:
        return "_".join([f"{kind}{cat}类", f"词{i % 7}", f"{kind}{i}", f"主题{cat}", "问题"])

    lines = []
    for i in questions:
        cat = i % 3 + 1
        lines.append(f"1 qid:{i} {words('问', i, cat)} {words('答', i, cat)} {cat} {cat}")
        for j in rng.choice([k for k in questions if k % 3 != i % 3], pool - 1, replace=False):
            lines.append(f"0 qid:{i} {words('问', i, cat)} {words('答', j, j % 3 + 1)} {cat} {j % 3 + 1}")
    return lines


def test_the_full_presets_mtas_trains_on_lawqa_files_in_their_six_field_format(tmp_path):
    """preset=full, the day lawQA.zip is there: params.yaml's lawqa dataset (read options) and
    mtas_lawqa (the authors' sizes) run unchanged; only the epochs and the dev draw are cut."""
    from ansel.data.registry import get_source

    rng = np.random.default_rng(0)
    raw = tmp_path / "raw" / "lawQA"
    raw.mkdir(parents=True)
    (raw / "t_r_a_i_n.txt").write_text("\n".join(_lawqa_lines(range(0, 24), 2, rng)) + "\n", encoding="utf-8")
    (raw / "t_e_s_t_LONG.txt").write_text("\n".join(_lawqa_lines(range(100, 112), 5, rng)) + "\n", encoding="utf-8")
    config = load(preset="full")
    read = {**config["datasets"]["lawqa"]["read"], "dev_questions": 6}  # the fixture has 12 test questions
    ds = get_source("lawqa").read(tmp_path / "raw", read)
    processed = tmp_path / "processed"
    ds.save(processed)
    Vocab.build(training_texts(ds)).save(processed / "vocab.json")
    assert_loads_as_reference(processed)

    c = run_config(config, "lawqa", "mtas_lawqa", 1)
    assert (c["arch"], c["hparams"]["hidden"], c["train"]["category_weight"]) == ("mtas", 300, 0.1)
    c["embeddings"], c["train"]["epochs"] = None, 1
    data = RunData.load(processed, Vocab.load(processed / "vocab.json"), c["max_len_q"], c["max_len_a"])
    assert data.categories == ["1", "2", "3"]
    run = tmp_path / "run"
    train_mod.train_run(c, data, None, run, dev_evaluator(data, "dev", EvalConfig(["dev"])), progress=False)
    metrics = evaluate_run(run, processed)
    assert metrics["test"]["n_questions"] == 6 and 0 <= metrics["test"]["category_F1"] <= 1


def test_lawqas_word2vec_150_file_loads_through_the_pretrained_loader(tmp_path):
    """LawQA ships word2vec_150.txt: per line a word, 150 floats and a trailing space, no header."""
    from ansel.pretrained import load_pretrained

    rng = np.random.default_rng(0)
    vectors = {w: rng.normal(size=150).round(6) for w in ["离婚", "财产", "UNKNOWN"]}
    path = tmp_path / "word2vec_150.txt"
    path.write_text("".join(f"{w} {' '.join(map(str, v))} \n" for w, v in vectors.items()), encoding="utf-8")
    vocab = Vocab.build([["离婚", "财产", "继承"]])
    matrix, coverage, _ = load_pretrained(path, vocab, 150)
    assert np.allclose(matrix[vocab.index["离婚"]], vectors["离婚"]) and coverage == pytest.approx(2 / 3)


def _step_grads(c, processed, rows):
    """Gradients of one training loss on ``rows`` of the positives, the trainer's negatives drawn
    from the same seeded generator."""
    data = _data(c, processed)
    t = TrainConfig(**{k: v for k, v in c["train"].items() if k != "negatives"})
    model = train_mod._model_and_optimizer(c, t, data, None, "cpu")[0]
    feed = epoch_mod.Feed(c, t, data, model, "cpu")
    model.zero_grad()
    epoch_mod.batch_loss(model, feed.batch(rows, np.random.default_rng(0)), t)[0].backward()
    return feed, {k: p.grad.clone() if p.grad is not None else None for k, p in model.named_parameters()}


def test_alpha_zero_is_the_ranking_loss_alone_and_alpha_above_zero_reaches_the_shared_encoder(processed):
    from ansel.training.losses import pair_loss

    rows = np.arange(16)
    feed, joint0 = _step_grads(cfg(category_weight=0.0), processed, rows)
    # the ranking loss alone, computed by hand: the same step, the same drawn negatives
    model, data = feed.model, feed.data
    model.zero_grad()
    q = feed.q_ids.rows(feed.pos_q[rows])
    neg = feed.sampler.sample(feed.pos_q[rows], np.random.default_rng(0), model, data.q_ids, data.a_ids)
    pair_loss(model(q, feed.a_ids.rows(feed.pos_a[rows])), model(q, feed.a_ids.rows(neg)), feed.t).backward()
    alone = {k: p.grad for k, p in model.named_parameters()}
    assert all((joint0[k] is None and alone[k] is None) or torch.equal(joint0[k], alone[k]) for k in alone)

    _, joint = _step_grads(cfg(category_weight=0.5), processed, rows)
    encoder = [k for k in joint if k.startswith("encoder")]
    assert encoder and all(not torch.equal(joint[k], joint0[k]) for k in encoder)
    assert all(joint[k] is not None and joint[k].abs().sum() > 0 for k in joint if k.startswith("classifier"))


def test_the_full_presets_mtas_targets_run_on_lawqa_itself():
    from ansel import paper_targets as P

    config = load(preset="full")
    runs = [r for r in P.paper_runs(config) if r.variant.model.startswith("mtas_")]
    assert runs and {r.dataset for r in runs} == {"lawqa"}
    assert {"results/tables/mtas/table4.md", "results/tables/mtas/table7.md", "figures/mtas/figure_alpha.png"} <= set(
        P.paper_outputs(config)
    )
