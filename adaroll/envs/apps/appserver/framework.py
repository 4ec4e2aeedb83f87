"""What an app's backend declares: its name, its SQLite schema and its JSON API routes.

An app module (``apps/<name>.py``) builds one :class:`App` and decorates its handlers::

    APP = App("notes", "Notes", SCHEMA)

    @APP.route("GET", "notes/<id>", kind="read")
    def get_note(db, req):
        return one(db.execute("SELECT * FROM notes WHERE id = ?", (req.number("id"),)))

A handler gets a fresh connection (:func:`.db.connect`: committed on success) and a
:class:`Request`; it returns a JSON-ready value or raises :class:`HttpError`. ``kind`` picks the
simulated server latency (:data:`LATENCY_MS`), applied before the handler runs.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

LATENCY_MS = {"list": 60, "read": 30, "write": 80, "search": 100}
"""Server latency in milliseconds by route kind (times ``latency_scale``), the same on every
request: lists (a page of messages, products, issues) 60, one record 30, a write 80, a search
100. Each is below the env's settle bound (1 s), so an observation is taken after the data
arrived (docs/apps.md, "Latency")."""


class HttpError(Exception):
    """An error answer: ``status`` and a message the front end shows in a toast."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Request:
    """One API request: path parameters, query parameters and the JSON body."""

    params: dict[str, str]
    query: dict[str, str]
    body: dict[str, Any]

    def number(self, name: str) -> int:
        """Path parameter ``name`` as an int (404 when it is not one)."""
        try:
            return int(self.params[name])
        except (KeyError, ValueError):
            raise HttpError(404, f"bad {name}") from None

    def page(self) -> int:
        """The ``page`` query parameter (1-based; 1 when absent or bad)."""
        try:
            return max(1, int(self.query.get("page", "1")))
        except ValueError:
            return 1

    def text(self, name: str, *, required: bool = True) -> str:
        """Body field ``name`` as stripped text (400 when required and empty)."""
        value = str(self.body.get(name, "") or "").strip()
        if required and not value:
            raise HttpError(400, f"{name.replace('_', ' ').capitalize()} is required")
        return value


Handler = Callable[[sqlite3.Connection, Request], Any]


@dataclass
class Route:
    method: str
    parts: tuple[str, ...]
    kind: str
    handler: Handler

    def match(self, method: str, parts: list[str]) -> dict[str, str] | None:
        if method != self.method or len(parts) != len(self.parts):
            return None
        params = {}
        for want, got in zip(self.parts, parts, strict=True):
            if want.startswith("<") and want.endswith(">"):
                params[want[1:-1]] = got
            elif want != got:
                return None
        return params


@dataclass
class App:
    """One app's backend: name (URL-safe), title (shown), schema and routes."""

    name: str
    title: str
    schema: str
    routes: list[Route] = field(default_factory=list)

    def route(self, method: str, path: str, *, kind: str) -> Callable[[Handler], Handler]:
        if kind not in LATENCY_MS:
            raise ValueError(f"route kind must be one of {', '.join(LATENCY_MS)}, got {kind!r}")

        def add(fn: Handler) -> Handler:
            self.routes.append(Route(method, tuple(path.strip("/").split("/")), kind, fn))
            return fn

        return add

    def find(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        parts = path.strip("/").split("/")
        for r in self.routes:
            params = r.match(method, parts)
            if params is not None:
                return r, params
        return None


def paginate(
    db: sqlite3.Connection, sql: str, args: tuple[Any, ...], page: int, per_page: int
) -> dict[str, Any]:
    """One page of ``sql``'s rows: ``{"items", "page", "pages", "total"}`` (``page`` clamped to
    the last page)."""
    total = db.execute(f"SELECT COUNT(*) FROM ({sql})", args).fetchone()[0]
    pages = max(1, -(-total // per_page))
    page = min(page, pages)
    cur = db.execute(f"{sql} LIMIT ? OFFSET ?", (*args, per_page, (page - 1) * per_page))
    return {
        "items": [dict(r) for r in cur.fetchall()],
        "page": page,
        "pages": pages,
        "total": total,
    }


def meta(db: sqlite3.Connection, key: str, default: str = "") -> str:
    """A value of the app's ``meta`` table (every app has one: ``today``, the user's name)."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return str(row[0]) if row is not None else default


META_SCHEMA = "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"
"""Every app's key-value table: ``today`` (the world's date, ISO), ``user`` and ``email``."""
