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
from adaroll.envs.mobile.device import LABEL_VARIANTS

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
FLAGSETS = tuple(
    frozenset(n for i, n in enumerate(_FLAG_NAMES) if bits >> i & 1)
    for bits in range(1 << len(_FLAG_NAMES))
)
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


def memo(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Cache ``fn(anchor, *args)`` on the identity of ``anchor``, an immutable app-state object.

    App data is shared between consecutive phone states until that app changes, so the rows of
    a list screen are built once per version of the data instead of once per step. The cache
    holds the anchor, so its id cannot be reused while the entry lives.
    """
    cache: dict[tuple[Any, ...], tuple[Any, Any]] = {}

    def wrapper(anchor: Any, *args: Any) -> Any:
        key = (id(anchor), args)
        hit = cache.get(key)
        if hit is not None and hit[0] is anchor:
            return hit[1]
        if len(cache) >= 4096:
            cache.clear()
        value = fn(anchor, *args)
        cache[key] = (anchor, value)
        return value

    wrapper.__doc__, wrapper.__name__ = fn.__doc__, fn.__name__
    return wrapper


class View:
    """One rendered screen: the observation plus, per element, its tap and long-press handlers;
    ``hits`` lists (left, top, right, bottom, index) top-most first for every element that
    reacts to taps or blocks them."""

    __slots__ = (
        "obs",
        "taps",
        "longs",
        "keys",
        "offscreen",
        "scroll",
        "outside",
        "submit",
        "hits",
        "keyboard",
    )

    def __init__(
        self,
        obs: Observation,
        taps: tuple[Handler | None, ...],
        longs: tuple[Handler | None, ...],
        hits: tuple[tuple[Any, ...], ...],
        keys: dict[str, int],
        offscreen: dict[str, str],
        scroll: tuple[int, int, int, int] | None,
        outside: Handler | None,
        submit: Handler | None,
        keyboard: bool,
    ) -> None:
        self.obs, self.taps, self.longs, self.hits = obs, taps, longs, hits
        self.keys, self.offscreen, self.scroll = keys, offscreen, scroll
        self.outside, self.submit, self.keyboard = outside, submit, keyboard

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

    __slots__ = (
        "_items",
        "keys",
        "offscreen",
        "scroll",
        "outside",
        "submit",
        "keyboard",
        "kb_top",
        "labels",
        "fab_left",
    )

    def __init__(self, keyboard: bool = False, layout: Any = None) -> None:
        """``layout``: a noisy device's :class:`~.device.DeviceLayout` (keyboard height, label
        variant), or None for the stock layout."""
        self._items: list[tuple[Any, ...]] = []
        self.keys: dict[str, int] = {}
        self.offscreen: dict[str, str] = {}
        self.scroll: tuple[int, int, int, int] | None = None
        self.outside: Handler | None = None
        self.submit: Handler | None = None
        self.keyboard = keyboard
        self.kb_top = (
            KB_TOP if layout is None or layout.keyboard_top is None else layout.keyboard_top
        )
        variant_b = layout is not None and layout.variant_b
        self.labels: dict[str, str] | None = LABEL_VARIANTS if variant_b else None
        self.fab_left = variant_b

    def add(
        self,
        role: str,
        text: str,
        box: tuple[int, int, int, int],
        key: str | None = None,
        tap: Handler | None = None,
        long: Handler | None = None,
        bits: int = 0,
        enabled: bool = True,
    ) -> None:
        if self.keyboard and box[3] > self.kb_top and role != "keyboard":
            if key is not None:
                self.offscreen[key] = "keyboard"
            return
        if self.labels is not None and role == "button":
            text = self.labels.get(text, text)
        if not enabled:
            tap = long = None
        elif tap is not None or long is not None:
            bits |= ENABLED | CLICKABLE
        else:
            bits |= ENABLED
        items = self._items
        if key is not None:
            self.keys[key] = len(items)
        items.append((role, text, box, bits, tap, long))

    def vlist(
        self, rows: Sequence[Row], top: int, bottom: int, scroll: int, label: str = ""
    ) -> None:
        """A vertically scrolling list between ``top`` and ``bottom``; rows at least half
        visible are shown (clipped), the others are reported off-screen. Pass the same
        ``rows`` object again (see :func:`memo`) and the layout is reused."""
        if self.keyboard:
            bottom = min(bottom, self.kb_top)
        entries, offscreen, self.scroll = _layout(rows, top, bottom, scroll, label)
        items, keys = self._items, self.keys
        base = len(items)
        for j, (key, item) in enumerate(entries):
            if key is not None:
                keys[key] = base + j
            items.append(item)
        if offscreen:
            self.offscreen.update(offscreen)

    def extend(self, entries: Sequence[tuple[Any, ...]]) -> None:
        """Add prepared widgets ``(role, text, box, key, tap, long, bits)`` (see ``add``)."""
        for role, text, box, key, tap, long, bits in entries:
            self.add(role, text, box, key, tap, long, bits)

    def build(self) -> View:
        elements, taps, longs, hits = [], [], [], []
        get = _INTERN.get
        for i, (role, text, box, bits, tap, long) in enumerate(self._items):
            elem = get((i, role, text, box, bits)) or _element(i, role, text, box, bits)
            elements.append(elem)
            taps.append(tap)
            longs.append(long)
            if tap is not None or long is not None or role in BLOCKING_ROLES:
                hits.append((*elem.bounds, i))
        hits.reverse()
        return View(
            Observation(tuple(elements), SCREEN_SIZE),
            tuple(taps),
            tuple(longs),
            tuple(hits),
            self.keys,
            self.offscreen,
            self.scroll,
            self.outside,
            self.submit,
            self.keyboard,
        )


_LAYOUTS: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def _layout(rows: Sequence[Row], top: int, bottom: int, scroll: int, label: str) -> tuple[Any, ...]:
    """Place ``rows`` in the viewport: (entries, offscreen keys, scroll state), cached."""
    key = (id(rows), top, bottom, scroll, label)
    hit = _LAYOUTS.get(key)
    if hit is not None and hit[0] is rows:
        return hit[1]
    total = 0
    for h, _ in rows:
        total += h
    max_scroll = max(0, total - (bottom - top))
    scroll = min(max(scroll, 0), max_scroll)
    entries: list[tuple[str | None, tuple[Any, ...]]] = [
        (
            None,
            (
                "list",
                label,
                (0, top, W, bottom),
                ENABLED | (SCROLLABLE if max_scroll else 0),
                None,
                None,
            ),
        )
    ]
    offscreen: dict[str, str] = {}
    y = top - scroll
    for h, widgets in rows:
        y0, y = y, y + h
        vt = y0 if y0 > top else top
        vb = y if y < bottom else bottom
        if 2 * (vb - vt) >= h:
            for role, text, x0, x1, wkey, tap, long, bits in widgets:
                bits |= ENABLED | (CLICKABLE if tap is not None or long is not None else 0)
                entries.append((wkey, (role, text, (x0, vt, x1, vb), bits, tap, long)))
        else:
            direction = "down" if y0 < top else "up"
            for widget in widgets:
                if widget[4] is not None:
                    offscreen[widget[4]] = direction
    value = (tuple(entries), offscreen, (top, bottom, max_scroll, scroll))
    if len(_LAYOUTS) >= 8192:
        _LAYOUTS.clear()
    _LAYOUTS[key] = (rows, value)
    return value
