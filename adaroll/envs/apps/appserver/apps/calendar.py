"""Calendar: a week view with navigation, events, and a form to create or edit one.

State (``calendar.db``): ``events`` (title, date, start and end as ``HH:MM``, location, which
calendar - Work or Personal) and ``meta``. Deleting an event removes its row.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from ..db import one, rows
from ..framework import META_SCHEMA, App, HttpError, Request, meta

SCHEMA = (
    META_SCHEMA
    + """
CREATE TABLE events (id INTEGER PRIMARY KEY, title TEXT NOT NULL, date TEXT NOT NULL,
    start TEXT NOT NULL, end TEXT NOT NULL, location TEXT NOT NULL DEFAULT '',
    calendar TEXT NOT NULL DEFAULT 'Work');
"""
)
CALENDARS = ("Work", "Personal")
_TIME = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")

APP = App("calendar", "Calendar", SCHEMA)


def _monday(text: str) -> dt.date:
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise HttpError(400, f"bad date {text!r}") from None
    return day - dt.timedelta(days=day.weekday())


@APP.route("GET", "week", kind="list")
def week(db: Any, req: Request) -> Any:
    today = meta(db, "today")
    start = _monday(req.query.get("of") or today)
    end = start + dt.timedelta(days=6)
    events = rows(
        db.execute(
            "SELECT * FROM events WHERE date BETWEEN ? AND ? ORDER BY date, start, id",
            (start.isoformat(), end.isoformat()),
        )
    )
    return {"monday": start.isoformat(), "today": today, "events": events}


@APP.route("GET", "events/<id>", kind="read")
def get_event(db: Any, req: Request) -> Any:
    ev = one(db.execute("SELECT * FROM events WHERE id = ?", (req.number("id"),)))
    if ev is None:
        raise HttpError(404, "no such event")
    return ev


def _fields(req: Request) -> tuple[str, str, str, str, str, str]:
    title = req.text("title")
    date = str(req.body.get("date") or "")
    try:
        dt.date.fromisoformat(date)
    except ValueError:
        raise HttpError(400, "Choose a date") from None
    start, end = str(req.body.get("start") or ""), str(req.body.get("end") or "")
    if not _TIME.match(start) or not _TIME.match(end):
        raise HttpError(400, "Choose a start time and a duration")
    if end <= start:
        raise HttpError(400, "The event must end after it starts")
    calendar = str(req.body.get("calendar") or "Work")
    if calendar not in CALENDARS:
        raise HttpError(400, "Choose a calendar")
    return title, date, start, end, req.text("location", required=False), calendar


@APP.route("POST", "events", kind="write")
def create_event(db: Any, req: Request) -> Any:
    cur = db.execute(
        "INSERT INTO events (title, date, start, end, location, calendar) VALUES (?, ?, ?, ?, ?, ?)",
        _fields(req),
    )
    return {"id": cur.lastrowid}


@APP.route("POST", "events/<id>/update", kind="write")
def update_event(db: Any, req: Request) -> Any:
    eid = req.number("id")
    if db.execute("SELECT 1 FROM events WHERE id = ?", (eid,)).fetchone() is None:
        raise HttpError(404, "no such event")
    db.execute(
        "UPDATE events SET title = ?, date = ?, start = ?, end = ?, location = ?, calendar = ? "
        "WHERE id = ?",
        (*_fields(req), eid),
    )
    return {"id": eid}


@APP.route("POST", "events/<id>/delete", kind="write")
def delete_event(db: Any, req: Request) -> Any:
    db.execute("DELETE FROM events WHERE id = ?", (req.number("id"),))
    return {"ok": True}
