"""Long-horizon tasks as a sequence of parts, each a goal over app data or a look at a screen.

A long task is what people do on a phone in one sitting: read a code in Mail, enter it in
Settings, text it to someone; create three notes; fill a cart and check out. It is written as
an ordered list of :class:`Part`:

* a **goal** part has a verifier over the app data (``goal``) and an expert that makes progress
  towards it from any state (``act``); the task's verifier is *all goals hold* - the final state
  is checked, never the path;
* a **look** part (``goal=None``) opens the screen that shows what a later part needs (the code
  in an email, a contact's number). It changes no app data, so the expert treats it as done
  once a later part has begun: a later goal holds, or the phone is in the app of a later part.
  A look is therefore always followed by a part in another app (:func:`check_parts`).

The expert re-plans from the state it is given (the first part not done), so it can take over
from any state its own trajectory passes through, as checkpoints need.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from adaroll.actions import Action, ActionKind
from adaroll.envs.mobile.expert import Expert, ExpertError
from adaroll.envs.mobile.tasks.base import TaskTemplate, get_template
from adaroll.envs.mobile.world import Apps


@dataclass(frozen=True)
class Part:
    """One step of a long task: the app it happens in, the expert's next action towards it,
    and its verifier over app data (None for a look)."""

    app: str
    act: Callable[[Expert], Action | None]
    goal: Callable[[Apps], bool] | None = None


def sub(template: str, **params: Any) -> Part:
    """A goal part that is an existing single-app template with these params: its expert and
    its verifier (so a long task composes verified pieces)."""
    tpl = get_template(template)
    p = MappingProxyType(params)
    return Part(tpl.apps[-1], lambda x: tpl.expert(x, p), lambda w: tpl.check(w, p))


def goal(app: str, act: Callable[[Expert], Action | None], check: Callable[[Apps], bool]) -> Part:
    return Part(app, act, check)


def look(app: str, act: Callable[[Expert], Action | None]) -> Part:
    """Open the screen ``act`` leads to (``act`` returns None once it is on top)."""
    return Part(app, act, None)


def check_parts(parts: Sequence[Part]) -> None:
    """A look must be followed by a part in another app, and must not come last."""
    for i, part in enumerate(parts):
        if part.goal is None and (i + 1 == len(parts) or parts[i + 1].app == part.app):
            raise ValueError(
                f"part {i} looks at {part.app} but the next part is not in another app"
            )
    if not any(part.goal is not None for part in parts):
        raise ValueError("a long task needs at least one goal part")


def parts_done(parts: Sequence[Part], world: Apps) -> bool:
    return all(part.goal(world) for part in parts if part.goal is not None)


def next_action(parts: Sequence[Part], x: Expert) -> Action:
    """The expert's action: towards the first part that is not done."""
    apps = x.apps
    top_app = None if x.top is None else x.top.app
    for i, part in enumerate(parts):
        later = parts[i + 1 :]
        if part.goal is not None:
            if part.goal(apps):
                continue
        elif any(q.goal is not None and q.goal(apps) for q in later) or (
            top_app is not None and top_app != part.app and top_app in {q.app for q in later}
        ):
            continue
        action = part.act(x)
        if action is not None:
            return action
        if part.goal is not None:
            raise ExpertError(
                f"expert: part {i} ({part.app}) is not done but its expert has no action"
            )
        return Action(ActionKind.OPEN_APP, app=later[0].app)  # seen it: on to the next app
    raise ExpertError("expert: every part of the task is done")


class LongTemplate(TaskTemplate):
    """A task of the long-horizon family: an ordered list of parts over the params."""

    family = "long"

    def parts(self, p: MappingProxyType) -> list[Part]:
        raise NotImplementedError

    def check(self, world: Apps, p: MappingProxyType) -> bool:
        return parts_done(self.parts(p), world)

    def expert(self, x: Expert, p: MappingProxyType) -> Action:
        return next_action(self.parts(p), x)
