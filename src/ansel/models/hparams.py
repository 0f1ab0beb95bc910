"""Hyperparameters with range checks (no torch): the base of every architecture's dataclass.

A field declared ``hparam(default, *checks)`` is checked when its dataclass is built: each
check gets (value, the whole dataclass) and says what is wrong, or None; the first failure
raises ``SettingError`` for that key, so ``ansel.settings.parse`` names its path. Checks run in
field order, so a field is checked against fields already known to be valid (``heads``
against ``embedding_dim``). ``None`` values are not checked: they mean "derived"
(``ffn_dim: None`` is 4 x embedding_dim).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from ansel.settings import SettingError

Check = Callable[[Any, Any], "str | None"]

# The names the composition and scorer hyperparameters accept (``compositions.make_composition``,
# ``scorers.make_scorer``), here so that configs are checked without torch.
COMPOSITIONS = ("max", "attention", "multihop")
SCORERS = ("cosine", "mlp")


def hparam(default: Any, *checks: Check) -> Any:
    return dataclasses.field(default=default, metadata={"checks": checks})


def positive(value: Any, hparams: Any) -> str | None:
    return None if value > 0 else "is not positive"


def fraction(value: Any, hparams: Any) -> str | None:
    """A dropout rate: 1 would drop everything."""
    return None if 0 <= value < 1 else "is not in [0, 1)"


def one_of(*values: Any) -> Check:
    return lambda value, hparams: None if value in values else f"is not one of {', '.join(map(str, values))}"


def divides(key: str) -> Check:
    def check(value: Any, hparams: Any) -> str | None:
        total = getattr(hparams, key)
        return None if total % value == 0 else f"does not divide {key} {total}"

    return check


@dataclasses.dataclass
class HParams:
    """Base of every architecture's hyperparameters: an instance is always in range."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is None:
                continue
            for check in field.metadata.get("checks", ()):
                wrong = check(value, self)
                if wrong:
                    raise SettingError(field.name, f"{value!r} {wrong}")


@dataclasses.dataclass
class TextMatchConfig(HParams):
    """Shared by the MatchZoo-family models (aMV-LSTM paper): each pads or truncates its inputs to
    fixed lengths, as MatchZoo 1.x's generators feed them (their top-k, pooling and softmax
    layers see the padding), and ends in ``classes`` outputs: 1 is a ranking score, 2 a two-way
    softmax head for pair classification (``layers.OutputHead``)."""

    text1_maxlen: int = hparam(10, positive)
    text2_maxlen: int = hparam(40, positive)
    classes: int = hparam(1, one_of(1, 2))
    # the word vectors scaled to unit length first (the configs that load MatchZoo's "_norm" files)
    normalize_embeddings: bool = False
