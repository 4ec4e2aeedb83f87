"""Reusable widgets (app bar, tabs, text fields, list rows, dialogs) and generic handlers.

Widgets only append to a :class:`~.screen.ViewBuilder`; handlers are pure functions
``(phone, action) -> phone``. Each widget reports a semantic key (``field:title``,
``btn:save``, ``dlg:ok`` ...) that scripted experts use to find it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from adaroll.envs.mobile.screen import (
    APPBAR_BOTTOM,
    CHECKED,
    EDITABLE,
    FOCUSED,
    ROW_H,
    SELECTED,
    STATUS_BOTTOM,
    TABS_BOTTOM,
    Handler,
    Row,
    ViewBuilder,
    W,
)
from adaroll.envs.mobile.state import Phone, Route

# -- handlers -----------------------------------------------------------------------------------


def go_back(phone: Phone) -> Phone:
    """System back: hide the keyboard, else close the dialog, else leave the screen."""
    top = phone.top
    if top is None:
        return phone
    if top.focus is not None:
        return phone.update_top(focus=None)
    if top.dialog is not None:
        return phone.update_top(dialog=None)
    return phone.pop()


def back(phone: Phone, _action: Any = None) -> Phone:
    return go_back(phone)


def close_dialog(phone: Phone, _action: Any = None) -> Phone:
    return phone.update_top(dialog=None, focus=None)


def open_dialog(*dialog: Any) -> Handler:
    return lambda p, a: p.update_top(dialog=dialog, focus=None)


def push(route: Route) -> Handler:
    return lambda p, a: p.push(route)


def replace_top(route: Route) -> Handler:
    return lambda p, a: p.set_top(route)


@cache
def focus(name: str) -> Handler:
    return lambda p, a: p.update_top(focus=name)


@cache
def clear(name: str) -> Handler:
    return lambda p, a: p.set_top(p.screen.with_field(name, ""))


def set_field(name: str, value: str) -> Handler:
    return lambda p, a: p.set_top(p.screen.with_field(name, value))


def noop(phone: Phone, _action: Any = None) -> Phone:
    return phone


# -- screen furniture ---------------------------------------------------------------------------


def appbar(
    b: ViewBuilder,
    title: str,
    actions: Sequence[tuple[str, str, Handler]] = (),
    show_back: bool = True,
) -> None:
    """Back arrow, title and right-aligned text actions ``(key, label, handler)``."""
    right = W
    boxes = []
    for key, label, tap in reversed(actions):
        width = 60 + 26 * len(label)
        boxes.append((key, label, tap, (right - width, STATUS_BOTTOM, right, APPBAR_BOTTOM)))
        right -= width
    if show_back:
        b.add("icon", "Back", (0, STATUS_BOTTOM, 144, APPBAR_BOTTOM), "nav:back", back)
    b.add("text", title, (160 if show_back else 48, STATUS_BOTTOM, max(right, 400), APPBAR_BOTTOM))
    for key, label, tap, box in reversed(boxes):
        b.add("button", label, box, key, tap)


def tabs(
    b: ViewBuilder, labels: Sequence[str], current: str, on_tab: Callable[[str], Handler]
) -> None:
    width = W // len(labels)
    for i, label in enumerate(labels):
        sel = label == current
        b.add(
            "tab",
            label,
            (i * width, APPBAR_BOTTOM, (i + 1) * width, TABS_BOTTOM),
            f"tab:{label}",
            None if sel else on_tab(label),
            bits=SELECTED if sel else 0,
        )


def fab(b: ViewBuilder, label: str, tap: Handler, key: str = "fab") -> None:
    """Floating action button, bottom right (bottom left in a layout's B variant; hidden by
    the keyboard)."""
    box = (40, 2160, 320, 2320) if b.fab_left else (760, 2160, 1040, 2320)
    b.add("button", label, box, key, tap)


def text_field(
    b: ViewBuilder,
    route: Route,
    name: str,
    hint: str,
    box: tuple[int, int, int, int],
    submit: Handler | None = None,
) -> None:
    """A text field: shows its text, or the hint while empty; a Clear icon while non-empty.
    ``submit`` runs on key(enter) while the field is focused."""
    value = route.field(name)
    focused = route.focus == name
    b.add(
        "text_field",
        value or hint,
        box,
        f"field:{name}",
        focus(name),
        bits=EDITABLE | (FOCUSED if focused else 0),
    )
    if value:
        left, top, right, bottom = box
        b.add(
            "icon",
            "Clear",
            (right - 120, top, right, min(bottom, top + 140)),
            f"clear:{name}",
            clear(name),
        )
    if focused and submit is not None:
        b.submit = submit


def row(
    text: str,
    key: str | None,
    tap: Handler | None = None,
    long: Handler | None = None,
    role: str = "list_item",
    height: int = ROW_H,
    bits: int = 0,
) -> Row:
    return (height, ((role, text, 0, W, key, tap, long, bits),))


def toggle_row(text: str, key: str, on: bool, tap: Handler) -> Row:
    return (ROW_H, (("toggle", text, 0, W, key, tap, None, CHECKED if on else 0),))


def text_row(text: str, height: int = 120) -> Row:
    return (height, (("text", text, 0, W, None, None, None, 0),))


# -- dialogs ------------------------------------------------------------------------------------

DIALOG_LEFT, DIALOG_RIGHT, DIALOG_TOP = 90, 990, 420
LINE_H = 140


def _frame(b: ViewBuilder, title: str, height: int) -> int:
    """The dialog box; a tap outside it dismisses the dialog. Returns the y of its content."""
    b.add("dialog", title, (DIALOG_LEFT, DIALOG_TOP, DIALOG_RIGHT, DIALOG_TOP + height))
    b.outside = close_dialog
    return DIALOG_TOP + LINE_H


def _buttons(b: ViewBuilder, y: int, buttons: Sequence[tuple[str, str, Handler]]) -> None:
    width = (DIALOG_RIGHT - DIALOG_LEFT) // len(buttons)
    for i, (key, label, tap) in enumerate(buttons):
        x0 = DIALOG_LEFT + i * width
        b.add("button", label, (x0, y, x0 + width, y + LINE_H), key, tap)


def confirm(b: ViewBuilder, title: str, message: str, ok_label: str, on_ok: Handler) -> None:
    y = _frame(b, title, 3 * LINE_H)
    b.add("text", message, (DIALOG_LEFT, y, DIALOG_RIGHT, y + LINE_H))
    _buttons(b, y + LINE_H, (("dlg:cancel", "Cancel", close_dialog), ("dlg:ok", ok_label, on_ok)))


def notice(b: ViewBuilder, title: str, lines: Sequence[str]) -> None:
    """An information dialog with an OK button."""
    y = _frame(b, title, (len(lines) + 2) * LINE_H)
    for line in lines:
        b.add("text", line, (DIALOG_LEFT, y, DIALOG_RIGHT, y + LINE_H))
        y += LINE_H
    _buttons(b, y, (("dlg:ok", "OK", close_dialog),))


def choice(
    b: ViewBuilder, title: str, options: Sequence[tuple[str, str, Handler, bool | None]]
) -> None:
    """A list of options ``(label, key, handler, checked)``; checked None = plain button."""
    y = _frame(b, title, (len(options) + 1) * LINE_H)
    for label, key, tap, checked in options:
        role = "button" if checked is None else "checkbox"
        b.add(
            role,
            label,
            (DIALOG_LEFT, y, DIALOG_RIGHT, y + LINE_H),
            key,
            tap,
            bits=CHECKED if checked else 0,
        )
        y += LINE_H


def grid(
    b: ViewBuilder,
    title: str,
    labels: Sequence[str],
    cols: int,
    current: str,
    on_pick: Callable[[str], Handler],
    key_prefix: str,
) -> None:
    """A picker grid (hours, minutes, ...): tap a cell to pick it."""
    rows = -(-len(labels) // cols)
    cell_h = 120
    y0 = _frame(b, title, LINE_H + rows * cell_h + 40)
    width = (DIALOG_RIGHT - DIALOG_LEFT) // cols
    for i, label in enumerate(labels):
        x = DIALOG_LEFT + (i % cols) * width
        y = y0 + (i // cols) * cell_h
        b.add(
            "button",
            label,
            (x, y, x + width, y + cell_h),
            f"{key_prefix}:{label}",
            on_pick(label),
            bits=SELECTED if label == current else 0,
        )


def prompt(
    b: ViewBuilder, route: Route, title: str, name: str, hint: str, ok_label: str, on_ok: Handler
) -> None:
    """A dialog with one text field (kept in ``route.fields[name]``) and Cancel/OK buttons."""
    y = _frame(b, title, 3 * LINE_H)
    text_field(b, route, name, hint, (DIALOG_LEFT + 30, y, DIALOG_RIGHT - 30, y + LINE_H))
    _buttons(b, y + LINE_H, (("dlg:cancel", "Cancel", close_dialog), ("dlg:ok", ok_label, on_ok)))
