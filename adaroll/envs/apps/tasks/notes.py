"""Notes tasks: create, move, pin, delete, rename, tidy up."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from adaroll.envs.apps.tasks.base import Spec, template
from adaroll.envs.apps.tasks.judge import Expect, Text
from adaroll.envs.apps.tasks.plan import (
    Ctx,
    Fill,
    Find,
    Go,
    Loc,
    Milestone,
    OpenApp,
    Pick,
    Step,
    Tap,
    button,
    field_,
)
from adaroll.envs.apps.tasks.world import World

PER_PAGE = 10
START = ("notes", "#/folder/Personal")
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


def note(w: World, rng: random.Random, **where: Any) -> dict[str, Any]:
    notes = [n for n in w.rows("notes", "notes") if all(n[k] == v for k, v in where.items())]
    return rng.choice(notes)


def update(n: dict[str, Any], what: str, **values: Any) -> Expect:
    return Expect("update", "notes", "notes", values, key=str(n["id"]), what=what)


@template("notes.create", apps=("notes",), max_steps=14, summary="write a new note in a folder")
def create(w: World, rng: random.Random) -> Spec:
    title, body = rng.choice(NEW_NOTES)
    folder = rng.choice(("Work", "Recipes", "Travel"))
    return Spec(
        f'Create a note in {folder} titled "{title}" that says "{body}".',
        START,
        (
            Milestone(
                "created",
                (
                    Expect(
                        "insert",
                        "notes",
                        "notes",
                        {"folder": folder, "title": Text(title), "body": Text(body), "pinned": 0},
                        what="the new note",
                    ),
                ),
                (
                    OpenApp("notes", "Notes"),
                    Go(("#/new",), button("New note")),
                    Fill(field_("Title"), title),
                    Fill(field_("Body"), body),
                    Pick("folder", "Folder", folder),
                    Tap(button("Create note")),
                ),
            ),
        ),
    )


@template("notes.move", apps=("notes",), max_steps=10, summary="move a note to another folder")
def move(w: World, rng: random.Random) -> Spec:
    n = note(w, rng)
    folder = rng.choice([f for f in ("Personal", "Work", "Recipes", "Travel") if f != n["folder"]])
    return Spec(
        f'Move the note "{n["title"]}" to the {folder} folder.',
        START,
        (
            Milestone(
                "moved",
                (update(n, "the note's folder", folder=folder),),
                (*open_note(n), Pick("folder", "Folder", folder), Tap(button("Save"))),
            ),
        ),
    )


@template("notes.pin", apps=("notes",), max_steps=8, summary="pin a note")
def pin(w: World, rng: random.Random) -> Spec:
    n = note(w, rng, pinned=0)
    return Spec(
        f'Pin the note "{n["title"]}".',
        START,
        (
            Milestone(
                "pinned",
                (update(n, "the note pinned", pinned=1),),
                (*open_note(n), Tap(button("Pin"))),
            ),
        ),
    )


def delete_steps(n: dict[str, Any]) -> tuple[Step, ...]:
    dialog = Loc(".dialog button", text="Delete")
    return (*open_note(n), Tap(button("Delete"), until=lambda c: c.visible(dialog)), Tap(dialog))


@template("notes.delete", apps=("notes",), max_steps=10, summary="delete a note")
def delete(w: World, rng: random.Random) -> Spec:
    n = note(w, rng)
    return Spec(
        f'Delete the note "{n["title"]}".',
        START,
        (
            Milestone(
                "deleted",
                (Expect("delete", "notes", "notes", key=str(n["id"]), what="the note deleted"),),
                delete_steps(n),
            ),
        ),
    )


@template("notes.rename", apps=("notes",), max_steps=10, summary="rename a note", heldout=True)
def rename(w: World, rng: random.Random) -> Spec:
    n = note(w, rng)
    new = rng.choice(("Archive me", "Read later", "Important", "Draft ideas"))
    return Spec(
        f'Rename the note "{n["title"]}" to "{new}".',
        START,
        (
            Milestone(
                "renamed",
                (update(n, "the new title", title=Text(new)),),
                (*open_note(n), Fill(field_("Title"), new), Tap(button("Save"))),
            ),
        ),
    )


@template("notes.tidy", apps=("notes",), max_steps=22, summary="delete two notes and pin a third")
def tidy(w: World, rng: random.Random) -> Spec:
    a, b = rng.sample(w.rows("notes", "notes"), 2)
    c = rng.choice([n for n in w.rows("notes", "notes") if n not in (a, b) and not n["pinned"]])
    return Spec(
        f'Tidy up your notes: delete "{a["title"]}" and "{b["title"]}", then pin "{c["title"]}".',
        START,
        (
            Milestone(
                "first", (Expect("delete", "notes", "notes", key=str(a["id"])),), delete_steps(a)
            ),
            Milestone(
                "second", (Expect("delete", "notes", "notes", key=str(b["id"])),), delete_steps(b)
            ),
            Milestone(
                "pinned",
                (update(c, "third pinned", pinned=1),),
                (*open_note(c), Tap(button("Pin"))),
            ),
        ),
    )


@template("notes.collect", apps=("notes",), max_steps=20, summary="move two notes into one folder")
def collect(w: World, rng: random.Random) -> Spec:
    folder = rng.choice(("Personal", "Work", "Recipes", "Travel"))
    a, b = rng.sample([n for n in w.rows("notes", "notes") if n["folder"] != folder], 2)
    return Spec(
        f'Move the notes "{a["title"]}" and "{b["title"]}" to the {folder} folder.',
        START,
        tuple(
            Milestone(
                f"moved {n['id']}",
                (update(n, f"{n['title']} moved", folder=folder),),
                (*open_note(n), Pick("folder", "Folder", folder), Tap(button("Save"))),
            )
            for n in (a, b)
        ),
    )
