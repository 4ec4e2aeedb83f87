"""Draws the templates of several apps share (a row's ``draws``: :data:`~.rows.Draw`)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from adaroll.envs.apps.tasks.rows import Draw, Params
from adaroll.envs.apps.tasks.world import Person, World


def among(*options: Any) -> Draw:
    """One of ``options``."""

    def draw(w: World, rng: random.Random, p: Params) -> Any:
        return rng.choice(options)

    return draw


def other_than(record: str, column: str, options: tuple[Any, ...]) -> Draw:
    """One of ``options`` other than what the drawn ``record`` holds in ``column`` (a new
    role, another folder)."""

    def draw(w: World, rng: random.Random, p: Params) -> Any:
        return rng.choice([o for o in options if o != p[record][column]])

    return draw


def between(low: int, high: int) -> Draw:
    """A whole number from ``low`` to ``high``, both included."""

    def draw(w: World, rng: random.Random, p: Params) -> int:
        return rng.randint(low, high)

    return draw


def row_of(app: str, table: str) -> Draw:
    """Any row of ``app.table``."""

    def draw(w: World, rng: random.Random, p: Params) -> dict[str, Any]:
        return rng.choice(w.rows(app, table))

    return draw


def anyone(w: World, rng: random.Random, p: Params) -> Person:
    """Any person of the world."""
    return w.person()


def derived(compute: Callable[[Params], Any]) -> Draw:
    """A value computed from earlier draws, drawing nothing (the words an instruction needs)."""

    def draw(w: World, rng: random.Random, p: Params) -> Any:
        return compute(p)

    return draw
