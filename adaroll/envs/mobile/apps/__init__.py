"""The phone's apps, in launcher order. Each module holds one app's data model and screens."""

from __future__ import annotations

from adaroll.envs.mobile.apps import (
    calendar,
    clock,
    contacts,
    files,
    mail,
    messages,
    notes,
    settings,
    shop,
)
from adaroll.envs.mobile.apps.base import App

APPS: dict[str, App] = {
    a.APP.name: a.APP
    for a in (settings, contacts, clock, messages, notes, calendar, shop, mail, files)
}
"""Apps by display name, in launcher order."""

APP_NAMES = tuple(APPS)


def find_app(name: str) -> App | None:
    """The app called ``name`` (case and surrounding space ignored), or None."""
    wanted = name.strip().casefold()
    for app in APPS.values():
        if app.name.casefold() == wanted:
            return app
    return None
