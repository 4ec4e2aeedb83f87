"""Task templates of the apps env: what a template declares and the instance a seed makes.

A template builds a :class:`Spec` from the seeded :class:`~adaroll.envs.apps.tasks.world.World`
and the task's generator: it changes the world (adds the message the instruction is about, puts
it on the second page) and says what to do (``instruction``), where the episode starts
(``start``: app and view), what the judge checks (``goal``) and how the expert does it
(``plan``: milestones of the goal with their UI steps). Every template is a row of data
(:mod:`adaroll.envs.apps.tasks.rows`) registered with :func:`register`;
:func:`adaroll.envs.apps.tasks.catalog.instance` builds ``(template, seed)`` deterministically -
the same seed gives the same world, text and goal in every process.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from adaroll.envs.apps.tasks.judge import Allow, Expect, Goal
from adaroll.envs.apps.tasks.plan import Milestone
from adaroll.envs.apps.tasks.world import World

Tables = dict[str, dict[str, list[dict[str, Any]]]]


@dataclass(frozen=True)
class Spec:
    """What a template function returns for one world."""

    instruction: str
    start: tuple[str, str]
    """(app, view hash) the episode starts on, e.g. ``("mail", "#/folder/Inbox")``."""
    plan: tuple[Milestone, ...]
    allow: tuple[Allow, ...] = ()
    """Changes tolerated besides the milestones' expectations (see :class:`Goal`)."""
    goal: tuple[Expect, ...] | None = None
    """What the judge checks; None: every milestone's expectations."""


@dataclass(frozen=True)
class Template:
    name: str
    apps: tuple[str, ...]
    max_steps: int
    summary: str
    build: Callable[[World, random.Random], Spec] = field(repr=False)
    heldout: bool = False
    """Never trained on: its instances form the ``heldout-templates`` split."""

    @property
    def app(self) -> str:
        """The template's family: the app it is about, or ``cross`` for several apps."""
        return self.name.split(".", 1)[0]


@dataclass(frozen=True)
class Instance:
    """One task: ``template`` with the world of ``seed``."""

    template: Template
    seed: int
    instruction: str
    tables: Tables
    start: tuple[str, str]
    goal: Goal
    plan: tuple[Milestone, ...]


TEMPLATES: dict[str, Template] = {}


def register(tpl: Template) -> None:
    """Add ``tpl`` to :data:`TEMPLATES` (a name registered twice is an error)."""
    if tpl.name in TEMPLATES:
        raise ValueError(f"apps task template {tpl.name!r} is registered twice")
    TEMPLATES[tpl.name] = tpl
