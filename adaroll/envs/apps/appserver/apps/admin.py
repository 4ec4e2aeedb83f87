"""Admin: the organisation's user accounts (paginated, searchable), a user page (role, team,
active), invitations, and organisation settings.

State (``admin.db``): ``users`` (name, email, role, team, active), ``invites`` (email, role,
team), ``settings`` (organisation name, session timeout, two-factor and sign-up switches, the
default role) and ``meta``.
"""

from __future__ import annotations

from typing import Any

from ..db import one, rows
from ..framework import META_SCHEMA, App, HttpError, Request, paginate

SCHEMA = (
    META_SCHEMA
    + """
CREATE TABLE teams (name TEXT PRIMARY KEY);
CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL, team TEXT NOT NULL REFERENCES teams(name), active INTEGER NOT NULL);
CREATE TABLE invites (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE, role TEXT NOT NULL,
    team TEXT NOT NULL REFERENCES teams(name));
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
)
ROLES = ("Viewer", "Editor", "Admin")
PER_PAGE = 10

APP = App("admin", "Admin", SCHEMA)


def _teams(db: Any) -> list[str]:
    return [r[0] for r in db.execute("SELECT name FROM teams ORDER BY name")]


@APP.route("GET", "users", kind="list")
def users(db: Any, req: Request) -> Any:
    q = req.query.get("q", "").strip()
    sql = "SELECT id, name, email, role, team, active FROM users"
    args: tuple[Any, ...] = ()
    if q:
        sql += " WHERE name LIKE ? OR email LIKE ?"
        args = (f"%{q}%", f"%{q}%")
    return paginate(db, sql + " ORDER BY name", args, req.page(), PER_PAGE)


@APP.route("GET", "users/<id>", kind="read")
def user(db: Any, req: Request) -> Any:
    u = one(db.execute("SELECT * FROM users WHERE id = ?", (req.number("id"),)))
    if u is None:
        raise HttpError(404, "no such user")
    u["teams"] = _teams(db)
    return u


@APP.route("POST", "users/<id>/update", kind="write")
def update_user(db: Any, req: Request) -> Any:
    u = one(db.execute("SELECT * FROM users WHERE id = ?", (req.number("id"),)))
    if u is None:
        raise HttpError(404, "no such user")
    role = str(req.body.get("role", u["role"]))
    team = str(req.body.get("team", u["team"]))
    if role not in ROLES:
        raise HttpError(400, "Choose a role")
    if team not in _teams(db):
        raise HttpError(400, "Choose a team")
    active = int(bool(req.body.get("active", u["active"])))
    db.execute(
        "UPDATE users SET role = ?, team = ?, active = ? WHERE id = ?",
        (role, team, active, u["id"]),
    )
    return {"ok": True}


@APP.route("GET", "invites", kind="list")
def invites(db: Any, req: Request) -> Any:
    return {"items": rows(db.execute("SELECT * FROM invites ORDER BY email")), "teams": _teams(db)}


@APP.route("POST", "invites", kind="write")
def invite(db: Any, req: Request) -> Any:
    email = req.text("email")
    if "@" not in email:
        raise HttpError(400, f"{email} is not an e-mail address")
    if db.execute(
        "SELECT 1 FROM users WHERE email = ? UNION SELECT 1 FROM invites WHERE email = ?",
        (email, email),
    ).fetchone():
        raise HttpError(400, f"{email} already has an account or an invitation")
    role, team = str(req.body.get("role") or ""), str(req.body.get("team") or "")
    if role not in ROLES:
        raise HttpError(400, "Choose a role")
    if team not in _teams(db):
        raise HttpError(400, "Choose a team")
    cur = db.execute(
        "INSERT INTO invites (email, role, team) VALUES (?, ?, ?)", (email, role, team)
    )
    return {"id": cur.lastrowid}


@APP.route("POST", "invites/<id>/revoke", kind="write")
def revoke(db: Any, req: Request) -> Any:
    db.execute("DELETE FROM invites WHERE id = ?", (req.number("id"),))
    return {"ok": True}


@APP.route("GET", "settings", kind="read")
def settings(db: Any, req: Request) -> Any:
    return {"settings": {r[0]: r[1] for r in db.execute("SELECT key, value FROM settings")}}


@APP.route("POST", "settings", kind="write")
def save_settings(db: Any, req: Request) -> Any:
    known = {r[0] for r in db.execute("SELECT key FROM settings")}
    for key, value in req.body.items():
        if key not in known:
            raise HttpError(400, f"unknown setting {key}")
        text = ("1" if value else "0") if isinstance(value, bool) else str(value).strip()
        if key == "session_timeout" and not (text.isdigit() and 5 <= int(text) <= 1440):
            raise HttpError(400, "Session timeout must be 5 to 1440 minutes")
        if key == "org_name" and not text:
            raise HttpError(400, "Organisation name is required")
        db.execute("UPDATE settings SET value = ? WHERE key = ?", (text, key))
    return {"ok": True}
