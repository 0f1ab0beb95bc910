"""Score every candidate of a split, rank, and compute the metrics: the dev evaluator the trainer
selects with, and the evaluation of a trained run (the ``evaluate`` rule).

The trainer keeps the dev scores of the epoch it selected (``dev_scores.pt``, with a digest of
the scoring code that produced them), and its monitor splits' (``train.monitor_splits``) where they
were scored with its weights: at each epoch's end, or at a ``monitor_every`` evaluation on its last
step. Evaluating the run reuses them while the scoring code is unchanged, so a change to the
metrics re-ranks without re-scoring those splits, and a change to the scoring re-scores every
split, never retrains.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ansel.config import RUN_KEYS, check_run, require_dataset_folder
from ansel.data.batches import RunData, trim_padding
from ansel.data.manifest import MANIFEST, require_processed
from ansel.evaluation import lexical, scoring
from ansel.evaluation.config import EvalConfig
from ansel.evaluation.metrics import category_metrics, split_metrics, write_trec_run
from ansel.files import remove_temporaries, save_atomic, write_text_atomic
from ansel.jsonfile import read_json
from ansel.models.io import load_checkpoint, load_model, save_torch
from ansel.models.lexical import LexicalRanker
from ansel.models.registry import classifies_categories, needs_lexicon
from ansel.settings import ConfigError, parse
from ansel.training.config import LAST_RESULTS, TrainConfig
from ansel.training.precision import arithmetic

DEV_SCORES = "dev_scores.pt"


def eval_data(data: RunData, ev: EvalConfig) -> RunData:
    """The data as the run's evaluation sees it: each eval split cut to ``ev.sample_questions``
    questions (the trainer's dev scoring included) where the dataset's ``eval`` asks for a sample."""
    return (
        data if ev.sample_questions is None else data.sample_questions(ev.splits, ev.sample_questions, ev.sample_seed)
    )


def score_split(model, data: RunData, split: str, batch_size: int = 256) -> pd.DataFrame:
    cands, qi, ai = data.pairs(split)
    out = cands[["qid", "aid", "label"]].copy()
    if isinstance(model, LexicalRanker):  # from the tokens: words outside the vocabulary still match
        out["score"] = lexical.score_candidates(model.method, model.hparams, data.dataset, cands)
    else:
        out["score"] = scoring.score(model, data.q_ids, data.a_ids, qi, ai, batch_size)
    return out


def evaluate_split(
    model, data: RunData, split: str, ev: EvalConfig, batch_size: int = 256
) -> tuple[pd.DataFrame, dict[str, float]]:
    scored = score_split(model, data, split, batch_size)
    return scored, split_metrics(scored, ev.task, ev.no_positive) | categorise_split(model, data, split, batch_size)


def categorise_split(model, data: RunData, split: str, batch_size: int = 256) -> dict[str, float]:
    """The category metrics of a model that also classifies questions (``classify``), over the
    split's questions whose category is a training class; {} for any other model."""
    if not hasattr(model, "classify"):
        return {}
    rows = np.unique(data.pairs(split)[1])
    rows = rows[data.q_category[rows] >= 0]
    if not len(rows):
        raise ValueError(f"split {split!r} of {data.dataset.name!r} has no question in a training category")
    return category_metrics(data.q_category[rows], _classify(model, data.q_ids[rows], batch_size), len(data.categories))


def _classify(model, q_ids: np.ndarray, batch_size: int) -> np.ndarray:
    """The argmax of the model's category logits for each row of ``q_ids``, in batches."""
    device = next(model.parameters()).device
    with torch.inference_mode():
        return np.concatenate(
            [
                model.classify(trim_padding(torch.from_numpy(q_ids[i : i + batch_size])).to(device))
                .argmax(1)
                .cpu()
                .numpy()
                for i in range(0, len(q_ids), batch_size)
            ]
        )


def dev_evaluator(data: RunData, split: str, ev: EvalConfig):
    """The trainer's evaluator of a split (dev, or a monitored one): model -> (scores of the
    split's candidates, metrics)."""
    return functools.partial(evaluate_split, data=data, split=split, ev=ev)


@functools.cache
def scoring_digest() -> str:
    """Identifies the scoring code: stored dev scores are reused only while it is unchanged."""
    return hashlib.sha256(Path(scoring.__file__).read_bytes()).hexdigest()[:16]


def data_digest(processed_dir: Path, cfg: dict) -> str:
    """Identifies the data a run trains on: its processed dataset's manifest (each table's and the
    vocabulary's sha256) and, where its ids are those of corpus vectors, their vocabulary's bytes."""
    h = hashlib.sha256((processed_dir / MANIFEST).read_bytes())
    if cfg.get("vocab"):
        h.update(Path(cfg["vocab"]).read_bytes())
    return h.hexdigest()[:16]


def save_dev_scores(
    scored: pd.DataFrame | None,
    split: str,
    path: Path,
    data: str | None = None,
    monitors: dict[str, torch.Tensor] | None = None,
) -> None:
    """The selected epoch's dev scores (candidate order of the split; None when no epoch ran), the
    ``data_digest`` of what the run trained on, and ``monitors``: {split: scores} of other splits by
    the same weights."""
    scores = None if scored is None else torch.from_numpy(scored.score.to_numpy().copy())
    save_torch(
        {"split": split, "scoring": scoring_digest(), "scores": scores, "data": data, "monitors": monitors or {}}, path
    )


def _saved_dev_scores(run_dir: Path, processed_dir: Path, cfg: dict) -> dict | None:
    """The run's ``dev_scores.pt`` (None: none saved), refused where the run trained on other data
    than ``processed_dir`` holds now: by hand, another dataset's folder, or its own preprocessed again
    since (the pipeline retrains its runs), gives the weights other words and the saved scores other
    candidates."""
    path = run_dir / DEV_SCORES
    if not path.exists():
        return None
    # training writes it (an output of the train rule), so Snakemake retrains for a deleted one
    retrain = f"delete it and rerun the run's target (snakemake {run_dir / 'metrics.json'}): the run is trained again"
    saved = load_checkpoint(path, "cpu", retrain)
    if saved.get("data") not in (None, data_digest(processed_dir, cfg)):
        raise ConfigError(
            f"{run_dir}: trained on other data than {processed_dir} holds now: check --processed first (a run of "
            f"dataset {cfg['dataset']!r}: give that dataset's folder); if it is the run's own, the dataset was "
            f"preprocessed again since: retrain the run (delete {run_dir} and rerun its target)"
        )
    return saved


def _reusable_scores(saved: dict | None, data: RunData) -> dict[str, pd.DataFrame]:
    """{split: scores} from the saved dev (and monitor) scores when they were made by this scoring
    code, on these candidates."""
    if saved is None or saved["scores"] is None or saved["scoring"] != scoring_digest():
        return {}
    reusable = {}
    for split, scores in {saved["split"]: saved["scores"], **saved.get("monitors", {})}.items():
        cands = data.pairs(split)[0] if split in data.dataset.splits else None
        if cands is not None and len(cands) == len(scores):
            reusable[split] = cands[["qid", "aid", "label"]].assign(score=scores.numpy())
    return reusable


# (weights, run file, metrics) of the dev-selected checkpoint
SELECTED_RESULTS = ("model.pt", "run.trec", "metrics.json")


def _run_config(run_dir: Path) -> dict:
    """The config.json ``ansel train`` wrote as the run ended; one cut short or edited into something
    else is a ConfigError naming it (the run is retrained: its weights were trained under it)."""
    path = run_dir / "config.json"
    cfg = read_json(path)
    lacking = [k for k in RUN_KEYS if k not in cfg]
    if lacking:
        raise ConfigError(
            f"{path}: not a run's config (missing {', '.join(lacking)}); "
            f"retrain the run (delete {run_dir} and rerun its target)"
        )
    check_run(cfg, str(path))
    return cfg


def evaluate_run(run_dir: Path, processed_dir: Path, last: bool = False) -> dict:
    """metrics.json (every eval split, from the dev-selected model.pt) and run.trec for a trained run;
    with ``last``, the same of the last epoch's weights (``train.keep_last``): metrics_last.json and
    run_last.trec, the per-question file of a paper that reports its last iteration."""
    from ansel.data.vocab import Vocab, run_vocab_file
    from ansel.device import resolve_device

    if not (run_dir / "config.json").is_file():
        raise ConfigError(
            f"{run_dir / 'config.json'}: missing: no finished run there (`ansel train` writes it as the run "
            "ends; run a cut one's command again and it resumes)"
        )
    require_processed(processed_dir)
    cfg = _run_config(run_dir)
    require_dataset_folder(processed_dir, cfg["dataset"], str(run_dir), "evaluate")
    weights, trec, metrics_path = (run_dir / name for name in (LAST_RESULTS if last else SELECTED_RESULTS))
    if not weights.exists():
        raise ConfigError(
            f"{weights}: missing; a run keeps its last epoch's weights only with train.keep_last: true "
            f"(retrain {run_dir} with it)"
            if last
            else f"{weights}: missing: retrain the run (delete {run_dir} and rerun its target)"
        )
    ev = parse(EvalConfig, cfg["eval"], f"{run_dir / 'config.json'}: eval")
    vocab = Vocab.load(run_vocab_file(cfg, processed_dir))
    data = eval_data(RunData.load(processed_dir, vocab, cfg["max_len_q"], cfg["max_len_a"]), ev)
    saved = _saved_dev_scores(run_dir, processed_dir, cfg)
    scored = {} if last else _reusable_scores(saved, data)  # the selected epoch's
    missing = [split for split in ev.splits if split not in scored]
    model = None
    if missing or classifies_categories(cfg["arch"]):
        # on the training's device, where the reused dev scores were computed
        t = parse(TrainConfig, cfg["train"], f"{run_dir / 'config.json'}: train")
        device = resolve_device(t.device)
        model = load_model(
            cfg, len(vocab), weights, device, data.lexicon if needs_lexicon(cfg["arch"]) else None, len(data.categories)
        )
        with arithmetic(t.precision, device):  # as the training's dev scoring ran
            scored |= {split: score_split(model, data, split) for split in missing}
    for path in (trec, metrics_path):  # what a killed evaluation of this run left (evaluate_last's are its own)
        remove_temporaries(path)
    return _write_scored(cfg, ev, data, scored, model, trec, metrics_path)


def _write_scored(
    cfg: dict, ev: EvalConfig, data: RunData, scored: dict[str, pd.DataFrame], model, trec: Path, metrics_path: Path
) -> dict:
    """Metrics of every eval split (category metrics where ``model`` is given) into ``metrics_path``,
    every scored candidate into the run file ``trec`` (qids ``<split>:<qid>``)."""
    metrics, scored_all = {}, []
    for split in ev.splits:
        metrics[split] = split_metrics(scored[split], ev.task, ev.no_positive)
        if model is not None:
            metrics[split] |= categorise_split(model, data, split)
        scored_all.append(scored[split].assign(qid=split + ":" + scored[split].qid.astype(str)))
    ranked = pd.concat(scored_all)
    save_atomic(trec, lambda tmp: write_trec_run(ranked, tmp, f"{cfg['model']}-seed{cfg['seed']}"))
    write_text_atomic(metrics_path, json.dumps(metrics, indent=2, sort_keys=True) + "\n")
    return metrics
