"""Mail: folders, a paginated message list, messages, search, compose/reply/forward, moving.

State (``mail.db``): ``messages`` (one row per message: folder, sender, recipient, subject,
body, date, read, starred, the message it replies to), ``folders`` (system folders and the
user's own: Receipts, Travel, Projects) and ``meta`` (today's date, the user's name/address).
Opening a message marks it read (a write the tasks' judge treats as harmless).
"""

from __future__ import annotations

from typing import Any

from ..db import one, rows
from ..framework import META_SCHEMA, App, HttpError, Request, meta, paginate

SCHEMA = (
    META_SCHEMA
    + """
CREATE TABLE folders (name TEXT PRIMARY KEY, position INTEGER NOT NULL,
                      custom INTEGER NOT NULL DEFAULT 0);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY, folder TEXT NOT NULL REFERENCES folders(name),
    sender TEXT NOT NULL, sender_email TEXT NOT NULL, recipient TEXT NOT NULL,
    subject TEXT NOT NULL, body TEXT NOT NULL, date TEXT NOT NULL,
    read INTEGER NOT NULL DEFAULT 0, starred INTEGER NOT NULL DEFAULT 0, reply_to INTEGER);
"""
)
PER_PAGE = 10
LIST_COLUMNS = "id, folder, sender, sender_email, recipient, subject, date, read, starred"
ORDER = "ORDER BY date DESC, id DESC"

APP = App("mail", "Mail", SCHEMA)


@APP.route("GET", "folders", kind="read")
def folders(db: Any, req: Request) -> Any:
    out = rows(db.execute("SELECT name, custom FROM folders ORDER BY position"))
    for f in out:
        f["unread"] = db.execute(
            "SELECT COUNT(*) FROM messages WHERE folder = ? AND read = 0", (f["name"],)
        ).fetchone()[0]
    starred = db.execute(
        "SELECT COUNT(*) FROM messages WHERE starred = 1 AND folder != 'Trash'"
    ).fetchone()[0]
    return {"folders": out, "starred": starred, "user": meta(db, "user")}


@APP.route("GET", "messages", kind="list")
def list_messages(db: Any, req: Request) -> Any:
    folder = req.query.get("folder", "Inbox")
    if folder == "Starred":
        sql = f"SELECT {LIST_COLUMNS} FROM messages WHERE starred = 1 AND folder != 'Trash' {ORDER}"
        return paginate(db, sql, (), req.page(), PER_PAGE)
    if db.execute("SELECT 1 FROM folders WHERE name = ?", (folder,)).fetchone() is None:
        raise HttpError(404, f"no folder {folder}")
    sql = f"SELECT {LIST_COLUMNS} FROM messages WHERE folder = ? {ORDER}"
    return paginate(db, sql, (folder,), req.page(), PER_PAGE)


@APP.route("GET", "search", kind="search")
def search(db: Any, req: Request) -> Any:
    q = req.query.get("q", "").strip()
    if not q:
        return {"items": [], "page": 1, "pages": 1, "total": 0}
    like = f"%{q}%"
    sql = (
        f"SELECT {LIST_COLUMNS} FROM messages WHERE folder != 'Trash' AND "
        f"(subject LIKE ? OR sender LIKE ? OR sender_email LIKE ? OR body LIKE ?) {ORDER}"
    )
    return paginate(db, sql, (like, like, like, like), req.page(), PER_PAGE)


@APP.route("GET", "messages/<id>", kind="read")
def get_message(db: Any, req: Request) -> Any:
    mid = req.number("id")
    msg = one(db.execute("SELECT * FROM messages WHERE id = ?", (mid,)))
    if msg is None:
        raise HttpError(404, "no such message")
    if not msg["read"]:
        db.execute("UPDATE messages SET read = 1 WHERE id = ?", (mid,))
        msg["read"] = 1
    msg["folders"] = [r[0] for r in db.execute("SELECT name FROM folders ORDER BY position")]
    return msg


@APP.route("POST", "messages/<id>/update", kind="write")
def update_message(db: Any, req: Request) -> Any:
    mid = req.number("id")
    if db.execute("SELECT 1 FROM messages WHERE id = ?", (mid,)).fetchone() is None:
        raise HttpError(404, "no such message")
    for flag in ("starred", "read"):
        if flag in req.body:
            db.execute(
                f"UPDATE messages SET {flag} = ? WHERE id = ?", (int(bool(req.body[flag])), mid)
            )
    if "folder" in req.body:
        folder = str(req.body["folder"])
        if db.execute("SELECT 1 FROM folders WHERE name = ?", (folder,)).fetchone() is None:
            raise HttpError(400, f"no folder {folder}")
        db.execute("UPDATE messages SET folder = ? WHERE id = ?", (folder, mid))
    return {"ok": True}


@APP.route("POST", "send", kind="write")
def send(db: Any, req: Request) -> Any:
    to = req.text("to")
    if "@" not in to:
        raise HttpError(400, f"{to} is not an e-mail address")
    reply_to = req.body.get("reply_to")
    cur = db.execute(
        "INSERT INTO messages (folder, sender, sender_email, recipient, subject, body, date, "
        "read, starred, reply_to) VALUES ('Sent', ?, ?, ?, ?, ?, ?, 1, 0, ?)",
        (
            meta(db, "user"),
            meta(db, "email"),
            to,
            req.text("subject"),
            req.text("body", required=False),
            meta(db, "today"),
            int(reply_to) if reply_to else None,
        ),
    )
    return {"id": cur.lastrowid}
