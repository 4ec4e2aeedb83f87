"""``BrowserGymEnv``: a BrowserGym task (``browsergym-core``) behind AdaRoll's GUIEnv contract.

Task ids: ``TaskSpec("browsergym", "miniwob.click-test-2", seed)`` (text:
``browsergym:miniwob.click-test-2#3``); ``options["task"]`` may also be BrowserGym's own
Gymnasium id ``browsergym/miniwob.click-test-2`` (seed from ``reset(seed=)``). The benchmark's
package (``browsergym.miniwob``, ``browsergym.webarena``, ...) is imported on first use; a task
it does not register is a ValueError naming the env and the task.

Episodes: a reset runs ``BrowserEnv.reset(seed=task.seed)`` - BrowserGym then launches a fresh
browser for the task page and another for its chat window, both Debian's Chromium
(:mod:`adaroll.envs.browsergym.launch`). A step turns the AdaRoll action into a BrowserGym
action string (:mod:`adaroll.envs.browsergym.actions`) and runs ``BrowserEnv.step``. Reward and
termination are BrowserGym's: the task's ``validate`` (on MiniWoB++: the page's raw reward and
done flag). AdaRoll's rules on top (:mod:`adaroll.envs.base`): reward 1.0 on the terminal step
of a success, ``done()`` terminates, ``max_steps`` truncates (BrowserGym never truncates).

Observation: BrowserGym's accessibility tree and element properties become the element list
(:mod:`adaroll.envs.browsergym.observation`). The screen is MiniWoB++'s ``160 x 210`` task
area for ``miniwob.*`` tasks (so bounds and coordinates equal the web env's), the task's
viewport otherwise. ``observe()`` returns the observation BrowserGym extracted after the last
reset or step (BrowserGym extracts one per call; a page changing on its own between steps is
seen at the next step).

Faults: any exception from BrowserGym or Playwright during reset or step (a crashed browser, a
closed page, a Playwright timeout) becomes :class:`~adaroll.envs.base.EnvFault` naming the env
and the task, and the env is unusable afterwards - the collector's env-fault path replaces it
and re-runs the group. An action BrowserGym could not execute (e.g. a click Playwright rejected)
is not a fault: BrowserGym reports it in ``last_action_error``, kept in ``info["action_error"]``.

Privileged access (experts, tests): :meth:`evaluate` runs JavaScript in the task page;
:meth:`page_status` reads MiniWoB's episode status. The web env's scripted experts plan through
these, so they drive this env unchanged.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, fields, replace
from typing import Any

from adaroll.actions import Action, ActionKind
from adaroll.envs.base import ENVS, EnvFault, EpisodeEnv, InvalidActionError, Observation, TaskSpec
from adaroll.envs.browsergym import launch
from adaroll.envs.browsergym.actions import ACTION_SUBSETS, ActionGeometry, to_browsergym
from adaroll.envs.browsergym.observation import axtree_elements
from adaroll.envs.web import dom
from adaroll.envs.web.browser import BROWSER_USER, browser_credentials

MINIWOB_SCREEN = (dom.SCREEN_WIDTH, dom.SCREEN_HEIGHT)
ENV_NAME = "browsergym"


class _QuietOverrides(logging.Filter):
    """BrowserGym warns on every reset that ``slow_mo``/``timeout`` override the task's; here
    they are options chosen once in the config (documented), so the per-reset line is noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Overriding the task's")


logging.getLogger("browsergym.core.env").addFilter(_QuietOverrides())


@dataclass(frozen=True)
class BrowserGymEnvConfig:
    """Knobs of the BrowserGym environment (``env.options``)."""

    executable: str | None = None
    """Chromium binary (None: ``$ADAROLL_CHROMIUM`` or Debian's, as the web env)."""
    max_steps: int | None = None
    """Step limit of every task (None: the MiniWoB++ registry's per-task limit for ``miniwob.*``
    tasks, ``default_max_steps`` for others)."""
    default_max_steps: int = 30
    """Step limit of tasks AdaRoll has no limit for (WebArena-class tasks)."""
    max_elements: int = dom.MAX_ELEMENTS
    """At most this many UI elements per observation."""
    screenshot: bool = False
    """Also return the screen as an H x W x 3 uint8 array in CSS pixels with each observation."""
    pre_observation_delay: float = 0.1
    """Seconds BrowserGym waits after an action before it validates and observes (its own
    default is 0.5, for autocompletion menus that open late)."""
    slow_mo: int | None = None
    """Playwright's delay per browser operation in ms (None: the task's; MiniWoB++ sets 100)."""
    timeout_ms: int | None = None
    """Playwright's default timeout in ms (None: the task's; MiniWoB++ sets 5000)."""
    wait_seconds: float = 0.5
    """Duration of the ``wait()`` action."""
    long_press_seconds: float = 0.5
    """How long ``long_press`` holds the button."""
    scroll_fraction: float = 0.5
    """``swipe(direction)`` scrolls by this fraction of the screen's height/width."""
    task_kwargs: dict[str, Any] = field(default_factory=dict)
    """Extra arguments of the BrowserGym task (passed to ``gymnasium.make(task_kwargs=...)``)."""
    user: str | None = BROWSER_USER
    """Account the task's browsers run as when AdaRoll runs as root (never root: a root account
    is refused; :func:`adaroll.envs.web.browser.browser_credentials`); None: as this process.
    Ignored when AdaRoll is not root."""
    chromium_sandbox: bool = True
    """Chromium's own sandbox (renderers in their own user namespace under seccomp-bpf) for
    browsers that run as ``user``; as root Chromium cannot use it and it stays off."""
    allowed_hosts: tuple[str, ...] | None = ()
    """The only hosts the browser may reach (names, IP literals, ``*.domain`` wildcards): e.g.
    ``[webarena-shop.internal, 10.0.0.7]`` for WebArena-class servers. ``[]`` (default): none -
    MiniWoB++ pages are ``file://`` URLs; None: no limit (live web tasks). See
    :func:`adaroll.envs.browsergym.launch.network_args`."""


def coerce_task(task: Any, seed: int | None) -> TaskSpec:
    """A TaskSpec of this env from ``options["task"]`` (TaskSpec, ``browsergym:NAME#SEED``,
    ``browsergym/NAME`` or ``NAME``); its name is checked against BrowserGym's registry."""
    if isinstance(task, TaskSpec):
        spec = task
    elif isinstance(task, str):
        if ":" in task:
            spec = TaskSpec.from_id(task)
        else:
            spec = TaskSpec(ENV_NAME, launch.normalise_task_name(task), seed or 0)
    else:
        raise ValueError(f"options['task'] must be a TaskSpec or a task id, got {task!r}")
    if spec.env != ENV_NAME:
        raise ValueError(f"task {spec.id} is not a {ENV_NAME} task")
    launch.resolve_task(spec.template)
    return spec


def step_limit(template: str, config: BrowserGymEnvConfig) -> int:
    if config.max_steps is not None:
        return config.max_steps
    if launch.benchmark_of(template) == "miniwob":
        from adaroll.envs.web.miniwob import all_tasks

        meta = all_tasks().get(template.split(".", 1)[1])
        if meta is not None:
            return meta.max_steps
    return config.default_max_steps


@ENVS.register(ENV_NAME)
class BrowserGymEnv(EpisodeEnv):
    """One BrowserGym task episode at a time (see the module docstring)."""

    name = ENV_NAME
    max_live = 4  # two browsers each (task page and chat window)

    def __init__(self, config: BrowserGymEnvConfig | None = None, **overrides: Any) -> None:
        """``overrides``: fields of :class:`BrowserGymEnvConfig` (the run's ``env.options``)."""
        config = config or BrowserGymEnvConfig()
        if overrides:
            config = replace(config, **overrides)
        self.config = config
        self._ids = browser_credentials(config.user)
        self._launch_args = launch.network_args(config.allowed_hosts)
        launch.install_playwright(config.executable)
        self._gym: Any = None
        self._gym_id: str | None = None
        self._task: TaskSpec | None = None
        self._instruction = ""
        self._steps = 0
        self._max_steps = 0
        self._done = False
        self._obs: Observation | None = None
        self._raw: dict[str, Any] = {}
        self._fault: EnvFault | None = None
        self.last_reset_seconds = 0.0
        self.last_step_seconds = 0.0

    @classmethod
    def validate_options(cls, **options: Any) -> None:
        """Option names and values checked before any env (and browser) is built."""
        valid = [f.name for f in fields(BrowserGymEnvConfig)]
        unknown = sorted(set(options) - set(valid))
        if unknown:
            raise ValueError(f"unknown option(s) {', '.join(unknown)}; valid: {', '.join(valid)}")
        config = replace(BrowserGymEnvConfig(), **options)
        for name in ("max_steps", "slow_mo", "timeout_ms"):
            value = getattr(config, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 0
            ):
                raise ValueError(f"{name} must be a non-negative int or null, got {value!r}")
        if not isinstance(config.task_kwargs, dict):
            raise ValueError(f"task_kwargs must be a mapping, got {config.task_kwargs!r}")
        if config.allowed_hosts is not None:
            if isinstance(config.allowed_hosts, str) or not all(
                isinstance(h, str) for h in config.allowed_hosts
            ):
                raise ValueError(
                    f"allowed_hosts must be a list of host names or null, got {config.allowed_hosts!r}"
                )
            launch.network_args(tuple(config.allowed_hosts))
        browser_credentials(config.user)

    # -- GUIEnv ---------------------------------------------------------------------------------
    def _no_episode(self) -> str:
        return "call reset first"

    @property
    def screen(self) -> tuple[int, int]:
        """The task area in CSS pixels (what normalised coordinates are fractions of)."""
        if self._task is not None and launch.benchmark_of(self._task.template) != "miniwob":
            viewport = getattr(self._gym.unwrapped.task, "viewport", None) or {}
            if viewport:
                return (int(viewport["width"]), int(viewport["height"]))
        return MINIWOB_SCREEN

    @property
    def scale(self) -> float:
        page = self._gym.unwrapped.page if self._gym is not None else None
        return float(getattr(page, "_bgym_scale_factor", 1.0))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        options = options or {}
        if "task" not in options:
            raise ValueError("reset needs options={'task': TaskSpec or task id}")
        task = coerce_task(options["task"], seed)
        gym_id = launch.resolve_task(task.template)
        self._check_usable("reset", task)
        t0 = time.perf_counter()
        with self._faults("reset", task):
            if self._gym is None or self._gym_id != gym_id:
                self._close_gym()
                self._gym = self._make(gym_id)
                self._gym_id = gym_id
            with launch.launch_options(self._ids, self._launch_args, self.config.chromium_sandbox):
                raw, info = self._gym.reset(seed=task.seed)
            self._task = task
            self._raw = raw
            obs = self._obs = self._observation(raw)
        self._instruction = str(raw.get("goal") or "")
        self._steps = 0
        self._done = False
        self._max_steps = step_limit(task.template, self.config)
        self.last_reset_seconds = time.perf_counter() - t0
        return obs, {
            "instruction": self._instruction,
            "task": task.id,
            "max_steps": self._max_steps,
            "task_info": info.get("task_info", {}),
        }

    def step(self, action: Action) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        if self._task is None:
            raise RuntimeError("call reset before step")
        if self._done:
            raise RuntimeError("the episode is over; call reset")
        if not isinstance(action, Action):
            raise InvalidActionError(f"expected an Action, got {type(action).__name__}")
        self._check_usable("step", self._task)
        command = to_browsergym(action, self._geometry())
        t0 = time.perf_counter()
        with self._faults("step", self._task):
            raw, reward, bg_terminated, _, info = self._gym.step(command)
            self._raw = raw
            obs = self._obs = self._observation(raw)
        self._steps += 1
        success = bool(bg_terminated) and float(reward) > 0
        terminated = bool(bg_terminated) or action.kind is ActionKind.DONE
        truncated = not terminated and self._steps >= self._max_steps
        self._done = terminated or truncated
        self.last_step_seconds = time.perf_counter() - t0
        task_info = info.get("task_info", {}) or {}
        out: dict[str, Any] = {
            "instruction": self._instruction,
            "steps": self._steps,
            "browsergym_action": command,
            "browsergym_reward": float(reward),
            "action_error": raw.get("last_action_error") or "",
            "raw_reward": task_info.get("RAW_REWARD_GLOBAL"),
            "reason": task_info.get("REWARD_REASON"),
        }
        if self._done:
            out["success"] = success
        return obs, (1.0 if success else 0.0), terminated, truncated, out

    def observe(self) -> Observation:
        if self._obs is None:
            raise RuntimeError("call reset first")
        return self._obs

    def close(self) -> None:
        self._close_gym()

    def __enter__(self) -> BrowserGymEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- privileged helpers (experts, tests) ----------------------------------------------------
    def evaluate(self, expression: str, *, await_promise: bool = False) -> Any:
        """Evaluate JavaScript in the task page. PRIVILEGED: experts/tests only (a promise's
        value is always awaited, as Playwright does)."""
        del await_promise
        task = self.task
        self._check_usable("evaluate", task)
        with self._faults("evaluate", task):
            return self._gym.unwrapped.page.evaluate(expression)

    def page_status(self) -> dict[str, Any]:
        """MiniWoB's episode status (done, raw_reward, reason, ready). PRIVILEGED."""
        from adaroll.envs.web.miniwob import STATUS_JS

        if launch.benchmark_of(self.task.template) != "miniwob":
            raise NotImplementedError("page_status reads MiniWoB++ pages only")
        return dict(self.evaluate(STATUS_JS))

    # -- internals ------------------------------------------------------------------------------
    def _make(self, gym_id: str) -> Any:
        import gymnasium
        from browsergym.core.action.highlevel import HighLevelActionSet

        actions = HighLevelActionSet(subsets=list(ACTION_SUBSETS), strict=True, multiaction=True)
        kwargs: dict[str, Any] = {
            "pre_observation_delay": self.config.pre_observation_delay,
            "action_mapping": actions.to_python_code,
            "slow_mo": self.config.slow_mo,
            "timeout": self.config.timeout_ms,
        }
        if self.config.task_kwargs:
            kwargs["task_kwargs"] = dict(self.config.task_kwargs)
        return gymnasium.make(gym_id, disable_env_checker=True, **kwargs)

    def _geometry(self) -> ActionGeometry:
        c = self.config
        return ActionGeometry(
            self.screen,
            self.scale,
            c.scroll_fraction,
            int(c.wait_seconds * 1000),
            int(c.long_press_seconds * 1000),
        )

    def _observation(self, raw: dict[str, Any]) -> Observation:
        screen = self.screen
        elements = axtree_elements(
            raw, screen, scale=self.scale, max_elements=self.config.max_elements
        )
        shot = self._screenshot(raw, screen) if self.config.screenshot else None
        return Observation(elements, screen, shot)

    def _screenshot(self, raw: dict[str, Any], screen: tuple[int, int]) -> Any:
        """BrowserGym's screenshot (scaled) cut to the screen and brought to CSS pixels."""
        import numpy as np
        from PIL import Image

        image = np.asarray(raw["screenshot"], dtype=np.uint8)
        w, h = screen
        s = self.scale
        area = image[: round(h * s), : round(w * s)]
        return np.asarray(Image.fromarray(area).resize((w, h), Image.Resampling.BILINEAR))

    def _check_usable(self, what: str, task: TaskSpec) -> None:
        if self._fault is not None:
            raise EnvFault(
                f"{ENV_NAME} env unusable after an earlier fault ({what} of "
                f"{task.id}): {self._fault}"
            )

    @contextlib.contextmanager
    def _faults(self, what: str, task: TaskSpec) -> Iterator[None]:
        """Turn any exception of a BrowserGym call into :class:`EnvFault` and poison the env:
        after a crash or a timeout nothing later could be trusted."""
        try:
            yield
        except EnvFault:
            raise
        except Exception as exc:
            self._fault = EnvFault(
                f"{ENV_NAME} env {what} of {task.id} failed: {type(exc).__name__}: {exc}"
            )
            raise self._fault from exc

    def _close_gym(self) -> None:
        gym_env, self._gym, self._gym_id = self._gym, None, None
        if gym_env is not None:
            try:
                gym_env.close()
            except Exception:  # noqa: BLE001 - a dead browser cannot be closed politely
                pass
