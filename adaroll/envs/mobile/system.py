"""Phone mechanics: build the view of a state and execute one Action on it.

``execute`` is a pure function ``(phone, action) -> phone``: taps are hit-tested against the
element bounds of the current view (top-most reactive element wins; a tap on nothing does
nothing), vertical swipes scroll the screen's list, ``type`` appends to the focused field,
keys navigate. Unknown app names, `hover` and key chords (`ctrl+a`, web only) raise
:class:`InvalidActionError`.

Keys: back/escape = hide keyboard, else close dialog, else leave the screen; home = launcher;
enter = submit the focused field (search, send) or hide the keyboard; backspace/delete =
delete the last character of the focused field; space types a space; page_down/page_up scroll
like swipe(up)/swipe(down); recent, tab, arrows and volume keys do nothing here.
Horizontal swipes do nothing; double taps act as taps; a long press on an element without a
long-press action acts as a tap (as on Android).
"""

from __future__ import annotations

from adaroll.actions import Action, ActionKind, is_chord
from adaroll.envs.base import InvalidActionError
from adaroll.envs.mobile.apps import APP_NAMES, APPS, find_app
from adaroll.envs.mobile.screen import (
    STATUS_BOTTOM,
    SWIPE_PX,
    H,
    View,
    ViewBuilder,
    W,
)
from adaroll.envs.mobile.state import Phone
from adaroll.envs.mobile.widgets import go_back

MAX_FIELD_CHARS = 300
"""Text fields keep at most this many characters (the rest of a long type() is dropped)."""

LAUNCHER_DATE = "Monday, June 9"


def view_of(phone: Phone) -> View:
    """The phone's current view, built once per state and cached on it."""
    view = phone.view_cache
    if view is None:
        view = _build(phone)
        object.__setattr__(phone, "view_cache", view)
    return view


_status_cache: list[object] = [None, ""]


def status_text(phone: Phone) -> str:
    """The status bar's text; cached for the last settings object (it rarely changes)."""
    s = phone.apps.settings
    if _status_cache[0] is s:
        return _status_cache[1]  # type: ignore[return-value]
    radio = "Airplane" if s.airplane else ("Wi-Fi" if s.wifi else "No Wi-Fi")
    parts = ["09:41", radio]
    if s.bluetooth:
        parts.append("BT")
    if s.dnd:
        parts.append("DND")
    parts.append(f"{s.battery}%")
    _status_cache[:] = [s, "  ".join(parts)]
    return _status_cache[1]  # type: ignore[return-value]


def _build(phone: Phone) -> View:
    top = phone.top
    layout = phone.apps.layout
    b = ViewBuilder(keyboard=top is not None and top.focus is not None, layout=layout)
    b.add("status_bar", status_text(phone), (0, 0, W, STATUS_BOTTOM))
    if top is None:
        _launcher(b, APP_NAMES if layout is None or layout.launcher is None else layout.launcher)
    else:
        APPS[top.app].view(phone, top, b)
    if b.keyboard:
        b.add("keyboard", "Keyboard", (0, b.kb_top, W, H))
    return b.build()


def _open(name: str):
    root = APPS[name].root
    return lambda p, a: Phone(p.apps, (root,))


_OPENERS = {name: _open(name) for name in APP_NAMES}


def _launcher(b: ViewBuilder, order: tuple[str, ...]) -> None:
    b.add("text", LAUNCHER_DATE, (60, 220, 1020, 380))
    for i, name in enumerate(order):
        x, y = 60 + (i % 3) * 350, 600 + (i // 3) * 380
        b.add("icon", name, (x, y, x + 260, y + 300), f"app:{name}", _OPENERS[name])


def _scroll(phone: Phone, view: View, delta: float) -> Phone:
    if view.scroll is None:
        return phone
    _, _, max_scroll, current = view.scroll
    new = min(max(current + round(delta), 0), max_scroll)
    return phone if new == current else phone.update_top(scroll=new)


def _type(phone: Phone, text: str) -> Phone:
    top = phone.top
    if top is None or top.focus is None or not text:
        return phone
    value = (top.field(top.focus) + text)[:MAX_FIELD_CHARS]
    return phone.set_top(top.with_field(top.focus, value))


def _backspace(phone: Phone) -> Phone:
    top = phone.top
    if top is None or top.focus is None:
        return phone
    value = top.field(top.focus)
    return phone.set_top(top.with_field(top.focus, value[:-1])) if value else phone


def execute(phone: Phone, action: Action) -> Phone:
    """The phone after ``action`` (the same object when the action changed nothing)."""
    kind = action.kind
    if kind is ActionKind.TAP or kind is ActionKind.DOUBLE_TAP or kind is ActionKind.LONG_PRESS:
        view = view_of(phone)
        idx = view.hit(action.x, action.y)  # type: ignore[arg-type]
        if idx is None:
            handler = view.outside
        elif kind is ActionKind.LONG_PRESS:
            handler = view.longs[idx] or view.taps[idx]
        else:
            handler = view.taps[idx]
        return phone if handler is None else handler(phone, action)
    if kind is ActionKind.SWIPE:
        direction = action.swipe_direction
        if direction not in ("up", "down"):
            return phone
        view = view_of(phone)
        if view.scroll is None:
            return phone
        if action.direction is not None:
            distance = SWIPE_PX
        else:
            top, bottom = view.scroll[0] / H, view.scroll[1] / H
            if not top <= action.y <= bottom:  # type: ignore[operator]
                return phone  # the finger started outside the list
            distance = abs(action.y2 - action.y) * H  # type: ignore[operator]
        return _scroll(phone, view, distance if direction == "up" else -distance)
    if kind is ActionKind.TYPE:
        return _type(phone, action.text or "")
    if kind is ActionKind.KEY:
        if is_chord(action.key):
            raise InvalidActionError(
                f"key({action.key}): the phone has no keyboard chords "
                "(they are web only); use backspace to delete text"
            )
        return _key(phone, action)
    if kind is ActionKind.HOVER:
        raise InvalidActionError(
            "hover is web only: a touch screen has no pointer to hover "
            "with; use tap, long_press or swipe"
        )
    if kind is ActionKind.OPEN_APP:
        app = find_app(action.app or "")
        if app is None:
            raise InvalidActionError(
                f"open_app: no app called {action.app!r}; apps: {', '.join(APP_NAMES)}"
            )
        return Phone(phone.apps, (app.root,))
    return phone  # wait, done


def _key(phone: Phone, action: Action) -> Phone:
    key = action.key
    if key == "back" or key == "escape":
        return go_back(phone)
    if key == "home":
        return phone if not phone.stack else Phone(phone.apps, ())
    if key == "enter":
        top = phone.top
        if top is None or top.focus is None:
            return phone
        view = view_of(phone)
        if view.submit is not None:
            return view.submit(phone, action)
        return phone.update_top(focus=None)
    if key == "backspace" or key == "delete":
        return _backspace(phone)
    if key == "space":
        return _type(phone, " ")
    if key == "page_down" or key == "page_up":
        return _scroll(phone, view_of(phone), SWIPE_PX if key == "page_down" else -SWIPE_PX)
    return phone
