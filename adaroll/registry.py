"""Named registries for AdaRoll's variation points (envs, snapshot backends, pivot scorers, ...).

An unknown name fails with the list of valid names, so a typo in a config is a one-line fix.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
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

    ``builtin`` maps names whose entries live elsewhere (e.g. with the env they serve) to the
    module that registers them when imported: the lookup imports it the first time, so the
    registry's package need not import (and depend on) that module's dependencies.
    """

    def __init__(self, kind: str, builtin: Mapping[str, str] | None = None) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._builtin = dict(builtin or {})

    def register(self, name: str) -> Callable[[T], T]:
        def add(obj: T) -> T:
            if name in self._items:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._items[name] = obj
            return obj

        return add

    def get(self, name: str) -> T:
        if name not in self._items and name in self._builtin:
            importlib.import_module(self._builtin[name])
        try:
            return self._items[name]
        except KeyError:
            valid = ", ".join(self.names()) or "(none registered)"
            raise UnknownNameError(f"unknown {self.kind} {name!r}; valid names: {valid}") from None

    def names(self) -> list[str]:
        return sorted(set(self._items) | set(self._builtin))

    def __contains__(self, name: object) -> bool:
        return name in self._items or name in self._builtin

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
