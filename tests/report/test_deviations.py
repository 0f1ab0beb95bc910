from ansel.report.notes import deviation_notes, differences, embeddings_note


def test_differences_lists_changed_nested_keys_and_skips_identity():
    paper = {
        "seed": 1,
        "model": "m",
        "train": {"epochs": 25, "negatives": {"n": 50, "strategy": "sampled_max"}},
        "hparams": {"filters": 4000},
    }
    used = {
        "seed": 2,
        "model": "m",
        "train": {"epochs": 4, "negatives": {"n": 10, "strategy": "sampled_max"}},
        "hparams": {"filters": 4000, "dropout": 0.1},
    }
    assert differences(paper, used) == ["hparams.dropout — → 0.1", "train.epochs 25 → 4", "train.negatives.n 50 → 10"]
    # a run's vocabulary file is a path derived from its dataset and vectors, never a setting of its own
    assert (
        differences({**paper, "vocab": None}, {**paper, "vocab": "data/embeddings/trecqa/english_vocab-300.vocab.json"})
        == []
    )


def test_notes_say_when_nothing_deviates():
    cfg = {"train": {"epochs": 25}}
    assert deviation_notes([(("AP-CNN", None), cfg, cfg)]) == ["Runs use the paper's settings (params.yaml) unchanged."]
    note = deviation_notes([(("AP-CNN", None), cfg, {"train": {"epochs": 3}}), (("QA-CNN", None), cfg, cfg)])[0]
    assert "AP-CNN: train.epochs 25 → 3" in note and "QA-CNN" not in note


def test_rows_with_the_same_deviations_are_listed_together():
    cfg, short = {"train": {"epochs": 25}}, {"train": {"epochs": 3}}
    note = deviation_notes(
        [(("A", None), cfg, short), (("B", None), cfg, short), (("C", None), cfg, {"train": {"epochs": 5}})]
    )[0]
    assert note.endswith(": A, B: train.epochs 25 → 3; C: train.epochs 25 → 5")
    assert deviation_notes([(("A", None), cfg, short), (("B", None), cfg, short)])[0].endswith(
        ": every row: train.epochs 25 → 3"
    )


def test_embeddings_note_groups_rows_by_vectors():
    note = embeddings_note(
        [
            (("A", None), {"arch": "qa_cnn", "embeddings": "word2vec", "hparams": {"embedding_dim": 300}}),
            (("B", None), {"arch": "qa_cnn", "embeddings": "glove840b", "hparams": {"embedding_dim": 300}}),
            (("C", None), {"arch": "dssm", "embeddings": None, "hparams": {}}),
            (("BM25", None), {"arch": "bm25", "embeddings": None, "hparams": {}}),
        ]
    )
    assert note.startswith("Word embeddings: word2vec-300 (gensim")
    assert "glove840b-300: B" in note and "random initialisation: C;" in note
    assert note.endswith("none (no parameters): BM25")


def test_a_model_is_named_once_with_the_datasets_it_deviates_on():
    cfg, short = {"train": {"epochs": 25}}, {"train": {"epochs": 3}}
    rows = [
        (("A", "wikiqa"), cfg, short),
        (("B", "wikiqa"), cfg, short),
        (("A", "trecqa"), cfg, short),
        (("B", "trecqa"), cfg, short),
        (("C", "trecqa"), cfg, short),
        (("C", "wikiqa"), cfg, cfg),
    ]
    assert deviation_notes(rows)[0].endswith(": A, B on wikiqa, trecqa and C on trecqa: train.epochs 25 → 3")
