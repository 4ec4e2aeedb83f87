"""Env options from YAML: checked by name and annotated type, lists become tuples, a nested
config may be a mapping; every error names the option."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from adaroll.envs.options import config_from_options


@dataclass(frozen=True)
class Inner:
    size: tuple[int, int] = (1, 2)
    args: tuple[str, ...] = ()
    path: str | None = None


@dataclass(frozen=True)
class Outer:
    on: bool = False
    count: int = 1
    rate: float = 0.5
    limit: int | None = None
    inner: Inner = field(default_factory=Inner)


def test_valid_options_are_converted():
    got = config_from_options(
        Outer,
        {"on": True, "rate": 2, "limit": None, "inner": {"size": [3, 4], "args": ["a", "b"]}},
        "test",
    )
    assert got == Outer(on=True, rate=2.0, inner=Inner(size=(3, 4), args=("a", "b")))
    assert isinstance(got.rate, float)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"nope": 1}, "unknown test option(s) nope; valid: on, count, rate, limit, inner"),
        ({"on": "yes"}, "test option on must be bool, got 'yes'"),
        ({"count": True}, "test option count must be int, got True"),
        ({"count": 1.5}, "test option count must be int, got 1.5"),
        ({"limit": "3"}, "test option limit must be int or null, got '3'"),
        ({"inner": 3}, "test option inner must be a mapping of its options, got 3"),
        ({"inner": {"size": [1]}}, "inner option size must be a list, got [1]"),
        ({"inner": {"args": ["a", 2]}}, "inner option args must be a list, got ['a', 2]"),
        ({"inner": {"bad": 1}}, "unknown inner option(s) bad; valid: size, args, path"),
    ],
)
def test_bad_options_name_the_option(options, message):
    with pytest.raises(ValueError) as raised:
        config_from_options(Outer, options, "test")
    assert str(raised.value) == message
