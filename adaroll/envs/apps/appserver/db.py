"""SQLite for the app servers: a connection per request, and loading a task's seeded content.

Why a connection per request (docs/architecture.md, "Platform notes"): a connection kept open across a CRIU dump
fails every write in a restored branch (``attempt to write a readonly database``,
SQLITE_READONLY_DBMOVED: the branch's database file is an overlay copy with another inode).
Opening one per request costs ~0.1 ms and leaves no descriptor open between requests, so a
dump of an idle server holds no database file at all. The rollback journal (``DELETE`` mode)
keeps the state in one file: no ``-wal``/``-shm`` files mapped into memory.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def connect(path: str) -> Iterator[sqlite3.Connection]:
    """A connection for one request: committed when the body succeeds, rolled back when it
    raises, closed in both cases."""
    conn = sqlite3.connect(path, timeout=10.0)
    conn.row_factory = sqlite3.Row
    try:
        with conn:
            yield conn
    finally:
        conn.close()


def rows(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    """The cursor's rows as plain dicts (JSON-ready)."""
    return [dict(r) for r in cursor.fetchall()]


def one(cursor: sqlite3.Cursor) -> dict[str, Any] | None:
    row = cursor.fetchone()
    return dict(row) if row is not None else None


def build(conn: sqlite3.Connection, schema: str, tables: dict[str, list[dict[str, Any]]]) -> None:
    """Create ``schema`` in ``conn`` and insert ``tables`` (table -> rows, each a dict of
    column -> value). An unknown table or column fails with sqlite3's own error."""
    conn.executescript(schema)
    for table, items in tables.items():
        for item in items:
            cols = list(item)
            marks = ", ".join("?" for _ in cols)
            names = ", ".join(f'"{c}"' for c in cols)
            conn.execute(
                f'INSERT INTO "{table}" ({names}) VALUES ({marks})', [item[c] for c in cols]
            )


def load(path: str, schema: str, tables: dict[str, list[dict[str, Any]]]) -> None:
    """Replace the database at ``path`` with ``schema`` + ``tables``: built in a new file that
    then replaces the old one (a reader never sees a half-loaded database)."""
    tmp = f"{path}.loading"
    if os.path.exists(tmp):
        os.unlink(tmp)
    conn = sqlite3.connect(tmp)
    try:
        with conn:
            build(conn, schema, tables)
    finally:
        conn.close()
    os.replace(tmp, path)
