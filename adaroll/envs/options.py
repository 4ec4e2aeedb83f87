"""Env options from YAML into a frozen config dataclass, checked by name and type: a misspelt
option or a value of the wrong kind (``screenshot: "yes"``) is an error naming the option, not
a truthy string accepted or a TypeError at the first browser start."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

T = TypeVar("T")


def config_from_options(cls: type[T], options: Mapping[str, Any], what: str) -> T:
    """``cls(**options)`` after checking every option against ``cls``'s fields and their
    annotated types (YAML lists become tuples; a nested config dataclass may be given as a
    mapping). Raises ValueError naming ``what`` and the option."""
    assert dataclasses.is_dataclass(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(options) - set(names))
    if unknown:
        raise ValueError(
            f"unknown {what} option(s) {', '.join(unknown)}; valid: {', '.join(names)}"
        )
    hints = typing.get_type_hints(cls)
    values = {}
    for name, value in options.items():
        try:
            values[name] = _coerce(value, hints[name], name)
        except _Mismatch:
            raise ValueError(
                f"{what} option {name} must be {_describe(hints[name])}, got {value!r}"
            ) from None
    return cls(**values)


class _Mismatch(Exception):
    pass


def _coerce(value: Any, hint: Any, name: str) -> Any:
    """``value`` as ``hint`` asks; a nested config dataclass's errors name ``name``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        for arm in args:
            try:
                return _coerce(value, arm, name)
            except _Mismatch:
                continue
        raise _Mismatch
    if hint is type(None):
        if value is None:
            return None
        raise _Mismatch
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise _Mismatch
        items = args[:1] * len(value) if len(args) == 2 and args[1] is Ellipsis else args
        if len(items) != len(value):
            raise _Mismatch
        return tuple(_coerce(v, h, name) for v, h in zip(value, items, strict=True))
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        if isinstance(value, hint):
            return value
        if not isinstance(value, Mapping):
            raise _Mismatch
        return config_from_options(hint, value, name)
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise _Mismatch
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise _Mismatch
    if hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise _Mismatch
    if isinstance(hint, type) and not isinstance(value, hint):
        raise _Mismatch
    return value


def _describe(hint: Any) -> str:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in args)
    if hint is type(None):
        return "null"
    if origin is tuple:
        return "a list"
    if dataclasses.is_dataclass(hint):
        return "a mapping of its options"
    return getattr(hint, "__name__", str(hint))
