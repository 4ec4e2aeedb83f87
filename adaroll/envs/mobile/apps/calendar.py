"""Calendar: a month grid (May-July 2025, prev/next arrows), a day agenda and an event editor
with an hour picker."""

from __future__ import annotations

from dataclasses import dataclass, replace
from random import Random
from typing import Any

from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.base import App
from adaroll.envs.mobile.apps.clock import HOURS
from adaroll.envs.mobile.screen import (
    APPBAR_BOTTOM,
    SELECTED,
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
    notice,
    open_dialog,
    push,
    replace_top,
    row,
    text_field,
    text_row,
)


@dataclass(frozen=True, slots=True)
class Event:
    uid: int
    month: int
    """Index into ``data.MONTHS`` (0 = May, 1 = June, 2 = July)."""
    day: int
    title: str
    hour: int

    @property
    def time(self) -> str:
        return f"{self.hour:02d}:00"


@dataclass(frozen=True, slots=True)
class CalendarState:
    events: tuple[Event, ...]

    def on(self, month: int, day: int) -> list[Event]:
        return sorted(
            (e for e in self.events if e.month == month and e.day == day),
            key=lambda e: (e.hour, e.uid),
        )

    def by_uid(self, uid: int) -> Event | None:
        return next((e for e in self.events if e.uid == uid), None)


def date_text(month: int, day: int) -> str:
    return f"{data.MONTHS[month]} {day}"


def generate(rng: Random, _made: dict[str, Any]) -> CalendarState:
    events = []
    for i in range(rng.randrange(10, 17)):
        month = rng.choice((0, 1, 1, 1, 2))
        events.append(
            Event(
                i + 1,
                month,
                rng.randrange(1, data.MONTH_DAYS[month] + 1),
                rng.choice(data.EVENT_TITLES),
                rng.randrange(8, 21),
            )
        )
    return CalendarState(tuple(events))


def _save(p: Phone, a: Any) -> Phone:
    top = p.screen
    month, day, uid = top.arg
    title, hour = top.field("title").strip(), int(top.field("hour"))
    if not title:
        return p.update_top(dialog=("required",), focus=None)
    st: CalendarState = p.apps.calendar
    if uid is None:
        events = st.events + (Event(next_uid(st.events), month, day, title, hour),)
    else:
        events = tuple(replace(e, title=title, hour=hour) if e.uid == uid else e for e in st.events)
    return p.set_app("calendar", CalendarState(events)).pop()


def _delete(uid: int):
    def handler(p: Phone, a: Any) -> Phone:
        st: CalendarState = p.apps.calendar
        return p.set_app(
            "calendar", CalendarState(tuple(e for e in st.events if e.uid != uid))
        ).pop()

    return handler


def _pick_hour(value: str):
    return lambda p, a: close_dialog(p.set_top(p.screen.with_field("hour", value)))


def _month(m: int):
    return replace_top(Route("Calendar", "month", m))


@memo
def _day_cells(st: CalendarState, m: int) -> tuple[Any, ...]:
    """The month grid's day buttons (a dot marks days with events)."""
    first = data.MONTH_FIRST_WEEKDAY[m]
    busy = {e.day for e in st.events if e.month == m}
    cells = []
    for day in range(1, data.MONTH_DAYS[m] + 1):
        cell = first + day - 1
        x, y = (cell % 7) * 154, 460 + (cell // 7) * 220
        cells.append(
            (
                "button",
                f"{day} •" if day in busy else str(day),
                (x + 2, y, x + 152, y + 200),
                f"day:{day}",
                push(Route("Calendar", "day", (m, day))),
                None,
                SELECTED if (m, day) == data.TODAY else 0,
            )
        )
    return tuple(cells)


@memo
def _day_rows(st: CalendarState, m: int, d: int) -> tuple[Any, ...]:
    rows = [
        row(
            f"{e.time}  {e.title}",
            f"event:{e.uid}",
            push(
                Route(
                    "Calendar",
                    "event",
                    (m, d, e.uid),
                    fields=(("title", e.title), ("hour", f"{e.hour:02d}")),
                )
            ),
        )
        for e in st.on(m, d)
    ]
    return tuple(rows) or (text_row("No events"),)


def view(phone: Phone, route: Route, b: ViewBuilder) -> None:
    st: CalendarState = phone.apps.calendar
    screen = route.screen
    if screen == "month":
        m = route.arg
        appbar(b, "Calendar", show_back=False)
        b.add(
            "icon",
            "Previous month",
            (0, APPBAR_BOTTOM, 180, TABS_BOTTOM),
            "nav:prev",
            _month(m - 1),
            enabled=m > 0,
        )
        b.add("text", f"{data.MONTHS[m]} 2025", (200, APPBAR_BOTTOM, 880, TABS_BOTTOM))
        b.add(
            "icon",
            "Next month",
            (900, APPBAR_BOTTOM, 1080, TABS_BOTTOM),
            "nav:next",
            _month(m + 1),
            enabled=m < len(data.MONTHS) - 1,
        )
        b.add("text", "Mon Tue Wed Thu Fri Sat Sun", (0, TABS_BOTTOM, 1080, 440))
        b.extend(_day_cells(st, m))
        return
    if screen == "day":
        m, d = route.arg
        appbar(b, date_text(m, d))
        b.vlist(_day_rows(st, m, d), APPBAR_BOTTOM, H, route.scroll)
        fab(
            b, "New event", push(Route("Calendar", "event", (m, d, None), fields=(("hour", "09"),)))
        )
        return
    # event editor
    m, d, uid = route.arg
    if route.dialog is not None:
        kind = route.dialog[0]
        if kind == "hour":
            grid(b, "Start time", HOURS, 6, route.field("hour"), _pick_hour, "h")
        elif kind == "required":
            notice(b, "Missing title", ["Give the event a title to save it."])
        else:
            confirm(b, "Delete event?", "This event will be deleted.", "Delete", _delete(uid))
        return
    actions: list[tuple[str, str, Handler]] = [("btn:save", "Save", _save)]
    if uid is not None:
        actions.insert(0, ("btn:delete", "Delete", open_dialog("delete")))
    appbar(b, "New event" if uid is None else "Edit event", actions)
    b.add("text", date_text(m, d), (48, 240, 1032, 360))
    text_field(b, route, "title", "Title", (48, 380, 1032, 520))
    b.add("text", "Starts at", (48, 560, 500, 700))
    b.add(
        "picker",
        f"{route.field('hour')}:00",
        (520, 560, 1032, 700),
        "picker:hour",
        open_dialog("hour"),
    )


APP = App("Calendar", "calendar", Route("Calendar", "month", data.TODAY[0]), generate, view)
