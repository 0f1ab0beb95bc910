import pytest

from ansel.data.readers.synthetic_mapping import DEFAULTS, SyntheticMapping, generate


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    raw = tmp_path_factory.mktemp("raw")
    SyntheticMapping().fetch(raw, None, {"seed": 1})
    return SyntheticMapping().read(raw, {}).validate()


def test_no_question_shares_a_word_with_any_answer(dataset):
    q_words = {w for tokens in dataset.questions.tokens for w in tokens}
    a_words = {w for tokens in dataset.answers.tokens for w in tokens}
    assert q_words and a_words and not q_words & a_words


def test_one_word_of_the_answer_decides_its_label_through_one_mapping(dataset):
    """Across the corpus, a question's cue (its one word no other question filler shares) pairs with
    one target: every positive holds it, no negative does."""
    q_tokens = dict(zip(dataset.questions.qid, dataset.questions.tokens))
    a_tokens = dict(zip(dataset.answers.aid, dataset.answers.tokens))
    pairs = [c.assign(split=s) for s, c in dataset.splits.items()]
    cues = {}  # cue -> the words every positive of its questions holds
    for cands in pairs:
        for qid, group in cands.groupby("qid"):
            positives = [set(a_tokens[a]) for a in group[group.label == 1].aid]
            negatives = [set(a_tokens[a]) for a in group[group.label == 0].aid]
            assert 1 <= len(positives) <= DEFAULTS["max_positives"] and len(group) == DEFAULTS["candidates"]
            shared = set.intersection(*positives) - set.union(*negatives)
            assert shared, qid  # a word of every positive and of no negative
            for w in q_tokens[qid]:
                cues[w] = cues.get(w, shared) & shared
    # the mapping is a function: each cue word keeps exactly one target over all its questions
    assert sum(len(t) == 1 for t in cues.values()) == DEFAULTS["cues"]


def test_deterministic_in_its_options_and_unknown_ones_refused():
    assert generate({"seed": 4}) == generate({"seed": 4}) != generate({"seed": 5})
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['cue'\]"):
        generate({"cue": 3})
    with pytest.raises(ValueError, match="must exceed max_positives"):
        generate({"candidates": 2})
