"""Readers on hand-written fixtures (files absent from the mirror) and on bad input.

Bad input must fail with a message naming the file and the line (or member/key) and leave no
output behind: ``read`` raises before anything is written, so the processed directory never appears.
"""

from __future__ import annotations

import json
import pickle
import re
import shutil
from pathlib import Path

import pytest

from ansel import cli
from ansel.data.manifest import write_manifest
from ansel.data.readers.common import RawFormatError
from ansel.data.registry import get_source
from ansel.data.stats import dataset_stats

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

WIKI_HEADER = "QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel"


def wiki_rows(qid: str, labels: list[int]) -> list[str]:
    return [
        f"{qid}\twhat is {qid}?\tD{qid}\tTitle\tD{qid}-{j}\t{qid} is sentence {j}.\t{lab}"
        for j, lab in enumerate(labels)
    ]


def write_wikiqa(raw: Path, train: list[str] | None = None, encoding: str = "utf-8") -> None:
    raw.mkdir(parents=True, exist_ok=True)
    splits = {
        "train": train or wiki_rows("Q1", [0, 1, 0]) + wiki_rows("Q2", [0, 0]),
        "dev": wiki_rows("Q3", [1, 0]) + wiki_rows("Q4", [1, 1]),
        "test": wiki_rows("Q5", [0, 1]),
    }
    for split, rows in splits.items():
        (raw / f"WikiQA-{split}.tsv").write_bytes("\r\n".join([WIKI_HEADER, *rows, ""]).encode(encoding))


def read_and_save(name: str, raw: Path, out: Path, options: dict | None = None):
    ds = get_source(name).read(raw, options or {})
    ds.save(out)
    return ds


def test_wikiqa_fixture_crlf_and_drop_options(tmp_path):
    write_wikiqa(tmp_path / "raw")
    ds = read_and_save("wikiqa", tmp_path / "raw", tmp_path / "out")
    assert not ds.answers.text.str.contains("\r").any()
    assert {s: len(c) for s, c in ds.splits.items()} == {"train": 5, "dev": 4, "test": 2}
    dropped = get_source("wikiqa").read(
        tmp_path / "raw", {"drop_questions": {"no_positive": True, "all_positive": True, "splits": ["train", "dev"]}}
    )
    assert set(dropped.splits["train"].qid) == {"Q1"} and set(dropped.splits["dev"].qid) == {"Q3"}


@pytest.mark.parametrize(
    "case, match",
    [
        ("truncated", r"WikiQA-train\.tsv: line 4: expected 7 fields"),
        ("encoding", r"WikiQA-train\.tsv: line 3: not valid utf-8"),
        ("missing_column", r"WikiQA-train\.tsv: line 1: expected 7 fields"),
        ("label", r"WikiQA-train\.tsv: line 3: label '2' is not 0/1"),
    ],
)
def test_wikiqa_bad_input_names_file_and_line(tmp_path, case, match):
    raw, out = tmp_path / "raw", tmp_path / "out"
    write_wikiqa(raw)
    path = raw / "WikiQA-train.tsv"
    lines = path.read_bytes().split(b"\r\n")
    if case == "truncated":  # cut in the middle of the third data line
        path.write_bytes(b"\r\n".join(lines[:3]) + b"\r\n" + lines[3][:20])
    elif case == "encoding":
        lines[2] = lines[2].replace(b"is", "\u00efs".encode("latin-1"))
        path.write_bytes(b"\r\n".join(lines))
    elif case == "missing_column":
        path.write_bytes(b"\r\n".join(b"\t".join(line.split(b"\t")[:6]) for line in lines))
    elif case == "label":
        lines[2] = lines[2][:-1] + b"2"
        path.write_bytes(b"\r\n".join(lines))
    with pytest.raises(RawFormatError, match=match):
        read_and_save("wikiqa", raw, out)
    assert not out.exists()


def test_wikiqa_file_with_only_its_header_names_the_file(tmp_path):
    raw, out = tmp_path / "raw", tmp_path / "out"
    write_wikiqa(raw)
    (raw / "WikiQA-test.tsv").write_bytes(f"{WIKI_HEADER}\r\n".encode())
    with pytest.raises(RawFormatError, match=r"WikiQA-test\.tsv: no data rows"):  # not the option naming test
        read_and_save("wikiqa", raw, out, {"drop_questions": {"no_positive": True, "splits": ["dev", "test"]}})
    assert not out.exists()


def test_trecqa_truncated_xml_names_the_open_element(tmp_path):
    xml = (
        "<QApairs id='1'>\n<question>\nWho\tis\tit\t?\nWP\tVBZ\tPRP\t.\n</question>\n"
        "<positive>\nIt\tis\tme\t.\n</positive>\n<negative>\nNo\t.\n"
    )
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("TRAIN.xml", "DEV.xml", "TEST.xml"):
        (raw / name).write_text(xml + "</negative>\n</QApairs>\n")
    (raw / "TEST.xml").write_text(xml)
    with pytest.raises(RawFormatError, match=r"TEST\.xml: truncated: <negative> opened at line 9"):
        read_and_save("trecqa", raw, tmp_path / "out", {"train": "TRAIN"})
    assert not (tmp_path / "out").exists()


def test_insuranceqa_all_splits_from_fixture(tmp_path):
    ds = read_and_save("insuranceqa_v1", FIXTURES / "insuranceqa_v1", tmp_path / "out")
    st = dataset_stats(ds).set_index("split")
    assert st.loc["train", "questions"] == 2 and st.loc["train", "pairs"] == 3
    assert st.loc["dev", "pairs"] == 8 and st.loc["dev", "positives"] == 2
    assert st.loc["test1", "positives"] == 2 and st.loc["test2", "pairs"] == 4  # gold 1 added to its pool
    answers = ds.answers.set_index("aid").text
    assert answers["2"] == "life insurance costs how much"
    assert ds.questions.set_index("qid").text["train-1"] == "how much is life insurance"


def test_insuranceqa_unknown_token_names_line(tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(FIXTURES / "insuranceqa_v1", raw)
    with open(raw / "question.dev.label.token_idx.pool", "a") as f:
        f.write("1\tidx_99\t1 2\n")
    with pytest.raises(RawFormatError, match=r"question\.dev\.label\.token_idx\.pool: line 3: token 'idx_99'"):
        get_source("insuranceqa_v1").read(raw, {})


def test_lawqa_fixture_train_pairs_and_test_pools(tmp_path):
    ds = get_source("lawqa").read(FIXTURES / "lawqa", {})
    assert ds.questions.category.notna().all()
    train = ds.splits["train"]
    assert len(train) == 6 and train.label.sum() == 3
    assert tuple(ds.questions.set_index("qid").tokens["test-7"]) == ("父亲", "去世", "遗产", "怎么", "继承")
    assert set(ds.splits["test"].groupby("qid").size()) == {3}
    dev = get_source("lawqa").read(FIXTURES / "lawqa", {"dev_questions": 1})
    assert dev.splits["dev"].qid.nunique() == 1 and dev.splits["test"].qid.nunique() == 1


def test_lawqa_reads_the_authors_pair_by_default_and_any_file_named(tmp_path):
    """upstream execute.py: trains on t_r_a_i_n.txt, tests on t_e_s_t_LONG.txt."""
    ds = get_source("lawqa").read(FIXTURES / "lawqa", {})
    answers = ds.answers.set_index("aid").text
    test_answers = set(answers[ds.splits["test"].aid])
    assert all(a.endswith("等等 详见 法条") for a in test_answers)  # the LONG test file
    assert len(ds.splits["train"]) == 6  # the short training file (its LONG twin has 2 lines)
    short = get_source("lawqa").read(
        FIXTURES / "lawqa", {"test_file": "t_e_s_t.txt", "train_file": "t_r_a_i_n_LONG.txt"}
    )
    assert not any(a.endswith("法条") for a in short.answers.set_index("aid").text[short.splits["test"].aid])
    assert len(short.splits["train"]) == 2
    with pytest.raises(ValueError, match="test_file: 'test.txt' is not a file of the release"):
        get_source("lawqa").read(FIXTURES / "lawqa", {"test_file": "test.txt"})


def test_lawqa_bad_field_count(tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(FIXTURES / "lawqa", raw)
    with open(raw / "lawQA" / "t_e_s_t_LONG.txt", "a", encoding="utf-8") as f:
        f.write("1 qid:9 问题 答案 3\n")
    with pytest.raises(RawFormatError, match=r"t_e_s_t_LONG\.txt: line 7: expected 6"):
        get_source("lawqa").read(raw, {})


def test_quoraqp_raw_embedded_newline_and_split(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(FIXTURES / "quoraqp" / "quora_duplicate_questions.tsv", raw)
    ds = get_source("quoraqp_raw").read(raw, {"split": {"dev": 0.2, "test": 0.2}, "seed": 1})
    assert sum(len(c) for c in ds.splits.values()) == 5
    assert {s: len(c) for s, c in ds.splits.items()}.get("dev") == 1
    q = ds.questions.set_index("qid").text
    assert q["q5"].endswith("cap rising\nwhat does that say about me?")
    assert ds.answers.set_index("aid").text["q6"].startswith('I am a "triple" Capricorn')
    again = get_source("quoraqp_raw").read(raw, {"split": {"dev": 0.2, "test": 0.2}, "seed": 1})
    assert all(again.splits[s].equals(c) for s, c in ds.splits.items())


def test_quoraqp_raw_missing_column(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    text = (FIXTURES / "quoraqp" / "quora_duplicate_questions.tsv").read_text()
    (raw / "quora_duplicate_questions.tsv").write_text(text.replace("\tis_duplicate", "", 1))
    with pytest.raises(RawFormatError, match=r"quora_duplicate_questions\.tsv: line 1: header"):
        get_source("quoraqp_raw").read(raw, {})


def _env(train_cands) -> dict:
    pool = [["the best answer has five words", 1], ["a negative answer of five words", 0]]
    return {
        "train": {"what is a question of five words": train_cands},
        "dev": {"what is the dev question here": pool},
        "test": {"what is the test question here": pool},
    }


def test_yahooqa_env_pickle_plain_data(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    env = _env([["one positive answer of five words", 1], ["short", 0], ["neg answer with five words", 0]])
    # byte strings (as Python 2 pickles hold text) are decoded as UTF-8
    env = {k: {q.encode(): [[a.encode(), lab] for a, lab in v] for q, v in d.items()} for k, d in env.items()}
    (raw / "env.pkl").write_bytes(pickle.dumps(env, protocol=3))
    ds = read_and_save("yahooqa", raw, tmp_path / "out", {"length_filter": {"min_len": 5, "max_len": 50}})
    assert len(ds.splits["train"]) == 2  # "short" (1 token) filtered out
    assert set(ds.answers.text) >= {"one positive answer of five words"}


class _Boom:
    def __reduce__(self):
        return (Path.touch, (Path("SHOULD_NOT_EXIST"),))


def test_yahooqa_env_pickle_with_callable_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "env.pkl").write_bytes(pickle.dumps(_env([["x y z w v", 1], _Boom()]), protocol=2))
    with pytest.raises(pickle.UnpicklingError, match=r"env\.pkl: refuses global "):
        read_and_save("yahooqa", raw, tmp_path / "out")
    assert not (tmp_path / "SHOULD_NOT_EXIST").exists() and not (tmp_path / "out").exists()
    write_manifest(raw / "manifest.json")  # as `ansel download` leaves it: the CLI says it in one line
    config = {"source": "yahooqa", "splits": ["train", "dev", "test"]}
    args = ["preprocess", "--dataset", "yahooqa", "--config", json.dumps(config), "--raw", str(raw), "--out", "out"]
    with pytest.raises(SystemExit) as refused:
        cli.main(args)
    assert str(refused.value).startswith(f"ansel preprocess: {raw / 'env.pkl'}: refuses global ")
    assert not (tmp_path / "SHOULD_NOT_EXIST").exists() and not (tmp_path / "out").exists()


def test_yahooqa_env_bad_label_names_key(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "env.pkl").write_bytes(pickle.dumps(_env([["an answer", 2]])))
    with pytest.raises(
        RawFormatError, match=r"env\.pkl: \['train'\]\['what is a question of five words'\]\[0\]: label 2"
    ):
        get_source("yahooqa").read(raw, {})


def test_legalqa_missing_column_and_chinese_tokens(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    header = "question: subject,question: body,answer,label\r\n"
    good = (
        header
        + '离婚财产,"离婚时房子怎么分？",按照婚姻法规定分割,1\r\n离婚财产,"离婚时房子怎么分？",交通事故找交警,0\r\n'
    )
    (raw / "LegalQA-manual-dev.csv").write_text(good, encoding="utf-8")
    (raw / "LegalQA-manual-test.csv").write_text(good.replace(",label", ",lab"), encoding="utf-8")
    with pytest.raises(RawFormatError, match=r"LegalQA-manual-test\.csv: line 1: missing column\(s\) \['label'\]"):
        get_source("legalqa_siat").read(raw, {})
    ds = get_source("legalqa_siat").read(raw, {"splits": {"dev": "train"}})
    tokens = ds.questions.tokens.iloc[0]
    assert "离婚" in tokens and len(tokens) > 3


def test_cmeddialog_wrong_encoding_names_line(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    text = "department,title,ask,answer\n肝病科,乙肝,乙肝怎么治？,建议抗病毒治疗\n"
    # UTF-8 bytes read as GB18030: the invalid sequence is reported with its line
    (raw / "neike_sample_5000-6000.gb18030.csv").write_bytes(text.encode("utf-8"))
    with pytest.raises(RawFormatError, match=r"gb18030\.csv: line 2: not valid gb18030"):
        get_source("cmeddialog").read(raw, {})


def test_cmeddialog_says_how_many_duplicate_rows_it_dropped(tmp_path, capsys):
    from ansel.data.readers.cmeddialog import read_csv

    path = tmp_path / "neike_sample_5000-6000.gb18030.csv"
    row = "肝病科,乙肝,乙肝怎么治？,建议抗病毒治疗\n"
    path.write_bytes(f"department,title,ask,answer\n{row}{row}".encode("gb18030"))
    assert len(read_csv(path)) == 1
    assert (
        capsys.readouterr().out == f"{path}: 1 row(s) dropped: each an exact repeat of an earlier one, which is kept\n"
    )


def test_lawqa_fetch_extracts_the_zip_from_a_mirror(tmp_path, monkeypatch):
    import copy
    import hashlib
    import zipfile

    from ansel.data import download

    mirror = tmp_path / "mirror"
    (mirror / "lawqa").mkdir(parents=True)
    archive = mirror / "lawqa" / "lawQA.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for f in sorted((FIXTURES / "lawqa" / "lawQA").iterdir()):
            z.write(f, f"lawQA/{f.name}")
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    sources = copy.deepcopy(download.load_sources())
    entry = sources["lawqa"]["files"][0]  # the real entry, with the fixture's checksum
    entry.pop("git_blob"), entry["mirror"].pop("git_blob")
    entry["sha256"] = entry["mirror"]["sha256"] = digest
    monkeypatch.setattr(download, "load_sources", lambda: sources)
    raw = tmp_path / "raw"
    get_source("lawqa").fetch(raw, mirror, {})
    assert (raw / "lawQA" / "t_r_a_i_n.txt").exists()
    assert len(get_source("lawqa").read(raw, {}).splits["test"]) == 6


def test_unknown_options_are_refused_naming_the_key(tmp_path):
    write_wikiqa(tmp_path / "raw")
    with pytest.raises(KeyError, match=r"wikiqa: unknown read option\(s\) \['drop_question'\]"):
        get_source("wikiqa").read(tmp_path / "raw", {"drop_question": {"no_positive": True}})
    with pytest.raises(KeyError, match=r"trecqa: unknown fetch option\(s\) \['file'\]"):
        get_source("trecqa").fetch(tmp_path / "raw", None, {"file": ["TRAIN.xml"]})


def _append(text: str):
    return lambda path: path.write_bytes(path.read_bytes() + text.encode())


def _empty(path: Path) -> None:
    path.write_bytes(b"")


BIMPM_TRAIN = "1\tHow do I learn ?\tHow can I learn ?\t7\n0\tWhat is x ?\tWho is y ?\t9\n"


@pytest.mark.parametrize(
    "source, fixture, file, edit, said",
    [
        (
            "insuranceqa_v1",
            "insuranceqa_v1",
            "answers.label.token_idx",
            _append("1\tidx_1\n"),
            r": line 5: '1' already given at line 1",
        ),
        (
            "insuranceqa_v1",
            "insuranceqa_v1",
            "answers.label.token_idx",
            _append("a5\tidx_1\n"),
            r": line 5: answer id 'a5' is not an integer",
        ),
        (
            "insuranceqa_v1",
            "insuranceqa_v1",
            "vocabulary",
            _append("idx_1\tother\n"),
            r": line 11: 'idx_1' already given at line 1",
        ),
        (
            "insuranceqa_v1",
            "insuranceqa_v1",
            "question.test1.label.token_idx.pool",
            _empty,
            r": no data rows \(empty\)",
        ),
        ("insuranceqa_v1", "insuranceqa_v1", "answers.label.token_idx", _empty, r": no data rows \(empty\)"),
        ("lawqa", "lawqa", "lawQA/t_r_a_i_n.txt", _empty, r": no data rows \(empty\)"),
        ("quoraqp", None, "train.tsv", _empty, r": no data rows \(empty\)"),
        ("quoraqp", None, "train.tsv", _append("1\ta ?\tb ?\t\n"), r": line 3: pair_ID '' is not an integer"),
        ("quoraqp", None, "train.tsv", _append("1\ta ?\tb ?\t9\n"), r": line 3: pair_ID '9' already given at line 2"),
        (
            "quoraqp_raw",
            "quoraqp",
            "quora_duplicate_questions.tsv",
            lambda p: p.write_text(p.read_text().split("\n")[0] + "\n"),
            r": no data rows \(only the header line\)",
        ),
        (
            "legalqa_siat",
            None,
            "LegalQA-manual-test.csv",
            lambda p: p.write_text("question: subject,question: body,answer,label\r\n"),
            r": no data rows \(only the header line\)",
        ),
    ],
)
def test_a_raw_file_of_an_unobtainable_release_that_breaks_its_format_is_refused_naming_file_and_line(
    tmp_path, source, fixture, file, edit, said
):
    """Files the mirror lacks (insuranceQA v1's answers and tests, LawQA, QuoraQP's train split) are read
    only from the documented format: a repeated id (else one text silently wins), an id the other files
    cannot name, or an empty file (else its split goes missing and an option naming it is blamed)."""
    raw = tmp_path / "raw"
    if fixture:
        shutil.copytree(FIXTURES / fixture, raw)
    else:
        raw.mkdir()
        (raw / "train.tsv").write_text(BIMPM_TRAIN)
        for name in ("dev.tsv", "test.tsv"):
            (raw / name).write_text(BIMPM_TRAIN.replace("\t7", "\t17").replace("\t9", "\t19"))
        for name in ("LegalQA-manual-dev.csv", "LegalQA-manual-test.csv"):
            (raw / name).write_text(
                "question: subject,question: body,answer,label\r\n离婚,房子怎么分？,按法律分割,1\r\n"
            )
    if source == "quoraqp":  # the documented format read right first
        ds = get_source(source).read(raw, {})
        assert ds.splits["train"].label.tolist() == [1, 0] and "train-q7" in set(ds.questions.qid)
    edit(raw / file)
    with pytest.raises(RawFormatError, match=re.escape(str(raw / file)) + said):
        get_source(source).read(raw, {})


def test_an_env_pickle_with_a_split_of_no_questions_names_the_split(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    env = _env([["one positive answer of five words", 1]])
    env["dev"] = {}
    (raw / "env.pkl").write_bytes(pickle.dumps(env))
    with pytest.raises(RawFormatError, match=r"env\.pkl: \['dev'\] holds no questions"):
        get_source("yahooqa").read(raw, {})
