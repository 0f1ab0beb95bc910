"""The peer's side of the fidelity harness (issue 51, E4), run by the peer's own Python
(benchmarks/peer/.venv): MatchZoo-py 1.1.1 trains one of its models on ansel's data and vectors
(``fidelity_ansel.py export``) at one of ansel's Table 3 rows (the row's committed ``config.json``)
and writes TREC run files of dev and test that ansel's evaluator scores (``fidelity_ansel.py score``).

Inputs: the export's token ids (ansel's vocabulary, truncated to the row's text1/text2_maxlen, 0 =
padding) as DataPacks, post-padded as ansel and the fork pad (``BasicPadding(pad_word_mode='post')``;
MatchZoo-py's default is 'pre'); the row's word vectors, unit rows where the row sets
``normalize_embeddings`` (ansel's models normalise at construction; MatchZoo-py's aNMM normalises in
its match itself), frozen where the row freezes them (aNMM: always, as ansel's).
Model: MatchZoo-py's class at ``matchzoo_side.SETTINGS[model]['fork']`` (the fork's settings as far as
MatchZoo-py's model exposes them; the comments there and in reports/gap-wikiqa/e4.md name what
differs); the row's optimizer and learning rate (Adadelta with ansel's and Keras's rho 0.95, eps 1e-7).
Training: MatchZoo-py's pair-mode ``Dataset`` (each training positive once with ``num_neg`` = 1
negative of its question, resampled every pass, shuffled; the resampling vectorised: ``pair_relation``) and ``RankHingeLoss`` at the row's margin;
``batch_size`` groups a step, ``epochs`` x ``max_batches`` steps (the row's 400 iterations of 10
batches of 100 triples), passes over the training pairs chained across iterations; numpy's and
torch's generators seeded with ``--seed``.
Scoring: every ``--score-every`` iterations and at the last, dev and test in point mode (batches of
256, ``model.eval()``) into ``run-<iteration>.trec``; the iteration's mean loss into train_log.csv.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path

import numpy as np
from matchzoo_side import MZ_MODELS, SETTINGS, built_model

ADADELTA = {"rho": 0.95, "eps": 1e-7}  # ansel's (ansel.training.trainer.ADADELTA), Keras's defaults


def data_pack(data, split: str, lengths: tuple[int, int]):
    """The split's candidates as a DataPack (ids: ansel's qid / aid), texts cut to ``lengths``; checked
    to hold the export's questions with their candidate counts."""
    import matchzoo as mz
    import pandas as pd

    qid, aid, qi, ai = (data[f"{split}_{k}"] for k in ("qid", "aid", "qi", "ai"))
    relation = pd.DataFrame({"id_left": qid, "id_right": aid, "label": data[f"{split}_label"].astype(np.float32)})

    def side(ids, rows, names, length, key):
        uniq, first = np.unique(names, return_index=True)
        texts = [[int(t) for t in ids[rows[i]][:length] if t != 0] for i in first]
        return pd.DataFrame(
            {f"text_{key}": texts, f"length_{key}": [len(t) for t in texts]}, index=pd.Index(uniq, name=f"id_{key}")
        )

    pack = mz.DataPack(
        relation, side(data["q_ids"], qi, qid, lengths[0], "left"), side(data["a_ids"], ai, aid, lengths[1], "right")
    )
    counts = pack.relation.groupby("id_left").size()
    expected = pd.Series(qid).value_counts()
    if len(pack) != len(qid) or not counts.sort_index().equals(expected.sort_index().rename_axis("id_left")):
        raise AssertionError(f"{split}: the DataPack's questions or candidate counts differ from the export's")
    return pack


def pair_relation(cls, relation, num_dup: int = 1, num_neg: int = 1):
    """MatchZoo-py 1.1.1's ``Dataset._reorganize_pair_wise`` for 0/1 labels, vectorised: per question
    (in id order) with a positive and a negative, each positive ``num_dup`` times, each followed by
    ``num_neg`` of the question's negatives drawn uniformly with replacement from numpy's global
    generator. Its own builds a DataFrame per positive: 3.9 s a pass here, 24 min of a 400-iteration run."""
    labels = relation.label.to_numpy()
    if not np.isin(labels, (0, 1)).all():
        raise ValueError("pair_relation: labels other than 0 and 1 (MatchZoo-py's own handles graded labels)")
    index = []
    for rows in relation.groupby("id_left", sort=True).indices.values():
        pos, neg = rows[labels[rows] == 1], rows[labels[rows] == 0]
        if len(pos) and len(neg):
            for p in np.tile(pos, num_dup):
                index += [p, *neg[np.random.randint(len(neg), size=num_neg)]]
    return relation.iloc[index].reset_index(drop=True)


def score_split(model, pack, padding, split: str) -> list[str]:
    """TREC lines of every candidate of ``pack`` (qid ``<split>:<qid>``), ranked by score per question."""
    import matchzoo as mz
    import torch

    loader = mz.dataloader.DataLoader(
        mz.dataloader.Dataset(pack, mode="point", batch_size=256, shuffle=False), stage="dev", callback=padding
    )
    model.eval()
    with torch.no_grad():
        scores = np.concatenate([model(inputs).squeeze(-1).numpy() for inputs, _ in loader])
    model.train()
    rel = pack.relation.assign(score=scores.astype(np.float64))
    lines = []
    for q, group in rel.groupby("id_left", sort=True):
        for rank, r in enumerate(group.sort_values("score", ascending=False, kind="mergesort").itertuples(), 1):
            lines.append(f"{split}:{q} Q0 {r.id_right} {rank} {r.score!r} matchzoo-py\n")
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=sorted(MZ_MODELS), required=True)
    p.add_argument("--data", type=Path, required=True, help="fidelity_ansel.py export's .npz")
    p.add_argument("--run-config", type=Path, required=True, help="the ansel row's config.json")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--score-every", type=int, default=10, help="iterations")
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args()

    import matchzoo as mz
    import torch

    torch.set_num_threads(1)
    np.random.seed(a.seed)  # MatchZoo-py's negative sampling (pandas) and shuffling
    torch.manual_seed(a.seed)
    row = json.loads(a.run_config.read_text())
    hp, t = row["hparams"], row["train"]
    params, optimizer_name, lr, lengths, dim = SETTINGS[a.model]["fork"]
    ours = (
        t["optimizer"],
        t["lr"],
        (hp["text1_maxlen"], hp.get("text2_maxlen", row["max_len_a"])),
        hp["embedding_dim"],
    )
    if ours != (optimizer_name, lr, lengths, dim):
        raise ValueError(
            f"{a.run_config}: optimizer, lr, text lengths, dim {ours}; matchzoo_side.SETTINGS"
            f"[{a.model!r}]['fork'] has {(optimizer_name, lr, lengths, dim)}"
        )
    if t["loss"] != "hinge" or t["negatives"] != {"n": 1, "strategy": "pool"}:
        raise ValueError(
            f"{a.run_config}: train.loss / negatives {t['loss']!r} / {t['negatives']}: "
            "the harness trains MatchZoo-py's pair mode (one negative of the question's own)"
        )
    data = np.load(a.data)
    vectors = data["vectors"].astype(np.float32)
    if vectors.shape[1] != dim:
        raise ValueError(f"{a.data}: {vectors.shape[1]}-d vectors, the row reads {dim}-d")
    if hp.get("normalize_embeddings"):
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    vectors[0] = 0.0  # padding, as ansel's table has it

    mz.dataloader.Dataset._reorganize_pair_wise = classmethod(pair_relation)
    packs = {s: data_pack(data, s, lengths) for s in ("train", "dev", "test")}
    model_class = getattr(mz.models, MZ_MODELS[a.model])
    padding = model_class.get_default_padding_callback(
        fixed_length_left=lengths[0], fixed_length_right=lengths[1], pad_word_mode="post"
    )
    trainset = mz.dataloader.Dataset(
        packs["train"], mode="pair", num_dup=1, num_neg=1, batch_size=t["batch_size"], resample=True, shuffle=True
    )
    trainloader = mz.dataloader.DataLoader(trainset, stage="train", callback=padding)

    task = mz.tasks.Ranking(losses=mz.losses.RankHingeLoss(num_neg=1, margin=t["margin"]))
    model = built_model(
        model_class, task, vectors, bool(hp.get("freeze_embeddings", False)) or a.model == "anmm", params
    )
    trainable = [q for q in model.parameters() if q.requires_grad]
    optimizer = (
        torch.optim.Adadelta(trainable, lr=lr, **ADADELTA)
        if optimizer_name == "adadelta"
        else torch.optim.Adam(trainable, lr=lr)
    )
    loss_fn = mz.losses.RankHingeLoss(num_neg=1, margin=t["margin"])

    a.out.mkdir(parents=True, exist_ok=True)
    config = {
        "model": a.model,
        "matchzoo_class": MZ_MODELS[a.model],
        "matchzoo_version": mz.__version__,
        "torch_version": torch.__version__,
        "seed": a.seed,
        "ansel_row": str(a.run_config),
        "data": str(a.data),
        "params": {
            k: v for k, v in model.params.to_frame().set_index("Name").Value.items() if k not in ("embedding", "task")
        },
        "optimizer": optimizer_name,
        "lr": lr,
        "optimizer_kwargs": ADADELTA if optimizer_name == "adadelta" else {},
        "margin": t["margin"],
        "batch_size": t["batch_size"],
        "iterations": t["epochs"],
        "batches_per_iteration": t["max_batches"],
        "text_lengths": lengths,
        "padding": "post",
        "normalized_vectors": bool(hp.get("normalize_embeddings")),
        "trainable": sum(q.numel() for q in trainable),
        "batches_per_pass": len(trainset),
    }
    (a.out / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True, default=str) + "\n")

    log = open(a.out / "train_log.csv", "w", newline="")
    writer = csv.writer(log)
    writer.writerow(["iteration", "loss", "seconds"])
    batches, started = iter(()), time.perf_counter()
    model.train()
    for iteration in range(1, t["epochs"] + 1):
        losses = []
        while len(losses) < t["max_batches"]:
            try:
                inputs, target = next(batches)
            except StopIteration:  # the next pass: resampled negatives, reshuffled
                batches = iter(trainloader)
                continue
            loss = loss_fn(model(inputs), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        writer.writerow([iteration, float(np.mean(losses)), round(time.perf_counter() - started, 1)])
        log.flush()
        if iteration % a.score_every == 0 or iteration == t["epochs"]:
            lines = score_split(model, packs["dev"], padding, "dev") + score_split(
                model, packs["test"], padding, "test"
            )
            (a.out / f"run-{iteration}.trec").write_text("".join(lines))
    log.close()


if __name__ == "__main__":
    main()
