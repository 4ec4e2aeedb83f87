"""Placeholders in a template row's data, filled in with what one seed drew.

A row (:mod:`adaroll.envs.apps.tasks.rows`) is written once for every seed, so whatever depends
on the seed stands in it as a placeholder naming a drawn parameter:

* in text, ``str.format`` fields: ``'Archive "{m[subject]}"'``, ``"{to.email}"``, a row's key
  ``"{m[id]}"`` (the judge keys rows by their primary key as text);
* where the value must keep its type (a row id the judge compares as a number, a quantity),
  :func:`ref`.

:func:`fill_in` resolves both anywhere in a row's steps, locators and expectations: nested
tuples, dicts and frozen dataclasses are rebuilt with their placeholders replaced; anything else
(numbers, ``None``, functions) is kept as it is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

T = TypeVar("T")


@dataclass(frozen=True)
class Ref:
    """The drawn parameter ``name`` (its ``field`` when given) as it is, not as text."""

    name: str
    field: str | None = None

    def value(self, params: Mapping[str, Any]) -> Any:
        drawn = params[self.name]
        return drawn if self.field is None else drawn[self.field]


def ref(name: str, field: str | None = None) -> Any:
    """A :class:`Ref`, typed ``Any`` so that it can stand in a field typed for the value it
    becomes (``Expect(values={"reply_to": ref("m", "id")})``)."""
    return Ref(name, field)


def fill_in(data: T, params: Mapping[str, Any]) -> T:
    """``data`` with every placeholder replaced by the parameters' values (module docstring)."""
    return cast(T, _fill(data, params))


def _fill(data: Any, params: Mapping[str, Any]) -> Any:
    if isinstance(data, str):
        return data.format_map(params)
    if isinstance(data, Ref):
        return data.value(params)
    if isinstance(data, tuple):
        return tuple(_fill(item, params) for item in data)
    if isinstance(data, dict):
        return {key: _fill(value, params) for key, value in data.items()}
    if dataclasses.is_dataclass(data) and not isinstance(data, type):
        filled = {
            f.name: _fill(getattr(data, f.name), params) for f in dataclasses.fields(data) if f.init
        }
        return dataclasses.replace(data, **filled)
    return data
