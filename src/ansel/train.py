"""Training one run: pairwise (hinge) or pointwise loss, dev-based checkpoint selection, resume.

Reproducibility: every epoch reseeds torch and numpy from (seed, epoch), so an interrupted
run resumed from its last state produces exactly the numbers of an uninterrupted one.
``state.pt`` (saved atomically after each epoch, weights-only loadable) holds the model,
optimizer, best weights and the log; it is removed once the run's outputs are written.
"""
from __future__ import annotations

import csv
import json
import math
import os
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from ansel.config import fingerprint
from ansel.data.vocab import Vocab
from ansel.evaluate import evaluate_split
from ansel.models import build_model
from ansel.negatives import NegativeSampler
from ansel.rundata import RunData
from ansel.scoring import trim_padding

OPTIMIZERS = {
    "sgd": lambda p, t: torch.optim.SGD(p, lr=t["lr"], momentum=t.get("momentum", 0.0),
                                        weight_decay=t.get("weight_decay", 0.0)),
    "adam": lambda p, t: torch.optim.Adam(p, lr=t["lr"], weight_decay=t.get("weight_decay", 0.0)),
    "rmsprop": lambda p, t: torch.optim.RMSprop(p, lr=t["lr"], momentum=t.get("momentum", 0.0),
                                                weight_decay=t.get("weight_decay", 0.0)),
    "adagrad": lambda p, t: torch.optim.Adagrad(p, lr=t["lr"], weight_decay=t.get("weight_decay", 0.0)),
}


def learning_rate(t: dict, epoch: int) -> float:
    """``constant``, or ``inverse_epoch``: lr / epoch (the per-epoch decay of dos Santos et al.)."""
    schedule = t.get("lr_schedule", "constant")
    if schedule == "constant":
        return t["lr"]
    if schedule == "inverse_epoch":
        return t["lr"] / epoch
    raise ValueError(f"train.lr_schedule: unknown {schedule!r} (constant, inverse_epoch)")


def pair_loss(s_pos: torch.Tensor, s_neg: torch.Tensor, t: dict) -> torch.Tensor:
    if t["loss"] == "hinge":
        return F.relu(t["margin"] - s_pos + s_neg).mean()
    if t["loss"] == "pointwise":  # scores are logits of "is a correct answer"
        logits = torch.cat([s_pos, s_neg])
        return F.binary_cross_entropy_with_logits(logits, torch.cat([torch.ones_like(s_pos), torch.zeros_like(s_neg)]))
    raise ValueError(f"train.loss: unknown {t['loss']!r} (hinge, pointwise)")


def resolve_device(name: str) -> torch.device:
    """``train.device``: ``auto`` is CUDA when available, else the CPU."""
    return torch.device("cuda" if name == "auto" and torch.cuda.is_available() else ("cpu" if name == "auto" else name))


def _save_atomic(obj, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def _batches(ids: np.ndarray, rows: np.ndarray, device) -> torch.Tensor:
    return trim_padding(torch.from_numpy(ids[rows])).to(device)


def train_run(cfg: dict, processed_dir: Path, vocab_path: Path, embeddings_path: Path | None,
              run_dir: Path, progress: bool = True) -> dict:
    """Train, keep the dev-best weights, write model.pt, log.csv and config.json into run_dir.

    Returns the best dev value, the number of epochs, the loaded ``data`` and ``scored``: the
    dev-best epoch's dev scores when that epoch ran in this process (not before a resume), which
    ``evaluate_run`` reuses instead of scoring the same weights on dev again.
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    t, seed = cfg["train"], cfg["seed"]
    device = resolve_device(t.get("device", "auto"))
    vocab = Vocab.load(vocab_path)
    data = RunData.load(processed_dir, vocab, cfg["max_len_q"], cfg["max_len_a"])
    emb = np.load(embeddings_path) if embeddings_path else None
    torch.manual_seed(seed)
    model = build_model(cfg["arch"], cfg["hparams"], len(vocab), emb, f"models.{cfg['model']}").to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = OPTIMIZERS[t["optimizer"]](params, t) if params else None

    train_cands, qi, ai = data.pairs("train")
    labels = train_cands.label.to_numpy()
    pos_q, pos_a = qi[labels == 1], ai[labels == 1]
    neg = t["negatives"]
    sampler = NegativeSampler(qi, ai, labels, neg["strategy"], neg.get("n", 1))
    dev_split, select = t.get("dev_split", "dev"), t["select_metric"]
    no_positive = cfg["eval"].get("no_positive", "drop")

    state_path, key = run_dir / "state.pt", fingerprint(cfg)
    start, best, best_state, best_scored, log = 1, -math.inf, None, None, []
    if state_path.exists():
        st = torch.load(state_path, map_location=device, weights_only=True)
        if st["fingerprint"] != key:
            raise RuntimeError(f"{state_path}: saved by a run with a different config; delete it to start over")
        model.load_state_dict(st["model"])
        if optimizer is not None:
            optimizer.load_state_dict(st["optimizer"])
        start, best, best_state, log = st["epoch"] + 1, st["best"], st["best_model"], st["log"]
        print(f"resuming from epoch {st['epoch']} of {t['epochs']} ({state_path})", flush=True)
    live = _live(run_dir, log)

    epochs = t["epochs"] if params else 0  # nothing to train (e.g. the random baseline)
    for epoch in range(start, epochs + 1):
        rng = np.random.default_rng([seed, epoch])
        torch.manual_seed(seed * 100_003 + epoch)
        lr = learning_rate(t, epoch)
        for group in optimizer.param_groups:
            group["lr"] = lr
        order = rng.permutation(len(pos_q))
        if t.get("max_batches"):  # a preset's shorter epoch: a fresh random subset each epoch
            order = order[:t["batch_size"] * t["max_batches"]]
        model.train()
        total, n_batches, started = 0.0, 0, time.perf_counter()
        bar = tqdm(range(0, len(order), t["batch_size"]), desc=f"{cfg['model']} seed{seed} epoch {epoch}",
                   disable=not progress, leave=False, mininterval=2)
        for i in bar:
            rows = order[i:i + t["batch_size"]]
            neg_a = sampler.sample(pos_q[rows], rng, model, data.q_ids, data.a_ids)
            q = _batches(data.q_ids, pos_q[rows], device)
            loss = pair_loss(model(q, _batches(data.a_ids, pos_a[rows], device)),
                             model(q, _batches(data.a_ids, neg_a, device)), t)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if t.get("clip_norm"):
                torch.nn.utils.clip_grad_norm_(params, t["clip_norm"])
            optimizer.step()
            total += loss.detach().item()
            n_batches += 1
        seconds = time.perf_counter() - started
        scored, dev = evaluate_split(model, data, dev_split, no_positive)
        row = {"epoch": epoch, "lr": lr, "loss": total / max(1, n_batches),
               "seconds": round(seconds, 3), "seconds_per_batch": round(seconds / max(1, n_batches), 5),
               **{f"dev_{m}": v for m, v in dev.items() if not m.startswith("n_")}}
        log.append(row)
        if dev[select] > best:
            best = dev[select]
            best_state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
            best_scored = scored
        _save_atomic({"fingerprint": key, "epoch": epoch, "model": model.state_dict(),
                      "optimizer": optimizer.state_dict(), "best": best, "best_model": best_state,
                      "log": log}, state_path)
        _live_log(live, row)
        print(f"epoch {epoch}: loss {row['loss']:.4f} dev {select} {dev[select]:.4f} ({seconds:.1f}s)", flush=True)

    _save_atomic(best_state if best_state is not None else model.state_dict(), run_dir / "model.pt")
    _write_log(log, run_dir / "log.csv")
    (run_dir / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    live.end()
    state_path.unlink(missing_ok=True)
    return {"best_dev": best, "epochs": len(log), "data": data,
            "scored": {dev_split: best_scored} if best_scored is not None else {}}


def load_model(cfg: dict, vocab_size: int, weights: Path, device="cpu"):
    model = build_model(cfg["arch"], cfg["hparams"], vocab_size, None, f"models.{cfg['model']}")
    model.load_state_dict(torch.load(weights, map_location=device, weights_only=True))
    return model.to(device).eval()


def _write_log(rows: list[dict], path: Path) -> None:
    fields = list(rows[0]) if rows else ["epoch"]
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fields)
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)


def _live(run_dir: Path, log: list[dict]):
    """A dvclive logger; on resume its files are rebuilt from the saved log, so no step is lost or doubled."""
    from dvclive import Live

    live = Live(str(run_dir / "dvclive"), resume=False, save_dvc_exp=False, dvcyaml=None)
    for row in log:
        _live_log(live, row)
    return live


def _live_log(live, row: dict) -> None:
    live.step = row["epoch"]
    for k, v in row.items():
        if k != "epoch":
            live.log_metric(k.replace("@", "_at_"), v, plot=True)
    live.make_summary()
