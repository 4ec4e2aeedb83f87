"""AdaRoll actions as BrowserGym high-level action strings, by coordinates.

Why coordinates and not BrowserGym ids (bids): an AdaRoll action names a point of the screen
(``tap(x, y)``), as a finger or a mouse would. BrowserGym's coordinate actions
(``mouse_click(x, y)``, ...) press exactly that point. Its bid actions (``click(bid)``) would
first need a hit test to name the element under the point, and then Playwright clicks the
element's centre after scrolling it into view and waiting until it is "actionable" - another
point, another page state, and no equivalent at all for points without an element id (canvas,
SVG shapes, text). Typing and keys go to the focused element (``keyboard_type``,
``keyboard_press``), as in the web env.

Coordinates: AdaRoll's are normalised to the screen (the task area, ``W x H`` CSS pixels);
BrowserGym's are screenshot pixels, i.e. CSS pixels times the page's ``_bgym_scale_factor``
(1.5 on MiniWoB++), which BrowserGym divides out again.

Mapping (``s`` = scale factor, ``px`` = ``x * W * s``, ``py`` = ``y * H * s``):

==========================  ==============================================================
``tap(x, y)``               ``mouse_click(px, py)``
``double_tap(x, y)``        ``mouse_dblclick(px, py)``
``long_press(x, y)``        ``mouse_down(px, py)`` ``noop(hold)`` ``mouse_up(px, py)``
``hover(x, y)``             ``mouse_move(px, py)``
``swipe(direction)``        ``scroll_at(centre, dx, dy)`` - the finger convention of
                            :mod:`adaroll.actions`: ``swipe(up)`` scrolls the content down by
                            ``scroll_fraction`` of the screen
``swipe(x1, y1, x2, y2)``   ``mouse_drag_and_drop(px1, py1, px2, py2)``
``type(text)``              ``keyboard_type(text)`` (key events per character)
``key(k)``, ``key(ctrl+a)`` ``keyboard_press(Playwright key)``, e.g. ``Enter``, ``Control+a``
``wait()``                  ``noop(wait_ms)``
``done()``                  ``noop(0)``: nothing happens, BrowserGym validates the page
``done("answer")``          ``send_msg_to_user(answer)`` (how BrowserGym's QA tasks, e.g.
                            WebArena's, receive an answer)
==========================  ==============================================================

``open_app`` and the phone keys (back, home, recent, volume) are invalid here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from adaroll.actions import Action, ActionKind
from adaroll.envs.base import InvalidActionError

ACTION_SUBSETS = ("coord", "bid", "chat", "infeas", "nav", "tab")
"""BrowserGym action subsets the env's action mapping accepts (every string this module emits
is in ``coord`` or ``chat``; the others let callers send raw BrowserGym actions too)."""

PLAYWRIGHT_KEYS = {
    "enter": "Enter",
    "tab": "Tab",
    "escape": "Escape",
    "backspace": "Backspace",
    "delete": "Delete",
    "space": " ",
    "up": "ArrowUp",
    "down": "ArrowDown",
    "left": "ArrowLeft",
    "right": "ArrowRight",
    "page_up": "PageUp",
    "page_down": "PageDown",
}
PLAYWRIGHT_MODIFIERS = {"ctrl": "Control", "alt": "Alt", "shift": "Shift", "meta": "Meta"}


@dataclass(frozen=True)
class ActionGeometry:
    """How AdaRoll's normalised coordinates map to BrowserGym's."""

    screen: tuple[int, int]
    """The task area in CSS pixels (normalised coordinates are fractions of it)."""
    scale: float = 1.0
    """The page's ``_bgym_scale_factor`` (screenshot pixels per CSS pixel)."""
    scroll_fraction: float = 0.5
    """``swipe(direction)`` scrolls by this fraction of the screen's height/width."""
    wait_ms: int = 500
    """Duration of ``wait()``."""
    long_press_ms: int = 500
    """How long ``long_press`` holds the button."""

    def point(self, x: float | None, y: float | None) -> str:
        assert x is not None and y is not None
        w, h = self.screen
        return f"{x * w * self.scale:.2f}, {y * h * self.scale:.2f}"


def playwright_key(key: str) -> str:
    """AdaRoll key (``enter``, ``ctrl+a``) -> Playwright key (``Enter``, ``Control+a``)."""
    parts = key.split("+")
    *mods, last = parts
    try:
        names = [PLAYWRIGHT_MODIFIERS[m] for m in mods]
    except KeyError:
        raise InvalidActionError(f"key {key!r}: unknown modifier") from None
    if last in PLAYWRIGHT_KEYS:
        names.append(PLAYWRIGHT_KEYS[last])
    elif mods and len(last) == 1 and last.isalnum():
        names.append(last)
    else:
        raise InvalidActionError(
            f"key {key!r} has no meaning in a web page; valid: "
            f"{', '.join(PLAYWRIGHT_KEYS)}, or a chord such as ctrl+a"
        )
    return "+".join(names)


def to_browsergym(action: Action, geometry: ActionGeometry) -> str:
    """The BrowserGym high-level action string that performs ``action`` (see the table)."""
    kind, g = action.kind, geometry
    if kind is ActionKind.TAP:
        return f"mouse_click({g.point(action.x, action.y)})"
    if kind is ActionKind.DOUBLE_TAP:
        return f"mouse_dblclick({g.point(action.x, action.y)})"
    if kind is ActionKind.LONG_PRESS:
        at = g.point(action.x, action.y)
        return f"mouse_down({at})\nnoop({g.long_press_ms})\nmouse_up({at})"
    if kind == "hover":  # web-only kind; compared by value so older Action models still load
        return f"mouse_move({g.point(action.x, action.y)})"
    if kind is ActionKind.SWIPE:
        if action.direction is None:
            return (
                f"mouse_drag_and_drop({g.point(action.x, action.y)}, "
                f"{g.point(action.x2, action.y2)})"
            )
        w, h = g.screen
        dy = {"up": 1, "down": -1}.get(action.direction, 0) * g.scroll_fraction * h * g.scale
        dx = {"left": 1, "right": -1}.get(action.direction, 0) * g.scroll_fraction * w * g.scale
        return f"scroll_at({g.point(0.5, 0.5)}, {dx:.2f}, {dy:.2f})"
    if kind is ActionKind.TYPE:
        return f"keyboard_type({json.dumps(action.text)})"
    if kind is ActionKind.KEY:
        assert action.key is not None
        return f"keyboard_press({json.dumps(playwright_key(action.key))})"
    if kind is ActionKind.WAIT:
        return f"noop({g.wait_ms})"
    if kind is ActionKind.DONE:
        return f"send_msg_to_user({json.dumps(action.text)})" if action.text else "noop(0)"
    if kind is ActionKind.OPEN_APP:
        raise InvalidActionError("open_app is not available in the browsergym environment")
    raise InvalidActionError(f"unsupported action {action.to_text()}")
