"""Calendar tasks: create events (one or two, work or personal), move, retime, delete."""

from __future__ import annotations

import calendar as stdcal
import datetime as dt
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from adaroll.actions import Action
from adaroll.envs.apps.tasks.draws import among, derived, row_of
from adaroll.envs.apps.tasks.judge import Expect, Text
from adaroll.envs.apps.tasks.plan import (
    DIALOG_DELETE,
    Choose,
    Ctx,
    ExpertError,
    Fill,
    Find,
    Go,
    Loc,
    OpenApp,
    Shows,
    Step,
    Tap,
    button,
    field_,
)
from adaroll.envs.apps.tasks.rows import Opens, Params, Row, Work
from adaroll.envs.apps.tasks.world import TODAY, World

MONTHS = tuple(stdcal.month_name[1:])
DURATIONS = {"30 min": 30, "1 hour": 60, "2 hours": 120}
NEW_TITLES = (
    "Design sprint kickoff",
    "Coffee with Priya",
    "Budget deep dive",
    "Team lunch",
    "Quarterly review",
    "Piano lesson",
    "Release party",
    "Interview debrief",
    "Doctor visit",
    "Tennis match",
)
LOCATIONS = ("Room 3C", "Main office", "Cafe Luna", "City library", "Room 1A")


def monday(day: dt.date) -> dt.date:
    return day - dt.timedelta(days=day.weekday())


START = ("calendar", f"#/week/{monday(TODAY).isoformat()}")


def spoken(iso: str) -> str:
    """``"2024-03-18"`` as ``"Monday, March 18"``."""
    day = dt.date.fromisoformat(iso)
    return f"{day.strftime('%A')}, {MONTHS[day.month - 1]} {day.day}"


def end_of(start: str, minutes: int) -> str:
    total = int(start[:2]) * 60 + int(start[3:]) + minutes
    return f"{total // 60:02d}:{total % 60:02d}"


@dataclass(frozen=True)
class Slot:
    """When a new event is: ``date`` (ISO), ``start`` ("09:00"), ``duration`` (a key of
    :data:`DURATIONS`); with the words and the end time an instruction and a goal need."""

    date: str
    start: str
    duration: str

    @property
    def day(self) -> str:
        return spoken(self.date)

    @property
    def end(self) -> str:
        return end_of(self.start, DURATIONS[self.duration])


def slot(w: World, rng: random.Random, p: Params) -> Slot:
    """A start within the next 30 days, on the hour from 8 to 16, for a random duration."""
    date = (TODAY + dt.timedelta(days=rng.randint(1, 30))).isoformat()
    start = f"{rng.randint(8, 16):02d}:00"
    return Slot(date, start, rng.choice(tuple(DURATIONS)))


def hour_slot(w: World, rng: random.Random, p: Params) -> Slot:
    """A :func:`slot` made one hour long (its duration is drawn all the same)."""
    return replace(slot(w, rng, p), duration="1 hour")


def two_titles(w: World, rng: random.Random, p: Params) -> list[str]:
    return rng.sample(NEW_TITLES, 2)


def _week_index(day: dt.date) -> int:
    return (monday(day) - monday(TODAY)).days // 7


def event_week(eid: int) -> Callable[[Ctx], int]:
    def page(ctx: Ctx) -> int:
        ev = ctx.state()["calendar"]["events"][str(eid)]
        return _week_index(dt.date.fromisoformat(ev["date"]))

    return page


def shown_week(ctx: Ctx) -> int:
    h = ctx.hash
    if not h.startswith("#/week/"):
        raise ExpertError(f"not on a week view ({h})")
    return _week_index(dt.date.fromisoformat(h[len("#/week/") : len("#/week/") + 10]))


def open_event(ev: dict[str, Any], *later: str) -> tuple[Step, ...]:
    return (
        OpenApp("calendar", "Calendar"),
        Go(("#/week/",), Loc(".side-link", text="This week")),
        Find(
            Loc(f'a.event[href="#/event/{ev["id"]}"]'),
            (f"#/event/{ev['id']}", *later),
            event_week(ev["id"]),
            shown_week,
            button("Next week ›"),
            button("‹ Previous week"),
        ),
    )


def at_event(name: str, *later: str) -> Opens:
    """The page of the event drawn as ``name``; ``later``: views past it (its edit form)."""
    return Opens(open_event, name, later)


@dataclass(frozen=True)
class PickDate:
    """The form's month picker holds ``date``: page months, then tap the day."""

    nav: ClassVar[bool] = False
    date: str

    def done(self, ctx: Ctx) -> bool:
        info = ctx.info(Loc(".picker"))
        return info is not None and info["data"] == self.date

    def act(self, ctx: Ctx) -> Action:
        day = dt.date.fromisoformat(self.date)
        shown = str(ctx.js("document.querySelector('.month-name').textContent"))
        name, year = shown.split()
        have = (int(year), MONTHS.index(name) + 1)
        want = (day.year, day.month)
        if want > have:
            return ctx.tap(button("Next month"))
        if want < have:
            return ctx.tap(button("Previous month"))
        return ctx.tap(Loc("button.dayc", text=str(day.day)))


def created(milestone: str, title: str, when: str, location: str | None, calendar: str) -> Work:
    """The event titled as drawn in ``title``, at the slot drawn as ``when``, at the location
    drawn as ``location`` (None: none given), created through the New event form."""
    values: dict[str, Any] = {
        "title": Text(f"{{{title}}}"),
        "date": f"{{{when}.date}}",
        "start": f"{{{when}.start}}",
        "end": f"{{{when}.end}}",
        "calendar": calendar,
    }
    steps: list[Step] = [
        OpenApp("calendar", "Calendar"),
        Go(("#/new",), button("New event")),
        Fill(field_("Title"), f"{{{title}}}"),
        PickDate(f"{{{when}.date}}"),
        Choose(Loc('[role="radio"]', text=f"{{{when}.start}}")),
        Choose(Loc('[role="radio"]', text=f"{{{when}.duration}}")),
    ]
    if location is not None:
        values["location"] = Text(f"{{{location}}}")
        steps.append(Fill(field_("Location"), f"{{{location}}}"))
    if calendar != "Work":
        steps.append(Choose(Loc('[role="radio"]', text=calendar)))
    steps.append(Tap(button("Save")))
    new = Expect("insert", "calendar", "events", values, what=f"the event {{{title}!r}}")
    return Work(milestone, (new,), tuple(steps))


def deleted(name: str) -> Work:
    """The event drawn as ``name`` deleted (its page, Delete, confirmed)."""
    return Work(
        "deleted",
        (Expect("delete", "calendar", "events", key=f"{{{name}[id]}}", what="the event deleted"),),
        (
            at_event(name),
            Tap(button("Delete"), until=Shows(DIALOG_DELETE)),
            Tap(DIALOG_DELETE),
        ),
    )


def other_day(w: World, rng: random.Random, p: Params) -> str:
    """A date within 25 days other than that of the event drawn as ``ev``."""
    new = p["ev"]["date"]
    while new == p["ev"]["date"]:
        new = (TODAY + dt.timedelta(days=rng.randint(1, 25))).isoformat()
    return str(new)


def other_hour(w: World, rng: random.Random, p: Params) -> str:
    """A start on the hour from 8 to 16 other than that of the event drawn as ``ev``."""
    start = p["ev"]["start"]
    while start == p["ev"]["start"]:
        start = f"{rng.randint(8, 16):02d}:00"
    return str(start)


def hours_long(p: Params) -> int:
    return int(p["ev"]["end"][:2]) - int(p["ev"]["start"][:2])


def edited(name: str, milestone: str, what: str, values: dict[str, Any], *form: Step) -> Work:
    """The event drawn as ``name`` changed through its edit form (``form``, then Save)."""
    edit = f"#/edit/{{{name}[id]}}"
    return Work(
        milestone,
        (Expect("update", "calendar", "events", values, key=f"{{{name}[id]}}", what=what),),
        (at_event(name, edit), Go((edit,), button("Edit")), *form, Tap(button("Save"))),
    )


ROWS = (
    Row(
        "calendar.create",
        "create an event with a date, time, duration and place",
        max_steps=18,
        start=START,
        draws={"title": among(*NEW_TITLES), "location": among(*LOCATIONS), "when": slot},
        instruction='Create an event "{title}" on {when.day} at {when.start} for {when.duration} '
        'in "{location}".',
        plan=(created("created", "title", "when", "location", "Work"),),
    ),
    Row(
        "calendar.create_personal",
        "create a personal event",
        max_steps=16,
        start=START,
        draws={"title": among(*NEW_TITLES), "when": slot},
        instruction='Add "{title}" to your personal calendar on {when.day} at {when.start} for '
        "{when.duration}.",
        plan=(created("created", "title", "when", None, "Personal"),),
    ),
    Row(
        "calendar.two_events",
        "create two events",
        max_steps=28,
        start=START,
        draws={
            ("t1", "t2"): two_titles,
            "w1": hour_slot,
            "w2": hour_slot,
        },
        instruction='Schedule "{t1}" on {w1.day} at {w1.start} and "{t2}" on {w2.day} at '
        "{w2.start}, each for 1 hour.",
        plan=(
            created("first", "t1", "w1", None, "Work"),
            created("second", "t2", "w2", None, "Work"),
        ),
    ),
    Row(
        "calendar.reschedule",
        "move an event to another day",
        max_steps=14,
        start=START,
        draws={
            "ev": row_of("calendar", "events"),
            "new": other_day,
            "new_day": derived(lambda p: spoken(p["new"])),
        },
        instruction='Move "{ev[title]}" to {new_day}, at the same time.',
        plan=(
            edited(
                "ev",
                "moved",
                "the event's new date",
                {"date": "{new}", "start": "{ev[start]}", "end": "{ev[end]}"},
                PickDate("{new}"),
            ),
        ),
    ),
    Row(
        "calendar.change_time",
        "start an event at another hour",
        max_steps=12,
        start=START,
        draws={
            "ev": row_of("calendar", "events"),
            "start": other_hour,
            "duration": derived(lambda p: {1: "1 hour", 2: "2 hours"}[hours_long(p)]),
            "end": derived(lambda p: end_of(p["start"], 60 * hours_long(p))),
        },
        instruction='Make "{ev[title]}" start at {start}, keeping its length.',
        plan=(
            edited(
                "ev",
                "retimed",
                "the event's new time",
                {"date": "{ev[date]}", "start": "{start}", "end": "{end}"},
                Choose(Loc('[role="radio"]', text="{start}")),
                Choose(Loc('[role="radio"]', text="{duration}")),
            ),
        ),
        heldout=True,
    ),
    Row(
        "calendar.delete",
        "delete an event",
        max_steps=12,
        start=START,
        draws={"ev": row_of("calendar", "events")},
        instruction='Delete the event "{ev[title]}" from your calendar.',
        plan=(deleted("ev"),),
    ),
)
