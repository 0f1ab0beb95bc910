"""A small synthetic corpus, processed as the pipeline does, for the training tests."""

from pathlib import Path

from ansel.data.readers.synthetic import Synthetic
from ansel.data.readers.synthetic_mapping import SyntheticMapping
from ansel.data.vocab import Vocab, training_texts


def processed_synthetic(raw: Path, out: Path, questions: dict, language: str = "en") -> Path:
    """``out``: the synthetic corpus (``questions`` per split, seed 5) in ``language`` (en, zh:
    jieba-tokenized, with the categories MTAS classifies), saved with its vocabulary."""
    s = Synthetic()
    s.fetch(raw, None, {"seed": 5, "questions": questions})
    tokenizer = {"en": "english", "zh": "chinese"}[language]
    ds = s.read(raw, {"language": language, "tokenizer": tokenizer, "name": f"syn_{language}"})
    ds.save(out)
    Vocab.build(training_texts(ds)).save(out / "vocab.json")
    return out


def processed_mapping(raw: Path, out: Path, options: dict) -> Path:
    """``out``: the planted-signal corpus (``ansel.data.readers.synthetic_mapping``, ``options``),
    saved with its vocabulary."""
    s = SyntheticMapping()
    s.fetch(raw, None, options)
    ds = s.read(raw, {"name": "synthetic_mapping"})
    ds.save(out)
    Vocab.build(training_texts(ds)).save(out / "vocab.json")
    return out
