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

By default the pools draw from the default family of templates (:data:`TEMPLATES`) only. The
``templates`` option names the templates to draw from instead, of either family (the
long-horizon ones, :data:`LONG_TEMPLATES`, enter a pool only this way); the held-out ones among
them make ``heldout-templates`` (empty when none is). A long task whose scripted expert fails
on its seed, on the clean, the noisy or the run's own device, is dropped from the pool with a
logged warning (kept in :attr:`MobileTaskSuite.dropped`) and another seed is drawn.
"""

from __future__ import annotations

import logging
import statistics
from functools import cache, lru_cache
from random import Random
from typing import Any

from adaroll.actions import Action
from adaroll.envs.base import SUITES, GUIEnv, TaskSpec, TaskSuite
from adaroll.envs.mobile.apps import APP_NAMES
from adaroll.envs.mobile.device import DeviceProfile, resolve_profile
from adaroll.envs.mobile.env import MobileEnv
from adaroll.envs.mobile.expert import Expert
from adaroll.envs.mobile.interruptions import clear_action
from adaroll.envs.mobile.tasks import (
    LONG_TEMPLATES,
    TEMPLATES,
    TaskInstance,
    all_templates,
    get_template,
    instantiate,
)

log = logging.getLogger(__name__)

SPLITS = ("pretrain", "train", "val", "heldout", "heldout-templates")
_SEED_BASE = {
    "train": 0,
    "heldout": 1_000_000,
    "heldout-templates": 2_000_000,
    "pretrain": 3_000_000,
    "val": 4_000_000,
}
_SEED_RANGE = 1_000_000
MAX_DROPS_PER_TEMPLATE = 20
"""A template whose expert fails on this many seeds of one split in a row is a bug, not noise."""


@cache
def difficulty(template: str, seeds: tuple[int, ...] = (0, 1, 2)) -> float:
    """Median number of expert steps over a few seeds: the template's difficulty signal."""
    return statistics.median(
        instantiate(TaskSpec("mobile", template, s)).expert_steps for s in seeds
    )


def _verification_devices(env_options: dict[str, Any]) -> tuple[DeviceProfile, ...]:
    """The clean and noisy profiles, and the run's own device when it is another one."""
    devices = [resolve_profile("clean"), resolve_profile("noisy")]
    own = env_options.get("device")
    if own is not None and resolve_profile(own) not in devices:
        devices.append(resolve_profile(own))
    return tuple(devices)


@SUITES.register("mobile")
class MobileTaskSuite(TaskSuite):
    """Templates, splits and experts of the embedded phone.

    Defaults are sized for a 15-minute CPU pipeline; every size is an argument.
    """

    takes_env_options = True
    """:func:`adaroll.envs.get_suite` passes ``env.options`` first: long tasks are verified on
    the run's device too."""

    def __init__(
        self,
        env_options: dict[str, Any] | None = None,
        /,
        seed: int = 0,
        n_train: int = 40,
        n_heldout: int = 40,
        n_heldout_templates: int = 20,
        n_pretrain: int = 200,
        n_val: int | None = None,
        heldout_templates: tuple[str, ...] | None = None,
        templates: list[str] | None = None,
    ) -> None:
        """``n_val`` defaults to ``n_heldout`` (selection and report on equally sized splits).
        ``templates``: draw the pools from these templates (of any family) instead of the
        default family."""
        n_val = n_heldout if n_val is None else n_val
        for name, n in (
            ("n_train", n_train),
            ("n_heldout", n_heldout),
            ("n_val", n_val),
            ("n_heldout_templates", n_heldout_templates),
            ("n_pretrain", n_pretrain),
        ):
            if not isinstance(n, int) or n < 0:
                raise ValueError(f"{name} must be a non-negative int, got {n!r}")
        self.seed = seed
        self.sizes = {
            "train": n_train,
            "val": n_val,
            "heldout": n_heldout,
            "heldout-templates": n_heldout_templates,
            "pretrain": n_pretrain,
        }
        self._devices = _verification_devices(env_options or {})
        self.dropped: list[tuple[str, str]] = []
        """(task id, reason) of every long task dropped from a pool because its expert failed."""
        if templates is None:
            chosen = set(TEMPLATES)
        else:
            if isinstance(templates, str) or not templates:
                raise ValueError(
                    f"templates must be a non-empty list of template names, got {templates!r}"
                )
            unknown = sorted(set(templates) - set(all_templates()))
            if unknown:
                raise ValueError(
                    f"templates: unknown mobile task template(s) {', '.join(unknown)}; see "
                    "`adaroll envs list mobile --lengths` for every template"
                )
            chosen = set(templates)
        self.only = None if templates is None else tuple(sorted(chosen))
        """The ``templates`` option (None: the default family)."""
        if heldout_templates is None:
            held = sorted(n for n in chosen if get_template(n).heldout)
        else:
            for name in heldout_templates:
                get_template(name)
            held = sorted(heldout_templates)
        self._heldout = tuple(held)
        trainable = sorted(chosen - set(held))
        Random(f"mobile-suite/{seed}/order").shuffle(trainable)
        self._trainable = tuple(trainable)
        self._splits: dict[str, list[TaskSpec]] = {}

    # -- templates ----------------------------------------------------------------------------
    def policy_hints(self) -> dict[str, Any]:
        """The launcher's app names: visible on the home screen, so not privileged."""
        return {"app_names": tuple(APP_NAMES)}

    def templates(self) -> list[str]:
        """Every template this suite can pose: the ``templates`` option, else every template of
        both families (the pools still draw from the default family only)."""
        return sorted(all_templates()) if self.only is None else list(self.only)

    def trainable_templates(self) -> list[str]:
        """Templates that may be trained on (all but the held-out ones), in split order."""
        return list(self._trainable)

    def heldout_templates(self) -> list[str]:
        return list(self._heldout)

    def template_info(self, name: str) -> dict[str, Any]:
        t = get_template(name)
        return {
            "name": name,
            "apps": list(t.apps),
            "tags": list(t.tags),
            "heldout": name in self._heldout,
            "answer": "answer" in t.tags,
            "difficulty": difficulty(name),
            "family": t.family,
        }

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
        if n and not pool and name == "heldout-templates" and self.only is not None:
            return []  # a selection without held-out templates (as the web suite's option)
        if n and not pool:
            raise ValueError(f"split {name!r} has no templates to draw from")
        rng = Random(f"mobile-suite/{self.seed}/{name}")
        seeds: set[tuple[str, int]] = set()
        out = []
        for i in range(n):
            template = pool[i % len(pool)]
            drops = 0
            while True:
                s = _SEED_BASE[name] + rng.randrange(_SEED_RANGE)
                if (template, s) in seeds:
                    continue
                seeds.add((template, s))
                task = TaskSpec("mobile", template, s)
                reason = self._expert_fails(task)
                if reason is None:
                    break
                self.dropped.append((task.id, reason))
                log.warning("mobile suite: dropped %s from split %r: %s", task.id, name, reason)
                drops += 1
                if drops >= MAX_DROPS_PER_TEMPLATE:
                    raise ValueError(
                        f"template {template}: its expert failed on {drops} seeds in a row "
                        f"of split {name!r} (last: {reason}); fix the template"
                    )
            out.append(task)
        return out

    def _expert_fails(self, task: TaskSpec) -> str | None:
        """Why the expert does not solve ``task`` on one of the suite's devices (None if it
        does, and for default-family tasks: the test suite checks those, and default pools stay
        as they always were)."""
        if task.template not in LONG_TEMPLATES:
            return None
        for device in self._devices:
            reason = expert_failure(task, device)
            if reason is not None:
                return reason
        return None

    # -- experts ------------------------------------------------------------------------------
    def instance(self, task: TaskSpec) -> TaskInstance:
        return instantiate(task)

    def expert_action(self, env: GUIEnv) -> Action:
        """The scripted expert's next action from ``env``'s current state (any state its own
        trajectory passes through). On a noisy device it first deals with the interruption on
        screen, as a person would (:func:`~.interruptions.clear_action`)."""
        if not isinstance(env, MobileEnv):
            raise TypeError(f"the mobile expert drives a MobileEnv, got {type(env).__name__}")
        return expert_step(env)


def expert_step(env: MobileEnv) -> Action:
    """The scripted expert's next action in ``env`` (see :meth:`MobileTaskSuite.expert_action`)."""
    inst = env.task_instance
    intr = env.interruption
    if intr is None:
        return inst.template.expert(Expert(env.phone), inst.params)
    planned = inst.template.expert(Expert(env.phone), inst.params) if not intr.modal else None
    return clear_action(intr, planned)


LENGTH_SEEDS = (0, 1, 2, 3, 4)
"""The seeds an expert length is measured on (``adaroll envs list mobile --lengths``, the
horizon profiles' buckets)."""


def expert_length(
    template: str, device: Any = "noisy", seeds: tuple[int, ...] = LENGTH_SEEDS
) -> float:
    """Mean number of steps the scripted expert takes on ``template`` over ``seeds`` on
    ``device``, measured now by running it (nothing is stored); a failing expert raises
    ValueError naming the task, since its length would mean nothing."""
    env = MobileEnv(device=device)
    lengths = []
    for seed in seeds:
        task = TaskSpec("mobile", template, seed)
        env.reset(options={"task": task})
        while True:
            _, _, terminated, truncated, info = env.step(expert_step(env))
            if terminated or truncated:
                break
        if not info.get("success"):
            raise ValueError(
                f"the expert of {task.id} fails on the {env.device_name} device: "
                f"{expert_failure(task, env.device) or 'unknown reason'}"
            )
        lengths.append(env.steps_taken)
    return statistics.mean(lengths)


@lru_cache(maxsize=65536)
def expert_failure(task: TaskSpec, device: Any) -> str | None:
    """Why the scripted expert does not solve ``task`` on ``device`` (a profile name, profile or
    rate mapping), or None if it does. Pure in its arguments, hence cached."""
    try:
        inst = instantiate(task)
    except Exception as exc:  # noqa: BLE001 - a setup that cannot pose this seed: the reason
        return f"setup failed: {type(exc).__name__}: {exc}"
    env = MobileEnv(device=device)
    env.reset(options={"task": task})
    steps = 0
    try:
        while True:
            _, _, terminated, truncated, info = env.step(expert_step(env))
            steps += 1
            if terminated or truncated:
                break
    except Exception as exc:  # noqa: BLE001 - an expert bug: the reason, with its text
        return f"expert raised on the {env.device_name} device at step {steps + 1}: {type(exc).__name__}: {exc}"
    if not info.get("success"):
        return (
            f"expert failed on the {env.device_name} device after {steps} steps "
            f"(step limit {inst.max_steps} + {env.device.extra_steps})"
        )
    return None
