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

Adapters are found by registry name (:data:`ADAPTERS`, e.g. ``frozen_lake``) or by an import
path ``"package.module:Class"`` (:func:`resolve_adapter`); ``env.options.adapter_options`` are
the keyword arguments of the adapter's constructor.
"""

from __future__ import annotations

import importlib
import math
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
        """Every task template; a task instance is ``TaskSpec("gymnasium", template, seed)``."""

    def heldout_templates(self) -> list[str]:
        """Templates never trained on (the ``heldout-templates`` split)."""
        return []

    def make_kwargs(self, task: TaskSpec) -> dict[str, Any]:
        """Keyword arguments of ``gymnasium.make`` for ``task`` (e.g. a seeded map). The env is
        made again whenever they change from one task to the next."""
        return {}

    def step_limit(self, task: TaskSpec) -> int:
        return self.max_steps

    @abstractmethod
    def instruction(self, env: Any, task: TaskSpec) -> str:
        """The task text shown to the policy, read after the env's reset."""

    @abstractmethod
    def observation(self, env: Any, raw: Any) -> Observation:
        """AdaRoll's observation of the env's current state (``raw``: what reset/step returned).
        Must be a function of the env's state: restores are verified by its element-tree hash."""

    @abstractmethod
    def action(self, env: Any, action: Action) -> Any:
        """The env's action for ``action``; raise ``InvalidActionError`` when there is none."""

    def success(self, env: Any, reward: float, terminated: bool, info: dict[str, Any]) -> bool:
        """Whether the episode that just terminated succeeded (default: positive reward)."""
        return terminated and reward > 0

    def answer_is_correct(self, env: Any, answer: str | None) -> bool:
        """The verdict on ``done(answer)``: by default ``done()`` ends the episode as a failure."""
        return False

    def expert_action(self, env: Any, task: TaskSpec) -> Action:
        """The scripted expert's next action from the env's current state (optional)."""
        raise NotImplementedError(
            f"{type(self).__name__} has no scripted expert; use expert.kind=remote"
        )

    def policy_hints(self) -> dict[str, Any]:
        """Public facts a policy may build its action space from (e.g. the small policy's
        ``kinds`` and ``keys``)."""
        return {}

    # -- optional: exact state copies, for the memory snapshot backend -------------------------
    def get_state(self, env: Any) -> Any:
        """A value holding the env's complete state that later changes cannot alter."""
        raise NotImplementedError

    def set_state(self, env: Any, state: Any) -> None:
        """Put ``env`` (freshly made and reset for the same task) into ``state``."""
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
    """An adapter instance from a registry name, an import path ``"package.module:Class"`` or a
    class; ``options`` are its constructor's keyword arguments. Raises ValueError naming the
    problem (unknown name -> the registered ones)."""
    options = dict(options or {})
    if isinstance(spec, str) and ":" in spec:
        module, _, attr = spec.partition(":")
        try:
            cls: Any = importlib.import_module(module)
            for part in attr.split("."):
                cls = getattr(cls, part)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"adapter {spec!r} cannot be imported: {exc}") from None
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
