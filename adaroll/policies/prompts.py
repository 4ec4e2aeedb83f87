"""Prompts for language-model policies (``hf`` and ``remote``): one builder, two wire formats.

A prompt is a chat of two messages:

* **system** - the agent's role and the action-format description generated from the action
  docs (:func:`adaroll.actions.action_format_help`), so the prompt and the strict parser
  (:func:`adaroll.actions.parse_action`) can never drift apart;
* **user** - the task instruction, the previous actions (their canonical texts, oldest first,
  the last ``history_len``), the observation's element list (:meth:`Observation.describe`, at
  most ``max_elements`` lines) and, for vision-language models, the screenshot.

The expected answer is exactly one action in the text format, e.g. ``tap(0.43, 0.71)``.

Wire formats:

* Hugging Face chat templates (:func:`hf_messages`): content parts ``{"type": "image"}`` /
  ``{"type": "text", "text": ...}``; the image itself goes to the processor separately.
* OpenAI chat completions (:func:`openai_messages`): ``{"type": "image_url", "image_url":
  {"url": "data:image/png;base64,..."}}`` parts.
* Tokenizers without a chat template get :func:`plain_prompt`, a fixed text rendering.
"""

from __future__ import annotations

import base64
import io
from typing import Any

from adaroll.actions import action_format_help
from adaroll.envs.base import Observation
from adaroll.policies.base import Context, last_actions

ROLE_TEXT = (
    "You are a GUI agent. You see a task, the actions you already took and the current screen "
    "(a list of UI elements with their bounds as fractions of the screen: left, top, right, "
    "bottom). Choose the next action."
)


def system_prompt(custom: str | None = None) -> str:
    """The system message: ``custom`` (or the default role text) + the action-format help."""
    return f"{custom if custom is not None else ROLE_TEXT}\n\n{action_format_help()}"


def user_prompt(context: Context, *, history_len: int = 4, max_elements: int = 200) -> str:
    """The user message text: instruction, history, element list, answer cue."""
    history = last_actions(context.history, history_len)
    lines = [f"Task: {context.instruction}", ""]
    lines.append("Previous actions (oldest first):")
    if history:
        lines.extend(f"{i}. {a.to_text()}" for i, a in enumerate(history, 1))
    else:
        lines.append("(none)")
    lines.append("")
    obs = context.observation
    elements = obs.elements[:max_elements]
    lines.append(f'Screen elements ({len(obs.elements)}; [id] role "text" (bounds) [flags]):')
    shown = Observation(elements, obs.screen_size).describe()
    lines.append(shown if shown else "(no elements)")
    if len(obs.elements) > len(elements):
        lines.append(f"... {len(obs.elements) - len(elements)} more elements not shown")
    lines.append("")
    lines.append("Answer with one action only.")
    return "\n".join(lines)


def has_screenshot(context: Context) -> bool:
    return getattr(context.observation, "screenshot", None) is not None


def screenshot_image(context: Context) -> Any:
    """The observation's screenshot as a PIL RGB image (None when there is none)."""
    shot = getattr(context.observation, "screenshot", None)
    if shot is None:
        return None
    from PIL import Image

    if isinstance(shot, Image.Image):
        return shot.convert("RGB")
    import numpy as np

    return Image.fromarray(np.asarray(shot, dtype=np.uint8)).convert("RGB")


def screenshot_data_url(context: Context) -> str | None:
    """The screenshot as a ``data:image/png;base64,...`` URL (None when there is none)."""
    image = screenshot_image(context)
    if image is None:
        return None
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def hf_messages(
    context: Context,
    *,
    history_len: int = 4,
    max_elements: int = 200,
    system: str | None = None,
    image: bool = False,
) -> list[dict[str, Any]]:
    """Messages for ``apply_chat_template``; ``image=True`` adds an image placeholder part
    before the text (the processor receives :func:`screenshot_image` separately)."""
    text = user_prompt(context, history_len=history_len, max_elements=max_elements)
    if image:
        user: Any = [{"type": "image"}, {"type": "text", "text": text}]
        sys_content: Any = [{"type": "text", "text": system_prompt(system)}]
    else:
        user = text
        sys_content = system_prompt(system)
    return [{"role": "system", "content": sys_content}, {"role": "user", "content": user}]


def openai_messages(
    context: Context,
    *,
    history_len: int = 4,
    max_elements: int = 200,
    system: str | None = None,
    image: bool = False,
) -> list[dict[str, Any]]:
    """Messages for an OpenAI-compatible ``/chat/completions`` request; ``image=True`` (and a
    screenshot present) adds the screenshot as a PNG data URL part."""
    text = user_prompt(context, history_len=history_len, max_elements=max_elements)
    url = screenshot_data_url(context) if image else None
    user: Any = text
    if url is not None:
        user = [{"type": "image_url", "image_url": {"url": url}}, {"type": "text", "text": text}]
    return [{"role": "system", "content": system_prompt(system)}, {"role": "user", "content": user}]


def plain_prompt(messages: list[dict[str, Any]]) -> str:
    """A fixed text rendering for tokenizers without a chat template (text parts only)."""
    parts = []
    for message in messages:
        content = message["content"]
        if not isinstance(content, str):
            content = "\n".join(p["text"] for p in content if p.get("type") == "text")
        parts.append(f"### {message['role']}\n{content}")
    return "\n\n".join(parts) + "\n\n### assistant\n"
