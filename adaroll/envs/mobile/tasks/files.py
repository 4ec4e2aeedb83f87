"""Files tasks: delete, move, rename (long-press menu), new folders, restore from Trash,
delete the largest file, and read a file's size."""

from __future__ import annotations

from collections.abc import Callable
from random import Random
from types import MappingProxyType as P
from typing import Any

from adaroll.actions import Action
from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.files import TRASH, File
from adaroll.envs.mobile.expert import BACK, Expert, Hop
from adaroll.envs.mobile.tasks.base import TaskTemplate, register
from adaroll.envs.mobile.world import Apps

ROOT: Hop = ("root", None, None)


def folder_path(folder: str) -> list[Hop]:
    return [ROOT, ("folder", folder, f"folder:{folder}")]


def pick(rng: Random, world: Apps, folder: str | None = None) -> File:
    folder = folder or rng.choice(data.FOLDERS)
    return rng.choice(world.files.in_folder(folder))


def _ident(f: File) -> dict[str, Any]:
    return {"uid": f.uid, "file": f.name, "folder": f.folder}


def via_menu(
    x: Expert, f: File, option: str, finish: Callable[[tuple[Any, ...]], Action]
) -> Action:
    """Open ``f``'s long-press menu in its folder, pick ``option``, then ``finish`` the dialog
    that follows."""
    go = x.goto("Files", folder_path(f.folder))
    if go:
        return go
    dialog = x.route.dialog
    if dialog is None:
        return x.long_press(f"file:{f.name}")
    if dialog[0] == "menu":
        return x.press(option)
    if dialog[0] == "info":
        return BACK
    return finish(dialog)


@register
class DeleteFile(TaskTemplate):
    name = "files.delete"
    apps = ("Files",)
    tags = ("long_press", "dialog", "scroll")
    instruction = 'Delete the file "{file}" from {folder}'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return _ident(pick(rng, world)), world

    def check(self, world: Apps, p: P) -> bool:
        f = world.files.by_uid(p["uid"])
        return f is not None and f.folder == TRASH

    def expert(self, x: Expert, p: P) -> Action:
        return via_menu(
            x, x.apps.files.by_uid(p["uid"]), "menu:delete", lambda d: x.press("dlg:ok")
        )


@register
class MoveFile(TaskTemplate):
    name = "files.move"
    apps = ("Files",)
    tags = ("long_press", "dialog", "scroll")
    instruction = 'Move "{file}" from {folder} to {target}'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        f = pick(rng, world)
        return {
            **_ident(f),
            "target": rng.choice([d for d in data.FOLDERS if d != f.folder]),
        }, world

    def check(self, world: Apps, p: P) -> bool:
        f = world.files.by_uid(p["uid"])
        return f is not None and f.folder == p["target"]

    def expert(self, x: Expert, p: P) -> Action:
        return via_menu(
            x, x.apps.files.by_uid(p["uid"]), "menu:move", lambda d: x.press(f"move:{p['target']}")
        )


@register
class RenameFile(TaskTemplate):
    name = "files.rename"
    apps = ("Files",)
    tags = ("long_press", "dialog", "text", "scroll")
    instruction = 'Rename "{file}" in {folder} to "{new}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        f = pick(rng, world)
        ext = f.name[f.name.rindex(".") :]
        used = {g.name for g in world.files.files}
        new = rng.choice(
            [
                n
                for n in (f"{s}_{y}{ext}" for s in data.FILE_STEMS for y in (2024, 2025))
                if n not in used
            ]
        )
        return {**_ident(f), "new": new}, world

    def check(self, world: Apps, p: P) -> bool:
        f = world.files.by_uid(p["uid"])
        return f is not None and f.name == p["new"] and f.folder == p["folder"]

    def expert(self, x: Expert, p: P) -> Action:
        return via_menu(
            x,
            x.apps.files.by_uid(p["uid"]),
            "menu:rename",
            lambda d: x.fill("name", p["new"]) or x.press("dlg:ok"),
        )


@register
class NewFolder(TaskTemplate):
    name = "files.new_folder"
    apps = ("Files",)
    tags = ("dialog", "text")
    instruction = 'Create a folder named "{folder}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return {"folder": rng.choice(data.NEW_FOLDER_NAMES)}, world

    def check(self, world: Apps, p: P) -> bool:
        return p["folder"] in world.files.folders

    def expert(self, x: Expert, p: P) -> Action:
        go = x.goto("Files", [ROOT])
        if go:
            return go
        if x.route.dialog is None:
            return x.press("btn:new_folder")
        return x.fill("folder", p["folder"]) or x.press("dlg:ok")


@register
class RestoreFile(TaskTemplate):
    name = "files.restore"
    apps = ("Files",)
    tags = ("long_press", "dialog")
    heldout = True
    instruction = 'Restore "{file}" from the Trash'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        f = rng.choice(world.files.in_folder(TRASH))
        return {**_ident(f), "origin": f.origin}, world

    def check(self, world: Apps, p: P) -> bool:
        f = world.files.by_uid(p["uid"])
        return f is not None and f.folder == p["origin"]

    def expert(self, x: Expert, p: P) -> Action:
        return via_menu(x, x.apps.files.by_uid(p["uid"]), "menu:restore", lambda d: BACK)


@register
class DeleteLargest(DeleteFile):  # same verifier and expert, another target
    name = "files.delete_largest"
    apps = ("Files",)
    tags = ("long_press", "dialog", "scroll")
    instruction = "Delete the largest file in {folder}"

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        folder = rng.choice(data.FOLDERS)
        files = world.files.in_folder(folder)
        largest = max(files, key=lambda f: f.size_kb)
        if sum(f.size == largest.size for f in files) > 1:
            return self.setup(rng, world)
        return {**_ident(largest)}, world


@register
class FileSize(TaskTemplate):
    name = "files.size"
    apps = ("Files",)
    tags = ("answer", "scroll")
    instruction = 'What is the size of "{file}" in {folder}? Answer as shown, like 2.4 MB.'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return _ident(pick(rng, world)), world

    def answer(self, world: Apps, p: P) -> str:
        return world.files.by_uid(p["uid"]).size

    def expert(self, x: Expert, p: P) -> Action:
        key = f"file:{p['file']}"
        return x.goto("Files", folder_path(p["folder"])) or (
            Action.done(self.answer(x.apps, p)) if x.visible(key) else x.press(key)
        )
