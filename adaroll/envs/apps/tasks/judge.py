"""The judge: a task succeeds when the databases changed as asked and in no other way.

A :class:`Goal` is a list of :class:`Expect` (rows that must have been updated, inserted or
deleted since the task's start, with the values they must hold) plus what else may change
(:class:`Allow`; and every app's harmless columns, :data:`BENIGN`, such as a message's
``read`` flag that opening it sets). :meth:`Goal.verdict` diffs the start state against the
current one (:func:`~adaroll.envs.apps.state.diff`): success needs every expectation met and
no change left unexplained - a deleted message, an order for the wrong item or an extra note
makes the episode a failure even when the asked-for change is there too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from adaroll.envs.apps.state import Change, State, diff

BENIGN: dict[tuple[str, str], frozenset[str]] = {
    ("mail", "messages"): frozenset({"read"}),
    ("notes", "notes"): frozenset({"updated"}),
    ("tracker", "issues"): frozenset({"updated"}),
}
"""Columns whose changes are side effects of looking (opening a message marks it read) or of
saving (a save stamps ``updated``): never a reason to fail a task."""


def norm(text: Any) -> str:
    """Case- and whitespace-insensitive text (what a person means by "the same text")."""
    return re.sub(r"\s+", " ", str(text)).strip().casefold()


Match = Any
"""A wanted value: a plain value (equal), a :class:`Text` (equal as text, ignoring case and
spacing), a :class:`Has` (contains) or any callable ``value -> bool``."""


@dataclass(frozen=True)
class Text:
    """Equal as text, ignoring case and runs of spaces."""

    text: str

    def __call__(self, value: Any) -> bool:
        return value is not None and norm(value) == norm(self.text)


@dataclass(frozen=True)
class Has:
    """Contains ``text`` (ignoring case and runs of spaces)."""

    text: str

    def __call__(self, value: Any) -> bool:
        return value is not None and norm(self.text) in norm(value)


def matches(value: Any, want: Match) -> bool:
    if callable(want):
        return bool(want(value))
    return bool(value == want)


def row_matches(row: dict[str, Any] | None, values: dict[str, Match]) -> bool:
    return row is not None and all(matches(row.get(c), w) for c, w in values.items())


@dataclass(frozen=True)
class Expect:
    """One change the task asks for.

    ``update``/``delete``: the row ``key`` of ``app.table``; ``insert``: exactly ``count`` new
    rows of ``app.table`` holding ``values``. ``values`` are checked on the row as it is now
    (updates, inserts)."""

    kind: str
    app: str
    table: str
    values: dict[str, Match] = field(default_factory=dict)
    key: str | None = None
    count: int = 1
    what: str = ""
    """Plain words for failure reasons ("the reply to message 12")."""

    def __post_init__(self) -> None:
        if self.kind not in ("update", "insert", "delete"):
            raise ValueError(f"Expect.kind must be update/insert/delete, got {self.kind!r}")
        if self.kind != "insert" and self.key is None:
            raise ValueError(f"Expect({self.kind}) needs the row's key")

    def claim(self, changes: list[Change]) -> tuple[list[Change], str]:
        """The changes that fulfil this expectation (all of it) and "" - or [] and why not."""
        label = self.what or f"{self.kind} of {self.app}.{self.table}"
        mine = [c for c in changes if c.app == self.app and c.table == self.table]
        if self.kind == "insert":
            hits = [c for c in mine if c.kind == "insert" and row_matches(c.after, self.values)]
            if len(hits) != self.count:
                return [], f"{label}: {len(hits)} matching new row(s), want {self.count}"
            return hits, ""
        hit = next((c for c in mine if c.key == self.key), None)
        if hit is None:
            return [], f"{label}: not done"
        if hit.kind != self.kind:
            return [], f"{label}: the row was {hit.kind}d instead"
        if self.kind == "update" and not row_matches(hit.after, self.values):
            got = {c: (hit.after or {}).get(c) for c in self.values}
            return [], f"{label}: holds {got}"
        return [hit], ""

    def covers(self, change: Change) -> frozenset[str]:
        """The columns of ``change`` this expectation explains (an update explains its own
        columns; an insert or delete, the whole row)."""
        if self.kind == "update":
            return frozenset(self.values)
        return change.columns


@dataclass(frozen=True)
class Allow:
    """Changes a task tolerates besides its expectations: ``kinds`` of rows of ``app.table``,
    any column (``columns`` None) or only those."""

    app: str
    table: str
    kinds: frozenset[str] = frozenset({"update", "insert", "delete"})
    columns: frozenset[str] | None = None

    def covers(self, change: Change) -> frozenset[str]:
        if change.app != self.app or change.table != self.table or change.kind not in self.kinds:
            return frozenset()
        return change.columns if self.columns is None else self.columns


@dataclass(frozen=True)
class Verdict:
    success: bool
    reasons: tuple[str, ...] = ()
    """Why not (unmet expectations, unexplained changes); empty on success."""

    def describe(self) -> str:
        return "success" if self.success else "; ".join(self.reasons)


def met(start: State, now: State, expects: Iterable[Expect]) -> bool:
    """Whether every one of ``expects`` holds, whatever else changed."""
    changes = diff(start, now)
    return all(e.claim(changes)[1] == "" for e in expects)


@dataclass(frozen=True)
class Goal:
    expects: tuple[Expect, ...]
    allow: tuple[Allow, ...] = ()

    def verdict(self, start: State, now: State) -> Verdict:
        changes = diff(start, now)
        reasons: list[str] = []
        explained: dict[int, set[str]] = {}
        for e in self.expects:
            hits, why = e.claim(changes)
            if why:
                reasons.append(why)
            for c in hits:
                explained.setdefault(id(c), set()).update(e.covers(c))
        for c in changes:
            cols = set(c.columns) - explained.get(id(c), set())
            cols -= BENIGN.get((c.app, c.table), frozenset())
            for a in self.allow:
                cols -= a.covers(c)
            if cols:
                reasons.append(f"unexpected: {c.describe()}")
        return Verdict(not reasons, tuple(reasons))
