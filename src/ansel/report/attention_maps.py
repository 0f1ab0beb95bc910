"""Attention heat maps of attentive pooling (dos Santos et al., 2016, Figs 5-6).

Each word of the question (answer) is shaded by the attention weight in σq (σa) of the
context window centred on it. AP-CNN's wide convolution yields one weight per k-word window
(window j covers tokens j-k+1 .. j); ``window_to_tokens`` gives each token the weight of the
window centred on it. For AP-biLSTM (k = 1) the weights are already per token.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")  # cluster nodes and CI have no display
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ansel.report.by_length import top_ranked
from ansel.report.plotting import save


def window_to_tokens(weights: Sequence[float], n_tokens: int, kernel: int) -> np.ndarray:
    """Per-token weights: token t takes window t + k//2 (centred for odd k, one right of centre for even k)."""
    weights = np.asarray(weights, dtype=float)
    needed = n_tokens + kernel - 1
    if weights.size < needed:
        raise ValueError(f"{weights.size} window weights cannot cover {n_tokens} tokens with kernel {kernel}")
    return weights[kernel // 2 : kernel // 2 + n_tokens]


def long_correct_examples(
    run: pd.DataFrame, qrels: pd.DataFrame, answer_lengths: Mapping[str, int], min_length: int = 100, n: int = 2
) -> pd.DataFrame:
    """Questions whose first-ranked answer is correct, longest answers first (the paper shows
    two with answers over 100 words); returns (qid, aid, answer_length), at most ``n`` rows."""
    top = top_ranked(run)
    correct = set(map(tuple, qrels.loc[qrels["label"] > 0, ["qid", "aid"]].itertuples(index=False)))
    top = top[[(q, a) in correct for q, a in zip(top["qid"], top["aid"])]]
    top = top.assign(answer_length=top["aid"].map(answer_lengths))
    top = top[top["answer_length"] >= min_length]
    return top.sort_values(["answer_length", "qid"], ascending=[False, True]).head(n)[["qid", "aid", "answer_length"]]


def plot_attention_map(
    question_tokens: Sequence[str],
    answer_tokens: Sequence[str],
    sigma_q: Sequence[float],
    sigma_a: Sequence[float],
    prefix: Path,
    title: str | None = None,
    words_per_line: int = 12,
) -> None:
    """Question and answer as word grids shaded by attention; writes prefix.png and prefix.pdf.

    Each text is shaded on its own scale (its largest weight darkest), as σq and σa are
    separate distributions over texts of very different lengths.
    """
    texts = [
        ("Q", list(question_tokens), np.asarray(sigma_q, dtype=float)),
        ("A", list(answer_tokens), np.asarray(sigma_a, dtype=float)),
    ]
    for name, tokens, weights in texts:
        if len(tokens) != weights.size:
            raise ValueError(f"{name}: {len(tokens)} tokens but {weights.size} attention weights")
    lines = [int(np.ceil(max(len(tokens), 1) / words_per_line)) for _, tokens, _ in texts]
    fig, axes = plt.subplots(
        2, 1, figsize=(words_per_line * 0.95, 0.45 * sum(lines) + 1.2), gridspec_kw={"height_ratios": lines}
    )
    for ax, (name, tokens, weights), rows in zip(axes, texts, lines):
        grid = np.full(rows * words_per_line, np.nan)
        grid[: weights.size] = weights / weights.max() if weights.size and weights.max() > 0 else 0.0
        ax.imshow(grid.reshape(rows, words_per_line), cmap="Reds", vmin=0, vmax=1.4, aspect="auto")
        for i, token in enumerate(tokens):
            ax.text(i % words_per_line, i // words_per_line, token, ha="center", va="center", fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_ylabel(name, rotation=0, labelpad=12, fontsize=11)
    if title:
        axes[0].set_title(title, fontsize=10)
    save(fig, prefix)
