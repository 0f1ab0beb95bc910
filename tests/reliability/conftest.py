"""A small processed synthetic corpus and a tiny run trained and evaluated through the CLI, as
the train and evaluate rules run them.

Issue 33's failures are each tested here but one: `epochs: -1` / `margin: -1` refused by a dry run
(item 4) are cases of tests/workflow/test_stages.py's settings refused at -n."""
import json
from pathlib import Path

import pytest

from ansel import cli
from ansel.config import load, run_config
from ansel.data.readers.synthetic import Synthetic
from ansel.data.vocab import Vocab, training_texts


@pytest.fixture(scope="module")
def processed(tmp_path_factory) -> Path:
    raw, out = tmp_path_factory.mktemp("raw"), tmp_path_factory.mktemp("processed")
    s = Synthetic()
    s.fetch(raw, None, {"seed": 5, "questions": {"train": 60, "dev": 20, "test": 20}})
    ds = s.read(raw, {"language": "en", "tokenizer": "english", "name": "syn"})
    ds.save(out)
    Vocab.build(training_texts(ds)).save(out / "vocab.json")
    return out


@pytest.fixture
def train_and_evaluate(processed):
    """A tiny qa_cnn: `ansel train` (2 epochs of ``max_batches``), then `ansel evaluate`."""
    return lambda run_dir, timings, max_batches=2: _train_and_evaluate(processed, run_dir, timings, max_batches)


def _train_and_evaluate(processed: Path, run_dir: Path, timings: Path, max_batches: int) -> None:
    c = run_config(load(), "synthetic_en", "qa_cnn", 1)
    c["embeddings"] = None
    c["eval"]["splits"] = ["dev", "test"]  # the fixture corpus has no test1/test2
    c["train"].update(epochs=2, batch_size=16, max_batches=max_batches)
    cli.main(["train", "--config", json.dumps(c), "--processed", str(processed), "--run-dir", str(run_dir),
              "--timings", str(timings), "--no-progress"])
    cli.main(["evaluate", "--processed", str(processed), "--run-dir", str(run_dir)])
