"""A noisy device over an episode: drift at reset, then interruptions step by step.

:func:`start` applies the episode's layout drift to the initial phone and may raise a first
interruption; :func:`advance` executes one action through whatever interruption is on screen,
lets time pass, restores a list's scroll position when a screen opens and draws the next
arrival. Both are pure functions of immutable values (see :mod:`.device` for the draws).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from random import Random

from adaroll.actions import Action, ActionKind
from adaroll.envs.mobile.apps import APP_NAMES, find_app
from adaroll.envs.mobile.device import (
    KINDS,
    TALL_KEYBOARD_TOP,
    DeviceLayout,
    DeviceProfile,
    _mix,
    draw,
    episode_key,
    happens,
    screen_hash,
)
from adaroll.envs.mobile.interruptions import (
    ACCOUNT_APPS,
    AD_APPS,
    AD_CLOSE,
    SYSTEM_DIALOGS,
    Interruption,
    react,
    tick,
)
from adaroll.envs.mobile.screen import ROW_H
from adaroll.envs.mobile.state import Phone
from adaroll.envs.mobile.system import execute, view_of

_INDEX = {kind: i for i, kind in enumerate(KINDS)}
_NO_COUNTS = (0,) * len(KINDS)
_NEEDS_APP = (0, 3)  # system dialogs that name the app (permission, rate-this-app)


@dataclass(frozen=True, slots=True)
class DeviceState:
    """The device side of an episode: its profile and key, the interruption on screen, how
    many have come, and how often each kind of perturbation happened (for reports)."""

    profile: DeviceProfile
    key: int
    interruption: Interruption | None = None
    interruptions: int = 0
    counts: tuple[int, ...] = _NO_COUNTS

    def counted(self, kind: str) -> DeviceState:
        counts = list(self.counts)
        counts[_INDEX[kind]] += 1
        return replace(self, counts=tuple(counts))

    def perturbations(self) -> dict[str, int]:
        return dict(zip(KINDS, self.counts, strict=True))


def start(profile: DeviceProfile, task_id: str, phone: Phone) -> tuple[Phone, DeviceState]:
    """The episode's first phone (its layout drifted) and device state."""
    key = episode_key(profile, task_id)
    device = DeviceState(profile, key)
    launcher, keyboard_top, variant_b = None, None, False
    value = draw(key, 0, "list_order")
    if happens(profile.list_order, value):
        order = list(APP_NAMES)
        Random(value).shuffle(order)
        launcher, device = tuple(order), device.counted("list_order")
    if happens(profile.keyboard, draw(key, 0, "keyboard")):
        keyboard_top, device = TALL_KEYBOARD_TOP, device.counted("keyboard")
    if happens(profile.control_variant, draw(key, 0, "control_variant")):
        variant_b, device = True, device.counted("control_variant")
    if device.counts != _NO_COUNTS:
        layout = DeviceLayout(launcher, keyboard_top, variant_b)
        phone = Phone(replace(phone.apps, layout=layout), phone.stack)
    return phone, _arrive(device, phone, phone, 0, opened=False)


def advance(
    device: DeviceState, phone: Phone, action: Action, steps: int
) -> tuple[Phone, DeviceState]:
    """Step ``steps`` (1-based): ``action`` through the interruption on screen, if any."""
    intr = device.interruption
    before = phone
    if intr is None:
        phone = execute(phone, action)
    else:
        dismissed, passes = react(intr, action)
        if passes:
            phone = execute(phone, action)
        elif action.kind is ActionKind.OPEN_APP and find_app(action.app or "") is None:
            execute(phone, action)  # the same InvalidActionError as without the interruption
        intr = None if dismissed else tick(intr)
        device = replace(device, interruption=intr)
    opened = phone is not before and _opened(before, phone)
    if opened:
        phone, device = _restore_scroll(device, phone, steps)
    if device.interruption is None:
        device = _arrive(device, before, phone, steps, opened)
    return phone, device


def _opened(before: Phone, after: Phone) -> bool:
    """Did the action open a screen (another app, a deeper screen or another tab)? Going back
    does not count: a screen returned to is already loaded."""
    top, prev = after.top, before.top
    if top is None:
        return False
    if prev is None or top.app != prev.app or len(after.stack) > len(before.stack):
        return True
    return len(after.stack) == len(before.stack) and top.screen != prev.screen


def _restore_scroll(device: DeviceState, phone: Phone, steps: int) -> tuple[Phone, DeviceState]:
    top = phone.top
    assert top is not None
    value = draw(device.key, steps, "scroll_offset", screen_hash(top.app, top.screen))
    if not happens(device.profile.scroll_offset, value):
        return phone, device
    scroll = view_of(phone).scroll
    if scroll is None or scroll[2] == 0 or scroll[3] != 0:
        return phone, device  # nothing to scroll, or already scrolled
    offset = min(scroll[2], ROW_H * (1 + _mix(value) % 4))
    return phone.update_top(scroll=offset), device.counted("scroll_offset")


def _arrive(
    device: DeviceState, before: Phone, phone: Phone, steps: int, opened: bool
) -> DeviceState:
    """The interruption arriving after step ``steps``, if any (at most one on screen); ``opened``:
    the step opened a screen."""
    profile = device.profile
    if device.interruptions >= profile.max_interruptions:
        return device
    top = phone.top
    app = "" if top is None else top.app
    state = 0 if top is None else screen_hash(top.app, top.screen)
    key = device.key
    intr = None
    if opened:
        launched = before.top is None or before.top.app != app
        value = draw(key, steps, "session_expiry", state)
        if launched and app in ACCOUNT_APPS and happens(profile.session_expiry, value):
            intr = Interruption("session_expiry", 0, 0, app)
        value = draw(key, steps, "loading", state)
        if intr is None and happens(profile.loading, value):
            intr = Interruption("loading", 0, 1 + _mix(value) % 3, app)
        value = draw(key, steps, "ad", state)
        if intr is None and app in AD_APPS and happens(profile.ad, value):
            v = _mix(value)
            countdown = 0 if v & 1 else 2 + (v >> 1) % 2
            intr = Interruption("ad", (v >> 2) % (len(AD_CLOSE) * 4), countdown, app)
    value = draw(key, steps, "system_dialog", state)
    if intr is None and happens(profile.system_dialog, value):
        variant = _mix(value) % len(SYSTEM_DIALOGS)
        if not app and variant in _NEEDS_APP:
            variant = 1 if variant == 0 else 2  # at home: battery or update
        intr = Interruption("system_dialog", variant, 0, app)
    value = draw(key, steps, "banner", state)
    if intr is None and happens(profile.banner, value):
        v = _mix(value)
        intr = Interruption("banner", v % 4, 2 + (v >> 2) % 3, app)
    if intr is None:
        return device
    device = replace(device, interruption=intr, interruptions=device.interruptions + 1)
    return device.counted(intr.kind)
