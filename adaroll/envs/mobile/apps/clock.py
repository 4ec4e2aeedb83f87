"""Clock: alarms (time pickers in grid dialogs, labels, on/off switches), a keypad timer and
a world clock with a searchable city list."""

from __future__ import annotations

from dataclasses import dataclass, replace
from random import Random
from typing import Any

from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.base import App
from adaroll.envs.mobile.screen import (
    APPBAR_BOTTOM,
    CHECKED,
    ROW_H,
    TABS_BOTTOM,
    H,
    Handler,
    ViewBuilder,
    memo,
)
from adaroll.envs.mobile.state import Phone, Route, next_uid
from adaroll.envs.mobile.widgets import (
    appbar,
    close_dialog,
    confirm,
    fab,
    grid,
    open_dialog,
    push,
    replace_top,
    row,
    tabs,
    text_field,
    text_row,
)

LABELS = (
    "Work",
    "Gym",
    "Meds",
    "School run",
    "Nap",
    "Yoga",
    "Bins out",
    "Call Mom",
    "Run",
    "Standup",
    "Laundry",
    "Pick up kids",
)
HOURS = tuple(f"{h:02d}" for h in range(24))
MINUTES = tuple(f"{m:02d}" for m in range(0, 60, 5))


@dataclass(frozen=True, slots=True)
class Alarm:
    uid: int
    hour: int
    minute: int
    label: str
    enabled: bool = True

    @property
    def time(self) -> str:
        return f"{self.hour:02d}:{self.minute:02d}"


@dataclass(frozen=True, slots=True)
class ClockState:
    alarms: tuple[Alarm, ...]
    timer_minutes: int
    timer_running: bool
    cities: tuple[str, ...]

    def by_uid(self, uid: int) -> Alarm | None:
        return next((a for a in self.alarms if a.uid == uid), None)


def random_time(rng: Random) -> tuple[int, int]:
    return rng.randrange(5, 23), rng.randrange(12) * 5


def generate(rng: Random, _made: dict[str, Any]) -> ClockState:
    times: set[tuple[int, int]] = set()
    while len(times) < rng.randrange(3, 8):
        times.add(random_time(rng))
    labels = rng.sample(LABELS, len(times))
    alarms = tuple(
        Alarm(i + 1, h, m, labels[i] if rng.random() < 0.8 else "", rng.random() < 0.6)
        for i, (h, m) in enumerate(sorted(times))
    )
    return ClockState(alarms, 0, False, tuple(rng.sample(data.CITIES, 2)))


def _clock(p: Phone, state: ClockState) -> Phone:
    return p.set_app("clock", state)


def _switch(uid: int):
    def handler(p: Phone, a: Any) -> Phone:
        st: ClockState = p.apps.clock
        return _clock(
            p,
            replace(
                st,
                alarms=tuple(
                    replace(x, enabled=not x.enabled) if x.uid == uid else x for x in st.alarms
                ),
            ),
        )

    return handler


def _save_alarm(p: Phone, a: Any) -> Phone:
    top, st = p.screen, p.apps.clock
    hour, minute, label = (
        int(top.field("hour")),
        int(top.field("minute")),
        top.field("label").strip(),
    )
    if top.arg is None:
        alarms = st.alarms + (Alarm(next_uid(st.alarms), hour, minute, label),)
    else:
        alarms = tuple(
            replace(x, hour=hour, minute=minute, label=label, enabled=True)
            if x.uid == top.arg
            else x
            for x in st.alarms
        )
    alarms = tuple(sorted(alarms, key=lambda x: (x.hour, x.minute, x.uid)))
    return _clock(p, replace(st, alarms=alarms)).pop()


def _delete_alarm(uid: int):
    def handler(p: Phone, a: Any) -> Phone:
        st: ClockState = p.apps.clock
        return _clock(p, replace(st, alarms=tuple(x for x in st.alarms if x.uid != uid))).pop()

    return handler


def _edit(alarm: Alarm | None):
    if alarm is None:
        return push(Route("Clock", "alarm_edit", None, fields=(("hour", "07"), ("minute", "00"))))
    return push(
        Route(
            "Clock",
            "alarm_edit",
            alarm.uid,
            fields=(
                ("hour", f"{alarm.hour:02d}"),
                ("minute", f"{alarm.minute:02d}"),
                ("label", alarm.label),
            ),
        )
    )


def _pick(name: str):
    return lambda value: lambda p, a: close_dialog(p.set_top(p.screen.with_field(name, value)))


def _digit(d: str):
    def handler(p: Phone, a: Any) -> Phone:
        digits = p.screen.field("digits")
        if len(digits) >= 3 or (not digits and d == "0"):
            return p
        return p.set_top(p.screen.with_field("digits", digits + d))

    return handler


def _del_digit(p: Phone, a: Any) -> Phone:
    digits = p.screen.field("digits")
    return p.set_top(p.screen.with_field("digits", digits[:-1])) if digits else p


def _start(p: Phone, a: Any) -> Phone:
    minutes = int(p.screen.field("digits") or 0)
    if not minutes:
        return p
    st = replace(p.apps.clock, timer_minutes=minutes, timer_running=True)
    return _clock(p, st).set_top(p.screen.with_field("digits", ""))


def _stop(p: Phone, a: Any) -> Phone:
    return _clock(p, replace(p.apps.clock, timer_running=False))


def _add_city(city: str):
    def handler(p: Phone, a: Any) -> Phone:
        st: ClockState = p.apps.clock
        if city not in st.cities:
            p = _clock(p, replace(st, cities=st.cities + (city,)))
        return p.pop()

    return handler


def _remove_city(city: str):
    def handler(p: Phone, a: Any) -> Phone:
        st: ClockState = p.apps.clock
        return _clock(p, replace(st, cities=tuple(c for c in st.cities if c != city))).update_top(
            dialog=None
        )

    return handler


_TABS = {
    "Alarm": replace_top(Route("Clock", "alarms")),
    "Timer": replace_top(Route("Clock", "timer")),
    "World": replace_top(Route("Clock", "world")),
}
_TAB_OF = {"alarms": "Alarm", "timer": "Timer", "world": "World"}
_DIGITS = {d: _digit(d) for d in "0123456789"}
_PICK_CITY = push(Route("Clock", "city_pick"))


def view(phone: Phone, route: Route, b: ViewBuilder) -> None:
    st: ClockState = phone.apps.clock
    screen, dialog = route.screen, route.dialog
    if screen in _TAB_OF:
        if dialog is not None:  # remove a world clock
            confirm(
                b,
                "Remove city?",
                f"Remove {dialog[1]} from the world clock?",
                "Remove",
                _remove_city(dialog[1]),
            )
            return
        appbar(b, "Clock", show_back=False)
        tabs(b, ("Alarm", "Timer", "World"), _TAB_OF[screen], _TABS.__getitem__)
        if screen == "alarms":
            b.vlist(_alarm_rows(st), TABS_BOTTOM, H, route.scroll)
            fab(b, "Add alarm", _edit(None))
        elif screen == "timer":
            _timer(st, route, b)
        else:
            b.vlist(_world_rows(st), TABS_BOTTOM, H, route.scroll)
            fab(b, "Add city", _PICK_CITY)
        return
    if screen == "city_pick":
        appbar(b, "Choose a city")
        text_field(
            b, route, "search", "Search cities", (24, APPBAR_BOTTOM + 8, 1056, APPBAR_BOTTOM + 148)
        )
        query = route.field("search").strip().casefold()
        b.vlist(_city_rows(data.CITIES, query), APPBAR_BOTTOM + 160, H, route.scroll)
        return
    # alarm_edit
    if dialog is not None:
        if dialog[0] == "hour":
            grid(b, "Hour", HOURS, 6, route.field("hour"), _pick("hour"), "h")
        elif dialog[0] == "minute":
            grid(b, "Minute", MINUTES, 4, route.field("minute"), _pick("minute"), "m")
        else:
            confirm(
                b,
                "Delete alarm?",
                "This alarm will be deleted.",
                "Delete",
                _delete_alarm(route.arg),
            )
        return
    actions: list[tuple[str, str, Handler]] = [("btn:save", "Save", _save_alarm)]
    if route.arg is not None:
        actions.insert(0, ("btn:delete", "Delete", open_dialog("delete")))
    appbar(b, "New alarm" if route.arg is None else "Edit alarm", actions)
    b.add("picker", route.field("hour"), (160, 300, 500, 560), "picker:hour", open_dialog("hour"))
    b.add("text", ":", (500, 300, 580, 560))
    b.add(
        "picker",
        route.field("minute"),
        (580, 300, 920, 560),
        "picker:minute",
        open_dialog("minute"),
    )
    text_field(b, route, "label", "Label", (48, 620, 1032, 760))


@memo
def _alarm_rows(st: ClockState) -> tuple[Any, ...]:
    return tuple(_alarm_row(x) for x in st.alarms) or (text_row("No alarms"),)


@memo
def _alarm_row(x: Alarm) -> Any:
    return (
        ROW_H,
        (
            (
                "list_item",
                f"{x.time}  {x.label}".strip(),
                0,
                820,
                f"alarm:{x.uid}",
                _edit(x),
                None,
                0,
            ),
            (
                "toggle",
                f"{x.time} alarm",
                820,
                1080,
                f"switch:{x.uid}",
                _switch(x.uid),
                None,
                CHECKED if x.enabled else 0,
            ),
        ),
    )


@memo
def _world_rows(st: ClockState) -> tuple[Any, ...]:
    rows = [row(city, f"city:{city}", None, open_dialog("remove", city)) for city in st.cities]
    return tuple(rows) or (text_row("No cities"),)


@memo
def _city_rows(cities: tuple[str, ...], query: str) -> tuple[Any, ...]:
    rows = [row(c, f"city:{c}", _add_city(c)) for c in cities if query in c.casefold()]
    return tuple(rows) or (text_row("No matching cities"),)


def _timer(st: ClockState, route: Route, b: ViewBuilder) -> None:
    if st.timer_running:
        b.add("text", f"Timer running: {st.timer_minutes} min", (48, 420, 1032, 600))
        b.add("button", "Stop", (340, 700, 740, 860), "btn:stop", _stop)
        return
    digits = route.field("digits")
    b.add("text", f"{digits or '0'} min", (48, 380, 1032, 560))
    for i, d in enumerate("123456789"):
        x, y = 120 + (i % 3) * 300, 620 + (i // 3) * 220
        b.add("button", d, (x, y, x + 240, y + 180), f"key:{d}", _DIGITS[d])
    b.add("button", "0", (420, 1280, 660, 1460), "key:0", _DIGITS["0"])
    b.add("button", "Delete", (720, 1280, 960, 1460), "key:del", _del_digit)
    b.add("button", "Start", (340, 1560, 740, 1720), "btn:start", _start, enabled=bool(digits))


APP = App("Clock", "clock", Route("Clock", "alarms"), generate, view)
