"""Every apps task template, by name, and the task instances they make.

Importing this module registers every template (the rows of each app's template module);
:func:`instance` builds ``template#seed`` deterministically - the world from a generator
seeded by the task's name and seed, then the template's changes - and caches it.
"""

from __future__ import annotations

import functools
import random

from adaroll.envs.apps.tasks import admin, calendar, cross, mail, notes, shop, tracker
from adaroll.envs.apps.tasks.base import TEMPLATES, Instance, Template, register
from adaroll.envs.apps.tasks.content import generate
from adaroll.envs.apps.tasks.judge import Goal

for _module in (admin, calendar, mail, notes, shop, tracker, cross):
    for _row in _module.ROWS:
        register(_row.template())


def get_template(name: str) -> Template:
    try:
        return TEMPLATES[name]
    except KeyError:
        raise KeyError(
            f"unknown apps task template {name!r}; see `adaroll envs list apps --templates`"
        ) from None


def all_templates() -> dict[str, Template]:
    return dict(TEMPLATES)


@functools.lru_cache(maxsize=256)
def instance(name: str, seed: int) -> Instance:
    """The task ``name#seed`` (cached: building is deterministic)."""
    tpl = get_template(name)
    rng = random.Random(f"apps:{name}#{seed}")
    world = generate(rng)
    spec = tpl.build(world, rng)
    expects = spec.goal
    if expects is None:
        expects = tuple(e for m in spec.plan for e in m.expects)
    return Instance(
        tpl,
        seed,
        spec.instruction,
        world.tables,
        spec.start,
        Goal(expects, spec.allow),
        spec.plan,
    )
