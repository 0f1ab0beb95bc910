"""The peer's side of `make bench-peer`, run by the peer's own Python (benchmarks/peer/.venv): one
MatchZoo-py 1.1.1 model on WikiQA, as its own code trains and scores it, timed; one JSON line out.

Data: MatchZoo-py's WikiQA loader (the mirror's files, placed by setup.sh), its model's default
preprocessor (texts truncated to the lengths below), random U(-0.2, 0.2) 300-d (or 50-d) vectors.
Training: its ``Dataset`` in pair mode (``batch_size`` groups of a positive and ``num_neg`` = 1
negative: ``batch_size`` triples a step), its ``DataLoader`` with the model's padding callback, and
the step of its ``Trainer._run_epoch``: forward, ``RankHingeLoss``, zero_grad, backward, optimizer
step. Timed: ``--steps`` steps after ``WARMUP`` (data loading inside the timed loop, as in training).
Scoring: every filtered test candidate in point mode, batches of 256, as ``Trainer.predict`` does,
timed after one warm-up batch (median of ``--score-repeats``). Peak RSS: ``ru_maxrss`` at the end.

Settings (``--settings``): ``fork``, the aMV-LSTM authors' WikiQA configs (upstream-notes §2.4) as far
as MatchZoo-py's models express them; ``peer``, MatchZoo-py's model defaults. ``--train-embeddings``
updates the embedding table (MatchZoo-py's default), else it is frozen (the fork's configs).
"""

from __future__ import annotations

import argparse
import json
import resource
import time

WARMUP = 3
SETTINGS = {  # model -> settings -> (MatchZoo-py params, optimizer, lr, text lengths, embedding dim)
    "mv_lstm": {
        "fork": (
            {
                "hidden_size": 50,
                "top_k": 100,
                "dropout_rate": 0.5,
                "mlp_num_layers": 1,
                "mlp_num_units": 10,
                "mlp_num_fan_out": 10,
            },
            "adadelta",
            1.0,
            (10, 40),
            300,
        ),
        "peer": ({}, "adam", 1e-3, (10, 40), 300),
    },
    "arc_i": {
        "fork": (
            {
                "left_length": 20,
                "right_length": 40,
                "left_filters": [128],
                "left_kernel_sizes": [3],
                "left_pool_sizes": [4],
                "right_filters": [128],
                "right_kernel_sizes": [3],
                "right_pool_sizes": [4],
                "dropout_rate": 0.95,
            },  # the fork's convolution is linear: MatchZoo-py has no such choice (relu)
            "adam",
            1e-3,
            (20, 40),
            50,
        ),
        "peer": ({"left_length": 10, "right_length": 40}, "adam", 1e-3, (10, 40), 300),
    },
    # fork only: the fidelity harness (fidelity.py) trains these at the fork's settings
    "match_pyramid": {  # MatchZoo-py pools adaptively (average), the fork dynamically (max)
        "fork": (
            {"kernel_count": [64], "kernel_size": [[3, 3]], "dpool_size": [3, 10], "dropout_rate": 0.95},
            "adadelta",
            1.0,
            (10, 40),
            300,
        ),
    },
    "anmm": {  # MatchZoo-py's query gate reads the word vector (the paper's), the fork's reads its IDF
        "fork": (
            {"num_bins": 20, "hidden_sizes": [20], "activation": "tanh", "dropout_rate": 0.0},
            "adadelta",
            1.0,
            (10, 40),
            300,
        ),
    },
}
MZ_MODELS = {"mv_lstm": "MVLSTM", "arc_i": "ArcI", "match_pyramid": "MatchPyramid", "anmm": "aNMM"}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def built_model(model_class, task, embedding, freeze: bool, params: dict):
    """MatchZoo-py's ``model_class`` with ``params`` over its defaults, the embedding and task set, built."""
    model = model_class()
    model.params["task"] = task
    model.params["embedding"] = embedding
    model.params["embedding_freeze"] = freeze
    for key, value in params.items():
        model.params[key] = value
    model.guess_and_fill_missing_params(verbose=0)
    model.build()
    return model


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=sorted(SETTINGS), required=True)
    p.add_argument("--settings", choices=["fork", "peer"], required=True)
    p.add_argument("--train-embeddings", action="store_true")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--batch", type=int, default=20, help="triples a step")
    p.add_argument("--score-repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()

    import matchzoo as mz
    import numpy as np
    import torch

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    params, optimizer_name, lr, (left, right), dim = SETTINGS[a.model][a.settings]
    model_class = getattr(mz.models, MZ_MODELS[a.model])
    task = mz.tasks.Ranking(losses=mz.losses.RankHingeLoss())
    train_raw = mz.datasets.wiki_qa.load_data("train", task=task)
    test_raw = mz.datasets.wiki_qa.load_data("test", task=task, filtered=True)
    preprocessor = model_class.get_default_preprocessor(truncated_length_left=left, truncated_length_right=right)
    train_pack = preprocessor.fit_transform(train_raw, verbose=0)
    test_pack = preprocessor.transform(test_raw, verbose=0)
    vocab_size = preprocessor.context["vocab_size"]
    rng = np.random.default_rng(0)
    embedding = rng.random((vocab_size, dim), dtype=np.float32) * 0.4 - 0.2

    padding = model_class.get_default_padding_callback(fixed_length_left=left, fixed_length_right=right)
    trainset = mz.dataloader.Dataset(
        train_pack, mode="pair", num_dup=1, num_neg=1, batch_size=a.batch, resample=True, shuffle=True
    )
    trainloader = mz.dataloader.DataLoader(trainset, stage="train", callback=padding)
    testset = mz.dataloader.Dataset(test_pack, mode="point", batch_size=256, shuffle=False)
    testloader = mz.dataloader.DataLoader(testset, stage="dev", callback=padding)

    model = built_model(model_class, task, embedding, not a.train_embeddings, params)
    trainable = [q for q in model.parameters() if q.requires_grad]
    optimizer = (
        torch.optim.Adadelta(trainable, lr=lr) if optimizer_name == "adadelta" else torch.optim.Adam(trainable, lr=lr)
    )
    loss_fn = mz.losses.RankHingeLoss()

    model.train()
    steps, started, triples, rows = 0, None, 0, None
    while steps < WARMUP + a.steps:
        for inputs, target in trainloader:
            if steps == WARMUP:
                started, triples = time.perf_counter(), 0
            outputs = model(inputs)
            loss = loss_fn(outputs, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            rows = len(target)
            triples += rows // 2  # a positive and its negative per triple
            steps += 1
            if steps == WARMUP + a.steps:
                break
    train_s = time.perf_counter() - started

    def predict() -> int:
        n = 0
        with torch.no_grad():
            model.eval()
            for inputs, _ in testloader:
                n += len(model(inputs))
        return n

    next(iter(testloader))  # the loader's first batch: warm-up
    times, candidates = [], 0
    for _ in range(a.score_repeats):
        t0 = time.perf_counter()
        candidates = predict()
        times.append(time.perf_counter() - t0)
    score_s = sorted(times)[len(times) // 2]
    print(
        json.dumps(
            {
                "side": "matchzoo-py",
                "version": mz.__version__,
                "model": a.model,
                "settings": a.settings,
                "train_embeddings": a.train_embeddings,
                "vocab_size": int(vocab_size),
                "rows_per_step": rows,
                "trainable": sum(q.numel() for q in trainable),
                "steps": a.steps,
                "train_s": train_s,
                "triples_per_s": triples / train_s,
                "candidates": candidates,
                "candidates_per_s": candidates / score_s,
                "peak_rss_mb": peak_rss_mb(),
                "threads": torch.get_num_threads(),
            }
        )
    )


if __name__ == "__main__":
    main()
