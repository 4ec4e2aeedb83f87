"""Contacts tasks: add/edit/delete/favourite contacts and read details back."""

from __future__ import annotations

from dataclasses import replace
from random import Random
from types import MappingProxyType as P
from typing import Any

from adaroll.actions import Action
from adaroll.envs.mobile.apps.contacts import (
    Contact,
    ContactsState,
    email_for,
    full_names,
    phone_number,
)
from adaroll.envs.mobile.expert import Expert, Hop
from adaroll.envs.mobile.tasks.base import TaskTemplate, register
from adaroll.envs.mobile.world import Apps

LIST: Hop = ("list", None, "tab:All")
FAVORITES: Hop = ("favorites", None, "tab:Favorites")


def detail_path(uid: int) -> list[Hop]:
    return [LIST, ("detail", uid, f"contact:{uid}")]


def goto_detail(x: Expert, uid: int) -> Action | None:
    return x.goto("Contacts", detail_path(uid))


def pick(rng: Random, world: Apps, **where: Any) -> Contact:
    people = [
        c for c in world.contacts.contacts if all(getattr(c, k) == v for k, v in where.items())
    ]
    return rng.choice(people)


def _new_contact(rng: Random, world: Apps) -> tuple[str, str, str]:
    existing = {c.name for c in world.contacts.contacts}
    name = full_names(rng, 1, existing)[0]
    return name, phone_number(rng), email_for(name, rng)


class _AddContact(TaskTemplate):
    apps = ("Contacts",)
    tags = ("text",)
    with_email = False

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        name, number, email = _new_contact(rng, world)
        return {"name": name, "phone": number, "email": email}, world

    def check(self, world: Apps, p: P) -> bool:
        return any(
            c.name == p["name"]
            and c.phone == p["phone"]
            and (not self.with_email or c.email == p["email"])
            for c in world.contacts.contacts
        )

    def expert(self, x: Expert, p: P) -> Action:
        go = x.goto("Contacts", [LIST, ("edit", None, "fab")])
        if go:
            return go
        return (
            x.fill("name", p["name"])
            or x.fill("phone", p["phone"])
            or (self.with_email and x.fill("email", p["email"]))
            or x.press("btn:save")
        )


@register
class AddContact(_AddContact):
    name = "contacts.add"
    instruction = 'Add a contact named "{name}" with the phone number "{phone}"'


@register
class AddContactEmail(_AddContact):
    name = "contacts.add_with_email"
    with_email = True
    instruction = 'Add a contact "{name}" with phone "{phone}" and email "{email}"'


@register
class DeleteContact(TaskTemplate):
    name = "contacts.delete"
    apps = ("Contacts",)
    tags = ("dialog", "scroll")
    instruction = "Delete the contact {name}"

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        c = pick(rng, world)
        return {"name": c.name, "uid": c.uid, "count": len(world.contacts.contacts)}, world

    def check(self, world: Apps, p: P) -> bool:
        cs = world.contacts.contacts
        return len(cs) == p["count"] - 1 and all(c.uid != p["uid"] for c in cs)

    def expert(self, x: Expert, p: P) -> Action:
        return goto_detail(x, p["uid"]) or (
            x.press("dlg:ok") if x.route.dialog else x.press("btn:delete")
        )


@register
class FavoriteContact(TaskTemplate):
    name = "contacts.favorite"
    apps = ("Contacts",)
    tags = ("scroll",)
    instruction = "Add {name} to your favorite contacts"

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        c = pick(rng, world, favorite=False)
        return {"name": c.name, "uid": c.uid}, world

    def check(self, world: Apps, p: P) -> bool:
        c = world.contacts.by_uid(p["uid"])
        return c is not None and c.favorite

    def expert(self, x: Expert, p: P) -> Action:
        return goto_detail(x, p["uid"]) or x.press("toggle:favorite")


@register
class EditPhone(TaskTemplate):
    name = "contacts.edit_phone"
    apps = ("Contacts",)
    tags = ("text", "scroll")
    instruction = 'Change the phone number of {name} to "{phone}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        c = pick(rng, world)
        return {"name": c.name, "uid": c.uid, "phone": phone_number(rng)}, world

    def check(self, world: Apps, p: P) -> bool:
        c = world.contacts.by_uid(p["uid"])
        return c is not None and c.phone == p["phone"] and c.name == p["name"]

    def expert(self, x: Expert, p: P) -> Action:
        uid = p["uid"]
        return (
            x.goto("Contacts", detail_path(uid) + [("edit", uid, "btn:edit")])
            or x.fill("phone", p["phone"])
            or x.press("btn:save")
        )


class _DetailAnswer(TaskTemplate):
    apps = ("Contacts",)
    tags = ("answer", "scroll")
    attr = ""

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        c = pick(rng, world)
        return {"name": c.name, "uid": c.uid}, world

    def answer(self, world: Apps, p: P) -> str:
        return getattr(world.contacts.by_uid(p["uid"]), self.attr)

    def expert(self, x: Expert, p: P) -> Action:
        return goto_detail(x, p["uid"]) or Action.done(self.answer(x.apps, p))


@register
class PhoneAnswer(_DetailAnswer):
    name = "contacts.phone_answer"
    attr = "phone"
    instruction = "What is the phone number of {name}? Answer with the number."


@register
class EmailAnswer(_DetailAnswer):
    name = "contacts.email_answer"
    attr = "email"
    heldout = True
    instruction = "What is the email address of {name}? Answer with the address."


@register
class CountFavorites(TaskTemplate):
    name = "contacts.count_favorites"
    apps = ("Contacts",)
    tags = ("answer", "tabs")
    instruction = "How many contacts are in your favorites? Answer with a number."

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return {}, world

    def answer(self, world: Apps, p: P) -> str:
        return str(sum(c.favorite for c in world.contacts.contacts))

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Contacts", [FAVORITES]) or Action.done(self.answer(x.apps, p))


@register
class ClearFavorites(TaskTemplate):
    name = "contacts.clear_favorites"
    apps = ("Contacts",)
    tags = ("tabs", "multi")
    instruction = "Remove every contact from your favorites"

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        cs = list(world.contacts.contacts)
        favs = set(rng.sample(range(len(cs)), rng.randrange(2, 4)))
        cs = [replace(c, favorite=i in favs) for i, c in enumerate(cs)]
        return {"count": len(cs)}, replace(world, contacts=ContactsState(tuple(cs)))

    def check(self, world: Apps, p: P) -> bool:
        cs = world.contacts.contacts
        return len(cs) == p["count"] and not any(c.favorite for c in cs)

    def expert(self, x: Expert, p: P) -> Action:
        top = x.top
        fav = next(c for c in x.apps.contacts.contacts if c.favorite)
        if top is not None and top.app == "Contacts" and top.screen == "detail":
            current = x.apps.contacts.by_uid(top.arg)
            if current is not None and current.favorite:
                fav = current  # finish the card that is open
        return x.goto(
            "Contacts", [FAVORITES, ("detail", fav.uid, f"contact:{fav.uid}")]
        ) or x.press("toggle:favorite")
