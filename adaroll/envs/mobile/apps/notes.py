"""Notes: a list (pinned notes first; long press for a Pin/Delete menu) and an editor with
title and body fields, Save and Delete. Leaving the editor without Save discards edits."""

from __future__ import annotations

from dataclasses import dataclass, replace
from random import Random
from typing import Any

from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.base import App
from adaroll.envs.mobile.screen import APPBAR_BOTTOM, H, Handler, ViewBuilder, memo
from adaroll.envs.mobile.state import Phone, Route, next_uid
from adaroll.envs.mobile.widgets import (
    appbar,
    choice,
    confirm,
    fab,
    notice,
    open_dialog,
    push,
    row,
    text_field,
    text_row,
)


@dataclass(frozen=True, slots=True)
class Note:
    uid: int
    title: str
    body: str
    pinned: bool = False


@dataclass(frozen=True, slots=True)
class NotesState:
    notes: tuple[Note, ...]

    def by_uid(self, uid: int) -> Note | None:
        return next((n for n in self.notes if n.uid == uid), None)

    def by_title(self, title: str) -> Note | None:
        return next((n for n in self.notes if n.title == title), None)

    def ordered(self) -> list[Note]:
        """Pinned first, then newest first (as listed on screen)."""
        return sorted(self.notes, key=lambda n: (not n.pinned, -n.uid))


def body_text(rng: Random) -> str:
    return ", ".join(rng.sample(data.NOTE_WORDS, rng.randrange(2, 4)))


def generate(rng: Random, _made: dict[str, Any]) -> NotesState:
    titles = rng.sample(data.NOTE_TITLES, rng.randrange(7, 15))
    return NotesState(
        tuple(Note(i + 1, t, body_text(rng), rng.random() < 0.15) for i, t in enumerate(titles))
    )


def _update(p: Phone, uid: int, **changes: Any) -> Phone:
    st: NotesState = p.apps.notes
    return p.set_app(
        "notes", NotesState(tuple(replace(n, **changes) if n.uid == uid else n for n in st.notes))
    )


def _save(p: Phone, a: Any) -> Phone:
    top = p.screen
    title, body = top.field("title").strip(), top.field("body")
    if not title:
        return p.update_top(dialog=("required",), focus=None)
    st: NotesState = p.apps.notes
    if top.arg is None:
        p = p.set_app("notes", NotesState(st.notes + (Note(next_uid(st.notes), title, body),)))
    else:
        p = _update(p, top.arg, title=title, body=body)
    return p.pop()


def _delete(uid: int, leave: bool):
    def handler(p: Phone, a: Any) -> Phone:
        st: NotesState = p.apps.notes
        p = p.set_app("notes", NotesState(tuple(n for n in st.notes if n.uid != uid)))
        return p.pop() if leave else p.update_top(dialog=None)

    return handler


def _pin(uid: int, pinned: bool):
    return lambda p, a: _update(p, uid, pinned=pinned).update_top(dialog=None)


def _open(n: Note):
    return push(Route("Notes", "editor", n.uid, fields=(("title", n.title), ("body", n.body))))


_NEW = push(Route("Notes", "editor", None))


@memo
def _rows(st: NotesState) -> tuple[Any, ...]:
    return tuple(_note_row(n) for n in st.ordered()) or (text_row("No notes"),)


@memo
def _note_row(n: Note) -> Any:
    return row(
        f"Pinned: {n.title}" if n.pinned else n.title,
        f"note:{n.uid}",
        _open(n),
        open_dialog("menu", n.uid),
    )


def view(phone: Phone, route: Route, b: ViewBuilder) -> None:
    st: NotesState = phone.apps.notes
    dialog = route.dialog
    if route.screen == "list":
        if dialog is not None:
            note = st.by_uid(dialog[1])
            if note is None:
                return
            if dialog[0] == "menu":
                label = "Unpin" if note.pinned else "Pin"
                choice(
                    b,
                    note.title,
                    (
                        (label, "menu:pin", _pin(note.uid, not note.pinned), None),
                        ("Delete", "menu:delete", open_dialog("delete", note.uid), None),
                    ),
                )
            else:
                confirm(
                    b,
                    "Delete note?",
                    f'"{note.title}" will be deleted.',
                    "Delete",
                    _delete(note.uid, leave=False),
                )
            return
        appbar(b, "Notes", show_back=False)
        b.vlist(_rows(st), APPBAR_BOTTOM, H, route.scroll)
        fab(b, "New note", _NEW)
        return
    # editor
    if dialog is not None:
        if dialog[0] == "required":
            notice(b, "Missing title", ["Give the note a title to save it."])
        else:
            confirm(
                b,
                "Delete note?",
                "This note will be deleted.",
                "Delete",
                _delete(route.arg, leave=True),
            )
        return
    actions: list[tuple[str, str, Handler]] = [("btn:save", "Save", _save)]
    if route.arg is not None:
        actions.insert(0, ("btn:delete", "Delete", open_dialog("delete")))
    appbar(b, "New note" if route.arg is None else "Edit note", actions)
    text_field(b, route, "title", "Title", (48, 260, 1032, 400))
    text_field(b, route, "body", "Note", (48, 430, 1032, 1000))


APP = App("Notes", "notes", Route("Notes", "list"), generate, view)
