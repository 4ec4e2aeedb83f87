"""MobileTaskSuite: the templates, the named splits and the scripted expert of the mobile env.

Splits are deterministic given the suite ``seed`` and use disjoint seed ranges, so no task
instance appears in two splits:

* ``train``             - ``n_train`` instances, templates taken round-robin from a seeded
                          shuffle of the trainable templates (so they are spread evenly);
* ``val``               - new seeds of the templates that occur in ``train``: every selection
                          (best policy, early stopping, option choices) reads this split;
* ``heldout``           - new seeds of the templates that occur in ``train`` (report only);
* ``heldout-templates`` - instances of the templates marked ``heldout`` (never trained on);
* ``pretrain``          - a separate pool over all trainable templates (used to SFT the Base
                          policy; it overlaps ``train`` in templates, never in instances).
"""

from __future__ import annotations

import statistics
from functools import cache
from random import Random
from typing import Any

from adaroll.actions import Action
from adaroll.envs.base import SUITES, GUIEnv, TaskSpec, TaskSuite
from adaroll.envs.mobile.apps import APP_NAMES
from adaroll.envs.mobile.env import MobileEnv
from adaroll.envs.mobile.expert import Expert
from adaroll.envs.mobile.interruptions import clear_action
from adaroll.envs.mobile.tasks import TEMPLATES, TaskInstance, get_template, instantiate

SPLITS = ("pretrain", "train", "val", "heldout", "heldout-templates")
_SEED_BASE = {"train": 0, "heldout": 1_000_000, "heldout-templates": 2_000_000, "pretrain": 3_000_000,
              "val": 4_000_000}  # fmt: skip
_SEED_RANGE = 1_000_000


@cache
def difficulty(template: str, seeds: tuple[int, ...] = (0, 1, 2)) -> float:
    """Median number of expert steps over a few seeds: the template's difficulty signal."""
    return statistics.median(instantiate(TaskSpec("mobile", template, s)).expert_steps for s in seeds)


@SUITES.register("mobile")
class MobileTaskSuite(TaskSuite):
    """Templates, splits and experts of the embedded phone.

    Defaults are sized for a 15-minute CPU pipeline; every size is an argument.
    """

    def __init__(self, seed: int = 0, n_train: int = 40, n_heldout: int = 40,
                 n_heldout_templates: int = 20, n_pretrain: int = 200, n_val: int | None = None,
                 heldout_templates: tuple[str, ...] | None = None) -> None:  # fmt: skip
        """``n_val`` defaults to ``n_heldout`` (selection and report on equally sized splits)."""
        n_val = n_heldout if n_val is None else n_val
        for name, n in (("n_train", n_train), ("n_heldout", n_heldout), ("n_val", n_val),
                        ("n_heldout_templates", n_heldout_templates), ("n_pretrain", n_pretrain)):  # fmt: skip
            if not isinstance(n, int) or n < 0:
                raise ValueError(f"{name} must be a non-negative int, got {n!r}")
        self.seed = seed
        self.sizes = {"train": n_train, "val": n_val, "heldout": n_heldout,
                      "heldout-templates": n_heldout_templates, "pretrain": n_pretrain}  # fmt: skip
        if heldout_templates is None:
            held = sorted(n for n, t in TEMPLATES.items() if t.heldout)
        else:
            for name in heldout_templates:
                get_template(name)
            held = sorted(heldout_templates)
        self._heldout = tuple(held)
        trainable = sorted(set(TEMPLATES) - set(held))
        Random(f"mobile-suite/{seed}/order").shuffle(trainable)
        self._trainable = tuple(trainable)
        self._splits: dict[str, list[TaskSpec]] = {}

    # -- templates ----------------------------------------------------------------------------
    def policy_hints(self) -> dict[str, Any]:
        """The launcher's app names: visible on the home screen, so not privileged."""
        return {"app_names": tuple(APP_NAMES)}

    def templates(self) -> list[str]:
        return sorted(TEMPLATES)

    def trainable_templates(self) -> list[str]:
        """Templates that may be trained on (all but the held-out ones), in split order."""
        return list(self._trainable)

    def heldout_templates(self) -> list[str]:
        return list(self._heldout)

    def template_info(self, name: str) -> dict[str, Any]:
        t = get_template(name)
        return {"name": name, "apps": list(t.apps), "tags": list(t.tags), "heldout": name in self._heldout,
                "answer": "answer" in t.tags, "difficulty": difficulty(name)}  # fmt: skip

    # -- splits -------------------------------------------------------------------------------
    def split(self, name: str) -> list[TaskSpec]:
        if name not in SPLITS:
            raise KeyError(f"unknown split {name!r}; splits: {', '.join(SPLITS)}")
        if name not in self._splits:
            self._splits[name] = self._make(name)
        return list(self._splits[name])

    def _make(self, name: str) -> list[TaskSpec]:
        n = self.sizes[name]
        if name == "heldout-templates":
            pool = list(self._heldout)
        elif name in ("val", "heldout"):
            pool = sorted({t.template for t in self.split("train")}, key=self._trainable.index)
        else:
            pool = list(self._trainable)
        if n and not pool:
            raise ValueError(f"split {name!r} has no templates to draw from")
        rng = Random(f"mobile-suite/{self.seed}/{name}")
        seeds: set[tuple[str, int]] = set()
        out = []
        for i in range(n):
            template = pool[i % len(pool)]
            while True:
                s = _SEED_BASE[name] + rng.randrange(_SEED_RANGE)
                if (template, s) not in seeds:
                    seeds.add((template, s))
                    break
            out.append(TaskSpec("mobile", template, s))
        return out

    # -- experts ------------------------------------------------------------------------------
    def instance(self, task: TaskSpec) -> TaskInstance:
        return instantiate(task)

    def expert_action(self, env: GUIEnv) -> Action:
        """The scripted expert's next action from ``env``'s current state (any state its own
        trajectory passes through). On a noisy device it first deals with the interruption on
        screen, as a person would (:func:`~.interruptions.clear_action`)."""
        if not isinstance(env, MobileEnv):
            raise TypeError(f"the mobile expert drives a MobileEnv, got {type(env).__name__}")
        inst = env.task_instance
        intr = env.interruption
        if intr is None:
            return inst.template.expert(Expert(env.phone), inst.params)
        planned = inst.template.expert(Expert(env.phone), inst.params) if not intr.modal else None
        return clear_action(intr, planned)
