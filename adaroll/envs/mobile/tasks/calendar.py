"""Calendar tasks: add events (other months, start times), delete, reschedule, read times,
count a day's events, and add an event proposed in a message (cross-app)."""

from __future__ import annotations

from dataclasses import replace
from random import Random
from types import MappingProxyType as P
from typing import Any

from adaroll.actions import Action, ActionKind
from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.calendar import CalendarState, Event, date_text
from adaroll.envs.mobile.apps.messages import Message, MessagesState, Thread
from adaroll.envs.mobile.expert import Expert
from adaroll.envs.mobile.state import next_uid
from adaroll.envs.mobile.tasks.base import TaskTemplate, register
from adaroll.envs.mobile.tasks.messages import thread_path
from adaroll.envs.mobile.world import Apps


def goto_day(x: Expert, month: int, day: int, *more: Any) -> Action | None:
    """Towards the agenda of (month, day) (or a screen ``more`` hops below it)."""
    stack = x.phone.stack
    if stack and stack[0].app == "Calendar" and len(stack) == 1 and stack[0].arg != month:
        return x.press("nav:next" if stack[0].arg < month else "nav:prev")
    return x.goto("Calendar", [("month", month, None), ("day", (month, day), f"day:{day}"), *more])


def edit_event(x: Expert, title: str | None, hour: int | None) -> Action:
    """On the event editor: type the title, pick the hour, save."""
    top = x.route
    if top.dialog is not None:
        return x.press(f"h:{hour:02d}")
    if title is not None:
        step = x.fill("title", title)
        if step:
            return step
    if hour is not None and top.field("hour") != f"{hour:02d}":
        return x.press("picker:hour")
    return x.press("btn:save")


def random_day(rng: Random, month: int) -> int:
    return rng.randrange(1, data.MONTH_DAYS[month] + 1)


def has_event(world: Apps, month: int, day: int, title: str, hour: int | None = None) -> bool:
    return any(
        e.title == title and (hour is None or e.hour == hour) for e in world.calendar.on(month, day)
    )


class _AddEvent(TaskTemplate):
    apps = ("Calendar",)
    tags: tuple[str, ...] = ("text",)
    months: tuple[int, ...] = (1,)
    timed = False

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        month = rng.choice(self.months)
        day = random_day(rng, month)
        title = rng.choice([t for t in data.EVENT_TITLES if not has_event(world, month, day, t)])
        hour = rng.choice([h for h in range(7, 22) if h != 9])
        return {
            "month": month,
            "day": day,
            "date": date_text(month, day),
            "title": title,
            "hour": hour,
            "time": f"{hour:02d}:00",
        }, world

    def check(self, world: Apps, p: P) -> bool:
        return has_event(world, p["month"], p["day"], p["title"], p["hour"] if self.timed else None)

    def expert(self, x: Expert, p: P) -> Action:
        new = ("event", (p["month"], p["day"], None), "fab")
        return goto_day(x, p["month"], p["day"], new) or edit_event(
            x, p["title"], p["hour"] if self.timed else None
        )


@register
class AddEvent(_AddEvent):
    name = "calendar.add_event"
    instruction = 'Add an event "{title}" on {date}'


@register
class AddTimedEvent(_AddEvent):
    name = "calendar.add_event_time"
    tags = ("text", "picker", "dialog")
    timed = True
    instruction = 'Add an event "{title}" on {date} at {time}'


@register
class AddEventOtherMonth(_AddEvent):
    name = "calendar.add_event_other_month"
    months = (0, 2)
    instruction = 'Add an event "{title}" on {date}'


def pick_event(rng: Random, world: Apps) -> Event:
    return rng.choice(world.calendar.events)


@register
class DeleteEvent(TaskTemplate):
    name = "calendar.delete_event"
    apps = ("Calendar",)
    tags = ("dialog",)
    instruction = 'Delete the event "{title}" on {date}'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        e = pick_event(rng, world)
        return {
            "uid": e.uid,
            "month": e.month,
            "day": e.day,
            "title": e.title,
            "date": date_text(e.month, e.day),
            "count": len(world.calendar.events),
        }, world

    def check(self, world: Apps, p: P) -> bool:
        return (
            len(world.calendar.events) == p["count"] - 1 and world.calendar.by_uid(p["uid"]) is None
        )

    def expert(self, x: Expert, p: P) -> Action:
        hop = ("event", (p["month"], p["day"], p["uid"]), f"event:{p['uid']}")
        return goto_day(x, p["month"], p["day"], hop) or (
            x.press("dlg:ok") if x.route.dialog else x.press("btn:delete")
        )


@register
class Reschedule(TaskTemplate):
    name = "calendar.reschedule"
    apps = ("Calendar",)
    tags = ("picker", "dialog")
    instruction = 'Move the event "{title}" on {date} to {time}'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        e = pick_event(rng, world)
        hour = rng.choice([h for h in range(7, 22) if h != e.hour])
        return {
            "uid": e.uid,
            "month": e.month,
            "day": e.day,
            "title": e.title,
            "hour": hour,
            "date": date_text(e.month, e.day),
            "time": f"{hour:02d}:00",
        }, world

    def check(self, world: Apps, p: P) -> bool:
        e = world.calendar.by_uid(p["uid"])
        return e is not None and e.hour == p["hour"] and (e.month, e.day) == (p["month"], p["day"])

    def expert(self, x: Expert, p: P) -> Action:
        hop = ("event", (p["month"], p["day"], p["uid"]), f"event:{p['uid']}")
        return goto_day(x, p["month"], p["day"], hop) or edit_event(x, None, p["hour"])


@register
class EventTime(TaskTemplate):
    name = "calendar.event_time"
    apps = ("Calendar",)
    tags = ("answer",)
    instruction = 'At what time does "{title}" on {date} start? Answer as HH:MM.'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        e = pick_event(rng, world)
        return {
            "uid": e.uid,
            "month": e.month,
            "day": e.day,
            "title": e.title,
            "date": date_text(e.month, e.day),
        }, world

    def answer(self, world: Apps, p: P) -> str:
        return world.calendar.by_uid(p["uid"]).time

    def expert(self, x: Expert, p: P) -> Action:
        return goto_day(x, p["month"], p["day"]) or Action.done(self.answer(x.apps, p))


@register
class CountEvents(TaskTemplate):
    name = "calendar.count_events"
    apps = ("Calendar",)
    tags = ("answer",)
    heldout = True
    instruction = "How many events do you have on {date}? Answer with a number."

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        month, day = 1, random_day(rng, 1)
        events = list(world.calendar.events)
        for _ in range(rng.randrange(0, 3)):
            events.append(
                Event(
                    next_uid(tuple(events)),
                    month,
                    day,
                    rng.choice(data.EVENT_TITLES),
                    rng.randrange(8, 21),
                )
            )
        world = replace(world, calendar=CalendarState(tuple(events)))
        return {"month": month, "day": day, "date": date_text(month, day)}, world

    def answer(self, world: Apps, p: P) -> str:
        return str(len(world.calendar.on(p["month"], p["day"])))

    def expert(self, x: Expert, p: P) -> Action:
        return goto_day(x, p["month"], p["day"]) or Action.done(self.answer(x.apps, p))


@register
class EventFromMessage(TaskTemplate):
    name = "calendar.event_from_message"
    apps = ("Messages", "Calendar")
    tags = ("cross_app", "text")
    instruction = (
        'Read the last message from {contact} and add an event "{title}" to your '
        "calendar on the day they suggest"
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        thread = rng.choice(world.messages.threads)
        month, day = 1, rng.randrange(10, 31)
        ask = Message(False, f"Can we meet on {date_text(month, day)}?")
        threads = tuple(
            Thread(t.uid, t.contact, t.messages + (ask,)) if t is thread else t
            for t in world.messages.threads
        )
        world = replace(world, messages=MessagesState(threads))
        title = f"Meet {thread.contact.split()[0]}"
        return {"contact": thread.contact, "month": month, "day": day, "title": title}, world

    def check(self, world: Apps, p: P) -> bool:
        return has_event(world, p["month"], p["day"], p["title"])

    def expert(self, x: Expert, p: P) -> Action:
        if x.top is not None and x.route.app == "Calendar":
            new = ("event", (p["month"], p["day"], None), "fab")
            return goto_day(x, p["month"], p["day"], new) or edit_event(x, p["title"], None)
        return x.goto("Messages", thread_path(p["contact"])) or Action(
            ActionKind.OPEN_APP, app="Calendar"
        )
