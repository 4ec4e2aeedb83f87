"""The data of all apps together, and the seeded generation of a fresh phone."""

from __future__ import annotations

from dataclasses import dataclass
from random import Random
from typing import Any

from adaroll.envs.mobile.apps import APPS
from adaroll.envs.mobile.state import Phone


@dataclass(frozen=True, slots=True)
class Apps:
    """Persistent data of every app (what task verifiers check). One field per app."""

    settings: Any
    contacts: Any
    clock: Any
    messages: Any
    notes: Any
    calendar: Any
    shop: Any
    mail: Any
    files: Any
    layout: Any = None
    """How the device's screens drift from the stock layout (a noisy device's
    :class:`~.device.DeviceLayout`; None on the clean one)."""


def make_world(rng: Random) -> Apps:
    """Seeded data for every app, generated in launcher order (contacts before messages)."""
    made: dict[str, Any] = {}
    for app in APPS.values():
        made[app.attr] = app.generate(rng, made)
    return Apps(**made)


def home_phone(apps: Apps) -> Phone:
    """A phone showing the home launcher."""
    return Phone(apps, ())
