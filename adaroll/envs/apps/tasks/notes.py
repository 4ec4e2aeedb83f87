"""Notes tasks: create, move, pin, delete, rename, tidy up."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from adaroll.envs.apps.tasks.draws import among, other_than
from adaroll.envs.apps.tasks.judge import Expect, Text
from adaroll.envs.apps.tasks.plan import (
    DIALOG_DELETE,
    Ctx,
    Fill,
    Find,
    Go,
    Loc,
    OpenApp,
    Pick,
    Shows,
    Step,
    Tap,
    button,
    field_,
)
from adaroll.envs.apps.tasks.rows import Draw, Opens, Params, Row, Work
from adaroll.envs.apps.tasks.world import World

PER_PAGE = 10
START = ("notes", "#/folder/Personal")
FOLDERS = ("Personal", "Work", "Recipes", "Travel")
NEW_NOTES = (
    ("Weekend plans", "Hike on Saturday, brunch on Sunday"),
    ("Gift list", "Scarf for Mum, book for Tom"),
    ("Sprint retro", "Ship smaller changes more often"),
    ("Paint colours", "Sage green for the hallway"),
    ("Reading notes", "Chapter three was the best"),
)


def folder_page(folder: str, nid: int) -> Callable[[Ctx], int]:
    def page(ctx: Ctx) -> int:
        notes = [n for n in ctx.state()["notes"]["notes"].values() if n["folder"] == folder]
        notes.sort(key=lambda n: (-n["pinned"], n["title"]))
        return [n["id"] for n in notes].index(nid) // PER_PAGE + 1

    return page


def open_note(note: dict[str, Any]) -> tuple[Step, ...]:
    folder = note["folder"]
    return (
        OpenApp("notes", "Notes"),
        Go((f"#/folder/{folder}",), Loc(f'.side-link[href="#/folder/{folder}"]')),
        Find(
            Loc(f'a.row[href="#/note/{note["id"]}"]'),
            (f"#/note/{note['id']}",),
            folder_page(folder, note["id"]),
        ),
    )


def at_note(name: str) -> Opens:
    """The page of the note drawn as ``name``."""
    return Opens(open_note, name)


def note(**where: Any) -> Draw:
    """A note with ``where``'s values."""

    def draw(w: World, rng: random.Random, p: Params) -> dict[str, Any]:
        notes = [n for n in w.rows("notes", "notes") if all(n[k] == v for k, v in where.items())]
        return rng.choice(notes)

    return draw


def two_notes(w: World, rng: random.Random, p: Params) -> list[dict[str, Any]]:
    return rng.sample(w.rows("notes", "notes"), 2)


def third_unpinned(w: World, rng: random.Random, p: Params) -> dict[str, Any]:
    """An unpinned note other than those drawn as ``a`` and ``b``."""
    taken = (p["a"], p["b"])
    return rng.choice([n for n in w.rows("notes", "notes") if n not in taken and not n["pinned"]])


def two_outside(w: World, rng: random.Random, p: Params) -> list[dict[str, Any]]:
    """Two notes not in the folder drawn as ``folder``."""
    return rng.sample([n for n in w.rows("notes", "notes") if n["folder"] != p["folder"]], 2)


def note_update(name: str, what: str, **values: Any) -> Expect:
    """The note drawn as ``name`` holds ``values``."""
    return Expect("update", "notes", "notes", values, key=f"{{{name}[id]}}", what=what)


def moved(milestone: str, name: str, what: str) -> Work:
    """The note drawn as ``name`` moved to the folder drawn as ``folder``."""
    return Work(
        milestone,
        (note_update(name, what, folder="{folder}"),),
        (at_note(name), Pick("folder", "Folder", "{folder}"), Tap(button("Save"))),
    )


def pinned(name: str, what: str) -> Work:
    return Work(
        "pinned",
        (note_update(name, what, pinned=1),),
        (at_note(name), Tap(button("Pin"))),
    )


def deleted(milestone: str, name: str, what: str = "") -> Work:
    return Work(
        milestone,
        (Expect("delete", "notes", "notes", key=f"{{{name}[id]}}", what=what),),
        (
            at_note(name),
            Tap(button("Delete"), until=Shows(DIALOG_DELETE)),
            Tap(DIALOG_DELETE),
        ),
    )


ROWS = (
    Row(
        "notes.create",
        "write a new note in a folder",
        max_steps=14,
        start=START,
        draws={("title", "body"): among(*NEW_NOTES), "folder": among("Work", "Recipes", "Travel")},
        instruction='Create a note in {folder} titled "{title}" that says "{body}".',
        plan=(
            Work(
                "created",
                (
                    Expect(
                        "insert",
                        "notes",
                        "notes",
                        {
                            "folder": "{folder}",
                            "title": Text("{title}"),
                            "body": Text("{body}"),
                            "pinned": 0,
                        },
                        what="the new note",
                    ),
                ),
                (
                    OpenApp("notes", "Notes"),
                    Go(("#/new",), button("New note")),
                    Fill(field_("Title"), "{title}"),
                    Fill(field_("Body"), "{body}"),
                    Pick("folder", "Folder", "{folder}"),
                    Tap(button("Create note")),
                ),
            ),
        ),
    ),
    Row(
        "notes.move",
        "move a note to another folder",
        max_steps=10,
        start=START,
        draws={"n": note(), "folder": other_than("n", "folder", FOLDERS)},
        instruction='Move the note "{n[title]}" to the {folder} folder.',
        plan=(moved("moved", "n", "the note's folder"),),
    ),
    Row(
        "notes.pin",
        "pin a note",
        max_steps=8,
        start=START,
        draws={"n": note(pinned=0)},
        instruction='Pin the note "{n[title]}".',
        plan=(pinned("n", "the note pinned"),),
    ),
    Row(
        "notes.delete",
        "delete a note",
        max_steps=10,
        start=START,
        draws={"n": note()},
        instruction='Delete the note "{n[title]}".',
        plan=(deleted("deleted", "n", "the note deleted"),),
    ),
    Row(
        "notes.rename",
        "rename a note",
        max_steps=10,
        start=START,
        draws={"n": note(), "new": among("Archive me", "Read later", "Important", "Draft ideas")},
        instruction='Rename the note "{n[title]}" to "{new}".',
        plan=(
            Work(
                "renamed",
                (note_update("n", "the new title", title=Text("{new}")),),
                (at_note("n"), Fill(field_("Title"), "{new}"), Tap(button("Save"))),
            ),
        ),
        heldout=True,
    ),
    Row(
        "notes.tidy",
        "delete two notes and pin a third",
        max_steps=22,
        start=START,
        draws={("a", "b"): two_notes, "c": third_unpinned},
        instruction='Tidy up your notes: delete "{a[title]}" and "{b[title]}", then pin '
        '"{c[title]}".',
        plan=(deleted("first", "a"), deleted("second", "b"), pinned("c", "third pinned")),
    ),
    Row(
        "notes.collect",
        "move two notes into one folder",
        max_steps=20,
        start=START,
        draws={"folder": among(*FOLDERS), ("a", "b"): two_outside},
        instruction='Move the notes "{a[title]}" and "{b[title]}" to the {folder} folder.',
        plan=tuple(moved(f"moved {{{n}[id]}}", n, f"{{{n}[title]}} moved") for n in ("a", "b")),
    ),
)
