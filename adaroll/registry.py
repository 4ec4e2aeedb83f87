"""Named registries for AdaRoll's variation points (envs, snapshot backends, pivot scorers, ...).

An unknown name fails with the list of valid names, so a typo in a config is a one-line fix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class UnknownNameError(KeyError):
    """Raised when a registry is asked for a name it does not hold."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


class Registry(Generic[T]):
    """A mapping from names to objects of one kind, filled by a decorator.

    >>> scorers: Registry[Callable] = Registry("pivot scorer")
    >>> @scorers.register("all")
    ... def score_all(evidence): return 1.0
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def add(obj: T) -> T:
            if name in self._items:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._items[name] = obj
            return obj

        return add

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            valid = ", ".join(sorted(self._items)) or "(none registered)"
            raise UnknownNameError(f"unknown {self.kind} {name!r}; valid names: {valid}") from None

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
