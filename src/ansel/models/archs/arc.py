"""ARC-I and ARC-II (Hu et al. 2014) as MatchZoo 1.x builds them (models/arci.py, arcii.py), the
baselines of the aMV-LSTM paper (SAC 2019); the defaults are its WikiQA configs.

ARC-I: each text's word vectors through the text's own Conv1D ('same' padding, no activation),
max-pooled in windows of q_pool_size / d_pool_size, both flattened and concatenated, then
dropout and one dense layer. Nothing couples the texts before that layer, so the model is
siamese. ARC-II: the same Conv1D per text, every pair of positions added ("plus" match) into a
[text1_maxlen, text2_maxlen] grid, 2-D blocks (Conv2D 'same' + ReLU, then max-pooling), dropout
and the dense layer. Keras pools ('valid', stride = window) drop a remainder shorter than the
window, and every layer sees the post-padding of the fixed-length inputs: no masking, as upstream.

The torch modules are in ``ansel.models.arc``, with what all MatchZoo-family models here
share (MatchPyramid too): ``TextSides`` and ``output_layers``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ansel.models.hparams import Check, TextMatchConfig, fraction, hparam, positive
from ansel.models.registry import register


def at_most(key: str) -> Check:
    """A pooling window that fits in the text it slides over (``key``: its length)."""

    def check(value, hparams) -> str | None:
        return None if value <= getattr(hparams, key) else f"is larger than {key} {getattr(hparams, key)}"

    return check


def is_pair(value) -> bool:
    """A (rows, columns) size: two positive ints."""
    return len(value) == 2 and min(value) > 0


def positive_pair(value, hparams) -> str | None:
    return None if is_pair(value) else "is not two positive sizes [rows, columns]"


def pooled_grid(rows: int, cols: int, pools) -> tuple[int, int]:
    """The grid left after each (rows, columns) max-pooling of a [rows, cols] grid: Keras's
    'valid' pooling with stride = window drops the remainder."""
    for pool_rows, pool_cols in pools:
        rows, cols = rows // pool_rows, cols // pool_cols
    return rows, cols


def _positive_each(value, hparams) -> str | None:
    return None if len(value) > 0 and min(value) > 0 else "is not a non-empty list of positive counts"


def _positive_pairs(value, hparams) -> str | None:
    return None if all(is_pair(p) for p in value) else "is not a list of positive [rows, columns] sizes"


def _one_per_conv2d_layer(value, hparams) -> str | None:
    n = len(hparams.kernel_counts_2d)
    return None if len(value) == n else f"has {len(value)} entries for {n} Conv2D layers (kernel_counts_2d)"


def _leaves_a_grid(value, hparams) -> str | None:
    rows, cols = hparams.text1_maxlen, hparams.text2_maxlen
    return None if min(pooled_grid(rows, cols, value)) > 0 else f"leaves no cell of the {rows} x {cols} grid"


@dataclass
class ARCIConfig(TextMatchConfig):
    text1_maxlen: int = hparam(20, positive)  # ARC-I's WikiQA config reads 20 question words
    embedding_dim: int = hparam(50, positive)  # glove.6B.50d, normalised, frozen
    freeze_embeddings: bool = True
    dropout: float = hparam(0.95, fraction)  # Keras rate: the fraction dropped
    kernel_count: int = hparam(128, positive)
    kernel_size: int = hparam(3, positive)
    q_pool_size: int = hparam(4, positive, at_most("text1_maxlen"))
    d_pool_size: int = hparam(4, positive, at_most("text2_maxlen"))


@dataclass
class ARCIIConfig(TextMatchConfig):
    embedding_dim: int = hparam(50, positive)  # glove.6B.50d, frozen
    freeze_embeddings: bool = True
    dropout: float = hparam(0.9, fraction)
    kernel_count_1d: int = hparam(20, positive)
    kernel_size_1d: int = hparam(3, positive)
    # one entry per Conv2D + max-pooling block (MatchZoo's num_conv2d_layers is their length)
    kernel_counts_2d: tuple[int, ...] = hparam((20,), _positive_each)
    kernel_sizes_2d: tuple[tuple[int, ...], ...] = hparam(((3, 3),), _positive_pairs, _one_per_conv2d_layer)
    mpool_sizes_2d: tuple[tuple[int, ...], ...] = hparam(
        ((3, 3),), _positive_pairs, _one_per_conv2d_layer, _leaves_a_grid
    )


@register("arc_i", ARCIConfig)
def build_arc_i(cfg: ARCIConfig, vocab_size: int, embeddings):
    from ansel.models.arc import ARCI
    from ansel.models.layers import keras_init

    return keras_init(ARCI(cfg, vocab_size, embeddings))


@register("arc_ii", ARCIIConfig)
def build_arc_ii(cfg: ARCIIConfig, vocab_size: int, embeddings):
    from ansel.models.arc import ARCII
    from ansel.models.layers import keras_init

    pooled = pooled_grid(cfg.text1_maxlen, cfg.text2_maxlen, cfg.mpool_sizes_2d)
    return keras_init(ARCII(cfg, vocab_size, embeddings, pooled))
