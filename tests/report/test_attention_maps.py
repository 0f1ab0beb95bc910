import numpy as np
import pandas as pd
import pytest

from ansel.report.attention_maps import long_correct_examples, plot_attention_map, window_to_tokens


@pytest.mark.parametrize("kernel,expected", [(1, [0, 1, 2, 3]), (3, [1, 2, 3, 4]), (4, [2, 3, 4, 5])])
def test_each_token_takes_the_window_centred_on_it(kernel, expected):
    # Window j of a wide convolution covers tokens j-k+1 .. j; weights here are the window index.
    weights = np.arange(4 + kernel - 1 + 2)  # two trailing padded windows
    assert window_to_tokens(weights, 4, kernel).tolist() == expected


def test_too_few_window_weights_is_an_error():
    with pytest.raises(ValueError, match="kernel 3"):
        window_to_tokens([0.5, 0.5], 4, 3)


def test_long_correct_examples_keeps_correct_long_answers_longest_first():
    run = pd.DataFrame(
        {"qid": ["q1", "q1", "q2", "q3", "q3"], "aid": ["a", "b", "c", "d", "e"], "score": [0.9, 0.1, 0.8, 0.2, 0.7]}
    )
    qrels = run.assign(label=[1, 0, 1, 1, 0])[["qid", "aid", "label"]]
    lengths = {"a": 120, "b": 10, "c": 300, "d": 500, "e": 50}
    picked = long_correct_examples(run, qrels, lengths, min_length=100, n=5)
    assert picked[["qid", "aid"]].values.tolist() == [["q2", "c"], ["q1", "a"]]  # q3's top answer e is wrong


def test_heat_map_writes_png_and_pdf_and_checks_lengths(tmp_path):
    q, a = "what is term life".split(), ("term life insurance pays a benefit if you die " * 3).split()
    plot_attention_map(q, a, np.full(len(q), 1 / len(q)), np.linspace(0, 1, len(a)), tmp_path / "fig5", title="demo")
    assert (tmp_path / "fig5.png").stat().st_size > 0 and (tmp_path / "fig5.pdf").stat().st_size > 0
    with pytest.raises(ValueError, match="A: 27 tokens but 3"):
        plot_attention_map(q, a, np.ones(4), np.ones(3), tmp_path / "bad")
