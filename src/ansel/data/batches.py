"""A processed dataset as id matrices, ready for training and scoring, and batches cut from them."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ansel.data.vocab import PAD, Lexicon, Vocab, training_texts

if TYPE_CHECKING:  # pandas (+60 MB resident) is imported by loading a dataset, not by scoring's trim_padding
    import pandas as pd

    from ansel.data.canonical import Dataset


@dataclass
class RunData:
    dataset: Dataset
    q_ids: np.ndarray  # [n_questions, max_len_q]
    a_ids: np.ndarray  # [n_answers, max_len_a]
    qids: pd.Index  # in row order: ``get_indexer`` gives the rows of ids
    aids: pd.Index  # in row order
    vocab: Vocab
    # {device: (questions', answers' ``DeviceIds``)}: uploaded once per device (shared by a copy from
    # ``sample_questions``, whose id matrices are these)
    _on_device: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def load(cls, processed_dir: str | Path, vocab: Vocab, max_len_q: int, max_len_a: int) -> "RunData":
        import pandas as pd

        from ansel.data.canonical import Dataset

        ds = Dataset.load(processed_dir)
        return cls(
            dataset=ds,
            q_ids=vocab.encode_batch(ds.questions.tokens, max_len_q),
            a_ids=vocab.encode_batch(ds.answers.tokens, max_len_a),
            qids=pd.Index(ds.questions.qid),
            aids=pd.Index(ds.answers.aid),
            vocab=vocab,
        )

    def on_device(self, device) -> tuple:
        """The question and answer id matrices resident on ``device`` (``device_ids.DeviceIds``)."""
        from ansel.data.device_ids import DeviceIds

        if device not in self._on_device:
            self._on_device[device] = (DeviceIds(self.q_ids, device), DeviceIds(self.a_ids, device))
        return self._on_device[device]

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @functools.cached_property
    def categories(self) -> list[str]:
        """The question categories of the training split, sorted: the classes of a model that also
        classifies questions (MTAS). Categories seen only in dev or test are not classes."""
        if "train" not in self.dataset.splits:
            return []
        train = self.dataset.questions.category.iloc[np.unique(self.pairs("train")[1])]
        return sorted(train.dropna().astype(str).unique())

    @functools.cached_property
    def q_category(self) -> np.ndarray:
        """Each question row's class index in ``categories``; -1 where it has none among them (null,
        or no string: a number never equals a category, which ``categories`` made a string)."""
        import pandas as pd

        return pd.Index(self.categories, dtype=object).get_indexer(self.dataset.questions.category).astype(np.int64)

    @functools.cached_property
    def lexicon(self) -> Lexicon:
        """The vocabulary's words and their IDF over the training texts (models built with a lexicon)."""
        return Lexicon.build(self.vocab, training_texts(self.dataset))

    def sample_questions(self, splits: list[str], n: int, seed: int) -> "RunData":
        """The same data with each of ``splits`` cut to the candidates of a seeded draw of ``n`` of its
        questions (all of them where it has no more): the same draw for every run of the dataset."""
        from dataclasses import replace

        cut = dict(self.dataset.splits)
        for split in splits:
            cut[split] = sample_split(self.pairs(split)[0], n, seed)
        return replace(self, dataset=replace(self.dataset, splits=cut))

    def pairs(self, split: str) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
        """The split's candidate rows and their question/answer row indices."""
        if split not in self.dataset.splits:
            raise KeyError(
                f"dataset {self.dataset.name!r} has no split {split!r}; it has {sorted(self.dataset.splits)}"
            )
        cands = self.dataset.splits[split]
        where = f"{self.dataset.name}/candidates-{split}"
        return cands, _rows(self.qids, cands.qid, where, "qid"), _rows(self.aids, cands.aid, where, "aid")


def _rows(index: pd.Index, ids: pd.Series, where: str, col: str) -> np.ndarray:
    """The row of each of ``ids`` in ``index``; an id it lacks is a DatasetError naming ``where`` and the row."""
    from ansel.data.canonical import DatasetError

    rows = index.get_indexer(ids)
    if (rows < 0).any():
        i = int(np.argmax(rows < 0))
        raise DatasetError(f"{where}: row {i}: unknown {col} {ids.iloc[i]!r}")
    return rows.astype(np.int64)


def sample_split(cands: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """A split's candidates cut to those of a seeded draw of ``n`` of its questions (all where it
    has no more): one draw per (questions, n, seed), whoever asks."""
    qids = np.sort(cands.qid.unique().astype(str))
    if len(qids) <= n:
        return cands
    keep = set(np.random.default_rng(seed).choice(qids, n, replace=False))
    return cands[cands.qid.astype(str).isin(keep)].reset_index(drop=True)


def trim_padding(ids):
    """Drop trailing columns that are padding in every row of a batch (a torch tensor [B, L])."""
    lengths = (ids != PAD).sum(1)
    return ids[:, : max(int(lengths.max()), 1)]
