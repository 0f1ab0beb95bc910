"""Installed into the peer environment's site-packages by setup.sh: what MatchZoo-py 1.1.1 needs from
Python 3.11 and NLTK to run unpatched here.

- ``collections.Iterable`` and its kin moved to ``collections.abc`` (Python 3.10 removed the aliases
  MatchZoo-py's code still imports).
- ``nltk.word_tokenize`` first splits sentences with the Punkt model, whose data NLTK downloads from
  GitHub at first use, which this machine cannot reach: the same word tokenizer without the sentence
  split (as ansel's own ``nltk_words``). It only changes preprocessing, never a timed phase.
"""

import collections
import collections.abc

for _name in ("Iterable", "Mapping", "MutableMapping", "Sequence", "Callable"):
    setattr(collections, _name, getattr(collections.abc, _name))


def _word_tokenize(text, language="english", preserve_line=False):
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer().tokenize(text)


try:
    import nltk

    nltk.word_tokenize = _word_tokenize
    nltk.tokenize.word_tokenize = _word_tokenize
except ImportError:  # the environment is being built
    pass
