"""Tracker: issues by status (paginated, searchable), an issue page with its fields and
comments, and a form for new issues.

State (``tracker.db``): ``issues`` (key such as ``WEB-104``, title, description, status,
priority, assignee, created/updated dates), ``comments`` and ``members`` (who can be assigned),
and ``meta``. Saving an issue stamps ``updated`` (harmless for the judge).
"""

from __future__ import annotations

from typing import Any

from ..db import one, rows
from ..framework import META_SCHEMA, App, HttpError, Request, meta, paginate

SCHEMA = (
    META_SCHEMA
    + """
CREATE TABLE members (name TEXT PRIMARY KEY, email TEXT NOT NULL);
CREATE TABLE issues (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '', status TEXT NOT NULL, priority TEXT NOT NULL,
    assignee TEXT NOT NULL DEFAULT '', created TEXT NOT NULL, updated TEXT NOT NULL);
CREATE TABLE comments (id INTEGER PRIMARY KEY, issue_id INTEGER NOT NULL REFERENCES issues(id),
    author TEXT NOT NULL, body TEXT NOT NULL, date TEXT NOT NULL);
"""
)
STATUSES = ("Open", "In progress", "Done")
PRIORITIES = ("Low", "Medium", "High", "Urgent")
PER_PAGE = 10
PROJECT = "WEB"

APP = App("tracker", "Tracker", SCHEMA)


@APP.route("GET", "issues", kind="list")
def issues(db: Any, req: Request) -> Any:
    where, args = [], []
    status = req.query.get("status", "")
    if status:
        where.append("status = ?")
        args.append(status)
    if req.query.get("q"):
        where.append("(title LIKE ? OR key LIKE ?)")
        args += [f"%{req.query['q']}%"] * 2
    cond = f"WHERE {' AND '.join(where)}" if where else ""
    sql = f"SELECT id, key, title, status, priority, assignee FROM issues {cond} ORDER BY id DESC"
    out = paginate(db, sql, tuple(args), req.page(), PER_PAGE)
    out["counts"] = {
        s: db.execute("SELECT COUNT(*) FROM issues WHERE status = ?", (s,)).fetchone()[0]
        for s in STATUSES
    }
    return out


@APP.route("GET", "issues/<id>", kind="read")
def issue(db: Any, req: Request) -> Any:
    it = one(db.execute("SELECT * FROM issues WHERE id = ?", (req.number("id"),)))
    if it is None:
        raise HttpError(404, "no such issue")
    it["comments"] = rows(
        db.execute("SELECT * FROM comments WHERE issue_id = ? ORDER BY id", (it["id"],))
    )
    it["members"] = [r[0] for r in db.execute("SELECT name FROM members ORDER BY name")]
    return it


@APP.route("GET", "members", kind="read")
def members(db: Any, req: Request) -> Any:
    return {"members": [r[0] for r in db.execute("SELECT name FROM members ORDER BY name")]}


def _check(db: Any, status: str, priority: str, assignee: str) -> None:
    if status not in STATUSES:
        raise HttpError(400, "Choose a status")
    if priority not in PRIORITIES:
        raise HttpError(400, "Choose a priority")
    if (
        assignee
        and db.execute("SELECT 1 FROM members WHERE name = ?", (assignee,)).fetchone() is None
    ):
        raise HttpError(400, f"{assignee} is not a member of the project")


@APP.route("POST", "issues", kind="write")
def create(db: Any, req: Request) -> Any:
    title = req.text("title")
    priority = str(req.body.get("priority") or "")
    assignee = str(req.body.get("assignee") or "")
    _check(db, "Open", priority, assignee)
    last = db.execute("SELECT MAX(id) FROM issues").fetchone()[0] or 0
    today = meta(db, "today")
    cur = db.execute(
        "INSERT INTO issues (key, title, description, status, priority, assignee, created, updated) "
        "VALUES (?, ?, ?, 'Open', ?, ?, ?, ?)",
        (
            f"{PROJECT}-{100 + last + 1}",
            title,
            req.text("description", required=False),
            priority,
            assignee,
            today,
            today,
        ),
    )
    return {"id": cur.lastrowid}


@APP.route("POST", "issues/<id>/update", kind="write")
def update(db: Any, req: Request) -> Any:
    it = one(db.execute("SELECT * FROM issues WHERE id = ?", (req.number("id"),)))
    if it is None:
        raise HttpError(404, "no such issue")
    status = str(req.body.get("status", it["status"]))
    priority = str(req.body.get("priority", it["priority"]))
    assignee = str(req.body.get("assignee", it["assignee"]) or "")
    _check(db, status, priority, assignee)
    db.execute(
        "UPDATE issues SET status = ?, priority = ?, assignee = ?, updated = ? WHERE id = ?",
        (status, priority, assignee, meta(db, "today"), it["id"]),
    )
    return {"ok": True}


@APP.route("POST", "issues/<id>/comment", kind="write")
def comment(db: Any, req: Request) -> Any:
    iid = req.number("id")
    if db.execute("SELECT 1 FROM issues WHERE id = ?", (iid,)).fetchone() is None:
        raise HttpError(404, "no such issue")
    db.execute(
        "INSERT INTO comments (issue_id, author, body, date) VALUES (?, ?, ?, ?)",
        (iid, meta(db, "user"), req.text("body"), meta(db, "today")),
    )
    return {"ok": True}
