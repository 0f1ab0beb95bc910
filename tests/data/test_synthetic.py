from pathlib import Path

from ansel.data.readers.synthetic import DEFAULTS, Synthetic, generate


def test_same_seed_same_bytes_other_seed_differs(tmp_path):
    s = Synthetic()
    for name, seed in (("a", 5), ("b", 5), ("c", 6)):
        s.fetch(tmp_path / name, None, {"seed": seed})
    files = {n: (tmp_path / n / "synthetic-en.tsv").read_bytes() for n in "abc"}
    assert files["a"] == files["b"] != files["c"]


def test_structure_one_or_more_positives_and_shared_surface_words(tmp_path):
    ds = _read(tmp_path, {"seed": 1})
    q_tokens = dict(zip(ds.questions.qid, ds.questions.tokens))
    a_tokens = dict(zip(ds.answers.aid, ds.answers.tokens))
    for split, n_q in DEFAULTS["questions"].items():
        cands = ds.splits[split]
        assert cands.qid.nunique() == n_q
        per_q = cands.groupby("qid").label.agg(["sum", "size"])
        assert (per_q["size"] == DEFAULTS["candidates"]).all()
        assert per_q["sum"].between(1, DEFAULTS["max_positives"]).all()
        assert (per_q["sum"] > 1).any()
    # every distractor shares at least one word with its question: overlap alone is not enough
    train = ds.splits["train"]
    negatives = train[train.label == 0]
    overlap = [len(set(q_tokens[q]) & set(a_tokens[a])) for q, a in zip(negatives.qid, negatives.aid)]
    assert min(overlap) >= 1


def test_chinese_variant_is_segmented_by_jieba_and_has_categories(tmp_path):
    ds = _read(tmp_path, {"seed": 2}, {"language": "zh", "tokenizer": "chinese"})
    text, tokens = ds.questions.text[0], list(ds.questions.tokens[0])
    assert " " not in text and "".join(tokens) == text and len(tokens) > 1
    assert ds.questions.category.nunique() == DEFAULTS["categories"]


def test_generation_is_deterministic_in_options():
    assert generate({"seed": 3, "language": "zh"}) == generate({"seed": 3, "language": "zh"})


def _read(tmp_path: Path, fetch: dict, read: dict | None = None):
    s = Synthetic()
    s.fetch(tmp_path, None, fetch)
    return s.read(tmp_path, read or {"language": "en", "tokenizer": "english"}).validate()
