"""Settings: toggles, sliders, pickers and a language list, one screen per category."""

from __future__ import annotations

from dataclasses import dataclass, replace
from random import Random
from typing import Any

from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.base import App
from adaroll.envs.mobile.screen import APPBAR_BOTTOM, ROW_H, SELECTED, H, ViewBuilder, W, memo
from adaroll.envs.mobile.state import Phone, Route
from adaroll.envs.mobile.widgets import (
    appbar,
    choice,
    close_dialog,
    confirm,
    open_dialog,
    prompt,
    push,
    row,
    text_row,
    toggle_row,
)


@dataclass(frozen=True, slots=True)
class SettingsState:
    wifi: bool
    bluetooth: bool
    airplane: bool
    mobile_data: bool
    location: bool
    dark_mode: bool
    brightness: int
    font_size: str
    auto_rotate: bool
    ring_volume: int
    dnd: bool
    vibrate: bool
    ringtone: str
    battery_saver: bool
    battery: int
    language: str
    device_name: str
    model: str
    android: str
    storage_used: int


def generate(rng: Random, _made: dict[str, Any]) -> SettingsState:
    model = rng.choice(data.DEVICE_MODELS)
    return SettingsState(
        wifi=rng.random() < 0.5,
        bluetooth=rng.random() < 0.5,
        airplane=False,
        mobile_data=True,
        location=rng.random() < 0.5,
        dark_mode=rng.random() < 0.5,
        brightness=rng.randrange(1, 10) * 10,
        font_size="Default",
        auto_rotate=rng.random() < 0.5,
        ring_volume=rng.randrange(1, 10) * 10,
        dnd=False,
        vibrate=rng.random() < 0.5,
        ringtone=rng.choice(data.RINGTONES),
        battery_saver=False,
        battery=rng.randrange(15, 99),
        language="English",
        device_name=f"{rng.choice(data.FIRST_NAMES)}'s {model}",
        model=model,
        android=rng.choice(data.ANDROID_VERSIONS),
        storage_used=rng.randrange(20, 120),
    )


# -- sliders: a tap anywhere on the track sets the value (steps of 10) ------------------------

SLIDER_X0, SLIDER_X1 = 88, 992


def slider_value(x: float) -> int:
    frac = (x * W - SLIDER_X0) / (SLIDER_X1 - SLIDER_X0)
    return int(round(min(max(frac, 0.0), 1.0) * 10)) * 10


def slider_x(value: int) -> float:
    """The normalised x a tap must hit to set ``value`` (used by experts)."""
    return (SLIDER_X0 + value / 100 * (SLIDER_X1 - SLIDER_X0)) / W


def _set(**changes: Any):
    return lambda p, a: p.set_app("settings", replace(p.apps.settings, **changes))


def _flip(attr: str):
    def handler(p: Phone, a: Any) -> Phone:
        s = p.apps.settings
        return p.set_app("settings", replace(s, **{attr: not getattr(s, attr)}))

    return handler


def _slide(attr: str):
    return lambda p, a: p.set_app("settings", replace(p.apps.settings, **{attr: slider_value(a.x)}))


def _slider_row(label: str, attr: str, value: int) -> tuple[int, Any]:
    return (
        ROW_H,
        (("slider", f"{label} {value}%", 0, W, f"slider:{attr}", _slide(attr), None, 0),),
    )


# -- screens ------------------------------------------------------------------------------------

CATEGORIES = (
    ("Network & internet", "network"),
    ("Connected devices", "devices"),
    ("Apps", "apps"),
    ("Notifications", "notifications"),
    ("Battery", "battery"),
    ("Storage", "storage"),
    ("Sound & vibration", "sound"),
    ("Display", "display"),
    ("Accessibility", "accessibility"),
    ("Security", "security"),
    ("Location", "location"),
    ("Languages", "language"),
    ("System", "system"),
    ("About phone", "about"),
)
_PUSH = {screen: push(Route("Settings", screen)) for _, screen in CATEGORIES}
_INFO = {
    "apps": ("Recently opened apps", "Contacts", "Messages", "Clock"),
    "notifications": ("App notifications", "Notification history", "Wireless alerts"),
    "storage": ("Internal storage", "Free up space"),
    "accessibility": ("TalkBack", "Select to Speak", "Color correction"),
    "security": ("Screen lock", "Find My Device", "Security update"),
    "system": ("Gestures", "Date & time", "Backup", "Reset options"),
}


_MAIN_ROWS = tuple(
    row(label, f"row:{screen}", _PUSH[screen], height=200) for label, screen in CATEGORIES
)


def _main(b: ViewBuilder, route: Route) -> None:
    appbar(b, "Settings", show_back=False)
    b.vlist(_MAIN_ROWS, APPBAR_BOTTOM, H, route.scroll)


def _title(screen: str) -> str:
    return next(label for label, s in CATEGORIES if s == screen)


def view(phone: Phone, route: Route, b: ViewBuilder) -> None:
    s: SettingsState = phone.apps.settings
    screen, dialog = route.screen, route.dialog
    if dialog is not None:
        _dialog(s, route, b)
        return
    if screen == "main":
        _main(b, route)
        return
    appbar(b, _title(screen))
    b.vlist(_rows(s, screen), APPBAR_BOTTOM, H, route.scroll)


@memo
def _rows(s: SettingsState, screen: str) -> tuple[Any, ...]:
    """The rows of a category screen for one version of the settings."""
    rows: list[Any]
    if screen == "network":
        rows = [
            toggle_row("Wi-Fi", "toggle:wifi", s.wifi, _flip("wifi")),
            toggle_row("Mobile data", "toggle:mobile_data", s.mobile_data, _flip("mobile_data")),
            toggle_row("Airplane mode", "toggle:airplane", s.airplane, _flip("airplane")),
        ]
    elif screen == "devices":
        rows = [
            toggle_row("Bluetooth", "toggle:bluetooth", s.bluetooth, _flip("bluetooth")),
            row(f"Device name: {s.device_name}", "row:device_name", _RENAME),
            text_row("Pair new device"),
        ]
    elif screen == "display":
        rows = [
            toggle_row("Dark theme", "toggle:dark_mode", s.dark_mode, _flip("dark_mode")),
            _slider_row("Brightness", "brightness", s.brightness),
            row(f"Font size: {s.font_size}", "row:font_size", open_dialog("font")),
            toggle_row(
                "Auto-rotate screen", "toggle:auto_rotate", s.auto_rotate, _flip("auto_rotate")
            ),
        ]
    elif screen == "sound":
        rows = [
            _slider_row("Ring volume", "ring_volume", s.ring_volume),
            toggle_row("Do Not Disturb", "toggle:dnd", s.dnd, _flip("dnd")),
            toggle_row("Vibrate for calls", "toggle:vibrate", s.vibrate, _flip("vibrate")),
            row(f"Ringtone: {s.ringtone}", "row:ringtone", open_dialog("ringtone")),
        ]
    elif screen == "battery":
        rows = [
            text_row(f"Battery {s.battery}%"),
            toggle_row(
                "Battery Saver", "toggle:battery_saver", s.battery_saver, _flip("battery_saver")
            ),
        ]
    elif screen == "location":
        rows = [toggle_row("Use location", "toggle:location", s.location, _flip("location"))]
    elif screen == "language":
        rows = [
            row(
                lang,
                f"lang:{lang}",
                open_dialog("language", lang),
                bits=SELECTED if lang == s.language else 0,
            )
            for lang in data.LANGUAGES
        ]
    elif screen == "about":
        rows = [
            text_row(f"Device name: {s.device_name}"),
            text_row(f"Model: {s.model}"),
            text_row(f"Android version: {s.android}"),
            text_row(f"Storage used: {s.storage_used} GB"),
            text_row("Total storage: 128 GB"),
            text_row(f"Build number: AP{s.android}A.{s.storage_used:03d}"),
        ]
    else:
        rows = [text_row(line) for line in _INFO[screen]]
    return tuple(rows)


def _rename_open(p: Phone, a: Any) -> Phone:
    top = p.screen.with_field("device_name", p.apps.settings.device_name)
    return p.set_top(replace(top, dialog=("rename",)))


_RENAME = _rename_open


def _rename_ok(p: Phone, a: Any) -> Phone:
    name = p.screen.field("device_name").strip()
    if not name:
        return p
    return close_dialog(p.set_app("settings", replace(p.apps.settings, device_name=name)))


def _dialog(s: SettingsState, route: Route, b: ViewBuilder) -> None:
    kind = route.dialog[0]  # type: ignore[index]
    if kind == "font":
        choice(
            b,
            "Font size",
            [
                (size, f"opt:{size}", _pick(font_size=size), size == s.font_size)
                for size in data.FONT_SIZES
            ],
        )
    elif kind == "ringtone":
        choice(
            b,
            "Ringtone",
            [
                (tone, f"opt:{tone}", _pick(ringtone=tone), tone == s.ringtone)
                for tone in data.RINGTONES
            ],
        )
    elif kind == "language":
        lang = route.dialog[1]  # type: ignore[index]
        confirm(
            b,
            "Change language?",
            f"Use {lang} as the phone language?",
            "Change",
            _pick(language=lang),
        )
    elif kind == "rename":
        prompt(b, route, "Device name", "device_name", "Device name", "Rename", _rename_ok)


def _pick(**changes: Any):
    setter = _set(**changes)
    return lambda p, a: close_dialog(setter(p, a))


APP = App("Settings", "settings", Route("Settings", "main"), generate, view)
