"""Files: folders with file lists (sizes shown), a long-press menu (rename, move, delete,
details), a Trash folder with restore, and new folders."""

from __future__ import annotations

from dataclasses import dataclass, replace
from random import Random
from typing import Any

from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.base import App
from adaroll.envs.mobile.screen import APPBAR_BOTTOM, H, ViewBuilder, memo
from adaroll.envs.mobile.state import Phone, Route
from adaroll.envs.mobile.widgets import (
    appbar,
    choice,
    close_dialog,
    confirm,
    notice,
    open_dialog,
    prompt,
    push,
    row,
    text_row,
)

TRASH = "Trash"


@dataclass(frozen=True, slots=True)
class File:
    uid: int
    name: str
    size_kb: int
    folder: str
    origin: str = ""
    """Folder a trashed file came from (restore puts it back)."""

    @property
    def size(self) -> str:
        return size_text(self.size_kb)


@dataclass(frozen=True, slots=True)
class FilesState:
    files: tuple[File, ...]
    folders: tuple[str, ...]
    """User-visible folders (Trash is always last and not listed here)."""

    def by_uid(self, uid: int) -> File | None:
        return next((f for f in self.files if f.uid == uid), None)

    def in_folder(self, folder: str) -> list[File]:
        return sorted((f for f in self.files if f.folder == folder), key=lambda f: (f.name, f.uid))


def size_text(kb: int) -> str:
    return f"{kb} KB" if kb < 1000 else f"{kb / 1000:.1f} MB"


def generate(rng: Random, _made: dict[str, Any]) -> FilesState:
    files: list[File] = []
    names: set[str] = set()
    for folder in data.FOLDERS + (TRASH,):
        count = rng.randrange(1, 4) if folder == TRASH else rng.randrange(6, 13)
        exts = data.FOLDER_EXTS.get(folder) or data.FOLDER_EXTS[rng.choice(data.FOLDERS)]
        while count:
            name = f"{rng.choice(data.FILE_STEMS)}_{rng.randrange(1, 100)}{rng.choice(exts)}"
            if name in names:
                continue
            names.add(name)
            origin = rng.choice(data.FOLDERS) if folder == TRASH else ""
            files.append(File(len(files) + 1, name, rng.randrange(12, 9000), folder, origin))
            count -= 1
    return FilesState(tuple(files), data.FOLDERS)


def _update(p: Phone, uid: int, **changes: Any) -> Phone:
    st: FilesState = p.apps.files
    return p.set_app(
        "files",
        FilesState(
            tuple(replace(f, **changes) if f.uid == uid else f for f in st.files), st.folders
        ),
    )


def _move(uid: int, folder: str):
    return lambda p, a: close_dialog(_update(p, uid, folder=folder))


def _trash(f: File):
    return lambda p, a: close_dialog(_update(p, f.uid, folder=TRASH, origin=f.folder))


def _restore(f: File):
    return lambda p, a: close_dialog(
        _update(p, f.uid, folder=f.origin or data.FOLDERS[0], origin="")
    )


def _erase(uid: int):
    def handler(p: Phone, a: Any) -> Phone:
        st: FilesState = p.apps.files
        return close_dialog(
            p.set_app("files", FilesState(tuple(f for f in st.files if f.uid != uid), st.folders))
        )

    return handler


def _rename_open(f: File):
    return lambda p, a: p.set_top(
        replace(p.screen.with_field("name", f.name), dialog=("rename", f.uid))
    )


def _rename_ok(uid: int):
    def handler(p: Phone, a: Any) -> Phone:
        name = p.screen.field("name").strip()
        if not name:
            return p
        return close_dialog(_update(p, uid, name=name))

    return handler


def _new_folder(p: Phone, a: Any) -> Phone:
    name = p.screen.field("folder").strip()
    st: FilesState = p.apps.files
    if not name or name in st.folders or name == TRASH:
        return p
    return close_dialog(p.set_app("files", FilesState(st.files, st.folders + (name,))))


def _new_folder_open(p: Phone, a: Any) -> Phone:
    return p.set_top(replace(p.screen.with_field("folder", ""), dialog=("new_folder",)))


def view(phone: Phone, route: Route, b: ViewBuilder) -> None:
    st: FilesState = phone.apps.files
    dialog = route.dialog
    if route.screen == "root":
        if dialog is not None:
            prompt(b, route, "New folder", "folder", "Folder name", "Create", _new_folder)
            return
        appbar(b, "Files", (("btn:new_folder", "New folder", _new_folder_open),), show_back=False)
        b.vlist(_folder_rows(st), APPBAR_BOTTOM, H, route.scroll)
        return
    folder = route.arg
    if dialog is not None:
        f = st.by_uid(dialog[1])
        if f is not None:
            _file_dialog(b, route, st, f, dialog[0])
        return
    appbar(b, folder)
    b.vlist(_file_rows(st, folder), APPBAR_BOTTOM, H, route.scroll)


@memo
def _folder_rows(st: FilesState) -> tuple[Any, ...]:
    return tuple(
        row(
            f"{folder} ({len(st.in_folder(folder))} files)",
            f"folder:{folder}",
            push(Route("Files", "folder", folder)),
        )
        for folder in st.folders + (TRASH,)
    )


@memo
def _file_rows(st: FilesState, folder: str) -> tuple[Any, ...]:
    return tuple(_file_row(f) for f in st.in_folder(folder)) or (text_row("This folder is empty"),)


@memo
def _file_row(f: File) -> Any:
    return row(
        f"{f.name}  {f.size}",
        f"file:{f.name}",
        open_dialog("info", f.uid),
        open_dialog("menu", f.uid),
    )


def _file_dialog(b: ViewBuilder, route: Route, st: FilesState, f: File, kind: str) -> None:
    if kind == "menu":
        if f.folder == TRASH:
            options = [
                ("Restore", "menu:restore", _restore(f), None),
                ("Delete forever", "menu:erase", open_dialog("erase", f.uid), None),
            ]
        else:
            options = [
                ("Rename", "menu:rename", _rename_open(f), None),
                ("Move to", "menu:move", open_dialog("move", f.uid), None),
                ("Delete", "menu:delete", open_dialog("delete", f.uid), None),
                ("Details", "menu:details", open_dialog("info", f.uid), None),
            ]
        choice(b, f.name, options)
    elif kind == "info":
        notice(b, f.name, [f"Size: {f.size}", f"Folder: {f.folder}"])
    elif kind == "move":
        choice(
            b,
            "Move to",
            [
                (name, f"move:{name}", _move(f.uid, name), None)
                for name in st.folders
                if name != f.folder
            ],
        )
    elif kind == "delete":
        confirm(b, "Delete file?", f"Move {f.name} to the Trash?", "Delete", _trash(f))
    elif kind == "erase":
        confirm(b, "Delete forever?", f"{f.name} will be gone for good.", "Delete", _erase(f.uid))
    elif kind == "rename":
        prompt(b, route, "Rename", "name", "File name", "Rename", _rename_ok(f.uid))


APP = App("Files", "files", Route("Files", "root"), generate, view)
