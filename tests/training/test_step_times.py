"""``ansel step-times``: a table's rows' training steps timed with every text at the run's full
lengths (GGSA Table 3's seconds per batch as a benchmark measures it)."""

import json

import pytest

from ansel import cli
from ansel.config import load, run_config
from ansel.data.batches import RunData
from ansel.data.readers.synthetic import Synthetic
from ansel.data.vocab import PAD, Vocab, training_texts
from ansel.training.step_times import filled


@pytest.fixture(scope="module")
def processed(tmp_path_factory):
    raw, out = tmp_path_factory.mktemp("raw"), tmp_path_factory.mktemp("processed")
    s = Synthetic()
    s.fetch(raw, None, {"seed": 5, "questions": {"train": 40, "dev": 10, "test": 10}})
    s.read(raw, {"language": "en", "tokenizer": "english", "name": "syn"}).save(out)
    from ansel.data.canonical import Dataset

    Vocab.build(training_texts(Dataset.load(out))).save(out / "vocab.json")
    return out


def test_every_text_fills_the_runs_length_with_real_words(processed):
    data = RunData.load(processed, Vocab.load(processed / "vocab.json"), 7, 11)
    assert data.q_ids.shape[1] < 7  # as wide as the longest question ...
    full = filled(data, 7, 11)
    assert full.q_ids.shape == (len(data.q_ids), 7) and full.a_ids.shape == (len(data.a_ids), 11)
    assert (
        full.q_ids.min() > PAD + 1 and full.a_ids.max() < data.vocab_size
    )  # ... filled to the run's lengths: no pad, no <unk>


def test_each_rows_step_is_timed_over_rounds_at_its_batch_and_lengths(processed, tmp_path):
    config = load()
    configs = {}
    for model in ("ggsa_local_sa_insuranceqa", "ggsa_ggsa_max_insuranceqa"):
        c = run_config(config, "synthetic_en", model, 1)
        c.update(embeddings=None, max_len_q=12, max_len_a=16)
        c["train"]["batch_size"] = 4
        configs[model] = c
    out = tmp_path / "bench.json"
    cli.main(
        [
            "step-times",
            "--config",
            json.dumps(configs),
            "--processed",
            str(processed),
            "--out",
            str(out),
            "--batches",
            "2",
            "--rounds",
            "2",
        ]
    )
    result = json.loads(out.read_text())
    assert result["device"].startswith("cpu/") and result["rounds"] == 2 and result["batches"] == 2
    assert list(result["models"]) == list(configs)
    for entry in result["models"].values():
        assert (entry["batch_size"], entry["max_len_q"], entry["max_len_a"]) == (4, 12, 16)
        assert len(entry["seconds_per_batch"]) == 2 and all(s > 0 for s in entry["seconds_per_batch"])
