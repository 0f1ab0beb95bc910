"""Published vectors files: GloVe text (plain, .gz, the .zip member), word2vec text and binary;
GloVe 840B's tokens with spaces; malformed lines counted and named, never words."""

import gzip
import zipfile

import numpy as np
import pytest

from ansel.data.vocab import Vocab
from ansel.pretrained import load_pretrained

VOCAB = Vocab(["<pad>", "<unk>", "the", "apple", ". . .", "zebra"])
ROWS = {"the": [0.5, -1.0, 2.0], "Apple": [1.5, 0.25, -3.0], ". . .": [7.0, 8.0, 9.0], "other": [0.0, 1.0, 0.0]}


def glove_text(extra: str = "") -> str:
    return "".join(f"{w} {' '.join(map(str, v))}\n" for w, v in ROWS.items()) + extra


def check(matrix, coverage):
    assert np.allclose(matrix[VOCAB.index["the"]], ROWS["the"])
    assert np.allclose(matrix[VOCAB.index["apple"]], ROWS["Apple"])  # lower-cased match
    assert np.allclose(matrix[VOCAB.index[". . ."]], ROWS[". . ."])  # the token with spaces
    assert coverage == pytest.approx(3 / 4) and not matrix[0].any()


@pytest.mark.parametrize("kind", ["txt", "gz", "zip", "w2v-header"])
def test_text_formats_give_the_same_rows(tmp_path, kind):
    text = glove_text()
    if kind == "txt":
        path = tmp_path / "glove.txt"
        path.write_text(text)
    elif kind == "gz":
        path = tmp_path / "glove.txt.gz"
        path.write_bytes(gzip.compress(text.encode()))
    elif kind == "zip":
        path = tmp_path / "glove.840B.3d.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("glove.840B.3d.txt", text)
    else:
        path = tmp_path / "vectors.txt"
        path.write_text(f"{len(ROWS)} 3\n" + text)
    matrix, coverage, report = load_pretrained(path, VOCAB, 3)
    check(matrix, coverage)
    assert report.words == 4 and report.malformed == 0


def test_word2vec_binary(tmp_path):
    body = b"".join(w.encode() + b" " + np.asarray(v, "<f4").tobytes() + b"\n" for w, v in ROWS.items() if " " not in w)
    path = tmp_path / "GoogleNews-vectors-negative3.bin.gz"
    path.write_bytes(gzip.compress(b"3 3\n" + body))
    matrix, coverage, report = load_pretrained(path, VOCAB, 3)
    assert np.allclose(matrix[VOCAB.index["apple"]], ROWS["Apple"]) and coverage == pytest.approx(2 / 4)
    assert report.words == 3
    path.write_bytes(gzip.compress(b"4 3\n" + body))  # says 4 words, holds 3
    with pytest.raises(ValueError, match="ends inside word 4 of 4"):
        load_pretrained(path, VOCAB, 3)


def test_malformed_lines_are_counted_and_named_not_read_as_words(tmp_path):
    path = tmp_path / "glove.txt"
    bad = "zebra 1.0 2.0\nzebra 1.0 x 3.0\n"  # too few values; a number that does not parse
    path.write_bytes(glove_text(bad).encode() + b"\xff\xfe 1 2 3\n")
    matrix, coverage, report = load_pretrained(path, VOCAB, 3)
    check(matrix, coverage)  # zebra never read
    assert report.malformed == 3 and report.words == 4
    assert report.places[0].startswith(f"{path}:5: 2 values") and f"{path}:7:" in report.places[2]


def test_a_file_of_another_dimension_is_an_error_naming_it(tmp_path):
    path = tmp_path / "glove.6B.50d.txt"
    path.write_text(glove_text())
    with pytest.raises(ValueError, match=r"glove.6B.50d.txt:1: the first vector has 3 values, expected 50"):
        load_pretrained(path, VOCAB, 50)
    with pytest.raises(ValueError, match=r"glove.6B.50d.txt:1: the first vector has 3 values, expected 2"):
        load_pretrained(path, VOCAB, 2)
