"""Issue 54 item 9: one (question, answer) pair given labels 0 and 1 is refused naming the file and
both lines, before anything is written; a --configfile with a key given twice is refused naming it."""

import json
import subprocess
import sys

import pytest

from ansel import cli

HEADER = "QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel\n"


def test_a_pair_labelled_both_ways_is_refused_naming_both_lines(tmp_path):
    raw, out = tmp_path / "raw", tmp_path / "processed/wikiqa"
    raw.mkdir()
    rows = {
        "train": ["Q1\tcaves?\tD1\tCave\tD1-0\tcaves form in ice .\t1", "Q1\tcaves?\tD1\tCave\tD1-1\tno .\t0"],
        "dev": [
            "Q2\thamlet?\tD2\tHamlet\tD2-0\tshakespeare wrote it .\t0",
            "Q2\thamlet?\tD2\tHamlet\tD2-1\tno .\t0",
            "Q2\thamlet?\tD2\tHamlet\tD2-0\tshakespeare wrote it .\t1",
        ],
        "test": ["Q3\tsun?\tD3\tSun\tD3-0\tthe sun is a star .\t1", "Q3\tsun?\tD3\tSun\tD3-1\tno .\t0"],
    }
    for split, lines in rows.items():
        (raw / f"WikiQA-{split}.tsv").write_text(HEADER + "\n".join(lines) + "\n")
    (raw / "manifest.json").write_text("{}")  # as the download step leaves it (lists nothing to check here)
    with pytest.raises(
        SystemExit,
        match=r"^ansel preprocess: wikiqa: question 'Q2' and answer 'D2-0' \(dev\) are labelled 0 "
        r"\(WikiQA-dev\.tsv:2\) and 1 \(WikiQA-dev\.tsv:4\)",
    ):
        cli.main(
            [
                "preprocess",
                "--dataset",
                "wikiqa",
                "--raw",
                str(raw),
                "--out",
                str(out),
                "--config",
                json.dumps(
                    {"source": "wikiqa", "read": {"tokenizer": "whitespace"}, "splits": ["train", "dev", "test"]}
                ),
            ]
        )
    assert not out.exists()


def test_a_pair_listed_twice_alike_is_kept_once():
    import pandas as pd

    from ansel.data.preprocess import LabelConflictError, from_pairs

    pairs = pd.DataFrame(
        {"split": ["test"] * 3, "qid": ["q1"] * 3, "question": ["q"] * 3, "answer": ["x", "x", "y"], "label": [1, 1, 0]}
    )
    assert from_pairs("d", pairs, "whitespace").splits["test"].label.tolist() == [1, 0]
    with pytest.raises(LabelConflictError, match=r"labelled 1 \(row 1\) and 0 \(row 2\)"):
        from_pairs("d", pairs.assign(label=[1, 0, 0]), "whitespace")


def test_a_configfile_with_a_key_given_twice_is_refused_naming_file_and_lines(repo_root, tmp_path):
    extra = tmp_path / "mine.yaml"
    extra.write_text("preset: smoke\nseeds: 1\nseeds: 3\n")
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", str(extra)],
        cwd=repo_root,
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert f"{extra}:3: key 'seeds' given twice in one mapping (first on line 2)" in done.stdout + done.stderr
