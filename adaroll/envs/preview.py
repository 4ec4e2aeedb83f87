"""Look at tasks: print a task's first screen, record an expert trajectory, draw it as a GIF
or a contact sheet. Works with any GUIEnv/TaskSuite; screenshots need ``env.render()``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from adaroll.actions import Action, ActionKind
from adaroll.envs.base import GUIEnv, Observation, TaskSpec, TaskSuite, run_expert


@runtime_checkable
class PerturbedEnv(Protocol):
    """An env with device perturbations (the noisy mobile device): what interrupts the screen
    now, and how many of each kind the episode has seen."""

    @property
    def interruption(self) -> Any: ...

    def perturbations(self) -> dict[str, int]: ...


@dataclass
class Trajectory:
    """An expert episode: ``observations[i]`` is what the expert saw before ``actions[i]``;
    the last observation follows the last action. ``frames`` are screenshots (if rendered)."""

    task: TaskSpec
    instruction: str
    actions: list[Action]
    observations: list[Observation]
    success: bool
    frames: list[Any] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task.id,
            "instruction": self.instruction,
            "success": self.success,
            "actions": [a.to_text() for a in self.actions],
            "observations": [o.to_dict() for o in self.observations],
        }


def _frame(env: GUIEnv) -> Any:
    return env.render()


def record_expert(
    env: GUIEnv, suite: TaskSuite, task: TaskSpec, frames: bool = False
) -> Trajectory:
    """Roll the suite's expert on ``task`` (``run_expert``), then replay its actions to record
    every observation (and screenshot when ``frames``)."""
    actions, success = run_expert(env, suite, task)
    obs, info = env.reset(options={"task": task})
    observations, shots = [obs], [_frame(env)] if frames else []
    for action in actions:
        obs, *_ = env.step(action)
        observations.append(obs)
        if frames:
            shots.append(_frame(env))
    if any(shot is None for shot in shots):  # an env that draws no screen (env.render())
        shots = []
    return Trajectory(
        task, info.get("instruction", env.instruction), actions, observations, success, shots
    )


def _annotate(image: Any, action: Action | None, caption: str) -> Any:
    from PIL import Image, ImageDraw, ImageFont

    img = Image.fromarray(image) if not isinstance(image, Image.Image) else image.copy()
    w, h = img.size
    draw = ImageDraw.Draw(img)
    r = max(6, w // 30)
    if action is not None and action.x is not None and action.y is not None:
        x, y = action.x * w, action.y * h
        draw.ellipse((x - r, y - r, x + r, y + r), outline=(234, 67, 53), width=max(2, r // 3))
        if action.kind is ActionKind.SWIPE and action.x2 is not None:
            end = (action.x2 * w, action.y2 * h)  # type: ignore[operator]
            draw.line((x, y, *end), fill=(234, 67, 53), width=max(2, r // 3))
    font = ImageFont.load_default(size=max(10, w // 28))
    band = int(getattr(font, "size", 12)) * 2
    out = Image.new("RGB", (w, h + band), (32, 33, 36))
    out.paste(img, (0, 0))
    ImageDraw.Draw(out).text((8, h + band // 4), caption, fill=(255, 255, 255), font=font)
    return out


def annotated_frames(traj: Trajectory) -> list[Any]:
    """One image per step: the screen with the action about to be taken marked on it."""
    images = []
    for i, frame in enumerate(traj.frames):
        action = traj.actions[i] if i < len(traj.actions) else None
        caption = (
            f"{i}: {action.to_text()}"
            if action
            else f"end: {'success' if traj.success else 'failure'}"
        )
        images.append(_annotate(frame, action, caption))
    return images


def write_gif(images: Sequence[Any], path: Path, ms_per_frame: int = 800) -> Path:
    images[0].save(
        path,
        save_all=True,
        append_images=list(images[1:]),
        duration=ms_per_frame,
        loop=0,
        optimize=False,
    )
    return path


def write_contact_sheet(images: Sequence[Any], path: Path, columns: int = 6) -> Path:
    from PIL import Image

    w, h = images[0].size
    rows = -(-len(images) // columns)
    sheet = Image.new("RGB", (columns * w, rows * h), (255, 255, 255))
    for i, img in enumerate(images):
        sheet.paste(img, ((i % columns) * w, (i // columns) * h))
    sheet.save(path)
    return path


def show_task(env: GUIEnv, task: TaskSpec, out: Path | None) -> tuple[str, str, Path | None]:
    """Reset to ``task``: (instruction, element list as text, screenshot path if written)."""
    obs, info = env.reset(options={"task": task})
    written = None
    if out is not None:
        frame = _frame(env)
        if frame is not None:
            from PIL import Image

            (Image.fromarray(frame) if not isinstance(frame, Image.Image) else frame).save(out)
            written = out
    return info.get("instruction", env.instruction), obs.describe(), written


def screen_notes(env: GUIEnv, traj: Trajectory) -> dict[Any, str]:
    """For an env with device perturbations: per step, the interruption on screen before the
    action ("   [ad: ...]"), and under ``"end"`` the episode's perturbation counts."""
    if not isinstance(env, PerturbedEnv):
        return {}
    notes: dict[Any, str] = {}
    env.reset(options={"task": traj.task})
    for i, action in enumerate(traj.actions):
        intr = env.interruption
        if intr is not None:
            title = next(
                (
                    e.text
                    for e in env.observe().elements[::-1]
                    if e.role in ("dialog", "image", "notification", "progress", "text")
                ),
                "",
            )
            notes[i] = f"   [{intr.kind}: {title}]"
        env.step(action)
    counts = {k: n for k, n in env.perturbations().items() if n}
    notes["end"] = "perturbations: " + (", ".join(f"{k}={n}" for k, n in counts.items()) or "none")
    return notes


def play_task(env: GUIEnv, suite: TaskSuite, task: TaskSpec, out: Path) -> Trajectory:
    """Record the expert on ``task`` and write a GIF (``.gif``) or contact sheet (``.png``)
    when the env draws its screen (nothing is written otherwise: ``traj.frames`` is empty)."""
    traj = record_expert(env, suite, task, frames=True)
    images = annotated_frames(traj)
    if images:
        (write_gif if out.suffix.lower() == ".gif" else write_contact_sheet)(images, out)
    return traj
