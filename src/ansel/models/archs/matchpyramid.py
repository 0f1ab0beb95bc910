"""MatchPyramid (Pang et al. 2016) as MatchZoo 1.x builds it (models/matchpyramid.py,
layers/DynamicMaxPooling.py, the generators' dynamic_pooling_index), a baseline of the aMV-LSTM
paper (SAC 2019); the defaults are its WikiQA config.

The dot products of every question word vector with every answer word vector form a
[text1_maxlen, text2_maxlen] image; one Conv2D ('same' padding, ReLU), dynamic max-pooling to a
dpool_size grid, dropout and one dense layer. ``pooling: adaptive_avg`` pools as MatchZoo-py 1.1.1's
MatchPyramid does instead (models/match_pyramid.py: ``nn.AdaptiveAvgPool2d(dpool_size)`` of the whole
fixed grid, padding cells included), the one switch of issue 51's E4b.
"""

from __future__ import annotations

from dataclasses import dataclass

from ansel.models.archs.arc import positive_pair
from ansel.models.hparams import TextMatchConfig, fraction, hparam, one_of, positive
from ansel.models.registry import register


def _pools_evenly(value, hparams) -> str | None:
    """DynamicMaxPooling pools windows of maxlen // size with that stride; upstream refuses a size
    those windows do not give (10 rows in 4 windows of 2 make 5). Adaptive windows fit any size up
    to maxlen."""
    for size, key in zip(value, ("text1_maxlen", "text2_maxlen")):
        maxlen = getattr(hparams, key)
        if size > maxlen:
            return f"is larger than {key} {maxlen}"
        if hparams.pooling == "adaptive_avg":
            continue
        window = maxlen // size
        if maxlen // window != size:
            return f"does not pool {key} {maxlen}: windows of {window} make {maxlen // window}, not {size}"
    return None


@dataclass
class MatchPyramidConfig(TextMatchConfig):
    embedding_dim: int = hparam(300, positive)  # glove.840B.300d, normalised, trained
    freeze_embeddings: bool = False
    dropout: float = hparam(0.95, fraction)  # Keras rate: the fraction dropped
    kernel_count: int = hparam(64, positive)
    kernel_size: tuple[int, ...] = hparam((3, 3), positive_pair)
    # dynamic_max: MatchZoo 1.x's (the fork's, every record's); adaptive_avg: MatchZoo-py 1.1.1's
    pooling: str = hparam("dynamic_max", one_of("dynamic_max", "adaptive_avg"))
    dpool_size: tuple[int, ...] = hparam((3, 10), positive_pair, _pools_evenly)


@register("match_pyramid", MatchPyramidConfig)
def build_match_pyramid(cfg: MatchPyramidConfig, vocab_size: int, embeddings):
    from ansel.models.layers import keras_init
    from ansel.models.matchpyramid import MatchPyramid

    return keras_init(MatchPyramid(cfg, vocab_size, embeddings))
