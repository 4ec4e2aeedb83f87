"""Clock tasks: new/edited/deleted alarms via time pickers, switches, the timer keypad,
world-clock cities, and reading an alarm time."""

from __future__ import annotations

from dataclasses import replace
from random import Random
from types import MappingProxyType as P
from typing import Any

from adaroll.actions import Action
from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.clock import LABELS, Alarm, random_time
from adaroll.envs.mobile.expert import Expert, Hop
from adaroll.envs.mobile.tasks.base import TaskTemplate, register
from adaroll.envs.mobile.world import Apps

ALARMS: Hop = ("alarms", None, "tab:Alarm")
TIMER: Hop = ("timer", None, "tab:Timer")
WORLD: Hop = ("world", None, "tab:World")


def free_time(rng: Random, world: Apps) -> tuple[int, int]:
    used = {(a.hour, a.minute) for a in world.clock.alarms}
    while True:
        t = random_time(rng)
        if t not in used:
            return t


def labelled(rng: Random, world: Apps, **where: Any) -> Alarm:
    return rng.choice(
        [
            a
            for a in world.clock.alarms
            if a.label and all(getattr(a, k) == v for k, v in where.items())
        ]
    )


def ensure_labelled(rng: Random, world: Apps) -> Apps:
    """Give the first alarm a label if none has one (templates name alarms by label)."""
    alarms = world.clock.alarms
    if any(a.label for a in alarms):
        return world
    used = {a.label for a in alarms}
    label = rng.choice([x for x in LABELS if x not in used])
    return replace(
        world, clock=replace(world.clock, alarms=(replace(alarms[0], label=label),) + alarms[1:])
    )


def set_time(x: Expert, hour: int, minute: int, label: str | None) -> Action:
    """On an alarm editor: pick hour and minute in their grids, type the label, save."""
    top = x.route
    hh, mm = f"{hour:02d}", f"{minute:02d}"
    if top.dialog is not None:
        return x.press(f"h:{hh}" if top.dialog[0] == "hour" else f"m:{mm}")
    if top.field("hour") != hh:
        return x.press("picker:hour")
    if top.field("minute") != mm:
        return x.press("picker:minute")
    return (label is not None and x.fill("label", label)) or x.press("btn:save")


def has_alarm(world: Apps, hour: int, minute: int, label: str | None) -> bool:
    return any(
        a.hour == hour and a.minute == minute and a.enabled and (label is None or a.label == label)
        for a in world.clock.alarms
    )


class _NewAlarm(TaskTemplate):
    apps = ("Clock",)
    tags: tuple[str, ...] = ("picker", "dialog")
    with_label = False

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        hour, minute = free_time(rng, world)
        label = rng.choice(LABELS)
        return {
            "hour": hour,
            "minute": minute,
            "time": f"{hour:02d}:{minute:02d}",
            "label": label,
        }, world

    def check(self, world: Apps, p: P) -> bool:
        return has_alarm(world, p["hour"], p["minute"], p["label"] if self.with_label else None)

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Clock", [ALARMS, ("alarm_edit", None, "fab")]) or set_time(
            x, p["hour"], p["minute"], p["label"] if self.with_label else None
        )


@register
class NewAlarm(_NewAlarm):
    name = "clock.new_alarm"
    instruction = "Set an alarm for {time}"


@register
class NewAlarmLabel(_NewAlarm):
    name = "clock.new_alarm_label"
    tags = ("picker", "dialog", "text")
    with_label = True
    instruction = 'Set an alarm for {time} with the label "{label}"'


@register
class AlarmOff(TaskTemplate):
    name = "clock.alarm_off"
    apps = ("Clock",)
    instruction = "Turn off the {time} alarm"

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        a = rng.choice(world.clock.alarms)
        alarms = tuple(
            replace(x, enabled=True) if x.uid == a.uid else x for x in world.clock.alarms
        )
        world = replace(world, clock=replace(world.clock, alarms=alarms))
        return {"uid": a.uid, "time": a.time}, world

    def check(self, world: Apps, p: P) -> bool:
        a = world.clock.by_uid(p["uid"])
        return a is not None and not a.enabled

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Clock", [ALARMS]) or x.press(f"switch:{p['uid']}")


@register
class DeleteAlarm(TaskTemplate):
    name = "clock.delete_alarm"
    apps = ("Clock",)
    tags = ("dialog",)
    instruction = 'Delete the alarm labelled "{label}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        world = ensure_labelled(rng, world)
        a = labelled(rng, world)
        return {"uid": a.uid, "label": a.label, "count": len(world.clock.alarms)}, world

    def check(self, world: Apps, p: P) -> bool:
        alarms = world.clock.alarms
        return len(alarms) == p["count"] - 1 and world.clock.by_uid(p["uid"]) is None

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Clock", [ALARMS, ("alarm_edit", p["uid"], f"alarm:{p['uid']}")]) or (
            x.press("dlg:ok") if x.route.dialog else x.press("btn:delete")
        )


@register
class ChangeAlarm(TaskTemplate):
    name = "clock.change_alarm"
    apps = ("Clock",)
    tags = ("picker", "dialog")
    instruction = 'Change the alarm labelled "{label}" to {time}'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        world = ensure_labelled(rng, world)
        a = labelled(rng, world)
        hour, minute = free_time(rng, world)
        return {
            "uid": a.uid,
            "label": a.label,
            "hour": hour,
            "minute": minute,
            "time": f"{hour:02d}:{minute:02d}",
        }, world

    def check(self, world: Apps, p: P) -> bool:
        a = world.clock.by_uid(p["uid"])
        return (
            a is not None
            and (a.hour, a.minute) == (p["hour"], p["minute"])
            and a.label == p["label"]
        )

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Clock", [ALARMS, ("alarm_edit", p["uid"], f"alarm:{p['uid']}")]) or set_time(
            x, p["hour"], p["minute"], None
        )


@register
class StartTimer(TaskTemplate):
    name = "clock.timer"
    apps = ("Clock",)
    tags = ("tabs",)
    instruction = "Start a timer for {minutes} minutes"

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return {"minutes": rng.choice((2, 3, 5, 8, 10, 12, 15, 20, 25, 30, 45, 90, 120))}, world

    def check(self, world: Apps, p: P) -> bool:
        return world.clock.timer_running and world.clock.timer_minutes == p["minutes"]

    def expert(self, x: Expert, p: P) -> Action:
        go = x.goto("Clock", [TIMER])
        if go:
            return go
        if x.apps.clock.timer_running:
            return x.press("btn:stop")
        want, digits = str(p["minutes"]), x.route.field("digits")
        if digits == want:
            return x.press("btn:start")
        if want.startswith(digits):
            return x.press(f"key:{want[len(digits)]}")
        return x.press("key:del")


@register
class AddCity(TaskTemplate):
    name = "clock.add_city"
    apps = ("Clock",)
    tags = ("tabs", "scroll")
    instruction = "Add {city} to the world clock"

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return {"city": rng.choice([c for c in data.CITIES if c not in world.clock.cities])}, world

    def check(self, world: Apps, p: P) -> bool:
        return p["city"] in world.clock.cities

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Clock", [WORLD, ("city_pick", None, "fab")]) or x.press(f"city:{p['city']}")


@register
class RemoveCity(TaskTemplate):
    name = "clock.remove_city"
    apps = ("Clock",)
    tags = ("tabs", "long_press", "dialog")
    heldout = True
    instruction = "Remove {city} from the world clock"

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return {"city": rng.choice(world.clock.cities), "count": len(world.clock.cities)}, world

    def check(self, world: Apps, p: P) -> bool:
        cities = world.clock.cities
        return p["city"] not in cities and len(cities) == p["count"] - 1

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Clock", [WORLD]) or (
            x.press("dlg:ok") if x.route.dialog else x.long_press(f"city:{p['city']}")
        )


@register
class AlarmTimeAnswer(TaskTemplate):
    name = "clock.alarm_time"
    apps = ("Clock",)
    tags = ("answer",)
    instruction = 'At what time is the alarm labelled "{label}" set? Answer as HH:MM.'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        world = ensure_labelled(rng, world)
        a = labelled(rng, world)
        return {"uid": a.uid, "label": a.label}, world

    def answer(self, world: Apps, p: P) -> str:
        return world.clock.by_uid(p["uid"]).time

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Clock", [ALARMS]) or Action.done(self.answer(x.apps, p))
