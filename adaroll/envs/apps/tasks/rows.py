"""Task templates as rows of data, built by one implementation.

Every apps template has the same shape: draw what the task is about from the seeded world
(a message, a folder, a date; a draw may also add or change rows, such as the email a cross-app
task starts from), say what to do, and list milestones - the database changes the judge
checks and the expert's UI steps that make them. A :class:`Row` holds exactly that as data,
with placeholders for what the draws decide (:mod:`adaroll.envs.apps.tasks.fill`), and
:meth:`Row.spec` turns it into the :class:`~adaroll.envs.apps.tasks.base.Spec` of one seed.
A new task is a new row; a new kind of step or draw is the only code it may need.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from adaroll.envs.apps.tasks.base import Spec, Template
from adaroll.envs.apps.tasks.fill import fill_in
from adaroll.envs.apps.tasks.judge import Allow, Expect
from adaroll.envs.apps.tasks.plan import Milestone, Step
from adaroll.envs.apps.tasks.world import World

Params = dict[str, Any]
"""What a seed drew, by name (a row's placeholders name them)."""
Draw = Callable[[World, random.Random, Params], Any]
"""One draw: from the world, the task's generator and what was drawn before it. The draws of a
row run in order, so that a seed's random numbers are taken in the same order every time."""


@dataclass(frozen=True)
class Opens:
    """The steps to the page of a drawn record: ``path(params[record], *later)``; ``later``:
    views past that page that still count as being on it (its edit form)."""

    path: Callable[..., tuple[Step, ...]]
    record: str
    later: tuple[str, ...] = ()


@dataclass(frozen=True)
class Work:
    """One milestone of a row's plan, with placeholders: the changes it makes (``expects``) and
    its steps, where an :class:`Opens` stands for the steps to a record's page."""

    name: str
    expects: tuple[Expect, ...]
    steps: tuple[Step | Opens, ...]
    judged: bool = True
    """False: a step on the way (an item in the cart, the email read) the expert needs and the
    judge does not ask for."""

    def milestone(self, params: Params) -> Milestone:
        steps: list[Step] = []
        for step in self.steps:
            if isinstance(step, Opens):
                steps.extend(step.path(params[step.record], *fill_in(step.later, params)))
            else:
                steps.append(fill_in(step, params))
        return Milestone(fill_in(self.name, params), fill_in(self.expects, params), tuple(steps))


@dataclass(frozen=True)
class Row:
    """One task template: its name (``app.verb_object``), listing, start, draws, instruction
    and plan."""

    name: str
    summary: str
    max_steps: int
    start: tuple[str, str]
    """(app, view hash) the episode starts on."""
    draws: Mapping[str | tuple[str, ...], Draw]
    """Parameter name (several, for a draw that returns as many values) -> its draw, in order."""
    instruction: str
    plan: tuple[Work, ...]
    allow: tuple[Allow, ...] = ()
    """Changes tolerated besides the plan's (an order empties the cart)."""
    apps: tuple[str, ...] = ()
    """The apps it needs; default: the app its name starts with."""
    heldout: bool = False

    def spec(self, world: World, rng: random.Random) -> Spec:
        """This template on ``world``: the draws made (and their changes to it), every
        placeholder filled in."""
        params: Params = {}
        for names, draw in self.draws.items():
            value = draw(world, rng, params)
            if isinstance(names, tuple):
                params.update(zip(names, value, strict=True))
            else:
                params[names] = value
        plan = tuple(work.milestone(params) for work in self.plan)
        goal = None
        if not all(work.judged for work in self.plan):
            judged = zip(self.plan, plan, strict=True)
            goal = tuple(e for work, m in judged if work.judged for e in m.expects)
        return Spec(self.instruction.format_map(params), self.start, plan, self.allow, goal)

    def template(self) -> Template:
        apps = self.apps or (self.name.split(".", 1)[0],)
        return Template(self.name, apps, self.max_steps, self.summary, self.spec, self.heldout)
