"""MobileEnv: the Gymnasium-style env over the pure phone model, with O(1) state copies.

The whole episode is one immutable :class:`EpisodeState`; ``get_state`` returns it and
``branch`` wraps it in a new env, so the ``memory`` snapshot backend saves and restores in
microseconds and branches can never interfere (nothing is shared that can change).
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from adaroll.actions import Action, ActionKind
from adaroll.envs.base import ENVS, GUIEnv, InvalidActionError, Observation, TaskSpec
from adaroll.envs.mobile.device import DeviceProfile, resolve_profile
from adaroll.envs.mobile.interruptions import Interruption, compose
from adaroll.envs.mobile.perturb import DeviceState, advance, start
from adaroll.envs.mobile.screen import View
from adaroll.envs.mobile.state import Phone
from adaroll.envs.mobile.system import execute, view_of
from adaroll.envs.mobile.tasks import TEMPLATES, TaskInstance, instantiate


@dataclass(frozen=True)
class MobileEnvConfig:
    """Options of :class:`MobileEnv` (all keyword arguments of ``ENVS.get("mobile")``)."""

    screenshot: bool = False
    """Attach a rendered screenshot (H x W x 3 uint8) to every observation; costs ~ms/step."""
    screenshot_size: tuple[int, int] = (540, 1200)
    """(width, height) of rendered screenshots in pixels; the logical screen is 1080 x 2400."""
    device: Any = "clean"
    """Device profile: ``clean``, ``noisy`` or a mapping of rates (see :mod:`.device`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "device", resolve_profile(self.device))
        w, h = self.screenshot_size
        if not (isinstance(w, int) and isinstance(h, int) and 54 <= w <= 4320 and 120 <= h <= 9600):
            raise ValueError(
                f"screenshot_size must be two ints (width 54..4320, height 120..9600), "
                f"got {self.screenshot_size!r}"
            )
        object.__setattr__(self, "screenshot_size", (w, h))


@dataclass(frozen=True, slots=True)
class EpisodeState:
    """The complete state of an episode: immutable, so holding it is a snapshot."""

    task: TaskInstance
    phone: Phone
    steps: int = 0
    terminated: bool = False
    truncated: bool = False
    success: bool = False
    device: DeviceState | None = None
    """The noisy device's side of the episode (None on the clean device)."""


def _resolve_task(task: Any, seed: int | None, rng: random.Random | None) -> TaskSpec:
    if task is None:
        assert rng is not None
        names = sorted(TEMPLATES)
        return TaskSpec("mobile", rng.choice(names), rng.randrange(1_000_000))
    if isinstance(task, TaskSpec):
        return task
    if isinstance(task, str):
        if ":" in task:
            return TaskSpec.from_id(task)
        return TaskSpec("mobile", task, 0 if seed is None else seed)
    raise TypeError(
        f"options['task'] must be a TaskSpec, a task id or a template name, got {task!r}"
    )


@ENVS.register("mobile")
class MobileEnv(GUIEnv):
    """The embedded phone: 9 apps, 1080x2400 logical screen, element-list observations.

    ``reset(options={"task": TaskSpec("mobile", template, seed)})`` starts a task (a template
    name or task id string also works; without a task, one is drawn with the env's RNG).
    """

    name = "mobile"
    options_config = MobileEnvConfig  # what documents env.options (adaroll config schema)

    def __init__(
        self,
        *,
        screenshot: bool = False,
        screenshot_size: tuple[int, int] = (540, 1200),
        device: Any = "clean",
    ) -> None:
        self.config = MobileEnvConfig(screenshot, tuple(screenshot_size), device)  # type: ignore[arg-type]
        self._state: EpisodeState | None = None
        self._composed: tuple[Any, ...] = (None, None, None)
        self._rng: random.Random | None = None  # made on first use: seeding costs microseconds
        self._checked: tuple[Any, bool] = (None, False)

    @staticmethod
    def validate_options(**options: Any) -> None:
        """Raise ValueError for a bad option value (a device profile's name or rate)."""
        MobileEnvConfig(**options)

    @staticmethod
    def settings(**options: Any) -> dict[str, Any]:
        """Every option with its default filled in, the device profile as its rates
        (:func:`adaroll.envs.env_settings`)."""
        return asdict(MobileEnvConfig(**options))

    # -- Gymnasium API ------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        if seed is not None:
            self._rng = random.Random(seed)
        task = (options or {}).get("task")
        if task is None and self._rng is None:
            self._rng = random.Random(0)
        spec = _resolve_task(task, seed, self._rng)
        inst = instantiate(spec)
        profile = self.config.device
        if profile.clean:
            self._state = EpisodeState(inst, inst.phone)
        else:
            phone, device = start(profile, spec.id, inst.phone)
            self._state = EpisodeState(inst, phone, device=device)
        self._checked = (None, False)
        info = {
            "instruction": inst.instruction,
            "task": spec.id,
            "max_steps": self.max_steps,
            "expert_steps": inst.expert_steps,
        }
        return self.observe(), info

    def step(self, action: Action) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        st = self._state
        if st is None:
            raise RuntimeError("MobileEnv.step() before reset()")
        if st.terminated or st.truncated:
            raise RuntimeError(f"episode of {st.task.spec.id} has ended; call reset() or restore")
        if not isinstance(action, Action):
            raise InvalidActionError(
                f"MobileEnv.step expects an adaroll.actions.Action, got {type(action).__name__}"
                " (parse text with adaroll.actions.parse_action)"
            )
        steps = st.steps + 1
        device = st.device
        if device is None:
            phone = execute(st.phone, action)
        else:
            phone, device = advance(device, st.phone, action, steps)
        inst = st.task
        if action.kind is ActionKind.DONE:
            success = inst.verify(phone.apps, action.text)
            terminated = True
        else:
            success = terminated = self._check(inst, phone)
        truncated = not terminated and steps >= self.max_steps
        self._state = EpisodeState(inst, phone, steps, terminated, truncated, success, device)
        info: dict[str, Any] = {"success": success, "steps": steps}
        if device is not None and (terminated or truncated):
            info["perturbations"] = device.perturbations()
        return self.observe(), (1.0 if success else 0.0), terminated, truncated, info

    def _check(self, inst: TaskInstance, phone: Phone) -> bool:
        """The state verifier, re-run only when app data changed (navigation never matters)."""
        if inst.expected_answer is not None:
            return False
        apps, ok = self._checked
        if apps is not phone.apps:
            ok = inst.verify(phone.apps, None)
            self._checked = (phone.apps, ok)
        return ok

    def observe(self) -> Observation:
        obs = self.view.obs
        if self.config.screenshot:
            return Observation(obs.elements, obs.screen_size, screenshot=self.render())
        return obs

    def render(self) -> np.ndarray:
        """Screenshot of the current screen (H x W x 3 uint8), deterministic."""
        from adaroll.envs.mobile.render import render_view

        return np.asarray(render_view(self.view, self.config.screenshot_size))

    def screenshot_image(self) -> Any:
        """The screenshot as a PIL image."""
        from adaroll.envs.mobile.render import render_view

        return render_view(self.view, self.config.screenshot_size)

    # -- contract properties ------------------------------------------------------------------
    @property
    def state(self) -> EpisodeState:
        if self._state is None:
            raise RuntimeError("MobileEnv has no episode; call reset()")
        return self._state

    @property
    def phone(self) -> Phone:
        return self.state.phone

    @property
    def view(self) -> View:
        """What the screen shows: the app's view, under the interruption on top (if any)."""
        st = self.state
        base = view_of(st.phone)
        intr = None if st.device is None else st.device.interruption
        if intr is None:
            return base
        cached_base, cached_intr, view = self._composed
        if cached_base is not base or cached_intr is not intr:
            view = compose(base, intr)
            self._composed = (base, intr, view)
        return view

    @property
    def device(self) -> DeviceProfile:
        return self.config.device

    @property
    def device_name(self) -> str:
        """The device profile's name; checkpoints record it and restores check it."""
        return self.config.device.name

    @property
    def interruption(self) -> Interruption | None:
        """The interruption on screen (dialog, ad, banner, loading, sign-in), if any."""
        device = self.state.device
        return None if device is None else device.interruption

    def perturbations(self) -> dict[str, int]:
        """Perturbations of each kind so far in this episode (empty on the clean device)."""
        device = self.state.device
        return {} if device is None else device.perturbations()

    @property
    def task_instance(self) -> TaskInstance:
        return self.state.task

    @property
    def task(self) -> TaskSpec:
        return self.state.task.spec

    @property
    def instruction(self) -> str:
        return self.state.task.instruction

    @property
    def max_steps(self) -> int:
        """The task's step limit, plus the device's allowance for dismissing interruptions."""
        return self.state.task.max_steps + self.config.device.extra_steps

    @property
    def steps_taken(self) -> int:
        return self.state.steps

    # -- SupportsStateCopy --------------------------------------------------------------------
    def get_state(self) -> EpisodeState:
        """The episode state itself: immutable, so O(1) and safe to hold forever."""
        return self.state

    def branch(self, state: EpisodeState) -> MobileEnv:
        """A new env in ``state`` (same config); it shares only immutable data with others."""
        self._check_device(state)
        env = MobileEnv.__new__(MobileEnv)
        env.config = self.config
        env._composed = (None, None, None)
        env._state = state
        env._rng = None
        env._checked = (None, False)
        return env

    def set_state(self, state: EpisodeState) -> None:
        """Restore ``state`` in place (this env's episode continues from there)."""
        if not isinstance(state, EpisodeState):
            raise TypeError(f"expected an EpisodeState, got {type(state).__name__}")
        self._check_device(state)
        self._state = state
        self._checked = (None, False)

    def _check_device(self, state: EpisodeState) -> None:
        made_on = "clean" if state.device is None else state.device.profile.name
        profile = self.config.device
        if (state.device is None) != profile.clean or (
            state.device is not None and state.device.profile != profile
        ):
            raise ValueError(
                f"this snapshot of {state.task.spec.id} was made on device profile {made_on!r}; "
                f"this env runs {profile.name!r}: states do not move between devices"
            )
