"""The MV-LSTM / aMV-LSTM module (hyperparameters and the code-vs-paper switches:
``ansel.models.archs.mvlstm``)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ansel.models.base import InteractionRanker, padding_mask
from ansel.models.layers import OutputHead, fixed_length, keras_init, masked_softmax, unit_rows, word_embedding


class WordAttention(nn.Module):
    """aMV-LSTM eq. (4): weight_i = softmax_i(v · x_i) over the text's positions; x_i scaled by it.
    Unmasked (as coded), a padding position has a zero vector, so logit 0, and takes its share."""

    def __init__(self, dim: int, mask_padding: bool):
        super().__init__()
        self.v = nn.Linear(dim, 1, bias=False)
        nn.init.uniform_(self.v.weight, -0.01, 0.01)  # the authors' RandomUniform(-0.01, 0.01)
        self.mask_padding = mask_padding

    def weights(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logits = self.v(x).squeeze(-1)
        return masked_softmax(logits, mask) if self.mask_padding else torch.softmax(logits, dim=-1)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return x * self.weights(x, mask).unsqueeze(-1)


def post_padded_bilstm(lstm: nn.LSTM, x: torch.Tensor, longest: int) -> torch.Tensor:
    """``lstm(x)[0]`` of a one-layer BiLSTM, out of training, for post-padded texts whose padding
    vectors are zero and whose longest has ``longest`` tokens.

    From ``longest`` on every input is zero, so both directions run those steps on a one-wide zero
    input: the input projection, most of a step's work for 300-d word vectors and 50 units, is
    skipped. The backward direction reads that padding first, from a zero state: the same for every
    text, so it runs once, for one row, and the batch's backward pass starts from its end state.
    Scoring encodes texts in batches of similar length, where this skips most of the padding
    (WikiQA's answers: 16 of 40 tokens on average)."""
    b, length, _ = x.shape
    longest = min(max(longest, 1), length)  # an all-empty batch still runs one step with its input
    hidden, tail = lstm.hidden_size, length - longest

    def run(weights, inputs, h0, c0, project=True):  # (states, h_n, c_n) of one direction
        if not project:  # zero inputs: a one-wide zero projection
            weights = [weights[0].new_zeros(4 * hidden, 1), *weights[1:]]
            inputs = inputs.new_zeros(*inputs.shape[:2], 1)
        return torch.lstm(inputs, (h0, c0), weights, True, 1, 0.0, False, False, True)

    forward_weights, backward_weights = lstm.all_weights
    zero = x.new_zeros(1, b, hidden)
    out = x.new_empty(b, length, 2 * hidden)
    out[:, :longest, :hidden], h, c = run(forward_weights, x[:, :longest], zero, zero)
    h_back = c_back = zero  # where the backward pass over the texts starts
    if tail:
        out[:, longest:, :hidden] = run(forward_weights, x[:, longest:], h, c, project=False)[0]
        padding, h_back, c_back = run(backward_weights, x[:1, longest:], zero[:, :1], zero[:, :1], project=False)
        out[:, longest:, hidden:] = padding.flip(1)
        h_back, c_back = h_back.expand_as(zero).contiguous(), c_back.expand_as(zero).contiguous()
    out[:, :longest, hidden:] = run(backward_weights, x[:, :longest].flip(1), h_back, c_back)[0].flip(1)
    return out


class MVLSTM(InteractionRanker):
    """A side is a text's BiLSTM states [B, maxlen, 2 * hidden] (unit vectors when the match is
    the cosine) and its padding mask; the interaction is the match matrix, its top-k and the head."""

    def __init__(self, cfg, vocab_size: int, embeddings: np.ndarray | None):
        super().__init__()
        self.cfg = cfg
        if cfg.normalize_embeddings:
            embeddings = unit_rows(embeddings)
        self.embedding = word_embedding(vocab_size, cfg.embedding_dim, embeddings, cfg.freeze_embeddings)
        self.attend_q = WordAttention(cfg.embedding_dim, cfg.mask_padding) if cfg.attend_question else None
        self.attend_a = WordAttention(cfg.embedding_dim, cfg.mask_padding) if cfg.attend_answer else None
        # one BiLSTM per side (the code's two Bidirectional layers; the paper shares nothing either)
        self.lstm_q = keras_init(nn.LSTM(cfg.embedding_dim, cfg.hidden, batch_first=True, bidirectional=True))
        self.lstm_a = keras_init(nn.LSTM(cfg.embedding_dim, cfg.hidden, batch_first=True, bidirectional=True))
        self.dropout = nn.Dropout(cfg.dropout)
        self.head = keras_init(OutputHead(cfg.top_k, cfg.classes))

    def _states(self, ids: torch.Tensor, length: int, lstm: nn.LSTM, attention: WordAttention | None):
        ids = fixed_length(ids, length)
        mask = padding_mask(ids)
        x = self.embedding(ids)  # zero at padding: word_embedding's padding row, scaled by any attention
        if attention is not None:
            x = attention(x, mask)
        if self.training and self.cfg.lstm_dropout:
            # Keras's LSTM input dropout: one mask per sequence, the same at every step
            keep = 1 - self.cfg.lstm_dropout
            x = x * torch.bernoulli(x.new_full((x.size(0), 1, x.size(2)), keep)) / keep
        if self.cfg.mask_padding:
            packed = pack_padded_sequence(x, mask.sum(1).clamp_min(1).cpu(), batch_first=True, enforce_sorted=False)
            h = pad_packed_sequence(lstm(packed)[0], batch_first=True, total_length=length)[0]
        elif self.training:
            h = lstm(x)[0]
        else:
            h = post_padded_bilstm(lstm, x, int(mask.sum(1).max()))
        return (F.normalize(h, dim=-1) if self.cfg.match == "cosine" else h), mask

    def encode_question_side(self, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self._states(q, self.cfg.text1_maxlen, self.lstm_q, self.attend_q)

    def encode_answer_side(self, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self._states(a, self.cfg.text2_maxlen, self.lstm_a, self.attend_a)

    def interact(self, q_side, a_side) -> torch.Tensor:
        (hq, mq), (ha, ma) = q_side, a_side
        flat = (hq @ ha.transpose(1, 2)).flatten(1)  # the [B, Lq, La] matching matrix
        if self.cfg.mask_padding:  # padding cells lose every comparison; missing values are 0
            flat = flat.masked_fill(~(mq.unsqueeze(2) & ma.unsqueeze(1)).flatten(1), float("-inf"))
        top = flat.topk(self.cfg.top_k, dim=1).values
        if self.cfg.mask_padding:
            top = top.masked_fill(torch.isinf(top), 0.0)
        return self.head(self.dropout(top))
