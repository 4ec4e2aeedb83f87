"""Notes tasks: create, edit, rename, pin, delete, read back, and save a contact's number."""

from __future__ import annotations

from dataclasses import replace
from random import Random
from types import MappingProxyType as P
from typing import Any

from adaroll.actions import Action, ActionKind
from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.notes import Note, NotesState
from adaroll.envs.mobile.expert import Expert, Hop
from adaroll.envs.mobile.tasks.base import TaskTemplate, register
from adaroll.envs.mobile.tasks.contacts import goto_detail
from adaroll.envs.mobile.world import Apps

LIST: Hop = ("list", None, None)


def editor_path(uid: int) -> list[Hop]:
    return [LIST, ("editor", uid, f"note:{uid}")]


def new_title(rng: Random, world: Apps) -> str:
    used = {n.title for n in world.notes.notes}
    return rng.choice([t for t in data.NOTE_TITLES if t not in used])


def pick(rng: Random, world: Apps, **where: Any) -> Note:
    return rng.choice(
        [n for n in world.notes.notes if all(getattr(n, k) == v for k, v in where.items())]
    )


def create_note(x: Expert, title: str, body: str | None) -> Action:
    return (
        x.goto("Notes", [LIST, ("editor", None, "fab")])
        or x.fill("title", title)
        or (body is not None and x.fill("body", body))
        or x.press("btn:save")
    )


@register
class CreateNote(TaskTemplate):
    name = "notes.create"
    apps = ("Notes",)
    tags = ("text",)
    instruction = 'Create a note titled "{title}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return {"title": new_title(rng, world)}, world

    def check(self, world: Apps, p: P) -> bool:
        return world.notes.by_title(p["title"]) is not None

    def expert(self, x: Expert, p: P) -> Action:
        return create_note(x, p["title"], None)


@register
class CreateNoteWithText(TaskTemplate):
    name = "notes.create_with_text"
    apps = ("Notes",)
    tags = ("text",)
    instruction = 'Create a note titled "{title}" with the text "{body}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        body = ", ".join(rng.sample(data.NOTE_WORDS, 2))
        return {"title": new_title(rng, world), "body": body}, world

    def check(self, world: Apps, p: P) -> bool:
        return any(n.title == p["title"] and n.body.strip() == p["body"] for n in world.notes.notes)

    def expert(self, x: Expert, p: P) -> Action:
        return create_note(x, p["title"], p["body"])


@register
class DeleteNote(TaskTemplate):
    name = "notes.delete"
    apps = ("Notes",)
    tags = ("dialog", "scroll")
    instruction = 'Delete the note "{title}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        n = pick(rng, world)
        return {"title": n.title, "uid": n.uid, "count": len(world.notes.notes)}, world

    def check(self, world: Apps, p: P) -> bool:
        notes = world.notes.notes
        return len(notes) == p["count"] - 1 and world.notes.by_uid(p["uid"]) is None

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Notes", editor_path(p["uid"])) or (
            x.press("dlg:ok") if x.route.dialog else x.press("btn:delete")
        )


@register
class AppendToNote(TaskTemplate):
    name = "notes.append"
    apps = ("Notes",)
    tags = ("text", "scroll")
    instruction = 'Add "{word}" at the end of the note "{title}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        n = pick(rng, world)
        word = rng.choice([w for w in data.NOTE_WORDS if w not in n.body])
        return {"title": n.title, "uid": n.uid, "word": word, "old": n.body}, world

    def check(self, world: Apps, p: P) -> bool:
        n = world.notes.by_uid(p["uid"])
        if n is None or not n.body.startswith(p["old"]):
            return False
        return n.body[len(p["old"]) :].strip(" ,;.\n") == p["word"]

    def expert(self, x: Expert, p: P) -> Action:
        return (
            x.goto("Notes", editor_path(p["uid"]))
            or x.fill("body", f"{p['old']}, {p['word']}")
            or x.press("btn:save")
        )


@register
class RenameNote(TaskTemplate):
    name = "notes.rename"
    apps = ("Notes",)
    tags = ("text", "scroll")
    heldout = True
    instruction = 'Rename the note "{old}" to "{title}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        n = pick(rng, world)
        return {"old": n.title, "uid": n.uid, "title": new_title(rng, world), "body": n.body}, world

    def check(self, world: Apps, p: P) -> bool:
        n = world.notes.by_uid(p["uid"])
        return n is not None and n.title == p["title"] and n.body == p["body"]

    def expert(self, x: Expert, p: P) -> Action:
        return (
            x.goto("Notes", editor_path(p["uid"]))
            or x.fill("title", p["title"])
            or x.press("btn:save")
        )


@register
class PinNote(TaskTemplate):
    name = "notes.pin"
    apps = ("Notes",)
    tags = ("long_press", "dialog", "scroll")
    instruction = 'Pin the note "{title}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        n = pick(rng, world, pinned=False)
        return {"title": n.title, "uid": n.uid}, world

    def check(self, world: Apps, p: P) -> bool:
        n = world.notes.by_uid(p["uid"])
        return n is not None and n.pinned

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Notes", [LIST]) or (
            x.press("menu:pin") if x.route.dialog else x.long_press(f"note:{p['uid']}")
        )


@register
class ReadNote(TaskTemplate):
    name = "notes.read"
    apps = ("Notes",)
    tags = ("answer", "scroll")
    instruction = 'What is written in the note "{title}"? Answer with its text.'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        n = pick(rng, world)
        return {"title": n.title, "uid": n.uid}, world

    def answer(self, world: Apps, p: P) -> str:
        return world.notes.by_uid(p["uid"]).body

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Notes", editor_path(p["uid"])) or Action.done(self.answer(x.apps, p))


@register
class UnpinAll(TaskTemplate):
    name = "notes.unpin_all"
    apps = ("Notes",)
    tags = ("long_press", "dialog", "multi")
    instruction = "Unpin all pinned notes"

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        notes = list(world.notes.notes)
        pinned = set(rng.sample(range(len(notes)), 2))
        notes = [replace(n, pinned=i in pinned) for i, n in enumerate(notes)]
        return {"count": len(notes)}, replace(world, notes=NotesState(tuple(notes)))

    def check(self, world: Apps, p: P) -> bool:
        notes = world.notes.notes
        return len(notes) == p["count"] and not any(n.pinned for n in notes)

    def expert(self, x: Expert, p: P) -> Action:
        go = x.goto("Notes", [LIST])
        if go:
            return go
        if x.route.dialog is not None:
            return x.press("menu:pin")
        first = x.apps.notes.ordered()[0]
        return x.tap(f"note:{first.uid}", ActionKind.LONG_PRESS) or x.press(f"note:{first.uid}")


@register
class SaveNumberInNote(TaskTemplate):
    name = "notes.save_contact_number"
    apps = ("Contacts", "Notes")
    tags = ("cross_app", "text", "scroll")
    instruction = 'Create a note titled "{title}" that contains the phone number of {person}'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        c = rng.choice(world.contacts.contacts)
        title = f"{c.name.split()[0]}'s number"
        return {"title": title, "person": c.name, "uid": c.uid, "phone": c.phone}, world

    def check(self, world: Apps, p: P) -> bool:
        return any(n.title == p["title"] and p["phone"] in n.body for n in world.notes.notes)

    def expert(self, x: Expert, p: P) -> Action:
        if x.top is not None and x.route.app == "Notes":
            return create_note(x, p["title"], p["phone"])
        return goto_detail(x, p["uid"]) or Action(ActionKind.OPEN_APP, app="Notes")
