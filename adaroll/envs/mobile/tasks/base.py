"""The task contract of the mobile env: templates, their seeded instances and verifiers.

A :class:`TaskTemplate` is separate from the env: it seeds the world (``setup``), words the
instruction, verifies the final app data (``check``) or the answer (``answer``), and scripts
an expert. :func:`instantiate` turns a :class:`TaskSpec` into a frozen :class:`TaskInstance`,
runs the expert once to measure its length, and derives the step limit from it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from random import Random
from types import MappingProxyType
from typing import Any

from adaroll.actions import Action, ActionKind
from adaroll.envs.base import TaskSpec
from adaroll.envs.mobile.expert import Expert
from adaroll.envs.mobile.state import Phone
from adaroll.envs.mobile.system import execute
from adaroll.envs.mobile.world import Apps, home_phone, make_world

TAGS = frozenset(
    {
        "scroll",
        "text",
        "dialog",
        "cross_app",
        "answer",
        "long_press",
        "slider",
        "picker",
        "tabs",
        "multi",
    }
)
"""Skills a template exercises (for reports and balanced splits)."""

EXPERT_STEP_CAP = 80


class TaskTemplate:
    """One kind of task, parameterised by a seed. Subclass and :func:`register`.

    Put values the agent must type in double quotes in ``instruction`` so a policy can copy
    them. ``check`` sees only the final app data (never the actions taken); answer tasks
    define ``answer`` instead and are judged on the text of ``done("...")``.
    """

    name: str = ""
    apps: tuple[str, ...] = ()
    """Apps the task touches (display names); more than one makes it a cross-app task."""
    tags: tuple[str, ...] = ()
    heldout: bool = False
    """Held-out templates are never trained on (split ``heldout-templates``)."""
    family: str = "default"
    """``default``: the templates of the default suite's pools (:data:`TEMPLATES`); ``long``:
    the long-horizon family (:data:`LONG_TEMPLATES`), in a suite's pools only when selected by
    its ``templates`` option."""
    instruction: str = ""
    """``str.format`` text over the params."""

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        """Choose the params and adjust the seeded world so the task is posed (not solved)."""
        raise NotImplementedError

    def check(self, world: Apps, p: MappingProxyType) -> bool:
        """State verifier: does the final app data satisfy the task?"""
        return False

    def answer(self, world: Apps, p: MappingProxyType) -> str | None:
        """Expected answer of an answer task (from the initial world), else None."""
        return None

    def expert(self, x: Expert, p: MappingProxyType) -> Action:
        raise NotImplementedError

    def describe(self, p: MappingProxyType) -> str:
        return self.instruction.format(**p)


TEMPLATES: dict[str, TaskTemplate] = {}
"""The default family: what the default mobile suite draws its pools from."""
LONG_TEMPLATES: dict[str, TaskTemplate] = {}
"""The long-horizon family (experts of 12-40 steps): never in a default pool, only where a
suite's ``templates`` option names them."""
FAMILIES = {"default": TEMPLATES, "long": LONG_TEMPLATES}


def register(cls: type[TaskTemplate]) -> type[TaskTemplate]:
    tpl = cls()
    if not tpl.name or tpl.name in TEMPLATES or tpl.name in LONG_TEMPLATES:
        raise ValueError(f"template name {tpl.name!r} is empty or already registered")
    unknown = set(tpl.tags) - TAGS
    if unknown:
        raise ValueError(f"template {tpl.name}: unknown tags {sorted(unknown)}")
    if tpl.family not in FAMILIES:
        raise ValueError(
            f"template {tpl.name}: unknown family {tpl.family!r}; families: {', '.join(FAMILIES)}"
        )
    FAMILIES[tpl.family][tpl.name] = tpl
    return cls


def all_templates() -> dict[str, TaskTemplate]:
    """Every registered template, of every family, by name."""
    return {**TEMPLATES, **LONG_TEMPLATES}


def normalise_answer(text: str) -> str:
    """Answers compare case-insensitively, ignoring surrounding quotes, spaces and a final dot."""
    text = " ".join(text.casefold().split())
    return re.sub(r"^[\"']+|[\"'.]+$", "", text).strip()


@dataclass(frozen=True, slots=True)
class TaskInstance:
    """One seeded task: its initial phone, instruction, verifier data and step budget.
    Equality is by ``spec`` (the rest follows from it)."""

    spec: TaskSpec
    template: TaskTemplate = field(compare=False)
    params: MappingProxyType = field(compare=False)
    instruction: str = field(compare=False)
    phone: Phone = field(compare=False)
    expected_answer: str | None = field(compare=False)
    max_steps: int = field(compare=False)
    expert_steps: int = field(compare=False)

    def __reduce__(self) -> tuple[Any, ...]:
        return (instantiate, (self.spec,))  # pickles as its spec; rebuilt (and cached) on load

    def verify(self, world: Apps, answer: str | None) -> bool:
        """Success of the episode given the final data and the ``done`` answer (if any)."""
        if self.expected_answer is not None:
            return answer is not None and (
                normalise_answer(answer) == normalise_answer(self.expected_answer)
            )
        return self.template.check(world, self.params)


def max_steps_for(expert_steps: int) -> int:
    """Step budget: 1.5x the expert's length plus 5 (room for a few mistakes, not a search)."""
    return math.ceil(1.5 * expert_steps) + 5


def get_template(name: str) -> TaskTemplate:
    tpl = TEMPLATES.get(name) or LONG_TEMPLATES.get(name)
    if tpl is None:
        raise KeyError(
            f"unknown mobile task template {name!r}; templates: "
            f"{', '.join(sorted(all_templates()))}"
        )
    return tpl


@lru_cache(maxsize=16384)
def instantiate(spec: TaskSpec) -> TaskInstance:
    """The task instance of ``spec`` (cached: instances are immutable)."""
    if spec.env != "mobile":
        raise ValueError(f"task {spec.id} is not a mobile task")
    tpl = get_template(spec.template)
    rng = Random(f"mobile/{spec.template}/{spec.seed}")
    params, world = tpl.setup(rng, make_world(rng))
    frozen = MappingProxyType(dict(params))
    expected = tpl.answer(world, frozen)
    if expected is None and tpl.check(world, frozen):
        raise RuntimeError(f"task {spec.id} is already solved at reset (template bug)")
    draft = TaskInstance(
        spec, tpl, frozen, tpl.describe(frozen), home_phone(world), expected, EXPERT_STEP_CAP, 0
    )
    steps, _ = expert_rollout(draft)
    return TaskInstance(
        spec, tpl, frozen, draft.instruction, draft.phone, expected, max_steps_for(steps), steps
    )


def expert_rollout(
    inst: TaskInstance, phone: Phone | None = None, cap: int = EXPERT_STEP_CAP
) -> tuple[int, bool]:
    """Run the expert from ``phone`` (default: reset) without an env: (steps, success)."""
    phone = inst.phone if phone is None else phone
    for steps in range(1, cap + 1):
        action = inst.template.expert(Expert(phone), inst.params)
        phone = execute(phone, action)
        if action.kind is ActionKind.DONE:
            return steps, inst.verify(phone.apps, action.text)
        if inst.expected_answer is None and inst.verify(phone.apps, None):
            return steps, True
    return cap, False
