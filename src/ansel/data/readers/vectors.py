"""Word-vector sources (``kind: vectors`` in sources.yaml: GloVe, GoogleNews word2vec): fetched,
pinned and verified like a dataset's raw files; ``ansel.pretrained`` reads them, not a reader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ansel.data.canonical import Dataset
from ansel.data.download import load_sources
from ansel.data.readers import common
from ansel.data.registry import source


class Vectors(common.Reader):
    def check(self, options: dict[str, Any], fetch: dict[str, Any] | None = None) -> None:
        """Refused as a dataset's source before anything runs (``ansel.config``)."""
        raise KeyError(self._not_a_dataset())

    def read(self, raw_dir: Path, options: dict[str, Any]) -> Dataset:
        raise TypeError(self._not_a_dataset())

    def _not_a_dataset(self) -> str:
        return f"{self.name}: word vectors, not a dataset: name it in embeddings.pretrained, not as a dataset's source"


for _name, _spec in load_sources().items():
    if _spec.get("kind") == "vectors":
        source(_name)(type(f"Vectors_{_name}", (Vectors,), {}))
