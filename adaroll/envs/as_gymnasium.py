"""AdaRoll's own envs as Gymnasium envs, for training with another framework.

``import adaroll.envs`` registers (nothing else is imported until an env is made)::

    gymnasium.make("adaroll/Mobile-v0", task="mobile:notes.create#3")   # the embedded phone
    gymnasium.make("adaroll/MiniWoB-v0", task="web:click-button#0")     # MiniWoB++ in Chromium

``task`` is a task id (``ENV:TEMPLATE#SEED``, one fixed instance), a template (``TEMPLATE`` or
``ENV:TEMPLATE``: a new seed drawn from the env's RNG at every reset) or None (an instance of
the suite's ``split``, default ``train``, drawn at every reset); ``reset(options={"task": ...})``
overrides it for one episode. Other keyword arguments are the AdaRoll env's options
(``screenshot=True``, ``device="noisy"`` for the phone, ...); ``suite_options`` size the suite.

Spaces (:func:`observation_space`):

* observation - ``Dict`` of ``instruction`` (Text), ``screen_size`` (Box int64 (2,): width,
  height), ``elements`` (Sequence of Dict: ``id`` Discrete, ``role``/``text`` Text, ``bounds``
  Box float32 (4,) in [0, 1] as (left, top, right, bottom), ``flags`` MultiBinary over
  ``adaroll.envs.base.ELEMENT_FLAGS``) and, with ``screenshot=True``, ``screenshot`` (Box uint8
  H x W x 3). Texts are any Unicode, cut at ``MAX_TEXT`` characters.
* action - AdaRoll action text (:class:`ActionText`, e.g. ``"tap(0.5, 0.3)"``), parsed strictly
  by :func:`adaroll.actions.parse_action`: malformed text raises ``ActionParseError``. A
  well-formed action the env cannot execute ends the episode as a failure (reward 0,
  ``info["invalid_action"]`` says why), as in AdaRoll's own rollouts.

Rewards and termination are AdaRoll's (:mod:`adaroll.envs.base`): 1.0 on the successful
terminal step, ``info["success"]``, truncation at the task's step limit.
"""

from __future__ import annotations

import string
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from adaroll.actions import Action, format_action, parse_action
from adaroll.envs.base import ELEMENT_FLAGS, InvalidActionError, Observation, TaskSpec
from adaroll.envs.gymnasium_ids import GYMNASIUM_IDS, register_gymnasium_ids  # noqa: F401 - re-exported

MAX_TEXT = 4096
"""Longest instruction or element text in an observation (longer ones are cut)."""
MAX_ELEMENT_ID = 2**31 - 1
PRINTABLE = string.ascii_letters + string.digits + string.punctuation + " "


class FreeText(spaces.Text):
    """A Text space of any Unicode string up to ``max_length`` (samples are printable ASCII)."""

    def __init__(self, max_length: int = MAX_TEXT) -> None:
        super().__init__(max_length, min_length=0, charset=PRINTABLE)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length


class ActionText(spaces.Text):
    """AdaRoll action text: ``contains`` is the strict parser, ``sample`` draws a tap at a
    uniform point, a directional swipe or a wait (actions every AdaRoll env executes)."""

    def __init__(self, max_length: int = MAX_TEXT) -> None:
        super().__init__(max_length, min_length=1, charset=PRINTABLE)

    def contains(self, x: Any) -> bool:
        if not (isinstance(x, str) and len(x) <= self.max_length):
            return False
        try:
            parse_action(x)
        except ValueError:
            return False
        return True

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is not None or probability is not None:
            raise ValueError("ActionText.sample takes no mask or probability")
        kind = int(self.np_random.integers(3))
        if kind == 0:
            x, y = (round(float(v), 3) for v in self.np_random.uniform(0.0, 1.0, 2))
            return format_action(Action.tap(x, y))
        if kind == 1:
            return format_action(
                Action.swipe(str(self.np_random.choice(["up", "down", "left", "right"])))
            )
        return "wait()"


def observation_space(screenshot_shape: tuple[int, int, int] | None = None) -> spaces.Dict:
    """The observation space (see the module docstring); a screenshot entry when given a shape."""
    element = spaces.Dict(
        {
            "id": spaces.Discrete(MAX_ELEMENT_ID),
            "role": FreeText(),
            "text": FreeText(),
            "bounds": spaces.Box(0.0, 1.0, (4,), np.float32),
            "flags": spaces.MultiBinary(len(ELEMENT_FLAGS)),
        }
    )
    entries: dict[str, spaces.Space[Any]] = {
        "instruction": FreeText(),
        "screen_size": spaces.Box(1, 1 << 20, (2,), np.int64),
        "elements": spaces.Sequence(element, stack=False),
    }
    if screenshot_shape is not None:
        entries["screenshot"] = spaces.Box(0, 255, screenshot_shape, np.uint8)
    return spaces.Dict(entries)


def to_gym_observation(obs: Observation, instruction: str, *, screenshot: bool) -> dict[str, Any]:
    """``obs`` as a member of :func:`observation_space` (new objects on every call)."""
    elements = tuple(
        {
            "id": int(e.id),
            "role": e.role[:MAX_TEXT],
            "text": e.text[:MAX_TEXT],
            "bounds": np.array(e.bounds, dtype=np.float32),
            "flags": np.array([flag in e.flags for flag in ELEMENT_FLAGS], dtype=np.int8),
        }
        for e in obs.elements
    )
    out: dict[str, Any] = {
        "instruction": instruction[:MAX_TEXT],
        "elements": elements,
        "screen_size": np.array(obs.screen_size, dtype=np.int64),
    }
    if screenshot:
        out["screenshot"] = np.array(obs.screenshot, dtype=np.uint8)
    return out


def _screenshot_shape(env: str, options: dict[str, Any]) -> tuple[int, int, int]:
    if env == "mobile":
        width, height = options.get("screenshot_size", (540, 1200))
        return (int(height), int(width), 3)
    if env == "web":
        from adaroll.envs.web.dom import SCREEN_HEIGHT, SCREEN_WIDTH

        return (SCREEN_HEIGHT, SCREEN_WIDTH, 3)
    raise ValueError(
        f"screenshots as a Gymnasium space are declared for mobile and web, not {env!r}"
    )


class AdaRollGymEnv(gymnasium.Env[dict[str, Any], str]):
    """An AdaRoll env (``env``: mobile or web) behind Gymnasium's API (module docstring)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 2}
    """``render_fps`` is nominal (video recorders read it): the envs are not real-time."""

    def __init__(
        self,
        env: str,
        task: str | None = None,
        split: str = "train",
        render_mode: str | None = None,
        suite_options: dict[str, Any] | None = None,
        **env_options: Any,
    ) -> None:
        from adaroll.envs import get_suite, make_env_factory

        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.render_mode = render_mode
        self.env_name = env
        self.suite = get_suite(env, env_options, **(suite_options or {}))
        self.split = split
        self._default = self._parse_task(task)
        if self._default is None:
            self.suite.split(split)  # an unknown split fails here, naming the valid ones
        self._screenshot = bool(env_options.get("screenshot", False))
        shape = _screenshot_shape(env, env_options) if self._screenshot else None
        self.observation_space = observation_space(shape)
        self.action_space = ActionText()
        self._env = make_env_factory(env, **env_options)()
        self._ended = True

    # -- tasks ----------------------------------------------------------------------------------
    def valid_templates(self) -> list[str]:
        return sorted(set(self.suite.templates()) | set(self.suite.all_templates()))

    def _parse_task(self, task: Any) -> TaskSpec | str | None:
        """A fixed instance (TaskSpec), a template (str, seed drawn per reset) or None."""
        if task is None or isinstance(task, TaskSpec):
            spec = task
        elif isinstance(task, str):
            env, sep, rest = task.rpartition(":")
            if sep and env != self.env_name:
                raise ValueError(
                    f"task {task!r} is not a {self.env_name} task (ids look like "
                    f"{self.env_name}:TEMPLATE#SEED)"
                )
            spec = TaskSpec.from_id(task) if "#" in rest else None
            template = spec.template if spec is not None else rest
            if template not in self.valid_templates():
                raise ValueError(
                    f"unknown {self.env_name} task {task!r}; valid templates: "
                    f"{', '.join(self.valid_templates())}"
                )
            return spec if spec is not None else template
        else:
            raise ValueError(f"task must be a task id or template name, got {task!r}")
        if spec is not None and spec.env != self.env_name:
            raise ValueError(f"task {spec.id} is not a {self.env_name} task")
        return spec

    def _draw(self, task: TaskSpec | str | None) -> TaskSpec:
        if isinstance(task, TaskSpec):
            return task
        if isinstance(task, str):
            return TaskSpec(self.env_name, task, int(self.np_random.integers(2**31 - 1)))
        tasks = self.suite.split(self.split)
        return tasks[int(self.np_random.integers(len(tasks)))]

    # -- Gymnasium API --------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        options = options or {}
        task = self._draw(self._parse_task(options["task"]) if "task" in options else self._default)
        obs, info = self._env.reset(options={"task": task})
        self._instruction = str(info.get("instruction", self._env.instruction))
        self._ended = False
        return self._observation(obs), {**info, "task": task.id}

    def step(self, action: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self._ended:
            raise RuntimeError("the episode has ended (or not started): call reset()")
        if not isinstance(action, str):
            raise TypeError(
                f"actions are AdaRoll action text such as 'tap(0.5, 0.5)', got {type(action).__name__}"
            )
        parsed = parse_action(action)  # ActionParseError, naming the text
        try:
            obs, reward, terminated, truncated, info = self._env.step(parsed)
        except InvalidActionError as exc:
            obs, reward, terminated, truncated = self._env.observe(), 0.0, True, False
            info = {"success": False, "invalid_action": str(exc)}
        self._ended = terminated or truncated
        return self._observation(obs), float(reward), bool(terminated), bool(truncated), dict(info)

    def render(self) -> Any:
        """The current screen (H x W x 3 uint8) in ``rgb_array`` mode, else None."""
        return self._env.render() if self.render_mode == "rgb_array" else None  # type: ignore[attr-defined]

    def close(self) -> None:
        self._env.close()

    @property
    def adaroll_env(self) -> Any:
        """The AdaRoll env underneath (for snapshots, experts and privileged inspection)."""
        return self._env

    def _observation(self, obs: Observation) -> dict[str, Any]:
        return to_gym_observation(obs, self._instruction, screenshot=self._screenshot)
