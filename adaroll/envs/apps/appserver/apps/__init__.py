"""The app backends, by name, in the order of the app switcher (and of their ports)."""

from __future__ import annotations

from ..framework import App
from . import admin, calendar, mail, notes, shop, tracker

APPS: dict[str, App] = {m.APP.name: m.APP for m in (mail, shop, calendar, tracker, notes, admin)}
