"""Device profiles: the clean phone, or a noisy one that behaves like a real handset.

A real phone interrupts: permission requests and low-battery dialogs, interstitial ads,
notification banners over the app bar, screens that take a moment to load, expired sessions,
and a layout that drifts between sessions (rearranged launcher, a restored scroll position, the
B variant of a control's label, a taller keyboard). :data:`PROFILES` holds the named profiles;
each rate is a probability per *opportunity* (see :data:`RATE_DOCS`).

Every draw is a pure function of (task, episode step, screen), hashed with splitmix64, so a
replay of the same actions meets the same perturbations, a branch continues exactly as its
original would, and the memory backend still holds an immutable state (O(1) snapshots).
At most ``max_interruptions`` interruptions happen per episode and the step limit grows by
``extra_steps``, so a perturbation never makes a task unsolvable.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass, fields, replace
from typing import Any

KINDS = (
    "system_dialog",
    "ad",
    "banner",
    "loading",
    "session_expiry",
    "list_order",
    "scroll_offset",
    "control_variant",
    "keyboard",
)
"""Perturbation kinds, in the order of :attr:`DeviceState.counts`."""

RATE_DOCS = {
    "system_dialog": "per step: permission request, low battery, software update or rate-this-app "
    "dialog; modal until a button (or back) dismisses it",
    "ad": "per screen opened in an ad-supported app (Notes, Calendar, Shop, Files): a full-screen "
    "interstitial; its close control varies in place and size, and half have a 2-3 step "
    "countdown before it works",
    "banner": "per step: a notification banner over the app bar for 2-4 steps; a tap on it "
    "dismisses it (and does nothing else)",
    "loading": "per screen opened: a loading screen for 1-3 steps that ignores taps",
    "session_expiry": "per launch of an app with an account (Messages, Shop, Mail): a sign-in "
    "screen before the app answers",
    "list_order": "per episode: the launcher's icons in another order",
    "scroll_offset": "per list screen opened: the list starts scrolled (a restored position)",
    "control_variant": "per episode: the B variant of button labels (Save -> Done, ...)",
    "keyboard": "per episode: a taller keyboard that covers more of the lower screen",
}


@dataclass(frozen=True)
class DeviceProfile:
    """How a device perturbs episodes; every rate is a probability in [0, 1] (:data:`RATE_DOCS`)."""

    name: str = "clean"
    system_dialog: float = 0.0
    ad: float = 0.0
    banner: float = 0.0
    loading: float = 0.0
    session_expiry: float = 0.0
    list_order: float = 0.0
    scroll_offset: float = 0.0
    control_variant: float = 0.0
    keyboard: float = 0.0
    max_interruptions: int = 2
    """Interruptions (dialogs, ads, banners, loading, sign-in) per episode at most."""
    extra_steps: int = 10
    """Added to every task's step limit: what dismissing ``max_interruptions`` costs at most."""

    def __post_init__(self) -> None:
        for kind in KINDS:
            rate = getattr(self, kind)
            if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
                raise ValueError(f"device.{kind} must be a rate in [0, 1], got {rate!r}")
            object.__setattr__(self, kind, float(rate))
        for name in ("max_interruptions", "extra_steps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"device.{name} must be an int >= 0, got {value!r}")
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"device.name must be a non-empty string, got {self.name!r}")

    @property
    def clean(self) -> bool:
        return all(getattr(self, kind) == 0 for kind in KINDS)

    def rates(self) -> dict[str, float]:
        return {kind: getattr(self, kind) for kind in KINDS}


PROFILES = {
    "clean": DeviceProfile("clean", extra_steps=0),
    "noisy": DeviceProfile(
        "noisy",
        system_dialog=0.02,
        ad=0.06,
        banner=0.03,
        loading=0.08,
        session_expiry=0.15,
        list_order=0.15,
        scroll_offset=0.15,
        control_variant=0.25,
        keyboard=0.15,
    ),
}
"""Named profiles. The noisy rates are a phone in daily use: about one interruption in every
third episode, and a third of the episodes in a drifted layout."""


def resolve_profile(spec: Any) -> DeviceProfile:
    """A profile from its name, a profile, or a mapping ``{"base": name, rate: value, ...}``
    (``name`` optional); a bad name or rate raises ValueError naming the field."""
    if isinstance(spec, DeviceProfile):
        return spec
    if isinstance(spec, str):
        if spec not in PROFILES:
            raise ValueError(f"device: unknown profile {spec!r}; profiles: {', '.join(PROFILES)}")
        return PROFILES[spec]
    if isinstance(spec, dict):
        spec = dict(spec)
        base = resolve_profile(spec.pop("base", "clean"))
        known = {f.name for f in fields(DeviceProfile)}
        unknown = sorted(set(spec) - known)
        if unknown:
            raise ValueError(
                f"device: unknown field(s) {unknown}; fields: base, {', '.join(sorted(known))}"
            )
        spec.setdefault("name", f"{base.name}+custom")
        return replace(base, **spec)
    raise ValueError(
        f"device must be a profile name ({', '.join(PROFILES)}) or a mapping, got {spec!r}"
    )


# -- deterministic draws ------------------------------------------------------------------------

_MASK = (1 << 64) - 1
_SALT = {kind: i + 1 for i, kind in enumerate(KINDS)}


def _mix(x: int) -> int:
    """splitmix64's finaliser: a cheap, well-spread 64-bit hash."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def episode_key(profile: DeviceProfile, task_id: str) -> int:
    """The 64-bit key of one task on one profile (computed once per reset)."""
    digest = hashlib.blake2b(f"{profile.name}/{task_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


_SCREEN_HASH: dict[tuple[str, str], int] = {}


def screen_hash(app: str, screen: str) -> int:
    """A stable (process-independent) hash of a screen's identity."""
    key = (app, screen)
    value = _SCREEN_HASH.get(key)
    if value is None:
        value = _SCREEN_HASH[key] = zlib.crc32(f"{app}/{screen}".encode())
    return value


def draw(key: int, step: int, kind: str, state: int = 0) -> int:
    """A 64-bit draw for ``kind`` at ``step`` of the episode keyed ``key`` in screen ``state``."""
    return _mix(key ^ ((step * 0x100000001B3 + state) & _MASK) ^ (_SALT[kind] << 56))


def happens(rate: float, value: int) -> bool:
    """Whether a draw ``value`` (uniform over 64 bits) falls under probability ``rate``."""
    return rate > 0 and value < rate * 18446744073709551616.0


# -- layout drift ---------------------------------------------------------------------------------

TALL_KEYBOARD_TOP = 1260
"""Top edge of the taller keyboard variant (a suggestion strip and a number row)."""
LABEL_VARIANTS = {
    "Save": "Done",
    "Delete": "Remove",
    "Send": "Submit",
    "Edit": "Modify",
    "Archive": "Move to archive",
    "Compose": "New email",
    "New note": "Add note",
    "Add contact": "New contact",
    "Start chat": "New message",
    "Add alarm": "New alarm",
    "New event": "Add event",
    "Add city": "New city",
    "New folder": "Create folder",
    "OK": "Confirm",
    "Cancel": "Dismiss",
}
"""The B variant of button labels (an A/B test the app runs on some sessions); the B variant
also moves the floating action button to the bottom left."""


@dataclass(frozen=True, slots=True)
class DeviceLayout:
    """How this phone's screens drift from the stock layout (held in the phone's data, so it
    is part of every snapshot): launcher order, keyboard height, label variant."""

    launcher: tuple[str, ...] | None = None
    """App names in launcher order (None: the stock order)."""
    keyboard_top: int | None = None
    """Top edge of the keyboard (None: the stock keyboard)."""
    variant_b: bool = False
