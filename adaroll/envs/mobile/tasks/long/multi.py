"""Long tasks made of several edits of the same kind in one app: three notes, three contacts,
an inbox triage, a day of alarms, a week of events, a cart, a folder clean-up."""

from __future__ import annotations

from dataclasses import replace
from random import Random
from types import MappingProxyType as P
from typing import Any

from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.calendar import date_text
from adaroll.envs.mobile.apps.clock import LABELS, Alarm
from adaroll.envs.mobile.apps.contacts import ContactsState, full_names, phone_number
from adaroll.envs.mobile.apps.files import TRASH
from adaroll.envs.mobile.apps.mail import MailState
from adaroll.envs.mobile.apps.notes import NotesState
from adaroll.envs.mobile.state import next_uid
from adaroll.envs.mobile.tasks.base import get_template, register
from adaroll.envs.mobile.tasks.calendar import has_event, pick_event
from adaroll.envs.mobile.tasks.clock import ALARMS, free_time
from adaroll.envs.mobile.tasks.contacts import goto_detail
from adaroll.envs.mobile.tasks.long.acts import note_body_is, note_gone, texted
from adaroll.envs.mobile.tasks.long.parts import LongTemplate, Part, goal, sub
from adaroll.envs.mobile.tasks.mail import email_path
from adaroll.envs.mobile.tasks.notes import LIST
from adaroll.envs.mobile.tasks.shop import (
    CART,
    add_product,
    fill_cart,
    fill_checkout,
    in_cart,
    item_key,
    shipping,
    variant,
)
from adaroll.envs.mobile.world import Apps


def _titles(rng: Random, world: Apps, k: int) -> list[str]:
    used = {n.title for n in world.notes.notes}
    return rng.sample([t for t in data.NOTE_TITLES if t not in used], k)


def _body(rng: Random) -> str:
    return ", ".join(rng.sample(data.NOTE_WORDS, 2))


@register
class ThreeNotes(LongTemplate):
    name = "long.notes_three"
    apps = ("Notes",)
    tags = ("text", "multi")
    instruction = (
        'Create three notes: "{t0}" with the text "{b0}", "{t1}" with the text "{b1}" '
        'and "{t2}" with the text "{b2}"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        titles = _titles(rng, world, 3)
        return {
            **{f"t{i}": t for i, t in enumerate(titles)},
            **{f"b{i}": _body(rng) for i in range(3)},
        }, world

    def parts(self, p: P) -> list[Part]:
        return [sub("notes.create_with_text", title=p[f"t{i}"], body=p[f"b{i}"]) for i in range(3)]


@register
class ReorderList(LongTemplate):
    name = "long.notes_reorder_list"
    apps = ("Notes",)
    tags = ("text", "multi", "long_press", "dialog", "scroll")
    instruction = (
        'Rewrite the shopping list in the note "{title}" so it reads "{sorted}" (the same '
        'items in alphabetical order), pin that note, delete the note "{old}", and create a '
        'note "{new}" with the text "{new_body}"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        items = rng.sample(data.NOTE_WORDS, 4)
        while items == sorted(items):
            rng.shuffle(items)
        notes = [replace(n, pinned=False) for n in world.notes.notes]
        target = rng.choice(notes)
        notes = [replace(n, body=", ".join(items)) if n is target else n for n in notes]
        old = rng.choice([n for n in notes if n.uid != target.uid])
        world = replace(world, notes=NotesState(tuple(notes)))
        return {
            "title": target.title,
            "uid": target.uid,
            "sorted": ", ".join(sorted(items)),
            "old": old.title,
            "old_uid": old.uid,
            "new": _titles(rng, world, 1)[0],
            "new_body": _body(rng),
        }, world

    def parts(self, p: P) -> list[Part]:
        return [
            note_body_is(p["uid"], p["sorted"]),
            sub("notes.pin", uid=p["uid"]),
            note_gone(p["old_uid"], p["old"]),
            sub("notes.create_with_text", title=p["new"], body=p["new_body"]),
        ]


@register
class ThreeContacts(LongTemplate):
    name = "long.contacts_three"
    apps = ("Contacts",)
    tags = ("text", "multi")
    instruction = (
        'Add three contacts: "{n0}" with the number "{p0}", "{n1}" with the number '
        '"{p1}" and "{n2}" with the number "{p2}"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        names = full_names(rng, 3, {c.name for c in world.contacts.contacts})
        return {
            **{f"n{i}": n for i, n in enumerate(names)},
            **{f"p{i}": phone_number(rng) for i in range(3)},
        }, world

    def parts(self, p: P) -> list[Part]:
        return [sub("contacts.add", name=p[f"n{i}"], phone=p[f"p{i}"]) for i in range(3)]


def _toggle_fav(uid: int, want: bool) -> Part:
    def act(x: Any) -> Any:
        return goto_detail(x, uid) or x.press("toggle:favorite")

    def check(w: Apps) -> bool:
        c = w.contacts.by_uid(uid)
        return c is not None and c.favorite == want

    return goal("Contacts", act, check)


@register
class FavoritesReset(LongTemplate):
    name = "long.contacts_favorites_reset"
    apps = ("Contacts",)
    tags = ("multi", "scroll", "tabs")
    instruction = "Make {a}, {b} and {c} your only favorite contacts"

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        cs = list(world.contacts.contacts)
        picked = rng.sample(cs, 5)
        old, new = picked[:2], picked[2:]
        cs = [replace(c, favorite=c in old) for c in cs]
        world = replace(world, contacts=ContactsState(tuple(cs)))
        return {
            "old": tuple(c.uid for c in old),
            "new": tuple(c.uid for c in new),
            "a": new[0].name,
            "b": new[1].name,
            "c": new[2].name,
        }, world

    def parts(self, p: P) -> list[Part]:
        return [
            *(_toggle_fav(uid, False) for uid in p["old"]),
            *(_toggle_fav(uid, True) for uid in p["new"]),
        ]


def _archived(uid: int) -> Part:
    def act(x: Any) -> Any:
        return x.goto("Mail", email_path(uid)) or x.press("btn:archive")

    def check(w: Apps) -> bool:
        e = w.mail.by_uid(uid)
        return e is not None and e.folder == "archive"

    return goal("Mail", act, check)


@register
class InboxTriage(LongTemplate):
    name = "long.mail_triage"
    apps = ("Mail",)
    tags = ("multi", "scroll")
    instruction = 'Star the emails "{s0}" and "{s1}", archive "{a0}" and "{a1}", and delete "{d0}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        emails = [replace(e, folder="inbox", starred=False) for e in world.mail.emails]
        world = replace(world, mail=MailState(tuple(emails), world.mail.sent))
        picked = rng.sample(emails, 5)
        keys = ("s0", "s1", "a0", "a1", "d0")
        return {
            **{k: e.subject for k, e in zip(keys, picked, strict=True)},
            **{f"{k}_uid": e.uid for k, e in zip(keys, picked, strict=True)},
        }, world

    def parts(self, p: P) -> list[Part]:
        return [
            sub("mail.star", uid=p["s0_uid"]),
            sub("mail.star", uid=p["s1_uid"]),
            _archived(p["a0_uid"]),
            _archived(p["a1_uid"]),
            sub("mail.delete", uid=p["d0_uid"]),
        ]


@register
class RepliesAndForward(LongTemplate):
    name = "long.mail_replies_forward"
    apps = ("Mail",)
    tags = ("text", "multi", "scroll")
    instruction = (
        'Reply "{r0}" to the email "{s0}", reply "{r1}" to the email "{s1}", and forward '
        'the email "{s2}" to "{contact}"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        picked = rng.sample([e for e in world.mail.emails if e.folder == "inbox"], 3)
        r0, r1 = rng.sample(data.REPLY_TEXTS, 2)
        c = rng.choice([c for c in world.contacts.contacts if c.email != picked[2].address])
        p = {"r0": r0, "r1": r1, "contact": c.name, "to": c.email}
        for i, e in enumerate(picked):
            p |= {f"s{i}": e.subject, f"uid{i}": e.uid, f"addr{i}": e.address}
        return p, world

    def parts(self, p: P) -> list[Part]:
        return [
            sub("mail.reply", uid=p["uid0"], subject=p["s0"], address=p["addr0"], text=p["r0"]),
            sub("mail.reply", uid=p["uid1"], subject=p["s1"], address=p["addr1"], text=p["r1"]),
            sub("mail.forward", uid=p["uid2"], subject=p["s2"], contact=p["contact"], to=p["to"]),
        ]


@register
class ThreeAlarms(LongTemplate):
    name = "long.clock_three_alarms"
    apps = ("Clock",)
    tags = ("picker", "dialog", "text", "multi")
    instruction = (
        'Set three alarms: {time0} labelled "{l0}", {time1} labelled "{l1}" and {time2} '
        'labelled "{l2}"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        p: dict[str, Any] = {}
        used: set[tuple[int, int]] = set()
        for i, label in enumerate(rng.sample(LABELS, 3)):
            t = free_time(rng, world)
            while t in used:
                t = free_time(rng, world)
            used.add(t)
            p |= {
                f"h{i}": t[0],
                f"m{i}": t[1],
                f"time{i}": f"{t[0]:02d}:{t[1]:02d}",
                f"l{i}": label,
            }
        return p, world

    def parts(self, p: P) -> list[Part]:
        return [
            sub("clock.new_alarm_label", hour=p[f"h{i}"], minute=p[f"m{i}"], label=p[f"l{i}"])
            for i in range(3)
        ]


@register
class AlarmsCleanup(LongTemplate):
    name = "long.clock_alarms_cleanup"
    apps = ("Clock",)
    tags = ("picker", "dialog", "text", "multi")
    instruction = (
        "Turn off the {off0} and {off1} alarms, delete the alarm at {gone}, and set an "
        'alarm for {time} labelled "{label}"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        alarms = list(world.clock.alarms)
        while len(alarms) < 4:
            t = free_time(rng, replace(world, clock=replace(world.clock, alarms=tuple(alarms))))
            alarms.append(Alarm(next_uid(tuple(alarms)), *t, ""))
        picked = rng.sample(alarms, 3)
        alarms = [replace(a, enabled=True) if a in picked[:2] else a for a in alarms]
        world = replace(world, clock=replace(world.clock, alarms=tuple(alarms)))
        hour, minute = free_time(rng, world)
        return {
            "off": (picked[0].uid, picked[1].uid),
            "off0": picked[0].time,
            "off1": picked[1].time,
            "gone_uid": picked[2].uid,
            "gone": picked[2].time,
            "hour": hour,
            "minute": minute,
            "time": f"{hour:02d}:{minute:02d}",
            "label": rng.choice(LABELS),
        }, world

    def parts(self, p: P) -> list[Part]:
        def delete(x: Any) -> Any:
            uid = p["gone_uid"]
            return x.goto("Clock", [ALARMS, ("alarm_edit", uid, f"alarm:{uid}")]) or (
                x.press("dlg:ok") if x.route.dialog else x.press("btn:delete")
            )

        return [
            *(sub("clock.alarm_off", uid=uid) for uid in p["off"]),
            goal("Clock", delete, lambda w: all(a.time != p["gone"] for a in w.clock.alarms)),
            sub("clock.new_alarm_label", hour=p["hour"], minute=p["minute"], label=p["label"]),
        ]


@register
class ThreeEvents(LongTemplate):
    name = "long.calendar_three_events"
    apps = ("Calendar",)
    tags = ("text", "picker", "dialog", "multi")
    instruction = (
        'Add three events: "{t0}" on {d0} at {time0}, "{t1}" on {d1} at {time1} and '
        '"{t2}" on {d2} at {time2}'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        p: dict[str, Any] = {}
        days = rng.sample(range(1, 31), 3)
        for i, (title, day) in enumerate(zip(rng.sample(data.EVENT_TITLES, 3), days, strict=True)):
            if has_event(world, 1, day, title):
                return self.setup(rng, world)
            hour = rng.choice([h for h in range(7, 22) if h != 9])
            p |= {
                f"t{i}": title,
                f"day{i}": day,
                f"d{i}": date_text(1, day),
                f"h{i}": hour,
                f"time{i}": f"{hour:02d}:00",
            }
        return p, world

    def parts(self, p: P) -> list[Part]:
        return [
            sub(
                "calendar.add_event_time",
                month=1,
                day=p[f"day{i}"],
                title=p[f"t{i}"],
                hour=p[f"h{i}"],
            )
            for i in range(3)
        ]


@register
class WeekPlan(LongTemplate):
    name = "long.calendar_week_plan"
    apps = ("Calendar",)
    tags = ("text", "picker", "dialog", "multi")
    instruction = (
        'Move "{title}" on {date} to {new_time}, delete "{gone}" on {gone_date}, and add '
        'an event "{t0}" on {d0} at {time0}'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        moved = pick_event(rng, world)
        gone = rng.choice([e for e in world.calendar.events if e.uid != moved.uid])
        hour = rng.choice([h for h in range(7, 22) if h != moved.hour])
        day = rng.randrange(1, 31)
        title = rng.choice([t for t in data.EVENT_TITLES if not has_event(world, 1, day, t)])
        h0 = rng.choice([h for h in range(7, 22) if h != 9])
        return {
            "uid": moved.uid,
            "title": moved.title,
            "month": moved.month,
            "day": moved.day,
            "date": date_text(moved.month, moved.day),
            "hour": hour,
            "new_time": f"{hour:02d}:00",
            "gone_uid": gone.uid,
            "gone": gone.title,
            "gone_month": gone.month,
            "gone_day": gone.day,
            "gone_date": date_text(gone.month, gone.day),
            "t0": title,
            "day0": day,
            "d0": date_text(1, day),
            "h0": h0,
            "time0": f"{h0:02d}:00",
        }, world

    def parts(self, p: P) -> list[Part]:
        delete = get_template("calendar.delete_event")
        q = P({"uid": p["gone_uid"], "month": p["gone_month"], "day": p["gone_day"]})
        gone = (
            p["gone_uid"],
            p["gone"],
            p["gone_month"],
            p["gone_day"],
        )  # a new event may reuse the uid
        return [
            sub(
                "calendar.reschedule", uid=p["uid"], month=p["month"], day=p["day"], hour=p["hour"]
            ),
            goal(
                "Calendar",
                lambda x: delete.expert(x, q),
                lambda w: all((e.uid, e.title, e.month, e.day) != gone for e in w.calendar.events),
            ),
            sub("calendar.add_event_time", month=1, day=p["day0"], title=p["t0"], hour=p["h0"]),
        ]


@register
class ThreeItemsCart(LongTemplate):
    name = "long.shop_three_items"
    apps = ("Shop",)
    tags = ("text", "multi")
    instruction = (
        'Add to the shopping cart: {q0} "{p0}" in {v0}, {q1} "{p1}" in {v1} and {q2} "{p2}"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        with_opts = rng.sample([p for p in world.shop.catalog if p.options], 2)
        plain = rng.choice([p for p in world.shop.catalog if not p.options])
        p: dict[str, Any] = {}
        for i, prod in enumerate((*with_opts, plain)):
            option = rng.choice(prod.options) if prod.options else ""
            p |= {
                f"p{i}": prod.name,
                f"o{i}": option,
                f"q{i}": rng.randrange(1, 4),
                f"v{i}": variant(prod.option_kind, option) if option else "",
            }
        return p, world

    def parts(self, p: P) -> list[Part]:
        def item(i: int) -> Part:
            name, option, qty = p[f"p{i}"], p[f"o{i}"], p[f"q{i}"]
            return goal(
                "Shop",
                lambda x: add_product(x, name, option, qty),
                lambda w: in_cart(w, name, option, qty),
            )

        return [item(i) for i in range(3)]


@register
class CartFixCheckout(LongTemplate):
    name = "long.shop_cart_fix_checkout"
    apps = ("Shop",)
    tags = ("text", "multi")
    instruction = (
        'Remove "{gone}" from the cart, change the quantity of "{product}" to {qty}, then '
        'check out to "{name}", "{address}", "{city}", paying with {payment}'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        world = fill_cart(rng, world, 3)
        gone, kept, other = rng.sample(list(world.shop.cart), 3)
        qty = rng.choice([q for q in range(1, 6) if q != kept.qty])
        return {
            **shipping(rng),
            "gone": gone.product,
            "gone_key": item_key(gone),
            "product": kept.product,
            "key": item_key(kept),
            "qty": qty,
            "other": item_key(other),
        }, world

    def parts(self, p: P) -> list[Part]:
        def ordered(w: Apps) -> bool:
            return any(
                {item_key(i): i.qty for i in o.items}.get(p["key"]) == p["qty"]
                and p["gone_key"] not in {item_key(i) for i in o.items}
                and p["other"] in {item_key(i) for i in o.items}
                and (o.name, o.address, o.city, o.payment)
                == (p["name"], p["address"], p["city"], p["payment"])
                for o in w.shop.orders
            )

        def act(x: Any) -> Any:
            cart = {item_key(i): i for i in x.apps.shop.cart}
            if p["gone_key"] in cart:
                return x.goto("Shop", CART) or x.press(f"remove:{p['gone_key']}")
            item = cart[p["key"]]
            if item.qty != p["qty"]:
                return x.goto("Shop", CART) or x.press(
                    f"plus:{p['key']}" if item.qty < p["qty"] else f"minus:{p['key']}"
                )
            return fill_checkout(x, p)

        return [goal("Shop", act, ordered)]


@register
class FolderOfThree(LongTemplate):
    name = "long.files_folder_of_three"
    apps = ("Files",)
    tags = ("dialog", "text", "long_press", "scroll", "multi")
    instruction = 'Create a folder named "{folder}" and move "{f0}", "{f1}" and "{f2}" into it'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        folder = rng.choice(data.NEW_FOLDER_NAMES)
        picked = rng.sample([f for f in world.files.files if f.folder in data.FOLDERS], 3)
        return {
            "folder": folder,
            **{f"f{i}": f.name for i, f in enumerate(picked)},
            **{f"uid{i}": f.uid for i, f in enumerate(picked)},
            **{f"from{i}": f.folder for i, f in enumerate(picked)},
        }, world

    def parts(self, p: P) -> list[Part]:
        return [
            sub("files.new_folder", folder=p["folder"]),
            *(sub("files.move", uid=p[f"uid{i}"], target=p["folder"]) for i in range(3)),
        ]


@register
class FilesCleanup(LongTemplate):
    name = "long.files_cleanup"
    apps = ("Files",)
    tags = ("dialog", "text", "long_press", "scroll", "multi")
    instruction = (
        'Delete "{d0}" from {df0} and "{d1}" from {df1}, rename "{r}" in {rf} to "{new}", '
        'and restore "{t}" from the Trash'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        d0, d1, r = rng.sample([f for f in world.files.files if f.folder in data.FOLDERS], 3)
        t = rng.choice(world.files.in_folder(TRASH))
        ext = r.name[r.name.rindex(".") :]
        used = {g.name for g in world.files.files}
        new = rng.choice(
            [
                n
                for n in (f"{s}_{y}{ext}" for s in data.FILE_STEMS for y in (2024, 2025))
                if n not in used
            ]
        )
        return {
            "d0": d0.name,
            "d0_uid": d0.uid,
            "df0": d0.folder,
            "d1": d1.name,
            "d1_uid": d1.uid,
            "df1": d1.folder,
            "r": r.name,
            "r_uid": r.uid,
            "rf": r.folder,
            "new": new,
            "t": t.name,
            "t_uid": t.uid,
            "origin": t.origin,
        }, world

    def parts(self, p: P) -> list[Part]:
        return [
            sub("files.delete", uid=p["d0_uid"]),
            sub("files.delete", uid=p["d1_uid"]),
            sub("files.rename", uid=p["r_uid"], new=p["new"], folder=p["rf"]),
            sub("files.restore", uid=p["t_uid"], origin=p["origin"]),
        ]


@register
class ThreeReplies(LongTemplate):
    name = "long.messages_three_replies"
    apps = ("Messages",)
    tags = ("text", "multi")
    instruction = 'Reply "{r0}" to {c0}, "{r1}" to {c1} and "{r2}" to {c2}'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        contacts = rng.sample([t.contact for t in world.messages.threads], 3)
        texts = rng.sample(data.REPLY_TEXTS, 3)
        return {
            **{f"c{i}": c for i, c in enumerate(contacts)},
            **{f"r{i}": t for i, t in enumerate(texts)},
        }, world

    def parts(self, p: P) -> list[Part]:
        return [texted(p[f"c{i}"], p[f"r{i}"]) for i in range(3)]


@register
class NotesSpringClean(LongTemplate):
    name = "long.notes_spring_clean"
    apps = ("Notes",)
    tags = ("text", "multi", "dialog", "long_press", "scroll")
    instruction = (
        'Delete the notes "{g0}" and "{g1}", unpin "{u}", and create a note "{title}" with '
        'the text "{body}"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        notes = list(world.notes.notes)
        g0, g1, u = rng.sample(notes, 3)
        notes = [
            replace(n, pinned=n.uid == u.uid or (n.pinned and n.uid not in (g0.uid, g1.uid)))
            for n in notes
        ]
        world = replace(world, notes=NotesState(tuple(notes)))
        title = _titles(rng, world, 1)[0]
        return {
            "g0": g0.title,
            "g0_uid": g0.uid,
            "g1": g1.title,
            "g1_uid": g1.uid,
            "u": u.title,
            "u_uid": u.uid,
            "title": title,
            "body": _body(rng),
        }, world

    def parts(self, p: P) -> list[Part]:
        def unpin(x: Any) -> Any:
            return x.goto("Notes", [LIST]) or (
                x.press("menu:pin") if x.route.dialog else x.long_press(f"note:{p['u_uid']}")
            )

        def unpinned(w: Apps) -> bool:
            n = w.notes.by_uid(p["u_uid"])
            return n is not None and not n.pinned

        return [
            note_gone(p["g0_uid"], p["g0"]),
            note_gone(p["g1_uid"], p["g1"]),
            goal("Notes", unpin, unpinned),
            sub("notes.create_with_text", title=p["title"], body=p["body"]),
        ]
