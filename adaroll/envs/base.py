"""The GUIEnv and task contracts shared by every environment (mobile, web, ...).

Gymnasium conventions: ``reset(seed=, options=) -> (obs, info)`` and
``step(action) -> (obs, reward, terminated, truncated, info)``; the env owns its RNG.
The *task* (instruction, seeded setup, verifier, step limit) is separate from the
*environment* (GUI mechanics, observation, action execution): a :class:`TaskSpec` names a
task instance, the env resolves it.

Episode semantics every env follows:
* ``reward`` is 1.0 on the step where the episode ends in success, else 0.0;
* ``terminated`` is True when the task's verifier is satisfied, or when the agent issues
  ``done(...)`` (success then depends on the verifier, e.g. the answer's correctness);
* ``truncated`` is True when ``max_steps`` actions were taken without termination;
* ``info["success"]`` (bool) is always present after a terminal step.

Snapshots are a separate protocol (:mod:`adaroll.snapshots.base`).
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Protocol

from adaroll.actions import Action
from adaroll.registry import Registry

ELEMENT_FLAGS = ("enabled", "clickable", "checked", "selected", "focused", "editable", "scrollable")


@dataclass(frozen=True)
class UIElement:
    """One visible UI element. ``bounds`` = (left, top, right, bottom) normalised to [0, 1]."""

    id: int
    role: str
    text: str
    bounds: tuple[float, float, float, float]
    flags: frozenset[str] = frozenset()

    @property
    def center(self) -> tuple[float, float]:
        left, top, right, bottom = self.bounds
        return ((left + right) / 2, (top + bottom) / 2)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "role": self.role,
            "text": self.text,
            "bounds": list(self.bounds),
            "flags": sorted(self.flags),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> UIElement:
        return cls(
            int(d["id"]),
            str(d["role"]),
            str(d["text"]),
            tuple(float(v) for v in d["bounds"]),  # type: ignore[arg-type]
            frozenset(d.get("flags", ())),
        )


@dataclass(frozen=True)
class Observation:
    """What a policy sees. ``screenshot`` (H x W x 3 uint8) is present only when requested."""

    elements: tuple[UIElement, ...]
    screen_size: tuple[int, int]
    screenshot: Any = field(default=None, compare=False, repr=False)

    def element_tree_hash(self) -> str:
        """A stable hash of the element list, used to verify restores and deduplicate states."""
        return self._tree_hash

    @cached_property
    def _tree_hash(self) -> str:  # envs reuse observation objects, so hash each once
        payload = json.dumps([e.to_dict() for e in self.elements], sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {
            "elements": [e.to_dict() for e in self.elements],
            "screen_size": list(self.screen_size),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Observation:
        elements = tuple(UIElement.from_dict(e) for e in d["elements"])
        return cls(elements, tuple(d["screen_size"]))  # type: ignore[arg-type]

    def describe(self) -> str:
        """Element list as text, one line per element (for prompts and the CLI)."""
        lines = []
        for e in self.elements:
            b = ", ".join(f"{v:.3f}" for v in e.bounds)
            flags = f" [{' '.join(sorted(e.flags))}]" if e.flags else ""
            lines.append(f"[{e.id}] {e.role} {json.dumps(e.text)} ({b}){flags}")
        return "\n".join(lines)


@dataclass(frozen=True, order=True)
class TaskSpec:
    """Names one task instance: environment, template and the seed of its parameters."""

    env: str
    template: str
    seed: int

    @property
    def id(self) -> str:
        return f"{self.env}:{self.template}#{self.seed}"

    @classmethod
    def from_id(cls, task_id: str) -> TaskSpec:
        try:
            env, rest = task_id.split(":", 1)
            template, seed = rest.rsplit("#", 1)
            return cls(env, template, int(seed))
        except ValueError:
            raise ValueError(f"bad task id {task_id!r}; expected ENV:TEMPLATE#SEED") from None


class EnvKind:
    """What every entry of :data:`ENVS` declares besides making envs (``entry(**options)``), with
    its defaults. A :class:`GUIEnv` subclass registered as its own factory inherits them; a
    factory object registered instead (Gymnasium's) subclasses this class. The env layer reads
    these declarations (:mod:`adaroll.envs`), it never probes for them."""

    episodes_per_env: int = 1
    """The default of ``rollout.episodes_per_env``: how many episodes of a Root group one
    instance plays in turn (more than 1 pays where a reset to the same task is cheaper than
    a fresh one, as a web page reused by the next episode)."""

    options_config: type | None = None
    """The dataclass whose attribute docstrings document ``env.options`` (one field per option;
    ``adaroll config schema``), or None: only a ``config`` parameter's dataclass documents them."""

    @classmethod
    def validate_options(cls, **options: Any) -> None:
        """Check option *values* before any env is built (ValueError or TypeError naming the bad
        one); option *names* are checked against the factory's signature first. Default:
        nothing more to check."""

    @classmethod
    def settings(cls, **options: Any) -> dict[str, Any]:
        """What decides how envs made with ``options`` behave, defaults resolved (a run records
        it: :func:`adaroll.envs.env_settings`). Default: the options as given."""
        return dict(options)


class RegisteredEnv(Protocol):
    """An entry of :data:`ENVS` as the env layer uses it: an :class:`EnvKind` that makes envs."""

    episodes_per_env: int
    options_config: type | None

    def __call__(self, **options: Any) -> GUIEnv: ...

    def validate_options(self, **options: Any) -> None: ...

    def settings(self, **options: Any) -> dict[str, Any]: ...


class GUIEnv(EnvKind, ABC):
    """A GUI environment holding one live episode."""

    name: str = ""
    max_live: int = 256
    """How many instances batch evaluation keeps alive at once (a browser costs ~170 MB and a
    core to start; the embedded simulator almost nothing)."""
    concurrent_calls: bool = False
    """True when the env's calls mostly wait on another process (a browser), so that the rollout
    layer may call several instances at once from threads (each instance from one thread at a
    time); envs that compute in this process keep False (threads would only add overhead)."""
    restore_info: dict[str, Any] | None = None
    """Set on a branch by a snapshot backend that restored it: timings, and under ``"check"``
    the backend's own verification of the branch (a :class:`BranchCheck`), if it made one."""

    @property
    def device_name(self) -> str | None:
        """The device profile the env simulates (mobile: ``clean``/``noisy``); None: an env
        without profiles. Checkpoints recorded on one profile are not restored on another."""
        return None

    @property
    def fault(self) -> EnvFault | None:
        """The fault that made the env unusable, if one did (it is then closed, not reused)."""
        return None

    @abstractmethod
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Start the episode of ``options["task"]`` (a TaskSpec). ``info["instruction"]`` holds
        the task text."""

    @abstractmethod
    def step(self, action: Action) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """Execute one action. Invalid actions raise ``adaroll.envs.base.InvalidActionError``."""

    @abstractmethod
    def observe(self) -> Observation:
        """The current observation without acting."""

    @property
    @abstractmethod
    def task(self) -> TaskSpec: ...

    @property
    @abstractmethod
    def instruction(self) -> str: ...

    @property
    @abstractmethod
    def max_steps(self) -> int: ...

    @property
    @abstractmethod
    def steps_taken(self) -> int: ...

    def render(self) -> Any:
        """The current screen as an H x W x 3 uint8 array, or None for an env that draws none."""
        return None

    def warm_for(self, task: TaskSpec) -> bool:
        """True when a reset to ``task`` is cheaper on this instance than on a fresh one (e.g.
        its page already holds the task's template); the collector reuses such envs first."""
        return False

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release processes/files the env holds."""


class EpisodeEnv(GUIEnv):
    """The episode state most envs keep, kept once: the task, its instruction and step limit,
    the steps taken and the fault that broke the env. A subclass sets them in ``reset``/``step``
    (``_task``, ``_instruction``, ``_max_steps``, ``_steps``; ``_fault`` when it breaks) and says
    what asking before a reset means (:meth:`_no_episode`)."""

    _task: TaskSpec | None = None
    _instruction: str = ""
    _max_steps: int = 0
    _steps: int = 0
    _fault: EnvFault | None = None

    def _no_episode(self) -> str:
        """The error text when the task is asked for before any reset."""
        return f"{type(self).__name__} has no episode yet: call reset(options={{'task': ...}})"

    @property
    def task(self) -> TaskSpec:
        if self._task is None:
            raise RuntimeError(self._no_episode())
        return self._task

    @property
    def instruction(self) -> str:
        return self._instruction

    @property
    def max_steps(self) -> int:
        return self._max_steps

    @property
    def steps_taken(self) -> int:
        return self._steps

    @property
    def fault(self) -> EnvFault | None:
        """The fault that made this env unusable (None while it works)."""
        return self._fault


class BranchCheck(Protocol):
    """A snapshot backend's verdict on a restored branch (``restore_info["check"]``)."""

    @property
    def ok(self) -> bool: ...

    def describe(self) -> str: ...


class InvalidActionError(ValueError):
    """An action the environment cannot execute (bad coordinates, unknown app, ...)."""


class EnvFault(RuntimeError):
    """The environment itself broke (its process crashed, its connection dropped): the episode
    is lost and the env must be closed and replaced. Not the agent's fault, unlike
    :class:`InvalidActionError`; the rollout layer re-runs the affected group."""


class EnvTimeout(EnvFault, TimeoutError):
    """An env call did not finish within its bound (e.g. a hung browser)."""


class TaskSuite(ABC):
    """The tasks of one environment: templates, splits and scripted experts."""

    takes_env_options: ClassVar[bool] = False
    """Whether the suite is built with the run's env options first (``cls(env_options,
    **suite_options)``: a suite whose tasks depend on the env, as Gymnasium's on its adapter)."""

    @abstractmethod
    def templates(self) -> list[str]: ...

    @abstractmethod
    def split(self, name: str) -> list[TaskSpec]:
        """Named split: ``pretrain``, ``train``, ``val`` (selection), ``heldout`` or
        ``heldout-templates`` (report only)."""

    @abstractmethod
    def expert_action(self, env: GUIEnv) -> Action:
        """The scripted expert's next action, planned from the env's current state."""

    def policy_hints(self) -> dict[str, Any]:
        """Public facts a policy may build its action space from (e.g. app names)."""
        return {}

    def all_templates(self) -> list[str]:
        """Every template the suite can instantiate, beyond those its splits use (the web's
        uncurated MiniWoB++ pages); by default its :meth:`templates`."""
        return self.templates()

    def heldout_templates(self) -> list[str]:
        """The templates held out of training (the ``heldout-templates`` split's); by default
        those of that split's tasks (none when the suite has no such split)."""
        try:
            return sorted({t.template for t in self.split("heldout-templates")})
        except (KeyError, ValueError):
            return []

    def template_info(self, template: str) -> dict[str, Any] | None:
        """What ``adaroll envs list --templates`` shows of a template (``difficulty``, ``tags``,
        ``heldout``), or None for a suite that describes none."""
        return None

    def expert_lengths(self) -> list[tuple[str, str, str, float]] | None:
        """What ``adaroll envs list ENV --lengths`` prints: ``(template, family, apps, mean
        expert steps)`` per template, measured now by running the experts, or None for a suite
        that cannot measure them (the default; the phone's lengths depend on a device profile and
        are measured by the command itself)."""
        return None


ENVS: Registry[Any] = Registry("environment")
"""Environment factories by name: ``ENVS.get("mobile")(**kwargs) -> GUIEnv``; each entry is an
:class:`EnvKind` (a :class:`GUIEnv` subclass, or a factory object subclassing it)."""

SUITES: Registry[Any] = Registry("task suite")
"""Task suites by env name: ``SUITES.get("mobile")() -> TaskSuite``."""


def run_expert(env: GUIEnv, suite: TaskSuite, task: TaskSpec) -> tuple[list[Action], bool]:
    """Roll out the scripted expert on ``task`` from reset; return its actions and success."""
    env.reset(options={"task": task})
    actions: list[Action] = []
    while True:
        action = suite.expert_action(env)
        actions.append(action)
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return actions, bool(info.get("success", False))


def replay(env: GUIEnv, task: TaskSpec, prefix: Sequence[Action]) -> Observation:
    """Reset to ``task`` and re-execute ``prefix``; the generic way to reach a checkpoint."""
    obs, _ = env.reset(options={"task": task})
    for action in prefix:
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            raise RuntimeError(f"replayed prefix of {task.id} ended the episode early")
    return obs
