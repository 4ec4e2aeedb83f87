"""How an :class:`~adaroll.actions.Action` becomes DevTools input events in the task page.

One job: dispatch the mouse, wheel and key events (``Input.dispatch*``) for an action, in
CSS pixels of the env's screen (``env.screen``: MiniWoB's task area, or an app's viewport). The
action semantics (touch-like pointer actions, the parked pointer, chords, ``type`` into text
fields vs key events) are described in the module docstring of :mod:`adaroll.envs.web.env`;
settling afterwards is :class:`~adaroll.envs.web.env.WebEnv`'s.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from adaroll.actions import KEYS, Action, ActionKind
from adaroll.envs.base import InvalidActionError
from adaroll.envs.web.cdp import CDPSession
from adaroll.envs.web.dom import SCREEN


class InputSettings(Protocol):
    """The web env's settings that shape input events (:class:`~adaroll.envs.web.env.WebEnvConfig`)."""

    @property
    def long_press_seconds(self) -> float: ...
    @property
    def wait_seconds(self) -> float: ...
    @property
    def scroll_fraction(self) -> float: ...
    @property
    def drag_steps(self) -> int: ...


class WebPage(Protocol):
    """What input events are sent to: the page's DevTools session, the env's settings and where
    the pointer is (:class:`~adaroll.envs.web.env.WebEnv` is one)."""

    pointer_parked: bool

    @property
    def cdp(self) -> CDPSession: ...
    @property
    def config(self) -> InputSettings: ...
    @property
    def screen(self) -> tuple[int, int]: ...


PARKED_POINTER = (SCREEN[0] + 200.0, SCREEN[1] + 200.0)
"""Where a reset leaves the mouse pointer in a MiniWoB page: inside the window, outside the task
area (:func:`parked_pointer` for any env)."""


def parked_pointer(env: WebPage) -> tuple[float, float]:
    """Where the pointer rests between actions: 200 CSS pixels right of and below the env's
    screen (inside MiniWoB's window; past the edge of a viewport-sized screen, where no
    element is hovered)."""
    width, height = env.screen
    return (width + 200.0, height + 200.0)


# key name -> (DOM key, DOM code, Windows virtual key code, text typed)
KEY_EVENTS: dict[str, tuple[str, str, int, str]] = {
    "enter": ("Enter", "Enter", 13, "\r"),
    "tab": ("Tab", "Tab", 9, ""),
    "escape": ("Escape", "Escape", 27, ""),
    "backspace": ("Backspace", "Backspace", 8, ""),
    "delete": ("Delete", "Delete", 46, ""),
    "space": (" ", "Space", 32, " "),
    "up": ("ArrowUp", "ArrowUp", 38, ""),
    "down": ("ArrowDown", "ArrowDown", 40, ""),
    "left": ("ArrowLeft", "ArrowLeft", 37, ""),
    "right": ("ArrowRight", "ArrowRight", 39, ""),
    "page_up": ("PageUp", "PageUp", 33, ""),
    "page_down": ("PageDown", "PageDown", 34, ""),
}

# chord modifier -> (DOM key, DOM code, Windows virtual key code, DevTools modifier bit)
MODIFIER_EVENTS: dict[str, tuple[str, str, int, int]] = {
    "alt": ("Alt", "AltLeft", 18, 1),
    "ctrl": ("Control", "ControlLeft", 17, 2),
    "meta": ("Meta", "MetaLeft", 91, 4),
    "shift": ("Shift", "ShiftLeft", 16, 8),
}


def _px(env: WebPage, x: float | None, y: float | None) -> tuple[float, float]:
    assert x is not None and y is not None
    return (x * env.screen[0], y * env.screen[1])


def park(env: WebPage) -> None:
    """Move the pointer off the task area. Pointer actions are touch-like: a pointer left
    over an element would hover it, and Blink updates hover state (``:hover`` styles can
    change the layout) only when it next renders - at a time the env does not control."""
    _mouse(env, "mouseMoved", *parked_pointer(env), button="none", buttons=0)


def _mouse(env: WebPage, kind: str, x: float, y: float, **extra: Any) -> None:
    params = {"type": kind, "x": x, "y": y, **extra}
    env.pointer_parked = False  # until the event is known to have been dispatched
    env.cdp.call("Input.dispatchMouseEvent", params)
    env.pointer_parked = (x, y) == parked_pointer(env)


def _click(env: WebPage, x: float, y: float, count: int = 1, hold: float = 0.0) -> None:
    # no separate mouseMoved: moves are frame-aligned (~16 ms each); a press at a new
    # position dispatches the boundary events (mouseover/enter) itself
    _mouse(env, "mousePressed", x, y, button="left", buttons=1, clickCount=count)
    if hold > 0:
        time.sleep(hold)
    _mouse(env, "mouseReleased", x, y, button="left", buttons=0, clickCount=count)


def _key(env: WebPage, name: str) -> None:
    *mods, base = name.split("+")
    if base in KEY_EVENTS:
        key, code, vk, text = KEY_EVENTS[base]
    else:  # a chord's letter or digit (validated by Action)
        code = f"Key{base.upper()}" if base.isalpha() else f"Digit{base}"
        key, vk, text = base, ord(base.upper()), base
    held = 0
    for mod in mods:  # modifiers go down first, each event carrying those already held
        mkey, mcode, mvk, bit = MODIFIER_EVENTS[mod]
        held |= bit
        env.cdp.call(
            "Input.dispatchKeyEvent",
            {
                "type": "rawKeyDown",
                "key": mkey,
                "code": mcode,
                "windowsVirtualKeyCode": mvk,
                "modifiers": held,
            },
        )
    if held & ~MODIFIER_EVENTS["shift"][3]:
        text = ""  # ctrl/alt/meta chords type nothing: the browser runs them as shortcuts
    elif held and text.isalpha():
        text = key = text.upper()
    down: dict[str, Any] = {
        "type": "keyDown" if text else "rawKeyDown",
        "key": key,
        "code": code,
        "windowsVirtualKeyCode": vk,
        "modifiers": held,
    }
    if text:
        down["text"] = text
        down["unmodifiedText"] = text
    env.cdp.call("Input.dispatchKeyEvent", down)
    env.cdp.call(
        "Input.dispatchKeyEvent",
        {"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk, "modifiers": held},
    )
    for mod in reversed(mods):
        mkey, mcode, mvk, bit = MODIFIER_EVENTS[mod]
        held &= ~bit
        env.cdp.call(
            "Input.dispatchKeyEvent",
            {
                "type": "keyUp",
                "key": mkey,
                "code": mcode,
                "windowsVirtualKeyCode": mvk,
                "modifiers": held,
            },
        )


def _type_chars(env: WebPage, text: str) -> None:
    for ch in text:
        if ch == "\n":
            _key(env, "enter")
            continue
        code = (
            f"Key{ch.upper()}"
            if ch.isalpha() and ch.isascii()
            else (f"Digit{ch}" if ch.isdigit() else "")
        )
        vk = ord(ch.upper()) if ch.isascii() and ch.isalnum() else 0
        base = {"key": ch, "code": code, "windowsVirtualKeyCode": vk}
        env.cdp.call(
            "Input.dispatchKeyEvent", {"type": "keyDown", "text": ch, "unmodifiedText": ch, **base}
        )
        env.cdp.call("Input.dispatchKeyEvent", {"type": "keyUp", **base})


def execute(env: WebPage, action: Action) -> None:
    """Dispatch ``action``'s input events in ``env``'s page (``done`` is the env's own)."""
    kind = action.kind
    if kind in (ActionKind.TAP, ActionKind.DOUBLE_TAP, ActionKind.LONG_PRESS):
        x, y = _px(env, action.x, action.y)
        if kind is ActionKind.DOUBLE_TAP:
            _click(env, x, y, 1)
            _click(env, x, y, 2)
        else:
            hold = env.config.long_press_seconds if kind is ActionKind.LONG_PRESS else 0.0
            _click(env, x, y, hold=hold)
        if env.cdp.evaluate(f"__adaroll.selectAt({x}, {y})"):
            _key(env, "escape")  # close the invisible native popup; the select keeps focus
        park(env)
    elif kind is ActionKind.SWIPE:
        if action.direction is not None:
            _wheel(env, action.direction)
        else:
            _drag(env, action)
        park(env)
    elif kind is ActionKind.TYPE:
        assert action.text is not None
        if env.cdp.evaluate("__adaroll.focusIsText()"):
            env.cdp.call("Input.insertText", {"text": action.text})
        else:
            _type_chars(env, action.text)
    elif kind is ActionKind.KEY:
        assert action.key is not None
        base = action.key.rpartition("+")[2]
        if base in KEYS and base not in KEY_EVENTS:
            raise InvalidActionError(
                f"key {action.key!r} has no meaning in a web page; valid: {', '.join(KEY_EVENTS)}"
                ", or a chord such as ctrl+a"
            )
        _key(env, action.key)
    elif kind is ActionKind.HOVER:
        _mouse(env, "mouseMoved", *_px(env, action.x, action.y), button="none", buttons=0)
    elif kind is ActionKind.WAIT:
        time.sleep(env.config.wait_seconds)
    elif kind is ActionKind.OPEN_APP:
        raise InvalidActionError("open_app is not available in the web environment")
    else:  # pragma: no cover - DONE is handled by step
        raise InvalidActionError(f"unsupported action {action.to_text()}")


def _wheel(env: WebPage, direction: str) -> None:
    # finger convention: swipe(up) moves the content up, i.e. scrolls down
    w, h = env.screen
    dy = {"up": 1, "down": -1}.get(direction, 0) * env.config.scroll_fraction * h
    dx = {"left": 1, "right": -1}.get(direction, 0) * env.config.scroll_fraction * w
    x, y = w / 2, h / 2
    _mouse(env, "mouseWheel", x, y, deltaX=dx, deltaY=dy)


def _drag(env: WebPage, action: Action) -> None:
    x1, y1 = _px(env, action.x, action.y)
    x2, y2 = _px(env, action.x2, action.y2)
    _mouse(env, "mouseMoved", x1, y1, button="none", buttons=0)
    _mouse(env, "mousePressed", x1, y1, button="left", buttons=1, clickCount=1)
    n = max(1, env.config.drag_steps)
    for i in range(1, n + 1):
        t = i / n
        _mouse(env, "mouseMoved", x1 + (x2 - x1) * t, y1 + (y2 - y1) * t, button="left", buttons=1)
    _mouse(env, "mouseReleased", x2, y2, button="left", buttons=0, clickCount=1)
