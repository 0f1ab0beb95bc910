"""The project's YAML files read strictly: a syntax error or a key given twice in one mapping
names the file and the line (PyYAML keeps the last of two equal keys silently; Snakemake's own
message for a broken config file names neither). ``<<`` merges may override what they bring in."""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path
from typing import Any

import yaml

from ansel.settings import ConfigError

try:  # the C parser: specs are read at every DAG build
    from yaml import CSafeLoader as _Base
except ImportError:  # PyYAML built without libyaml
    from yaml import SafeLoader as _Base  # type: ignore[assignment]


class _StrictLoader(_Base):
    path = ""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: dict[str, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(key_node, yaml.ScalarNode):
                continue
            line = key_node.start_mark.line + 1
            if key_node.value in seen:
                raise ConfigError(
                    f"{self.path}:{line}: key {key_node.value!r} given twice in one mapping "
                    f"(first on line {seen[key_node.value]}): keep one"
                )
            seen[key_node.value] = line
        return super().construct_mapping(node, deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _StrictLoader.construct_mapping)


def read_yaml(path: str | Path, text: str | None = None) -> Any:
    """The YAML document of ``path`` (or ``text``, named by ``path``)."""
    loader = type("Loader", (_StrictLoader,), {"path": str(path)})
    try:
        return yaml.load(Path(path).read_text(encoding="utf-8") if text is None else text, Loader=loader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise ConfigError(f"{where}: not valid YAML: {getattr(e, 'problem', None) or e}") from None
