"""The adapter contract between one Gymnasium env and AdaRoll, and its registry.

A :class:`GymAdapter` is the small class a user writes to train AdaRoll on a Gymnasium env
(``env.name: gymnasium``). It knows the env's meaning; :class:`~.env.GymnasiumEnv` does the
mechanics (making the env per task, seeding, step limits, faults, checks). The adapter:

* names the task templates (:meth:`~GymAdapter.templates`) and, per task instance, the
  ``gymnasium.make`` keyword arguments (:meth:`~GymAdapter.make_kwargs`);
* turns the env's observation into AdaRoll's element list (:meth:`~GymAdapter.observation`)
  and an AdaRoll :class:`~adaroll.actions.Action` into the env's action
  (:meth:`~GymAdapter.action`, raising :class:`~adaroll.envs.base.InvalidActionError` for an
  action the env has no counterpart for);
* says what success is (:meth:`~GymAdapter.success`) and, optionally, what a scripted expert
  does (:meth:`~GymAdapter.expert_action`);
* optionally copies the env's state (:meth:`~GymAdapter.get_state`/``set_state``): then the
  ``memory`` snapshot backend works for the env; without it use ``forkserver`` or ``replay``.

Adapters are found by registry name (:data:`ADAPTERS`, e.g. ``frozen_lake``), by an import
path ``"package.module:Class"`` or by a file ``"path/to/file.py:Class"``
(:func:`resolve_adapter`); ``env.options.adapter_options`` are the keyword arguments of the
adapter's constructor.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import math
import os
import sys
from abc import ABC, abstractmethod
from typing import Any

from adaroll.actions import Action
from adaroll.envs.base import ELEMENT_FLAGS, EnvFault, Observation, TaskSpec, UIElement
from adaroll.registry import Registry, UnknownNameError


class GymAdapter(ABC):
    """Between one Gymnasium env and AdaRoll (see the module docstring). ``env`` arguments are
    the ``gymnasium.make`` result, wrappers included (read its state through ``env.unwrapped``)."""

    max_steps: int = 100
    """Actions per episode before AdaRoll truncates it (override :meth:`step_limit` per task)."""

    @abstractmethod
    def templates(self) -> list[str]:
        """Every task template, held-out ones included; a task is ``TaskSpec("gymnasium",
        template, seed)``, so the seed must make the tasks of a template differ."""

    def heldout_templates(self) -> list[str]:
        """Templates never trained on (the ``heldout-templates`` split); each must also be in
        ``templates()`` (default: none)."""
        return []

    def make_kwargs(self, task: TaskSpec) -> dict[str, Any]:
        """Keyword arguments of ``gymnasium.make`` for ``task`` (e.g. a map from ``task.seed``),
        over ``env.options.make_options``; the env is made again whenever they change from one
        task to the next (default: none; the env is reset with ``seed=task.seed`` either way)."""
        return {}

    def step_limit(self, task: TaskSpec) -> int:
        """Actions in an episode of ``task`` before AdaRoll truncates it (default:
        ``max_steps``; the env's own time limit, if shorter, truncates first)."""
        return self.max_steps

    @abstractmethod
    def instruction(self, env: Any, task: TaskSpec) -> str:
        """The task text shown to the policy, read after the env's reset (it may depend on the
        start state)."""

    @abstractmethod
    def observation(self, env: Any, raw: Any) -> Observation:
        """AdaRoll's observation of the env's current state (``raw``: what reset/step returned):
        elements with unique int ids, str role and text, bounds (left, top, right, bottom) in
        [0, 1] and flags from ``ELEMENT_FLAGS``, and a (width, height) screen size. Must be a
        function of the env's state: restores are verified by its element-tree hash."""

    @abstractmethod
    def action(self, env: Any, action: Action) -> Any:
        """The env's action for ``action`` (an AdaRoll ``Action``, never ``done``); raise
        ``InvalidActionError`` when there is none (an invalid sample: reward 0, episode over)."""

    def success(self, env: Any, reward: float, terminated: bool, info: dict[str, Any]) -> bool:
        """Whether the episode that just terminated succeeded, from the step's reward, flag and
        info (default: ``terminated and reward > 0``; override it for an env whose goal pays 0
        or less, e.g. CliffWalking's -1). AdaRoll's reward is 1.0 on success, else 0.0."""
        return terminated and reward > 0

    def answer_is_correct(self, env: Any, answer: str | None) -> bool:
        """The verdict on ``done(answer)``, which ends the episode without a step of the env
        (default: False, a failure)."""
        return False

    def expert_action(self, env: Any, task: TaskSpec) -> Action:
        """The scripted expert's next action from the env's current state, for every state of
        its own trajectory (default: none; use ``expert.kind: remote``, an API model)."""
        raise NotImplementedError(
            f"{type(self).__name__} has no scripted expert; use expert.kind=remote"
        )

    def policy_hints(self) -> dict[str, Any]:
        """Public facts a policy may build its action space from, e.g. the small policy's
        ``{"kinds": ("key",), "keys": (...)}`` (default: none: every action kind)."""
        return {}

    # -- optional: exact state copies, for the memory snapshot backend -------------------------
    def get_state(self, env: Any) -> Any:
        """A value holding the env's complete state (RNG included) that later changes cannot
        alter; with ``set_state`` it makes the ``memory`` snapshot backend work (default:
        none; use ``forkserver`` or ``replay``)."""
        raise NotImplementedError

    def set_state(self, env: Any, state: Any) -> None:
        """Put ``env`` (freshly made and reset for the same task) into ``state`` (default:
        none; see ``get_state``)."""
        raise NotImplementedError

    @property
    def copies_state(self) -> bool:
        """Whether this adapter overrides both state methods (then ``memory`` snapshots work)."""
        cls = type(self)
        return (
            cls.get_state is not GymAdapter.get_state and cls.set_state is not GymAdapter.set_state
        )


ADAPTERS: Registry[type[GymAdapter]] = Registry("gymnasium adapter")
"""Adapter classes by name: ``env.options.adapter: frozen_lake``."""


def resolve_adapter(spec: Any, options: dict[str, Any] | None = None) -> GymAdapter:
    """An adapter instance from a registry name, an import path ``"package.module:Class"``, a
    file ``"path/to/file.py:Class"`` (relative to the current folder) or a class; ``options``
    are its constructor's keyword arguments. Raises ValueError naming the problem (unknown name
    -> the registered ones; a module that cannot be imported -> how to make it importable)."""
    options = dict(options or {})
    if isinstance(spec, str) and ":" in spec:
        module, _, attr = spec.rpartition(":")
        try:
            cls: Any = _load_module(module)
            for part in attr.split("."):
                cls = getattr(cls, part)
        except (ImportError, AttributeError, OSError, SyntaxError) as exc:
            raise ValueError(f"adapter {spec!r} cannot be imported: {exc}{_IMPORT_HINT}") from None
    elif isinstance(spec, str):
        try:
            cls = ADAPTERS.get(spec)
        except UnknownNameError as exc:
            raise ValueError(f"{exc}; or give an import path 'package.module:Class'") from None
    elif isinstance(spec, type):
        cls = spec
    else:
        raise ValueError(
            f"adapter must be a registered name or 'package.module:Class', got {spec!r}"
        )
    if not (isinstance(cls, type) and issubclass(cls, GymAdapter)):
        raise ValueError(f"adapter {spec!r} is not a GymAdapter subclass")
    try:
        return cls(**options)
    except TypeError as exc:
        raise ValueError(f"adapter {spec!r}: bad adapter_options {options}: {exc}") from None


_IMPORT_HINT = (
    ". The module must be importable where adaroll runs: install its package (pip install -e "
    "DIR), add its folder to PYTHONPATH, or give the file itself: 'path/to/file.py:Class' "
    "(`python -m adaroll` also finds modules in the current folder, the `adaroll` command "
    "does not)"
)


def _load_module(module: str) -> Any:
    """``module`` imported by name, or - a path ending in ``.py`` - loaded from that file (once
    per file: it is kept in ``sys.modules`` under a name derived from its absolute path)."""
    if not module.endswith(".py"):
        return importlib.import_module(module)
    path = os.path.abspath(module)
    name = "adaroll_adapter_file_" + hashlib.sha256(path.encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    if not os.path.isfile(path):
        raise ImportError(f"no file {path}")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded  # dataclasses and pickling look their module up there
    try:
        spec.loader.exec_module(loaded)
    except BaseException:
        del sys.modules[name]
        raise
    return loaded


class AdapterError(EnvFault):
    """An adapter broke the contract (e.g. returned a malformed observation). An env fault:
    the episode is unusable and never reaches an update; the message names env, task and field."""


def check_observation(obs: Any, where: str) -> Observation:
    """``obs`` if it is a well-formed Observation, else :class:`AdapterError` saying what is
    wrong and ``where`` (env id and task). The rules are those the built-in envs keep: unique
    int ids, str role and text, bounds (left, top, right, bottom) in [0, 1] and ordered, flags
    from ``ELEMENT_FLAGS``, a positive (width, height) screen size."""

    def bad(what: str) -> AdapterError:
        return AdapterError(f"{where}: the adapter returned a malformed observation: {what}")

    if not isinstance(obs, Observation):
        raise bad(f"expected an adaroll Observation, got {type(obs).__name__}")
    if not isinstance(obs.elements, tuple):
        raise bad(f"elements must be a tuple, got {type(obs.elements).__name__}")
    size = obs.screen_size
    if not (
        isinstance(size, tuple)
        and len(size) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in size)
    ):
        raise bad(f"screen_size must be two positive ints, got {size!r}")
    seen: set[int] = set()
    for i, e in enumerate(obs.elements):
        if not isinstance(e, UIElement):
            raise bad(f"elements[{i}] is a {type(e).__name__}, not a UIElement")
        if not isinstance(e.id, int) or isinstance(e.id, bool) or e.id < 0 or e.id in seen:
            raise bad(f"elements[{i}].id must be a unique non-negative int, got {e.id!r}")
        seen.add(e.id)
        for name in ("role", "text"):
            if not isinstance(getattr(e, name), str):
                raise bad(f"elements[{i}].{name} must be a str, got {getattr(e, name)!r}")
        b = e.bounds
        if not (
            isinstance(b, tuple)
            and len(b) == 4
            and all(isinstance(v, (int, float)) and math.isfinite(v) and 0 <= v <= 1 for v in b)
            and b[0] <= b[2]
            and b[1] <= b[3]
        ):
            raise bad(
                f"elements[{i}].bounds must be (left, top, right, bottom) in [0, 1], got {b!r}"
            )
        if not (isinstance(e.flags, frozenset) and e.flags <= set(ELEMENT_FLAGS)):
            raise bad(
                f"elements[{i}].flags must be a frozenset of {ELEMENT_FLAGS}, got {e.flags!r}"
            )
    return obs
