"""Settings tasks: toggles on different screens, sliders, pickers, a rename and answers."""

from __future__ import annotations

from dataclasses import replace
from random import Random
from types import MappingProxyType as P
from typing import Any

from adaroll.actions import Action
from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.settings import slider_x
from adaroll.envs.mobile.expert import Expert, Hop
from adaroll.envs.mobile.tasks.base import TaskTemplate, register
from adaroll.envs.mobile.world import Apps

MAIN: Hop = ("main", None, None)


def path(screen: str) -> list[Hop]:
    return [MAIN, (screen, None, f"row:{screen}")]


def _with(world: Apps, **changes: Any) -> Apps:
    return replace(world, settings=replace(world.settings, **changes))


def on_off(value: bool) -> str:
    return "on" if value else "off"


class _Toggle(TaskTemplate):
    """Turn one switch on or off; the world starts in the opposite position."""

    attr, screen, label = "", "", ""
    apps = ("Settings",)
    instruction = "Turn {state} {label}"

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        target = rng.random() < 0.5
        return (
            {"target": target, "state": on_off(target), "label": self.label},
            _with(world, **{self.attr: not target}),
        )

    def check(self, world: Apps, p: P) -> bool:
        return getattr(world.settings, self.attr) == p["target"]

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Settings", path(self.screen)) or x.press(f"toggle:{self.attr}")


@register
class Wifi(_Toggle):
    name, attr, screen, label = "settings.wifi", "wifi", "network", "Wi-Fi"


@register
class Bluetooth(_Toggle):
    name, attr, screen, label = "settings.bluetooth", "bluetooth", "devices", "Bluetooth"


@register
class DarkTheme(_Toggle):
    name, attr, screen, label = "settings.dark_theme", "dark_mode", "display", "the dark theme"


@register
class DoNotDisturb(_Toggle):
    name, attr, screen, label = "settings.dnd", "dnd", "sound", "Do Not Disturb"


@register
class Location(_Toggle):
    name, attr, screen, label = "settings.location", "location", "location", "location access"


@register
class BatterySaver(_Toggle):
    name, attr, screen, label = (
        "settings.battery_saver",
        "battery_saver",
        "battery",
        "Battery Saver",
    )
    heldout = True


_PAIRS = (
    ("wifi", "network", "Wi-Fi"),
    ("airplane", "network", "airplane mode"),
    ("mobile_data", "network", "mobile data"),
    ("dark_mode", "display", "the dark theme"),
    ("auto_rotate", "display", "auto-rotate"),
    ("vibrate", "sound", "vibrate for calls"),
    ("bluetooth", "devices", "Bluetooth"),
)


@register
class TwoToggles(TaskTemplate):
    name = "settings.two_toggles"
    apps = ("Settings",)
    tags = ("multi",)
    instruction = "Turn {state1} {label1} and turn {state2} {label2}"

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        first = rng.choice(_PAIRS[:3])
        second = rng.choice([t for t in _PAIRS[3:] if t[1] != first[1]])
        t1, t2 = rng.random() < 0.5, rng.random() < 0.5
        p = {
            "attr1": first[0],
            "screen1": first[1],
            "label1": first[2],
            "target1": t1,
            "state1": on_off(t1),
            "attr2": second[0],
            "screen2": second[1],
            "label2": second[2],
            "target2": t2,
            "state2": on_off(t2),
        }
        return p, _with(world, **{first[0]: not t1, second[0]: not t2})

    def check(self, world: Apps, p: P) -> bool:
        s = world.settings
        return getattr(s, p["attr1"]) == p["target1"] and getattr(s, p["attr2"]) == p["target2"]

    def expert(self, x: Expert, p: P) -> Action:
        for i in ("1", "2"):
            if getattr(x.apps.settings, p["attr" + i]) != p["target" + i]:
                return x.goto("Settings", path(p["screen" + i])) or x.press(
                    f"toggle:{p['attr' + i]}"
                )
        raise AssertionError("task already solved")


@register
class Brightness(TaskTemplate):
    name = "settings.brightness"
    apps = ("Settings",)
    tags = ("slider",)
    instruction = "Set the screen brightness to {value}%"

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        value = rng.randrange(1, 11) * 10
        current = rng.choice([v for v in range(10, 101, 10) if v != value])
        return {"value": value}, _with(world, brightness=current)

    def check(self, world: Apps, p: P) -> bool:
        return world.settings.brightness == p["value"]

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Settings", path("display")) or x.tap_at(
            "slider:brightness", slider_x(p["value"])
        )


@register
class SoundProfile(TaskTemplate):
    name = "settings.sound_profile"
    apps = ("Settings",)
    tags = ("slider", "dialog", "multi")
    instruction = "Set the ringtone to {tone} and the ring volume to {volume}%"

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        tone = rng.choice(data.RINGTONES)
        volume = rng.randrange(0, 11) * 10
        old_tone = rng.choice([t for t in data.RINGTONES if t != tone])
        old_volume = rng.choice([v for v in range(0, 101, 10) if v != volume])
        return {"tone": tone, "volume": volume}, _with(
            world, ringtone=old_tone, ring_volume=old_volume
        )

    def check(self, world: Apps, p: P) -> bool:
        return world.settings.ringtone == p["tone"] and world.settings.ring_volume == p["volume"]

    def expert(self, x: Expert, p: P) -> Action:
        go = x.goto("Settings", path("sound"))
        if go:
            return go
        if x.route.dialog is not None:
            return x.press(f"opt:{p['tone']}")
        if x.apps.settings.ring_volume != p["volume"]:
            return x.tap_at("slider:ring_volume", slider_x(p["volume"]))
        return x.press("row:ringtone")


@register
class Language(TaskTemplate):
    name = "settings.language"
    apps = ("Settings",)
    tags = ("scroll", "dialog")
    instruction = "Change the phone language to {language}"

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return {"language": rng.choice([x for x in data.LANGUAGES if x != "English"])}, world

    def check(self, world: Apps, p: P) -> bool:
        return world.settings.language == p["language"]

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Settings", path("language")) or (
            x.press("dlg:ok") if x.route.dialog else x.press(f"lang:{p['language']}")
        )


@register
class FontSize(TaskTemplate):
    name = "settings.font_size"
    apps = ("Settings",)
    tags = ("dialog",)
    instruction = "Set the font size to {size}"

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return {"size": rng.choice([s for s in data.FONT_SIZES if s != "Default"])}, world

    def check(self, world: Apps, p: P) -> bool:
        return world.settings.font_size == p["size"]

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Settings", path("display")) or (
            x.press(f"opt:{p['size']}") if x.route.dialog else x.press("row:font_size")
        )


@register
class DeviceName(TaskTemplate):
    name = "settings.device_name"
    apps = ("Settings",)
    tags = ("dialog", "text")
    instruction = 'Rename this phone to "{device}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        device = f"{rng.choice(data.FIRST_NAMES)} {rng.choice(('Phone', 'Mobile', 'Pixel'))}"
        return {"device": device}, world

    def check(self, world: Apps, p: P) -> bool:
        return world.settings.device_name == p["device"]

    def expert(self, x: Expert, p: P) -> Action:
        go = x.goto("Settings", path("devices"))
        if go:
            return go
        if x.route.dialog is None:
            return x.press("row:device_name")
        return x.fill("device_name", p["device"]) or x.press("dlg:ok")


class _AboutAnswer(TaskTemplate):
    apps = ("Settings",)
    tags = ("answer", "scroll")

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return {}, world

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Settings", path("about")) or Action.done(self.answer(x.apps, p))


@register
class AndroidVersion(_AboutAnswer):
    name = "settings.android_version"
    instruction = "Which Android version is this phone running? Answer with the version number."

    def answer(self, world: Apps, p: P) -> str:
        return world.settings.android


@register
class StorageUsed(_AboutAnswer):
    name = "settings.storage_used"
    heldout = True
    instruction = "How much storage is used on this phone? Answer as shown, like 12 GB."

    def answer(self, world: Apps, p: P) -> str:
        return f"{world.settings.storage_used} GB"
