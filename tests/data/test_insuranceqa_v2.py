"""InsuranceQA V2 (insuranceqa-data 1.2) on the hand-written fixture, on bad input, and on the
real files where the download step has fetched them into data/raw/insuranceqa_v2/."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from ansel.data.readers.common import RawFormatError
from ansel.data.readers.insuranceqa_v2 import ANSWERS, FILES
from ansel.data.registry import get_source

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "insuranceqa_v2"
REAL = Path(__file__).resolve().parents[2] / "data" / "raw" / "insuranceqa_v2"


def read(raw: Path, options: dict | None = None):
    return get_source("insuranceqa_v2").read(raw, options or {}).validate()


def pools(ds, split: str) -> dict[str, dict[str, int]]:
    c = ds.splits[split]
    return {q: dict(zip(g.aid, g.label)) for q, g in c.groupby("qid")}


def test_canonical_tables_from_fixture():
    ds = read(FIXTURE)
    q = ds.questions.set_index("qid")
    assert set(q.index) == {"train-0", "train-1", "dev-0", "test-7"}  # file-local qids made unique
    assert q.text["train-0"] == "How Much Is Life Insurance?"  # double spaces collapsed
    assert list(q.tokens["train-0"]) == ["how", "much", "is", "life", "insurance", "?"]
    assert q.category.to_dict() == {
        "train-0": "life-insurance",
        "train-1": "auto-insurance",
        "dev-0": "medicare-insurance",
        "test-7": "life-insurance",
    }
    assert ds.answers.set_index("aid").text["1"] == "Life insurance costs depend on age and health."
    assert len(ds.answers) == 10
    # train keeps the retrieved negatives beside the positives (the pool strategy draws them)
    assert pools(ds, "train") == {
        "train-0": {"1": 1, "3": 0, "4": 0, "5": 0},
        "train-1": {"2": 1, "6": 1, "3": 0, "7": 0, "8": 0},
    }
    assert pools(ds, "test") == {"test-7": {"10": 1, "1": 1, "2": 0, "3": 0, "9": 0}}


def test_pool_dedupes_and_a_positive_among_negatives_stays_positive():
    # valid.json.gz: answers [4], negatives [4, 5, 5, 9]
    assert pools(read(FIXTURE), "dev") == {"dev-0": {"4": 1, "5": 0, "9": 0}}


def test_chinese_option_reads_zh_with_jieba():
    ds = read(FIXTURE, {"language": "zh"})
    q = ds.questions.set_index("qid")
    assert q.text["train-0"] == "人寿保险要多少钱？"
    assert list(q.tokens["train-0"]) == ["人寿保险", "要", "多少", "钱", "？"]
    assert ds.answers.set_index("aid").text["2"] == "汽车保险跟着汽车走。"
    assert q.category["dev-0"] == "medicare-insurance"
    with pytest.raises(ValueError, match=r"insuranceqa_v2: language 'fr'"):
        read(FIXTURE, {"language": "fr"})


def write_gz(path: Path, text: str) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(text)


def edit(path: Path, change) -> None:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        data = json.load(f)
    change(data)
    write_gz(path, json.dumps(data, ensure_ascii=False))


@pytest.mark.parametrize(
    "case, match",
    [
        ("bad_json", r"train\.json\.gz: line 1: not valid JSON"),
        ("not_gzip", r"test\.json\.gz: not a readable gzipped UTF-8 file"),
        ("no_en", r"valid\.json\.gz: question 0: missing key 'en'"),
        ("no_answers", r"train\.json\.gz: question 1: missing key 'answers'"),
        ("unknown_aid", r"test\.json\.gz: question 7: answer id 99 not in .*answers\.json\.gz"),
        ("answer_no_en", r"answers\.json\.gz: answer 3: missing key 'en'"),
    ],
)
def test_bad_input_names_file_and_key(tmp_path, case, match):
    raw = tmp_path / "raw"
    shutil.copytree(FIXTURE, raw)
    if case == "bad_json":
        write_gz(raw / FILES["train"], '{"0": {"en": "How')
    elif case == "not_gzip":
        (raw / FILES["test"]).write_text("{}")
    elif case == "no_en":
        edit(raw / FILES["dev"], lambda d: d["0"].pop("en"))
    elif case == "no_answers":
        edit(raw / FILES["train"], lambda d: d["1"].pop("answers"))
    elif case == "unknown_aid":
        edit(raw / FILES["test"], lambda d: d["7"]["negatives"].append("99"))
    elif case == "answer_no_en":
        edit(raw / ANSWERS, lambda d: d["3"].pop("en"))
    with pytest.raises(RawFormatError, match=match):
        read(raw)


@pytest.mark.realdata
@pytest.mark.skipif(
    not all((REAL / f).exists() for f in [*FILES.values(), ANSWERS]),
    reason=f"{REAL} lacks the files (ansel download --source insuranceqa_v2)",
)
def test_real_counts_match_the_package_readme():
    ds = read(REAL, {"tokenizer": "whitespace"})  # the English tokenizer is tested on the fixture
    assert {s: c.qid.nunique() for s, c in ds.splits.items()} == {"train": 12889, "dev": 2000, "test": 2000}
    # the README's "answers" per split are the positive (question, answer) links
    assert {s: int(c.label.sum()) for s, c in ds.splits.items()} == {"train": 21325, "dev": 3354, "test": 3308}
    assert len(ds.answers) == 27413
    for c in ds.splits.values():  # 200 negatives each, none of them a positive of its question
        per_q = c.groupby("qid").label.agg(["size", "sum"])
        assert (per_q["size"] == 200 + per_q["sum"]).all()
