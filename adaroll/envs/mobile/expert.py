"""Building blocks for scripted experts: find a widget and emit the coordinate action for it.

Experts plan from the current state (they may read app data, e.g. to know which contact to
open) but act only through public :class:`~adaroll.actions.Action` values: taps at element
centres, swipes that reveal off-screen rows, ``type`` into the focused field, ``key(back)``.
Every helper returns ``None`` when its goal already holds, so an expert reads as a chain::

    return x.goto("Notes", NOTES_LIST) or x.fill("title", p["title"]) or x.tap("btn:save")

Because each call re-plans from the state it is given, an expert can take over from any state
its own trajectory passes through (which is what checkpoints need).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from adaroll.actions import Action, ActionKind
from adaroll.envs.mobile.state import Phone, Route
from adaroll.envs.mobile.system import view_of

ANY = object()
"""Matches any route argument in a navigation hop."""

Hop = tuple[str, Any, "str | None"]
"""(screen, arg, key): a screen of the target path and the key tapped to get there from the
previous hop (for the first hop: the tab key, or None for the app's default root)."""

BACK = Action.press("back")


class ExpertError(RuntimeError):
    """The expert found no way forward (a bug in a template's expert, not a policy error)."""


class Expert:
    """The current state seen by an expert: phone, its view, app data and the top route."""

    __slots__ = ("phone", "view", "apps", "top")

    def __init__(self, phone: Phone) -> None:
        self.phone = phone
        self.view = view_of(phone)
        self.apps = phone.apps
        self.top = phone.top

    @property
    def route(self) -> Route:
        """The top route (for expert steps that run on an app screen, e.g. after ``goto``)."""
        if self.top is None:
            raise ExpertError("expert: expected an app screen, the phone is at home")
        return self.top

    # -- single widgets -----------------------------------------------------------------------
    def visible(self, key: str) -> bool:
        return key in self.view.keys

    def tap(self, key: str, kind: ActionKind = ActionKind.TAP) -> Action | None:
        """Tap the widget ``key``; if it is off-screen, the swipe (or back, for a widget under
        the keyboard) that brings it into view; None if the screen has no such widget."""
        idx = self.view.keys.get(key)
        if idx is not None:
            x, y = self.view.obs.elements[idx].center
            return Action(kind, x=round(x, 4), y=round(y, 4))
        where = self.view.offscreen.get(key)
        if where == "keyboard":
            return BACK
        if where is not None:
            return Action.swipe(where)
        return None

    def press(self, key: str) -> Action:
        """Like :meth:`tap` but the widget must exist."""
        action = self.tap(key)
        if action is None:
            raise ExpertError(self._missing(key))
        return action

    def long_press(self, key: str) -> Action:
        action = self.tap(key, ActionKind.LONG_PRESS)
        if action is None:
            raise ExpertError(self._missing(key))
        return action

    def tap_at(self, key: str, x: float) -> Action:
        """Tap widget ``key`` at normalised ``x`` (sliders); reveal it first if needed."""
        idx = self.view.keys.get(key)
        if idx is None:
            return self.press(key)
        return Action.tap(round(x, 4), round(self.view.obs.elements[idx].center[1], 4))

    def _missing(self, key: str) -> str:
        top = self.top
        where = "home" if top is None else f"{top.app}/{top.screen} dialog={top.dialog}"
        return f"expert: no widget {key!r} on {where}; keys: {sorted(self.view.keys)}"

    # -- text fields --------------------------------------------------------------------------
    def fill(self, name: str, value: str) -> Action | None:
        """Make field ``name`` of the top screen hold exactly ``value`` (focus, clear, type)."""
        top = self.top
        assert top is not None
        current = top.field(name)
        if current == value:
            return None
        if top.focus != name:
            return self.press(f"field:{name}")
        if not value.startswith(current):
            return self.press(f"clear:{name}")
        return Action.type_text(value[len(current) :])

    # -- navigation ---------------------------------------------------------------------------
    def goto(self, app: str, path: Sequence[Hop]) -> Action | None:
        """Next action towards the screen ``path`` of ``app`` (None once it is on top).

        From another app: ``open_app`` (or its launcher icon at home); inside the app: back out
        of screens not on the path, then tap the key of the next hop.
        """
        stack = self.phone.stack
        if not stack:
            return self.press(f"app:{app}")
        if stack[0].app != app:
            return Action(ActionKind.OPEN_APP, app=app)
        k = 0
        for route, (screen, arg, _key) in zip(stack, path, strict=False):
            if route.screen != screen or (arg is not ANY and route.arg != arg):
                break
            k += 1
        if k == len(path) and len(stack) == k:
            return None
        top = stack[-1]
        if top.dialog is not None or top.focus is not None:
            return BACK
        if k == len(stack) and k < len(path):
            key = path[k][2]
            if key is None:
                raise ExpertError(f"expert: hop {path[k]} has no key to reach it")
            return self.press(key)
        if k == 0 and len(stack) == 1 and path[0][2] is not None:
            return self.press(path[0][2])  # another tab of the app's root
        return BACK
