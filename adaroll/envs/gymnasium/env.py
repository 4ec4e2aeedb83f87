"""GymnasiumEnv: any Gymnasium env as an AdaRoll GUIEnv, through a user-written adapter.

``env.name: gymnasium`` with ``env.options``:

* ``id`` - the Gymnasium id (``FrozenLake-v1``; ``"module:Id"`` imports ``module`` first, as
  ``gymnasium.make`` does, for envs that third-party packages register);
* ``adapter`` - a registered adapter name or ``"package.module:Class"`` (:mod:`.adapter`);
* ``adapter_options`` - keyword arguments of the adapter's constructor;
* ``make_options`` - keyword arguments of every ``gymnasium.make`` (the adapter's per-task
  ``make_kwargs`` win).

What this class guarantees, so that snapshots, replay and verification work:

* **determinism** - ``reset`` seeds the env with the task's seed (``env.reset(seed=task.seed)``),
  so a task and an action prefix always reach the same state (replay and the forkserver
  backend rely on it; both check the element-tree hash they reach);
* **episode semantics of** :mod:`adaroll.envs.base` - reward 1.0 on the successful terminal
  step, ``info["success"]``, truncation at the adapter's step limit, ``done()`` judged by the
  adapter;
* **faults** - an exception from the env's ``make``/``reset``/``step`` becomes
  :class:`~adaroll.envs.base.EnvFault` naming the env id and task (the rollout layer counts it
  and re-runs the group); a malformed observation from the adapter becomes
  :class:`~.adapter.AdapterError` (an EnvFault too). A faulted env re-raises on every later call.

With an adapter that copies state (``copies_state``) the factory returns
:class:`StatefulGymnasiumEnv`, which implements ``SupportsStateCopy`` (the ``memory`` backend).
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium

from adaroll.actions import Action, ActionKind
from adaroll.envs.base import (
    ENVS,
    EnvFault,
    EnvKind,
    EpisodeEnv,
    InvalidActionError,
    Observation,
    TaskSpec,
)
from adaroll.envs.gymnasium.adapter import (
    AdapterError,
    GymAdapter,
    check_observation,
    resolve_adapter,
)


def find_spec(env_id: str) -> Any:
    """The registered spec of ``env_id`` (``"module:Id"`` imports ``module`` first); ValueError
    with Gymnasium's own suggestion when there is none."""
    if not isinstance(env_id, str) or not env_id:
        raise ValueError(f"id must be a Gymnasium env id such as 'FrozenLake-v1', got {env_id!r}")
    module, sep, name = env_id.rpartition(":")
    try:
        if sep:
            importlib.import_module(module)
        return gymnasium.spec(name)
    except (gymnasium.error.Error, ImportError) as exc:
        raise ValueError(f"unknown Gymnasium id {env_id!r}: {exc}") from None


@dataclass(frozen=True)
class GymnasiumEnvConfig:
    """Options of the ``gymnasium`` env (``env.options``; see the module docstring)."""

    id: str
    """Gymnasium id passed to ``gymnasium.make`` (``FrozenLake-v1``); ``"package.module:Id"``
    imports the package that registers it first."""
    adapter: str
    """The adapter (docs/envs.md): a registered name (``frozen_lake``, ``taxi``), an import
    path ``"package.module:Class"`` (importable where adaroll runs) or a file
    ``"path/to/file.py:Class"``."""
    adapter_options: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments of the adapter's constructor."""
    make_options: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments of every ``gymnasium.make`` call (the adapter's per-task
    ``make_kwargs`` win)."""

    def build_adapter(self) -> GymAdapter:
        return resolve_adapter(self.adapter, self.adapter_options)


class GymnasiumEnv(EpisodeEnv):
    """One Gymnasium env driven through its adapter (see the module docstring)."""

    name = "gymnasium"

    def __init__(self, config: GymnasiumEnvConfig, adapter: GymAdapter | None = None) -> None:
        self.config = config
        self.adapter = adapter if adapter is not None else config.build_adapter()
        self._env: Any = None
        self._made_with: dict[str, Any] | None = None
        self._fault: EnvFault | None = None
        self._task: TaskSpec | None = None
        self._instruction = ""
        self._steps = 0
        self._ended = (False, False, False)  # terminated, truncated, success
        self._raw: Any = None
        self._obs: Observation | None = None

    # -- GUIEnv ---------------------------------------------------------------------------------
    @property
    def gym_env(self) -> Any:
        """The Gymnasium env of the current task (what ``gymnasium.make`` returned)."""
        if self._env is None:
            raise RuntimeError(f"gymnasium env {self.config.id} has no episode; call reset()")
        return self._env

    def _no_episode(self) -> str:
        return f"gymnasium env {self.config.id} has no episode; call reset()"

    @property
    def max_steps(self) -> int:
        return self.adapter.step_limit(self.task)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Start ``options["task"]`` (a TaskSpec or task id); the env is seeded with the task's
        seed (``seed`` is not used: the task fixes everything)."""
        self._raise_fault()
        task = self.resolve_task((options or {}).get("task"))
        env = self._env_for(task)
        self._task, self._steps, self._ended = task, 0, (False, False, False)
        raw, _ = self._guard("reset", lambda: env.reset(seed=task.seed))
        self._instruction = str(
            self._adapter_call("instruction", lambda: self.adapter.instruction(env, task))
        )
        self._set_observation(raw)
        return self.observe(), {
            "instruction": self._instruction,
            "task": task.id,
            "max_steps": self.max_steps,
        }

    def step(self, action: Action) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        self._raise_fault()
        task = self.task
        if any(self._ended[:2]):
            raise RuntimeError(f"episode of {task.id} has ended; call reset() or restore")
        if not isinstance(action, Action):
            raise InvalidActionError(
                f"gymnasium env {self.config.id} expects an adaroll Action, "
                f"got {type(action).__name__} (parse text with parse_action)"
            )
        env = self.gym_env
        reward = 0.0
        if action.kind is ActionKind.DONE:
            terminated, truncated = True, False
            success = bool(
                self._adapter_call(
                    "answer_is_correct", lambda: self.adapter.answer_is_correct(env, action.text)
                )
            )
        else:
            try:
                env_action = self.adapter.action(env, action)
            except InvalidActionError:
                raise
            except Exception as exc:
                raise self._broken(
                    AdapterError, f"the adapter's action() raised {type(exc).__name__}: {exc}"
                ) from exc
            raw, reward, terminated, truncated, info = self._guard(
                "step", lambda: env.step(env_action)
            )
            terminated = bool(terminated)
            success = terminated and bool(
                self._adapter_call(
                    "success", lambda: self.adapter.success(env, float(reward), terminated, info)
                )
            )
            self._set_observation(raw)
        self._steps += 1
        truncated = not terminated and (bool(truncated) or self._steps >= self.max_steps)
        self._ended = (terminated, truncated, success)
        info_out = {"success": success, "steps": self._steps, "env_reward": float(reward)}
        return self.observe(), (1.0 if success else 0.0), terminated, truncated, info_out

    def observe(self) -> Observation:
        self._raise_fault()
        if self._obs is None:
            raise RuntimeError(f"gymnasium env {self.config.id} has no episode; call reset()")
        return self._obs

    def close(self) -> None:
        env, self._env, self._made_with = self._env, None, None
        if env is not None:
            try:
                env.close()
            except Exception:  # noqa: BLE001 - closing a broken env must not mask the fault
                pass

    # -- helpers --------------------------------------------------------------------------------
    def resolve_task(self, task: Any) -> TaskSpec:
        """``task`` as a TaskSpec of this env; ValueError naming the valid templates."""
        if isinstance(task, str):
            task = TaskSpec.from_id(task)
        if not isinstance(task, TaskSpec):
            raise ValueError(
                f"gymnasium env {self.config.id}: reset needs options={{'task': "
                f"TaskSpec('gymnasium', TEMPLATE, SEED)}}, got {task!r}"
            )
        templates = self.adapter.templates()
        if task.env != self.name or task.template not in templates:
            raise ValueError(
                f"gymnasium env {self.config.id} has no task {task.id}; templates: "
                f"{', '.join(templates)}"
            )
        return task

    def _where(self) -> str:
        task = f"task {self._task.id}" if self._task is not None else "no task"
        return f"gymnasium env {self.config.id} ({task}, adapter {self.config.adapter})"

    def _env_for(self, task: TaskSpec) -> Any:
        """The env for ``task``: the current one, unless its ``make`` arguments differ."""
        self._task = task  # errors from here on name it
        kwargs = {
            **self.config.make_options,
            **self._adapter_call("make_kwargs", lambda: self.adapter.make_kwargs(task)),
        }
        if self._env is None or not _equal(kwargs, self._made_with):
            self.close()
            self._env = self._guard("make", lambda: gymnasium.make(self.config.id, **kwargs))
            self._made_with = kwargs
        return self._env

    def _guard(self, what: str, call: Callable[[], Any]) -> Any:
        """``call()``; any exception from the env becomes an EnvFault naming env and task."""
        try:
            return call()
        except Exception as exc:
            raise self._broken(EnvFault, f"{what} raised {type(exc).__name__}: {exc}") from exc

    def _adapter_call(self, what: str, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except Exception as exc:
            raise self._broken(
                AdapterError, f"the adapter's {what}() raised {type(exc).__name__}: {exc}"
            ) from exc

    def _broken(self, kind: type[EnvFault], message: str) -> EnvFault:
        self._fault = kind(f"{self._where()}: {message}")
        return self._fault

    def _raise_fault(self) -> None:
        if self._fault is not None:
            raise self._fault

    def _set_observation(self, raw: Any) -> None:
        env = self._env
        obs = self._adapter_call("observation", lambda: self.adapter.observation(env, raw))
        try:
            self._obs = check_observation(obs, self._where())
        except AdapterError as exc:
            self._fault = exc
            raise
        self._raw = raw


@dataclass(frozen=True)
class GymEpisodeState:
    """A copied episode: the adapter's env state plus this env's own bookkeeping."""

    task: TaskSpec
    instruction: str
    steps: int
    ended: tuple[bool, bool, bool]
    raw: Any
    env_state: Any


class StatefulGymnasiumEnv(GymnasiumEnv):
    """A GymnasiumEnv whose adapter copies state: ``SupportsStateCopy`` for ``memory`` snapshots."""

    def get_state(self) -> GymEpisodeState:
        env = self.gym_env
        env_state = self._adapter_call("get_state", lambda: self.adapter.get_state(env))
        return GymEpisodeState(
            self.task,
            self._instruction,
            self._steps,
            self._ended,
            copy.deepcopy(self._raw),
            env_state,
        )

    def branch(self, state: GymEpisodeState) -> StatefulGymnasiumEnv:
        """A new env in ``state``; its observation is recomputed from the restored env, so the
        restore is verified by the element-tree hash the snapshot recorded."""
        env = StatefulGymnasiumEnv(self.config, self.adapter)
        try:
            env.set_state(state)
        except BaseException:
            env.close()
            raise
        return env

    def set_state(self, state: GymEpisodeState) -> None:
        if not isinstance(state, GymEpisodeState):
            raise TypeError(f"expected a GymEpisodeState, got {type(state).__name__}")
        self._raise_fault()
        env = self._env_for(state.task)
        self._guard("reset", lambda: env.reset(seed=state.task.seed))
        self._adapter_call(
            "set_state", lambda: self.adapter.set_state(env, copy.deepcopy(state.env_state))
        )
        _sync_time_limits(env, state.steps)
        self._instruction, self._steps, self._ended = state.instruction, state.steps, state.ended
        self._set_observation(copy.deepcopy(state.raw))


def _equal(a: Any, b: Any) -> bool:
    """``a == b`` for make arguments that may hold arrays (whose ``==`` is elementwise)."""
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _sync_time_limits(env: Any, steps: int) -> None:
    """Set the step count of every ``TimeLimit`` wrapper around ``env`` to ``steps``: a restored
    state continues the episode, so the wrapper must not count from the reset before it."""
    while isinstance(env, gymnasium.Wrapper):
        if isinstance(env, gymnasium.wrappers.TimeLimit):
            env._elapsed_steps = steps  # type: ignore[assignment]  # None before the first reset
        env = env.env


class GymnasiumEnvFactory(EnvKind):
    """``ENVS["gymnasium"]``: builds the env from ``env.options`` and checks them up front."""

    options_config = GymnasiumEnvConfig  # what documents env.options (adaroll config schema)

    def __call__(
        self,
        *,
        id: str,
        adapter: str,
        adapter_options: dict[str, Any] | None = None,  # noqa: A002
        make_options: dict[str, Any] | None = None,
    ) -> GymnasiumEnv:
        config = GymnasiumEnvConfig(
            id, adapter, dict(adapter_options or {}), dict(make_options or {})
        )
        built = config.build_adapter()
        cls = StatefulGymnasiumEnv if built.copies_state else GymnasiumEnv
        return cls(config, built)

    @staticmethod
    def validate_options(**options: Any) -> None:
        """ValueError for a missing or unknown id or adapter (before any env is made)."""
        for required in ("id", "adapter"):
            if required not in options:
                raise ValueError(f"env.options.{required} is required (see docs/envs.md)")
        find_spec(options["id"])
        GymnasiumEnvConfig(**options).build_adapter()


make_gymnasium_env = ENVS.register("gymnasium")(GymnasiumEnvFactory())
