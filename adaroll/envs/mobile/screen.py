"""Screen geometry, the per-state :class:`View` and the builder app screens draw with.

A view is what one phone state looks like: the element list a policy observes plus, in
parallel, what tapping each element does (handlers), the semantic key of each element (used
only by scripted experts and tests, never shown to policies), which keyed elements exist but
are off-screen (and which swipe reveals them), and the screen's scroll region.

Elements are interned: identical widgets across states share one :class:`UIElement`, which
makes building a view of ~30 elements cost a few microseconds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from adaroll.actions import Action
from adaroll.envs.base import Observation, UIElement

W, H = 1080, 2400
SCREEN_SIZE = (W, H)
STATUS_BOTTOM = 72
APPBAR_BOTTOM = 216
TABS_BOTTOM = 336
KB_TOP = 1500
"""Top edge of the on-screen keyboard (shown while a text field is focused)."""
ROW_H = 168
SWIPE_PX = 900
"""How far a direction-only swipe scrolls a list (about five rows)."""

Handler = Callable[[Any, Action], Any]
"""``handler(phone, action) -> phone``: what a tap (or long press) on an element does."""

# Element flags as bits; FLAGSETS[bits] is the frozenset of ELEMENT_FLAGS names.
ENABLED, CLICKABLE, CHECKED, SELECTED, FOCUSED, EDITABLE, SCROLLABLE = (1 << i for i in range(7))
_FLAG_NAMES = ("enabled", "clickable", "checked", "selected", "focused", "editable", "scrollable")
FLAGSETS = tuple(frozenset(n for i, n in enumerate(_FLAG_NAMES) if bits >> i & 1)
                 for bits in range(1 << len(_FLAG_NAMES)))  # fmt: skip
BLOCKING_ROLES = frozenset({"keyboard", "dialog"})
"""Roles that swallow taps that hit no handler on top of them (nothing underneath reacts)."""

_INTERN: dict[tuple[Any, ...], UIElement] = {}
_INTERN_CAP = 200_000


def _element(i: int, role: str, text: str, box: tuple[int, int, int, int], bits: int) -> UIElement:
    key = (i, role, text, box, bits)
    elem = _INTERN.get(key)
    if elem is None:
        if len(_INTERN) >= _INTERN_CAP:
            _INTERN.clear()
        left, top, right, bottom = box
        bounds = (round(left / W, 4), round(top / H, 4), round(right / W, 4), round(bottom / H, 4))
        elem = _INTERN[key] = UIElement(i, role, text, bounds, FLAGSETS[bits])
    return elem


class View:
    """One rendered screen. ``hits`` lists (left, top, right, bottom, index) top-most first for
    every element that reacts to taps or blocks them."""

    __slots__ = ("obs", "taps", "longs", "keys", "offscreen", "scroll", "outside", "submit",
                 "hits", "keyboard")  # fmt: skip

    def __init__(self, elements: tuple[UIElement, ...], taps: tuple[Handler | None, ...],
                 longs: tuple[Handler | None, ...], keys: dict[str, int],
                 offscreen: dict[str, str], scroll: tuple[int, int, int, int] | None,
                 outside: Handler | None, submit: Handler | None, keyboard: bool) -> None:  # fmt: skip
        self.obs = Observation(elements, SCREEN_SIZE)
        self.taps, self.longs, self.keys, self.offscreen = taps, longs, keys, offscreen
        self.scroll, self.outside, self.submit, self.keyboard = scroll, outside, submit, keyboard
        self.hits = tuple(
            (*e.bounds, e.id) for e in reversed(elements)
            if taps[e.id] is not None or longs[e.id] is not None or e.role in BLOCKING_ROLES
        )  # fmt: skip

    @property
    def elements(self) -> tuple[UIElement, ...]:
        return self.obs.elements

    def hit(self, x: float, y: float) -> int | None:
        """Index of the top-most reactive element containing (x, y), if any."""
        for left, top, right, bottom, idx in self.hits:
            if left <= x <= right and top <= y <= bottom:
                return idx
        return None

    def element(self, key: str) -> UIElement | None:
        idx = self.keys.get(key)
        return None if idx is None else self.obs.elements[idx]


Row = tuple[int, Sequence[tuple[Any, ...]]]
"""A list row: (height, widgets), each widget (role, text, x0, x1, key, tap, long, bits)."""


class ViewBuilder:
    """Collects widgets top to bottom (later widgets are drawn on top) and builds a View.

    While the keyboard is up (``keyboard=True``) widgets reaching below its top edge are hidden
    and lists end at the keyboard; hidden keyed widgets are reported off-screen as "keyboard".
    """

    __slots__ = ("_roles", "_texts", "_boxes", "_bits", "_taps", "_longs", "keys", "offscreen",
                 "scroll", "outside", "submit", "keyboard")  # fmt: skip

    def __init__(self, keyboard: bool = False) -> None:
        self._roles: list[str] = []
        self._texts: list[str] = []
        self._boxes: list[tuple[int, int, int, int]] = []
        self._bits: list[int] = []
        self._taps: list[Handler | None] = []
        self._longs: list[Handler | None] = []
        self.keys: dict[str, int] = {}
        self.offscreen: dict[str, str] = {}
        self.scroll: tuple[int, int, int, int] | None = None
        self.outside: Handler | None = None
        self.submit: Handler | None = None
        self.keyboard = keyboard

    def add(self, role: str, text: str, box: tuple[int, int, int, int], key: str | None = None,
            tap: Handler | None = None, long: Handler | None = None, bits: int = 0,
            enabled: bool = True) -> None:  # fmt: skip
        if self.keyboard and box[3] > KB_TOP and role != "keyboard":
            if key is not None:
                self.offscreen[key] = "keyboard"
            return
        if enabled:
            bits |= ENABLED
            if tap is not None or long is not None:
                bits |= CLICKABLE
        else:
            tap = long = None
        if key is not None:
            self.keys[key] = len(self._roles)
        self._roles.append(role)
        self._texts.append(text)
        self._boxes.append(box)
        self._bits.append(bits)
        self._taps.append(tap)
        self._longs.append(long)

    def vlist(self, rows: Sequence[Row], top: int, bottom: int, scroll: int,
              label: str = "") -> None:  # fmt: skip
        """A vertically scrolling list between ``top`` and ``bottom``; rows at least half
        visible are shown (clipped), the others are reported off-screen."""
        if self.keyboard:
            bottom = min(bottom, KB_TOP)
        total = sum(h for h, _ in rows)
        max_scroll = max(0, total - (bottom - top))
        scroll = min(max(scroll, 0), max_scroll)
        self.add("list", label, (0, top, W, bottom), bits=SCROLLABLE if max_scroll else 0)
        self.scroll = (top, bottom, max_scroll, scroll)
        y = top - scroll
        for h, widgets in rows:
            y0, y = y, y + h
            vt, vb = max(y0, top), min(y, bottom)
            if 2 * (vb - vt) >= h:
                for role, text, x0, x1, key, tap, long, bits in widgets:
                    self.add(role, text, (x0, vt, x1, vb), key, tap, long, bits)
            else:
                direction = "down" if y0 < top else "up"
                for widget in widgets:
                    if widget[4] is not None:
                        self.offscreen[widget[4]] = direction

    def build(self) -> View:
        roles, texts, boxes, bits = self._roles, self._texts, self._boxes, self._bits
        elements = tuple(_element(i, roles[i], texts[i], boxes[i], bits[i])
                         for i in range(len(roles)))  # fmt: skip
        return View(elements, tuple(self._taps), tuple(self._longs), self.keys, self.offscreen,
                    self.scroll, self.outside, self.submit, self.keyboard)  # fmt: skip
