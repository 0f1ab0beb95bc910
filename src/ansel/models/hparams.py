"""Every architecture's hyperparameters as a typed dataclass, and ``ARCHS``: arch name -> its class.

No torch here: the Snakefile resolves and validates each model's config while it builds the DAG,
and importing torch would add seconds to every Snakemake start (two per SLURM job). The model
modules import their class from here and register a builder under the same name
(``ansel.models.registry``).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class RandomConfig:
    max_len: int = 512


@dataclass
class QALSTMConfig:
    embedding_dim: int = 100
    hidden: int = 141
    dropout: float = 0.0
    freeze_embeddings: bool = False


@dataclass
class QACNNConfig:
    embedding_dim: int = 100
    filters: int = 400
    kernel: int = 4
    dropout: float = 0.0
    freeze_embeddings: bool = False


@dataclass
class APCNNConfig(QACNNConfig):
    kernel: int = 3


@dataclass
class QALSTMAttentionConfig:
    embedding_dim: int = 300
    hidden: int = 141         # per direction; 141 on insuranceQA (Tan et al.), 256 on yahooQA
    dropout: float = 0.3      # on the word embeddings (keep 0.7)
    freeze_embeddings: bool = False
    scorer: str = "cosine"    # cosine (pairwise loss) | mlp (pointwise loss)


@dataclass
class MultihopLSTMConfig(QALSTMAttentionConfig):
    hops: int = 2


@dataclass
class GlobalSAConfig:
    embedding_dim: int = 300
    heads: int = 6
    ffn_dim: int | None = None    # None: 4 x embedding_dim, as in Vaswani et al. (the paper's "same as [26]")
    dropout: float = 0.3          # on word embeddings, before positions are added (keep 0.7)
    freeze_embeddings: bool = False
    projection: bool = False      # trainable projection of (frozen) embeddings, the paper's yahooQA setting
    composition: str = "max"      # max | attention | multihop
    hops: int = 2                 # multihop composition only
    scorer: str = "cosine"        # cosine (pairwise loss) | mlp (pointwise loss; score = positive-class log-odds)
    final_norm: bool = True       # LayerNorm after the FFN residual (GGSA removes it)


@dataclass
class LocalSAConfig(GlobalSAConfig):
    window: int = 10
    gate: bool = False
    final_norm: bool = False      # local attention takes GGSA's place in the paper's Table 3


@dataclass
class GroupSAConfig(GlobalSAConfig):
    group_size: int = 10
    offset: bool = False          # the paper's strategy: the last heads // 2 heads start groups at group_size // 2
    gate: bool = False
    final_norm: bool = False


@dataclass
class GGSAConfig(GroupSAConfig):
    offset: bool = True
    gate: bool = True


@dataclass
class CTRNConfig:
    embedding_dim: int = 300
    hidden: int = 300              # m: projection and gate width
    kernel: int = 3                # window of Conv Z / F / O
    dropout: float = 0.0           # on word embeddings
    freeze_embeddings: bool = False
    scorer: str = "mlp"            # mlp (pointwise, the paper) | cosine (pairwise hinge)


ARCHS: dict[str, type] = {
    "random": RandomConfig,
    "qa_lstm": QALSTMConfig,
    "qa_bilstm": QALSTMConfig,
    "qa_cnn": QACNNConfig,
    "ap_cnn": APCNNConfig,
    "ap_bilstm": QALSTMConfig,     # AP-biLSTM has QA-biLSTM's hyperparameters
    "qa_lstm_attn": QALSTMAttentionConfig,
    "multihop_lstm": MultihopLSTMConfig,
    "global_sa": GlobalSAConfig,
    "local_sa": LocalSAConfig,
    "group_sa": GroupSAConfig,
    "ggsa": GGSAConfig,
    "iggsa": GGSAConfig,
    "ctrn": CTRNConfig,
}
