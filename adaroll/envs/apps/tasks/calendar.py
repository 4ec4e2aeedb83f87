"""Calendar tasks: create events (one or two, work or personal), move, retime, delete."""

from __future__ import annotations

import calendar as stdcal
import datetime as dt
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from adaroll.actions import Action
from adaroll.envs.apps.tasks.base import Spec, template
from adaroll.envs.apps.tasks.judge import Expect, Text
from adaroll.envs.apps.tasks.plan import (
    Choose,
    Ctx,
    ExpertError,
    Fill,
    Find,
    Go,
    Loc,
    Milestone,
    OpenApp,
    Step,
    Tap,
    button,
    field_,
)
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


def spoken(iso: str) -> str:
    """``"2024-03-18"`` as ``"Monday, March 18"``."""
    day = dt.date.fromisoformat(iso)
    return f"{day.strftime('%A')}, {MONTHS[day.month - 1]} {day.day}"


def start_view() -> tuple[str, str]:
    return ("calendar", f"#/week/{monday(TODAY).isoformat()}")


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


def end_of(start: str, minutes: int) -> str:
    total = int(start[:2]) * 60 + int(start[3:]) + minutes
    return f"{total // 60:02d}:{total % 60:02d}"


def new_event_steps(
    title: str, date: str, start: str, duration: str, location: str, calendar: str
) -> tuple[Step, ...]:
    steps: list[Step] = [
        OpenApp("calendar", "Calendar"),
        Go(("#/new",), button("New event")),
        Fill(field_("Title"), title),
        PickDate(date),
        Choose(Loc('[role="radio"]', text=start)),
        Choose(Loc('[role="radio"]', text=duration)),
    ]
    if location:
        steps.append(Fill(field_("Location"), location))
    if calendar != "Work":
        steps.append(Choose(Loc('[role="radio"]', text=calendar)))
    steps.append(Tap(button("Save")))
    return tuple(steps)


def created(
    title: str, date: str, start: str, duration: str, location: str | None, calendar: str
) -> Expect:
    values: dict[str, Any] = {
        "title": Text(title),
        "date": date,
        "start": start,
        "end": end_of(start, DURATIONS[duration]),
        "calendar": calendar,
    }
    if location is not None:
        values["location"] = Text(location)
    return Expect("insert", "calendar", "events", values, what=f"the event {title!r}")


def _slot(rng: random.Random) -> tuple[str, str, str]:
    date = (TODAY + dt.timedelta(days=rng.randint(1, 30))).isoformat()
    start = f"{rng.randint(8, 16):02d}:00"
    return date, start, rng.choice(tuple(DURATIONS))


@template(
    "calendar.create",
    apps=("calendar",),
    max_steps=18,
    summary="create an event with a date, time, duration and place",
)
def create(w: World, rng: random.Random) -> Spec:
    title, location = rng.choice(NEW_TITLES), rng.choice(LOCATIONS)
    date, start, duration = _slot(rng)
    return Spec(
        f'Create an event "{title}" on {spoken(date)} at {start} for {duration} in "{location}".',
        start_view(),
        (
            Milestone(
                "created",
                (created(title, date, start, duration, location, "Work"),),
                new_event_steps(title, date, start, duration, location, "Work"),
            ),
        ),
    )


@template(
    "calendar.create_personal", apps=("calendar",), max_steps=16, summary="create a personal event"
)
def create_personal(w: World, rng: random.Random) -> Spec:
    title = rng.choice(NEW_TITLES)
    date, start, duration = _slot(rng)
    return Spec(
        f'Add "{title}" to your personal calendar on {spoken(date)} at {start} for {duration}.',
        start_view(),
        (
            Milestone(
                "created",
                (created(title, date, start, duration, None, "Personal"),),
                new_event_steps(title, date, start, duration, "", "Personal"),
            ),
        ),
    )


@template("calendar.two_events", apps=("calendar",), max_steps=28, summary="create two events")
def two_events(w: World, rng: random.Random) -> Spec:
    (t1, t2), (d1, s1, _), (d2, s2, _) = rng.sample(NEW_TITLES, 2), _slot(rng), _slot(rng)
    return Spec(
        f'Schedule "{t1}" on {spoken(d1)} at {s1} and "{t2}" on {spoken(d2)} at {s2}, '
        "each for 1 hour.",
        start_view(),
        (
            Milestone(
                "first",
                (created(t1, d1, s1, "1 hour", None, "Work"),),
                new_event_steps(t1, d1, s1, "1 hour", "", "Work"),
            ),
            Milestone(
                "second",
                (created(t2, d2, s2, "1 hour", None, "Work"),),
                new_event_steps(t2, d2, s2, "1 hour", "", "Work"),
            ),
        ),
    )


def _event(w: World, rng: random.Random) -> dict[str, Any]:
    return rng.choice(w.rows("calendar", "events"))


@template(
    "calendar.reschedule", apps=("calendar",), max_steps=14, summary="move an event to another day"
)
def reschedule(w: World, rng: random.Random) -> Spec:
    ev = _event(w, rng)
    new = ev["date"]
    while new == ev["date"]:
        new = (TODAY + dt.timedelta(days=rng.randint(1, 25))).isoformat()
    return Spec(
        f'Move "{ev["title"]}" to {spoken(new)}, at the same time.',
        start_view(),
        (
            Milestone(
                "moved",
                (
                    Expect(
                        "update",
                        "calendar",
                        "events",
                        {"date": new, "start": ev["start"], "end": ev["end"]},
                        key=str(ev["id"]),
                        what="the event's new date",
                    ),
                ),
                (
                    *open_event(ev, f"#/edit/{ev['id']}"),
                    Go((f"#/edit/{ev['id']}",), button("Edit")),
                    PickDate(new),
                    Tap(button("Save")),
                ),
            ),
        ),
    )


@template(
    "calendar.change_time",
    apps=("calendar",),
    max_steps=12,
    summary="start an event at another hour",
    heldout=True,
)
def change_time(w: World, rng: random.Random) -> Spec:
    ev = _event(w, rng)
    length = int(ev["end"][:2]) - int(ev["start"][:2])
    start = ev["start"]
    while start == ev["start"]:
        start = f"{rng.randint(8, 16):02d}:00"
    duration = {1: "1 hour", 2: "2 hours"}[length]
    return Spec(
        f'Make "{ev["title"]}" start at {start}, keeping its length.',
        start_view(),
        (
            Milestone(
                "retimed",
                (
                    Expect(
                        "update",
                        "calendar",
                        "events",
                        {"date": ev["date"], "start": start, "end": end_of(start, 60 * length)},
                        key=str(ev["id"]),
                        what="the event's new time",
                    ),
                ),
                (
                    *open_event(ev, f"#/edit/{ev['id']}"),
                    Go((f"#/edit/{ev['id']}",), button("Edit")),
                    Choose(Loc('[role="radio"]', text=start)),
                    Choose(Loc('[role="radio"]', text=duration)),
                    Tap(button("Save")),
                ),
            ),
        ),
    )


@template("calendar.delete", apps=("calendar",), max_steps=12, summary="delete an event")
def delete(w: World, rng: random.Random) -> Spec:
    ev = _event(w, rng)
    return Spec(
        f'Delete the event "{ev["title"]}" from your calendar.',
        start_view(),
        (
            Milestone(
                "deleted",
                (
                    Expect(
                        "delete", "calendar", "events", key=str(ev["id"]), what="the event deleted"
                    ),
                ),
                delete_steps(ev),
            ),
        ),
    )


def delete_steps(ev: dict[str, Any]) -> tuple[Step, ...]:
    dialog = Loc(".dialog button", text="Delete")
    return (
        *open_event(ev),
        Tap(button("Delete"), until=lambda c: c.visible(dialog)),
        Tap(dialog),
    )
