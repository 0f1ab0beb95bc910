"""Models of Xu et al., "Gated Group Self-Attention for Answer Selection".

Self-attention rankers ``global_sa``, ``local_sa``, ``group_sa``, ``ggsa``, ``iggsa``, each with
a choice of composition (max-pooling, question-guided attention, multihop sequential attention)
and scorer (cosine for the pairwise loss, two-layer MLP + softmax for the pointwise loss), and
the paper's LSTM baselines ``qa_lstm_attn`` (Tan et al. 2016) and ``multihop_lstm`` (Tran &
Niederée 2018, sequential attention). Max-pooling models are siamese; iGGSA never is (its
answer encoder reads the question). Question and answer share one encoder, or with
``shared_encoder: false`` each has its own (§3.1); iGGSA's answer pass adds the interaction residual.
"""

from __future__ import annotations

from dataclasses import dataclass

from ansel.models.hparams import COMPOSITIONS, SCORERS, HParams, divides, fraction, hparam, one_of, positive
from ansel.models.registry import register


@dataclass
class QALSTMAttentionConfig(HParams):
    embedding_dim: int = hparam(300, positive)
    hidden: int = hparam(141, positive)  # per direction; 141 on insuranceQA (Tan et al.), 256 on yahooQA
    dropout: float = hparam(0.3, fraction)  # on the word embeddings (keep 0.7)
    freeze_embeddings: bool = False
    scorer: str = hparam("cosine", one_of(*SCORERS))  # cosine (pairwise loss) | mlp (pointwise loss)


@dataclass
class MultihopLSTMConfig(QALSTMAttentionConfig):
    hops: int = hparam(2, positive)


@dataclass
class GlobalSAConfig(HParams):
    embedding_dim: int = hparam(300, positive)
    heads: int = hparam(6, positive, divides("embedding_dim"))
    # None: 4 x embedding_dim, as in Vaswani et al. (the paper's "same as [26]")
    ffn_dim: int | None = hparam(None, positive)
    dropout: float = hparam(0.3, fraction)  # on word embeddings, before positions are added (keep 0.7)
    freeze_embeddings: bool = False
    projection: bool = False  # trainable projection of (frozen) embeddings, the paper's yahooQA setting
    composition: str = hparam("max", one_of(*COMPOSITIONS))  # max | attention | multihop
    hops: int = hparam(2, positive)  # multihop composition only
    # cosine (pairwise loss) | mlp (pointwise loss; score = positive-class log-odds)
    scorer: str = hparam("cosine", one_of(*SCORERS))
    final_norm: bool = True  # LayerNorm after the FFN residual (GGSA removes it)
    # one encoder for both texts (false: §3.1's "two GGSA encoders", one each, the embeddings shared);
    # true by default: the runs made before the option have one
    shared_encoder: bool = True


@dataclass
class LocalSAConfig(GlobalSAConfig):
    window: int = hparam(10, positive)
    gate: bool = False
    final_norm: bool = False  # local attention takes GGSA's place in the paper's Table 3


@dataclass
class GroupSAConfig(GlobalSAConfig):
    group_size: int = hparam(10, positive)
    offset: bool = False  # the paper's strategy: the last heads // 2 heads start groups at group_size // 2
    gate: bool = False
    final_norm: bool = False


@dataclass
class GGSAConfig(GroupSAConfig):
    offset: bool = True
    gate: bool = True


def _assemble(
    embed,
    encoder,
    composition_name: str,
    scorer_name: str,
    hops: int,
    question_context: bool = False,
    answer_encoder=None,
):
    from ansel.models.compositions import make_composition
    from ansel.models.rankers import assemble
    from ansel.models.scorers import SumOverHops, make_scorer

    # The scorer before the composition, as every builder creates them (archs/__init__.py).
    scorer = make_scorer(scorer_name, encoder.out_dim)
    composition = make_composition(composition_name, encoder.out_dim, hops)
    if composition_name == "multihop":
        scorer = SumOverHops(scorer)
    return assemble(embed, encoder, composition, scorer, question_context, answer_encoder)


def _lstm_ranker(cfg: QALSTMAttentionConfig, vocab_size: int, embeddings, composition: str, hops: int = 1):
    from ansel.models.encoders import BiLSTMEncoder
    from ansel.models.layers import dropped_embedding

    embed = dropped_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings, cfg.dropout)
    return _assemble(embed, BiLSTMEncoder(cfg.embedding_dim, cfg.hidden), composition, cfg.scorer, hops)


@register("qa_lstm_attn", QALSTMAttentionConfig)
def build_qa_lstm_attn(cfg: QALSTMAttentionConfig, vocab_size: int, embeddings):
    return _lstm_ranker(cfg, vocab_size, embeddings, "attention")


@register("multihop_lstm", MultihopLSTMConfig)
def build_multihop_lstm(cfg: MultihopLSTMConfig, vocab_size: int, embeddings):
    return _lstm_ranker(cfg, vocab_size, embeddings, "multihop", cfg.hops)


def _sa_ranker(
    cfg: GlobalSAConfig, vocab_size: int, embeddings, attention, gate: bool = False, interaction: bool = False
):
    from ansel.models.layers import word_embedding
    from ansel.models.self_attention import PositionalEmbedding, SelfAttentionEncoder

    embed = PositionalEmbedding(
        word_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings), cfg.dropout, cfg.projection
    )

    def encoder(with_interaction: bool):
        return SelfAttentionEncoder(
            cfg.embedding_dim,
            cfg.heads,
            attention,
            cfg.ffn_dim or 4 * cfg.embedding_dim,
            gate=gate,
            final_norm=cfg.final_norm,
            interaction=with_interaction,
        )

    # iGGSA's interaction residual is the answer pass's: a question encoder of its own has none
    question = encoder(interaction and cfg.shared_encoder)
    answer = None if cfg.shared_encoder else encoder(interaction)
    return _assemble(
        embed, question, cfg.composition, cfg.scorer, cfg.hops, question_context=interaction, answer_encoder=answer
    )


def _group_attention(cfg: GroupSAConfig):
    from ansel.models.self_attention import GroupAttention, head_offsets

    return GroupAttention(cfg.group_size, head_offsets(cfg.heads, cfg.group_size, cfg.offset))


@register("global_sa", GlobalSAConfig)
def build_global_sa(cfg: GlobalSAConfig, vocab_size: int, embeddings):
    from ansel.models.self_attention import GlobalAttention

    return _sa_ranker(cfg, vocab_size, embeddings, GlobalAttention())


@register("local_sa", LocalSAConfig)
def build_local_sa(cfg: LocalSAConfig, vocab_size: int, embeddings):
    from ansel.models.self_attention import LocalAttention

    return _sa_ranker(cfg, vocab_size, embeddings, LocalAttention(cfg.window), gate=cfg.gate)


@register("group_sa", GroupSAConfig)
def build_group_sa(cfg: GroupSAConfig, vocab_size: int, embeddings):
    return _sa_ranker(cfg, vocab_size, embeddings, _group_attention(cfg), gate=cfg.gate)


@register("ggsa", GGSAConfig)
def build_ggsa(cfg: GGSAConfig, vocab_size: int, embeddings):
    return _sa_ranker(cfg, vocab_size, embeddings, _group_attention(cfg), gate=cfg.gate)


@register("iggsa", GGSAConfig)
def build_iggsa(cfg: GGSAConfig, vocab_size: int, embeddings):
    return _sa_ranker(cfg, vocab_size, embeddings, _group_attention(cfg), gate=cfg.gate, interaction=True)
