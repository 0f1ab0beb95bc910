"""A registry of the kinds of one sort of paper item (``ansel.table_kinds``, ``ansel.figure_kinds``):
a spec's ``kind`` names a registered class, of which one stateless instance is kept."""

from __future__ import annotations

from typing import Callable, Generic, Protocol, TypeVar

from ansel.settings import ConfigError


class Named(Protocol):
    name: str


K = TypeVar("K", bound=Named)


class Kinds(Generic[K]):
    def __init__(self, what: str):
        self.what = what  # "table kind", "figure kind": for the messages
        self._by_name: dict[str, K] = {}

    def register(self, name: str) -> Callable[[type[K]], type[K]]:
        """Class decorator: sets the class's ``name`` and registers one instance of it under that name."""

        def wrap(cls: type[K]) -> type[K]:
            if name in self._by_name:
                raise ValueError(f"{self.what} {name!r} registered twice")
            cls.name = name
            self._by_name[name] = cls()
            return cls

        return wrap

    def known(self) -> list[str]:
        """The registered kinds' names."""
        return sorted(self._by_name)

    def of(self, name: str, item: str) -> K:
        """The kind ``name`` that ``item`` (e.g. "table t") names; an unknown one is refused naming both."""
        if name not in self._by_name:
            raise ConfigError(f"{item}: unknown kind {name!r}; known: {', '.join(self.known())}")
        return self._by_name[name]
