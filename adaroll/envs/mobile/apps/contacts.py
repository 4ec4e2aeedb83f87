"""Contacts: a searchable alphabetical list, favourites tab, detail card, add/edit/delete.

The detail card links to Messages and Mail (cross-app navigation)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from random import Random
from typing import Any

from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.base import App
from adaroll.envs.mobile.screen import APPBAR_BOTTOM, TABS_BOTTOM, H, ViewBuilder, memo
from adaroll.envs.mobile.state import Phone, Route, next_uid
from adaroll.envs.mobile.widgets import (
    appbar,
    confirm,
    fab,
    notice,
    open_dialog,
    push,
    replace_top,
    row,
    tabs,
    text_field,
    text_row,
    toggle_row,
)


@dataclass(frozen=True, slots=True)
class Contact:
    uid: int
    name: str
    phone: str
    email: str
    favorite: bool = False


@dataclass(frozen=True, slots=True)
class ContactsState:
    contacts: tuple[Contact, ...]

    def by_uid(self, uid: int) -> Contact | None:
        return next((c for c in self.contacts if c.uid == uid), None)

    def by_name(self, name: str) -> Contact | None:
        return next((c for c in self.contacts if c.name == name), None)


def phone_number(rng: Random) -> str:
    return f"555-{rng.randrange(100, 1000)}-{rng.randrange(1000, 10000)}"


def email_for(name: str, rng: Random) -> str:
    first, last = name.lower().split(" ", 1)
    return f"{first}.{last.replace(' ', '')}@{rng.choice(data.DOMAINS)}"


def full_names(rng: Random, k: int, exclude: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
    names: list[str] = []
    while len(names) < k:
        name = f"{rng.choice(data.FIRST_NAMES)} {rng.choice(data.LAST_NAMES)}"
        if (
            name not in names
            and name not in exclude
            and name.split()[0] not in {n.split()[0] for n in names}
        ):
            names.append(name)
    return names


def generate(rng: Random, _made: dict[str, Any]) -> ContactsState:
    names = full_names(rng, rng.randrange(16, 23))
    favs = set(rng.sample(names, rng.randrange(2, 5)))
    contacts = tuple(
        Contact(i + 1, n, phone_number(rng), email_for(n, rng), n in favs)
        for i, n in enumerate(names)
    )
    return ContactsState(contacts)


def sorted_contacts(state: ContactsState) -> list[Contact]:
    return sorted(state.contacts, key=lambda c: (c.name.casefold(), c.uid))


# -- handlers -----------------------------------------------------------------------------------


def _save(p: Phone, a: Any) -> Phone:
    top = p.screen
    name, number, email = (top.field(k).strip() for k in ("name", "phone", "email"))
    if not name:
        return p.update_top(dialog=("required",), focus=None)
    state: ContactsState = p.apps.contacts
    if top.arg is None:
        contacts = state.contacts + (Contact(next_uid(state.contacts), name, number, email),)
    else:
        contacts = tuple(
            replace(c, name=name, phone=number, email=email) if c.uid == top.arg else c
            for c in state.contacts
        )
    return p.set_app("contacts", ContactsState(contacts)).pop()


def _delete(uid: int):
    def handler(p: Phone, a: Any) -> Phone:
        state: ContactsState = p.apps.contacts
        kept = tuple(c for c in state.contacts if c.uid != uid)
        return p.set_app("contacts", ContactsState(kept)).pop()

    return handler


def _toggle_favorite(uid: int):
    def handler(p: Phone, a: Any) -> Phone:
        state: ContactsState = p.apps.contacts
        return p.set_app(
            "contacts",
            ContactsState(
                tuple(
                    replace(c, favorite=not c.favorite) if c.uid == uid else c
                    for c in state.contacts
                )
            ),
        )

    return handler


def _edit(c: Contact):
    return push(
        Route(
            "Contacts",
            "edit",
            c.uid,
            fields=(("name", c.name), ("phone", c.phone), ("email", c.email)),
        )
    )


def _message(name: str):
    stack = (Route("Messages", "threads"), Route("Messages", "thread", name))
    return lambda p, a: p.with_stack(stack)


def _email(address: str):
    stack = (
        Route("Mail", "inbox", "Inbox"),
        Route("Mail", "compose", ("new", None), fields=(("to", address),)),
    )
    return lambda p, a: p.with_stack(stack)


@memo
def _list_rows(state: ContactsState, favorites: bool, query: str) -> tuple[Any, ...]:
    people = [
        c
        for c in sorted_contacts(state)
        if (c.favorite if favorites else query in c.name.casefold())
    ]
    return tuple(_contact_row(c) for c in people) or (text_row("No contacts"),)


@memo
def _contact_row(c: Contact) -> Any:
    return row(c.name, f"contact:{c.uid}", push(Route("Contacts", "detail", c.uid)))


_TAB = {
    "All": replace_top(Route("Contacts", "list")),
    "Favorites": replace_top(Route("Contacts", "favorites")),
}
_NEW = push(Route("Contacts", "edit", None))


# -- screens ------------------------------------------------------------------------------------


def view(phone: Phone, route: Route, b: ViewBuilder) -> None:
    state: ContactsState = phone.apps.contacts
    screen = route.screen
    if screen in ("list", "favorites"):
        appbar(b, "Contacts", show_back=False)
        tabs(b, ("All", "Favorites"), "All" if screen == "list" else "Favorites", _TAB.__getitem__)
        top, query = TABS_BOTTOM, ""
        if screen == "list":
            text_field(
                b,
                route,
                "search",
                "Search contacts",
                (24, TABS_BOTTOM + 8, 1056, TABS_BOTTOM + 136),
            )
            query = route.field("search").strip().casefold()
            top = TABS_BOTTOM + 144
        b.vlist(_list_rows(state, screen == "favorites", query), top, H, route.scroll)
        if screen == "list":
            fab(b, "Add contact", _NEW)
        return
    if screen == "detail":
        c = state.by_uid(route.arg)
        if c is None:  # deleted meanwhile: show an empty card
            appbar(b, "Contact")
            return
        if route.dialog is not None:
            confirm(b, "Delete contact?", f"{c.name} will be removed.", "Delete", _delete(c.uid))
            return
        appbar(
            b,
            c.name,
            (("btn:edit", "Edit", _edit(c)), ("btn:delete", "Delete", open_dialog("delete"))),
        )
        rows = [
            text_row(f"Phone: {c.phone}", 150),
            text_row(f"Email: {c.email}", 150),
            toggle_row("Favorite", "toggle:favorite", c.favorite, _toggle_favorite(c.uid)),
            row("Message", "btn:message", _message(c.name), role="button", height=150),
            row("Send email", "btn:email", _email(c.email), role="button", height=150),
        ]
        b.vlist(rows, APPBAR_BOTTOM, H, 0)
        return
    # edit / new contact form
    if route.dialog is not None:
        notice(b, "Missing name", ["Enter a name to save the contact."])
        return
    appbar(
        b, "New contact" if route.arg is None else "Edit contact", (("btn:save", "Save", _save),)
    )
    for i, (name, hint) in enumerate((("name", "Name"), ("phone", "Phone"), ("email", "Email"))):
        y = 260 + i * 170
        text_field(b, route, name, hint, (48, y, 1032, y + 140))


APP = App("Contacts", "contacts", Route("Contacts", "list"), generate, view)
