"""Interruptions of the noisy device: what arrives, how it looks, what an action does to it.

An :class:`Interruption` sits over the app (in :class:`~.device.DeviceState`, never in app
data). Modal ones (system dialogs, ads, sign-in and loading screens) take every action until
they are dismissed or time out; a notification banner only takes taps on itself and lets the
rest through to the app. ``done`` always reaches the task. All of it is plain immutable data,
so branches and replays meet exactly the same screens.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from adaroll.actions import POINT_KINDS, Action, ActionKind
from adaroll.envs.base import Observation
from adaroll.envs.mobile.screen import (
    BLOCKING_ROLES,
    CLICKABLE,
    ENABLED,
    SCREEN_SIZE,
    H,
    View,
    W,
    _element,
)

AD_APPS = frozenset({"Notes", "Calendar", "Shop", "Files"})
ACCOUNT_APPS = frozenset({"Messages", "Shop", "Mail"})

# (title, message, decline label, accept label); the decline button comes first.
SYSTEM_DIALOGS = (
    (
        "Allow {app} to access this device's location?",
        "Only while using the app",
        "Don't allow",
        "Allow",
    ),
    ("Battery low", "15% battery remaining", "Dismiss", "Battery settings"),
    ("Software update", "A system update is ready to install", "Later", "Install tonight"),
    ("Enjoying {app}?", "Tap a star to rate it on the store", "Not now", "Rate"),
)
ADS = (
    "Sponsored: Summer sale, 50% off",
    "Sponsored: Try Premium free for 30 days",
    "Sponsored: New game - play now",
    "Sponsored: Fast delivery near you",
)
# Close control (box, label): small and large, in three places (adverts move it around).
AD_CLOSE = (
    ((968, 96, 1064, 192), "X"),
    ((16, 96, 112, 192), "X"),
    ((880, 88, 1072, 248), "Close"),
    ((340, 2160, 740, 2320), "Close ad"),
)
BANNERS = (
    "Messages - Ana: are we still on for lunch?",
    "Mail - Your receipt from Shop",
    "Calendar - Stand-up in 10 minutes",
    "Files - Backup complete",
)
BANNER_BOX = (24, 80, 1056, 300)
DIALOG_BOX = (90, 820, 990, 1380)


@dataclass(frozen=True, slots=True)
class Interruption:
    """One interruption on screen. ``timer``: steps until a banner or loading screen goes
    away, or until an ad's close control works (0 = it works now)."""

    kind: str
    variant: int = 0
    timer: int = 0
    app: str = ""
    """The app it arrived in (dialog texts name it)."""

    @property
    def modal(self) -> bool:
        return self.kind != "banner"


Widget = tuple[str, str, tuple[int, int, int, int], str | None, bool]
"""(role, text, box in logical px, effect: "dismiss" or None, enabled)."""


@cache
def widgets(intr: Interruption) -> tuple[Widget, ...]:
    """The interruption's elements, top-most last."""
    kind, v = intr.kind, intr.variant
    if kind == "system_dialog":
        title, message, decline, accept = SYSTEM_DIALOGS[v]
        left, top, right, bottom = DIALOG_BOX
        mid = (left + right) // 2
        return (
            ("dialog", title.format(app=intr.app or "This app"), DIALOG_BOX, None, True),
            ("text", message, (left, top + 160, right, top + 300), None, True),
            ("button", decline, (left, bottom - 160, mid, bottom), "dismiss", True),
            ("button", accept, (mid, bottom - 160, right, bottom), "dismiss", True),
        )
    if kind == "ad":
        box, label = AD_CLOSE[v % len(AD_CLOSE)]
        text, ready = (label, True) if intr.timer == 0 else (f"Close in {intr.timer}", False)
        return (
            ("image", ADS[v // len(AD_CLOSE) % len(ADS)], (0, 72, W, H), None, True),
            ("button", text, box, "dismiss", ready),
        )
    if kind == "banner":
        return (("notification", BANNERS[v % len(BANNERS)], BANNER_BOX, "dismiss", True),)
    if kind == "loading":
        return (("progress", "Loading...", (390, 1100, 690, 1300), None, True),)
    if kind == "session_expiry":
        return (
            ("text", "Session expired", (60, 400, 1020, 560), None, True),
            (
                "text",
                f"Signed in as you@{intr.app.casefold()}.example",
                (60, 600, 1020, 720),
                None,
                True,
            ),
            ("button", "Sign in", (240, 900, 840, 1060), "dismiss", True),
        )
    raise ValueError(f"unknown interruption kind {kind!r}")


def compose(base: View, intr: Interruption) -> View:
    """The view with ``intr`` on top: a banner or dialog over the app, the other kinds instead
    of it (only the status bar stays). Taps never reach handlers here: the device reacts."""
    keep = base.elements if kind_overlays_app(intr.kind) else base.elements[:1]
    elements = list(keep)
    hits = []
    for role, text, box, effect, enabled in widgets(intr):
        i = len(elements)
        bits = (ENABLED | (CLICKABLE if effect is not None else 0)) if enabled else 0
        element = _element(i, role, text, box, bits)
        elements.append(element)
        if effect is not None or role in BLOCKING_ROLES:
            hits.append((*element.bounds, i))
    hits.reverse()
    n = len(elements)
    none = (None,) * n
    return View(
        Observation(tuple(elements), SCREEN_SIZE),
        none,
        none,
        tuple(hits),
        {},
        {},
        None,
        None,
        None,
        base.keyboard and kind_overlays_app(intr.kind),
    )


def kind_overlays_app(kind: str) -> bool:
    return kind in ("banner", "system_dialog")


def dismiss_box(intr: Interruption) -> tuple[int, int, int, int] | None:
    """Where a tap dismisses ``intr`` now (the first dismissing control), if anywhere."""
    for _role, _text, box, effect, enabled in widgets(intr):
        if effect == "dismiss" and enabled:
            return box
    return None


def _inside(box: tuple[int, int, int, int], action: Action) -> bool:
    left, top, right, bottom = box
    return left / W <= action.x <= right / W and top / H <= action.y <= bottom / H  # type: ignore[operator]


def react(intr: Interruption, action: Action) -> tuple[bool, bool]:
    """(dismissed, passes): does ``action`` dismiss ``intr``, and does it reach the app?"""
    kind = action.kind
    if kind is ActionKind.DONE:
        return False, True
    if kind in POINT_KINDS:
        box = dismiss_box(intr)
        if box is not None and _inside(box, action):
            return True, False
        return False, not intr.modal
    if kind is ActionKind.KEY and action.key in ("back", "escape"):
        if intr.kind == "system_dialog" or (intr.kind == "ad" and intr.timer == 0):
            return True, False
    return False, not intr.modal


def tick(intr: Interruption) -> Interruption | None:
    """``intr`` one step later: banners and loading screens time out, ad countdowns run down."""
    if intr.kind in ("banner", "loading"):
        return (
            None
            if intr.timer <= 1
            else Interruption(intr.kind, intr.variant, intr.timer - 1, intr.app)
        )
    if intr.kind == "ad" and intr.timer > 0:
        return Interruption("ad", intr.variant, intr.timer - 1, intr.app)
    return intr


def clear_action(intr: Interruption, planned: Action | None) -> Action:
    """What a person (and the scripted expert) does about ``intr``: wait out a loading screen
    or an ad's countdown, tap the close / decline / sign-in control, and tap a banner only when
    the planned tap lands on it."""
    if intr.kind == "banner":
        assert planned is not None
        if planned.kind in POINT_KINDS and _inside(BANNER_BOX, planned):
            return _tap(BANNER_BOX)
        return planned
    box = dismiss_box(intr)
    if box is None:
        return Action(ActionKind.WAIT)
    return _tap(box)


def _tap(box: tuple[int, int, int, int]) -> Action:
    left, top, right, bottom = box
    return Action.tap(round((left + right) / 2 / W, 4), round((top + bottom) / 2 / H, 4))
