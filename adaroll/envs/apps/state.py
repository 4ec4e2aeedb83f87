"""The apps' state as the judge sees it: every table of every app's database, read from the
database files themselves (never from the page), and the diff against the task's start.

A state is ``{app: {table: {key: {column: value}}}}`` with ``key`` the row's primary key as
text (``"12"``; several key columns are joined by ``"|"``). :class:`StateReader` reads the live
databases through the namespace's root (``/proc/PID/root``) with read-only connections, and
re-reads an app only when its file changed (size, mtime or inode); the start state is each
server's copy of its database taken when the task's content was loaded (``<app>.start.db``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Row = dict[str, Any]
TableState = dict[str, Row]
AppState = dict[str, TableState]
State = dict[str, AppState]


def read_database(path: str) -> AppState:
    """Every user table of the SQLite file at ``path``, read from a copy of its bytes.

    Why a copy: SQLite resolves symbolic links in a database's path, and ``/proc/PID/root``
    resolves to the host's ``/`` that way - it would open the empty host directory, not the
    namespace's tmpfs. The bytes are read with the kernel's own path walk instead and
    deserialised into an in-memory database. The copy is consistent because the judge reads
    only settled states: every request has been answered, so no transaction is open (a
    leftover rollback journal would mean otherwise and is refused)."""
    if os.path.exists(path + "-journal"):
        raise sqlite3.OperationalError(f"{path} has a rollback journal: a write is in progress")
    with open(path, "rb") as fh:
        data = fh.read()
    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(data)
        conn.row_factory = sqlite3.Row
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                "ORDER BY name"
            )
        ]
        out: AppState = {}
        for table in tables:
            info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
            pk = [r["name"] for r in sorted(info, key=lambda r: r["pk"]) if r["pk"]]
            select = (
                f'SELECT rowid AS __rowid, * FROM "{table}"'
                if not pk
                else f'SELECT * FROM "{table}"'
            )
            rows: TableState = {}
            for r in conn.execute(select):
                d = dict(r)
                key = "|".join(str(d[c]) for c in pk) if pk else str(d.pop("__rowid"))
                rows[key] = d
            out[table] = rows
        return out
    finally:
        conn.close()


def checksum(state: State) -> str:
    """A hash of a whole state (all apps, tables, rows): equal states, equal checksums."""
    text = json.dumps(state, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class StateReader:
    """Reads app databases by name through ``path_of(app_file_name)``, caching by file
    identity (size, mtime, inode), so an unchanged database costs one ``stat``."""

    path_of: Callable[[str], str]
    apps: tuple[str, ...]
    _cache: dict[str, tuple[tuple[int, int, int], AppState]] = field(default_factory=dict)

    def _read(self, name: str) -> AppState:
        path = self.path_of(name)
        st = os.stat(path)
        ident = (st.st_size, st.st_mtime_ns, st.st_ino)
        hit = self._cache.get(name)
        if hit is not None and hit[0] == ident:
            return hit[1]
        state = read_database(path)
        self._cache[name] = (ident, state)
        return state

    def current(self) -> State:
        """Every app's live database."""
        return {app: self._read(f"{app}.db") for app in self.apps}

    def start(self) -> State:
        """Every app's database as loaded at the task's start."""
        return {app: self._read(f"{app}.start.db") for app in self.apps}

    def forget(self) -> None:
        """Drop the cache (after a new task was loaded, or in a restored branch)."""
        self._cache.clear()


@dataclass(frozen=True)
class Change:
    """One row that differs between the start and now."""

    app: str
    table: str
    key: str
    kind: str
    """``insert``, ``delete`` or ``update``."""
    before: Row | None
    after: Row | None

    @property
    def columns(self) -> frozenset[str]:
        """The columns whose value changed (every column for an insert or delete)."""
        if self.before is None or self.after is None:
            return frozenset((self.before or self.after or {}).keys())
        return frozenset(c for c in self.after if self.after[c] != self.before.get(c))

    def describe(self) -> str:
        if self.kind == "update":
            assert self.before is not None and self.after is not None
            cols = ", ".join(
                f"{c}: {self.before.get(c)!r} -> {self.after[c]!r}" for c in sorted(self.columns)
            )
            return f"{self.app}.{self.table}[{self.key}] updated ({cols})"
        return f"{self.app}.{self.table}[{self.key}] {self.kind}d"


def diff(start: State, now: State) -> list[Change]:
    """Every row inserted, deleted or updated since ``start``, in a stable order."""
    out: list[Change] = []
    for app in sorted(set(start) | set(now)):
        a, b = start.get(app, {}), now.get(app, {})
        for table in sorted(set(a) | set(b)):
            ta, tb = a.get(table, {}), b.get(table, {})
            for key in sorted(set(ta) | set(tb), key=_key_order):
                before, after = ta.get(key), tb.get(key)
                if before == after:
                    continue
                kind = "insert" if before is None else "delete" if after is None else "update"
                out.append(Change(app, table, key, kind, before, after))
    return out


def _key_order(key: str) -> tuple[int, int, str]:
    return (0, int(key), "") if key.isdigit() else (1, 0, key)
