"""Long tasks that carry information across apps: a value is read in one app (a code in Mail,
a number in Contacts, a date in Messages) and used in two or three others."""

from __future__ import annotations

from dataclasses import replace
from random import Random
from types import MappingProxyType as P
from typing import Any

from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.calendar import date_text
from adaroll.envs.mobile.apps.contacts import email_for, full_names, phone_number
from adaroll.envs.mobile.apps.notes import Note, NotesState
from adaroll.envs.mobile.apps.shop import PAYMENTS
from adaroll.envs.mobile.state import next_uid
from adaroll.envs.mobile.tasks.base import register
from adaroll.envs.mobile.tasks.calendar import goto_day, has_event
from adaroll.envs.mobile.tasks.clock import free_time
from adaroll.envs.mobile.tasks.contacts import goto_detail
from adaroll.envs.mobile.tasks.files import folder_path
from adaroll.envs.mobile.tasks.long.acts import (
    code,
    emailed,
    read_email,
    texted,
    with_email,
    with_incoming,
)
from adaroll.envs.mobile.tasks.long.parts import LongTemplate, Part, goal, look, sub
from adaroll.envs.mobile.tasks.messages import thread_path
from adaroll.envs.mobile.tasks.notes import editor_path, new_title
from adaroll.envs.mobile.tasks.settings import path as settings_path
from adaroll.envs.mobile.tasks.shop import add_product, fill_checkout, in_cart, shipping
from adaroll.envs.mobile.world import Apps

SECURITY = ("Security Team", "security@accounts.example")


def _contact(rng: Random, world: Apps, exclude: set[str] = frozenset()) -> Any:  # type: ignore[assignment]
    return rng.choice([c for c in world.contacts.contacts if c.name not in exclude])


def _thread_contact(rng: Random, world: Apps, exclude: set[str] = frozenset()) -> str:  # type: ignore[assignment]
    return rng.choice([t.contact for t in world.messages.threads if t.contact not in exclude])


def _code_email(rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
    value = code(rng)
    world, uid = with_email(world, *SECURITY, "Verification code", f"Your code is {value}.")
    return {"code": value, "mail_uid": uid}, world


@register
class CodeToDeviceName(LongTemplate):
    name = "long.code_to_device_name"
    apps = ("Mail", "Settings", "Messages")
    tags = ("cross_app", "text", "dialog")
    instruction = (
        'Find the email "Verification code", rename this phone to "Phone" followed by '
        "a space and the code, then text the code to {contact}"
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        p, world = _code_email(rng, world)
        return {**p, "contact": _thread_contact(rng, world)}, world

    def parts(self, p: P) -> list[Part]:
        return [
            look("Mail", read_email(p["mail_uid"])),
            sub("settings.device_name", device=f"Phone {p['code']}"),
            texted(p["contact"], p["code"]),
        ]


@register
class CodeToNoteAndEmail(LongTemplate):
    name = "long.code_to_note_and_email"
    apps = ("Mail", "Notes")
    tags = ("cross_app", "text")
    instruction = (
        'Find the email "Verification code", save the code in a new note titled '
        '"Code", then email it to {contact} with the subject "Code"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        world = _without_note(world, "Code")
        p, world = _code_email(rng, world)
        c = _contact(rng, world)
        return {**p, "contact": c.name, "address": c.email}, world

    def parts(self, p: P) -> list[Part]:
        return [
            look("Mail", read_email(p["mail_uid"])),
            sub("notes.create_with_text", title="Code", body=p["code"]),
            emailed(p["contact"], p["address"], "Code", p["code"]),
        ]


def _without_note(world: Apps, title: str) -> Apps:
    return replace(world, notes=NotesState(tuple(n for n in world.notes.notes if n.title != title)))


@register
class NumberToNoteAndText(LongTemplate):
    name = "long.number_to_note_and_text"
    apps = ("Contacts", "Notes", "Messages")
    tags = ("cross_app", "text", "scroll")
    instruction = (
        "Look up the phone number of {person} in Contacts, save it in a new note titled "
        '"{title}", then text the number to {contact}'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        contact = _thread_contact(rng, world)
        person = _contact(rng, world, {contact})
        return {
            "person": person.name,
            "uid": person.uid,
            "phone": person.phone,
            "contact": contact,
            "title": f"{person.name.split()[0]}'s number",
        }, world

    def parts(self, p: P) -> list[Part]:
        return [
            look("Contacts", lambda x: goto_detail(x, p["uid"])),
            sub("notes.create_with_text", title=p["title"], body=p["phone"]),
            texted(p["contact"], p["phone"]),
        ]


@register
class StrangerToContact(LongTemplate):
    name = "long.stranger_to_contact"
    apps = ("Mail", "Contacts", "Messages")
    tags = ("cross_app", "text", "scroll")
    instruction = (
        'Read the email "Nice to meet you", add its sender to Contacts with the phone '
        'number and email address they gave, then text them "{text}"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        name = full_names(rng, 1, {c.name for c in world.contacts.contacts})[0]
        number, address = phone_number(rng), email_for(name, rng)
        body = f"Great to meet you. Call me at {number} or write to {address}."
        world, uid = with_email(world, name, address, "Nice to meet you", body)
        return {
            "name": name,
            "phone": number,
            "email": address,
            "mail_uid": uid,
            "text": rng.choice(data.REPLY_TEXTS),
        }, world

    def parts(self, p: P) -> list[Part]:
        return [
            look("Mail", read_email(p["mail_uid"])),
            sub("contacts.add_with_email", name=p["name"], phone=p["phone"], email=p["email"]),
            texted(p["name"], p["text"]),
        ]


@register
class MeetingFromMessage(LongTemplate):
    name = "long.meeting_from_message"
    apps = ("Messages", "Calendar", "Clock")
    tags = ("cross_app", "text", "picker", "dialog")
    instruction = (
        'Read the last message from {contact}, add an event "{title}" on the day and '
        'hour they suggest, set an alarm one hour before it labelled "{title}", and '
        'reply "{text}"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        contact = _thread_contact(rng, world)
        day, hour = rng.randrange(10, 31), rng.randrange(9, 20)
        world = with_incoming(
            world, contact, f"Can we meet on {date_text(1, day)} at {hour:02d}:00?"
        )
        title = f"Meet {contact.split()[0]}"
        return {
            "contact": contact,
            "day": day,
            "hour": hour,
            "title": title,
            "text": rng.choice(("See you then", "Count me in", "Sounds good")),
        }, world

    def parts(self, p: P) -> list[Part]:
        return [
            look("Messages", lambda x: x.goto("Messages", thread_path(p["contact"]))),
            sub("calendar.add_event_time", month=1, day=p["day"], title=p["title"], hour=p["hour"]),
            sub("clock.new_alarm_label", hour=p["hour"] - 1, minute=0, label=p["title"]),
            texted(p["contact"], p["text"]),
        ]


@register
class DeliveryFromMail(LongTemplate):
    name = "long.delivery_from_mail"
    apps = ("Mail", "Calendar", "Messages")
    tags = ("cross_app", "text")
    instruction = (
        'Read the email "Delivery date", add an event "Delivery" on the day it names, and '
        "text {contact} the product and the date like: Desk Lamp arrives July 3"
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        product = rng.choice(world.shop.catalog).name
        month = rng.choice((1, 2))
        day = rng.randrange(1, data.MONTH_DAYS[month] + 1)
        date = date_text(month, day)
        world, uid = with_email(
            world,
            "Shop",
            "orders@shop.example",
            "Delivery date",
            f"Your {product} arrives on {date}.",
        )
        return {
            "product": product,
            "month": month,
            "day": day,
            "mail_uid": uid,
            "contact": _thread_contact(rng, world),
            "text": f"{product} arrives {date}",
        }, world

    def parts(self, p: P) -> list[Part]:
        return [
            look("Mail", read_email(p["mail_uid"])),
            sub("calendar.add_event", month=p["month"], day=p["day"], title="Delivery"),
            texted(p["contact"], p["text"]),
        ]


@register
class EventToEmailAndAlarm(LongTemplate):
    name = "long.event_to_email_and_alarm"
    apps = ("Calendar", "Mail", "Clock")
    tags = ("cross_app", "text", "picker", "dialog")
    instruction = (
        'Look up when "{title}" on {date} starts, email {contact} with the subject '
        '"{title}" and the start time as HH:MM as the text, and set an alarm at that '
        'time labelled "{title}"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        e = rng.choice(
            [
                e
                for e in world.calendar.events
                if len({x.title for x in world.calendar.on(e.month, e.day)})
                == len(world.calendar.on(e.month, e.day))
            ]
        )
        c = _contact(rng, world)
        return {
            "title": e.title,
            "date": date_text(e.month, e.day),
            "month": e.month,
            "day": e.day,
            "hour": e.hour,
            "time": e.time,
            "contact": c.name,
            "address": c.email,
        }, world

    def parts(self, p: P) -> list[Part]:
        return [
            look("Calendar", lambda x: goto_day(x, p["month"], p["day"])),
            emailed(p["contact"], p["address"], p["title"], p["time"]),
            sub("clock.new_alarm_label", hour=p["hour"], minute=0, label=p["title"]),
        ]


@register
class ListToCartCheckout(LongTemplate):
    name = "long.list_to_cart_checkout"
    apps = ("Notes", "Shop")
    tags = ("cross_app", "text", "multi")
    instruction = (
        'Buy the two products listed in the note "{title}" and ship them to "{name}", '
        '"{address}", "{city}", paying with {payment}'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        first, second = rng.sample([p.name for p in world.shop.catalog if not p.options], 2)
        title = new_title(rng, world)
        notes = world.notes.notes
        uid = next_uid(notes)
        world = replace(world, notes=NotesState(notes + (Note(uid, title, f"{first}, {second}"),)))
        return {
            **shipping(rng),
            "title": title,
            "uid": uid,
            "product": first,
            "product2": second,
        }, world

    def parts(self, p: P) -> list[Part]:
        def ordered(w: Apps) -> bool:
            return any(
                {i.product for i in o.items} >= {p["product"], p["product2"]}
                and (o.name, o.address, o.city, o.payment)
                == (p["name"], p["address"], p["city"], p["payment"])
                for o in w.shop.orders
            )

        def buy(x: Any) -> Any:
            for key in ("product", "product2"):
                if not in_cart(x.apps, p[key]):
                    return add_product(x, p[key], "", 1)
            return fill_checkout(x, p)

        return [
            look("Notes", lambda x: x.goto("Notes", editor_path(p["uid"]))),
            goal("Shop", buy, ordered),
        ]


@register
class NewNumberFromMail(LongTemplate):
    name = "long.new_number_from_mail"
    apps = ("Mail", "Contacts")
    tags = ("cross_app", "text", "scroll")
    instruction = (
        'Read the email "New number" from {contact}, update their phone number in '
        'Contacts, then reply to the email with "{text}"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        c = _contact(rng, world)
        number = phone_number(rng)
        world, uid = with_email(
            world, c.name, c.email, "New number", f"Hi! My new number is {number}."
        )
        return {
            "contact": c.name,
            "uid": c.uid,
            "phone": number,
            "mail_uid": uid,
            "address": c.email,
            "text": rng.choice(("Updated, thanks", "Got it, saved", "Thanks, noted")),
        }, world

    def parts(self, p: P) -> list[Part]:
        return [
            look("Mail", read_email(p["mail_uid"])),
            sub("contacts.edit_phone", uid=p["uid"], name=p["contact"], phone=p["phone"]),
            sub(
                "mail.reply",
                uid=p["mail_uid"],
                subject="New number",
                address=p["address"],
                text=p["text"],
            ),
        ]


@register
class PhoneInfoToSupport(LongTemplate):
    name = "long.phone_info_to_support"
    apps = ("Settings", "Mail", "Notes")
    tags = ("cross_app", "text", "scroll")
    instruction = (
        "Look up the model and Android version in Settings > About phone, email them to "
        '{contact} with the subject "Phone info" and the text like "Pixel 8, Android 14", '
        'and save the same text in a new note titled "Phone info"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        world = _without_note(world, "Phone info")
        c = _contact(rng, world)
        s = world.settings
        return {
            "contact": c.name,
            "address": c.email,
            "text": f"{s.model}, Android {s.android}",
        }, world

    def parts(self, p: P) -> list[Part]:
        return [
            look("Settings", lambda x: x.goto("Settings", settings_path("about"))),
            emailed(p["contact"], p["address"], "Phone info", p["text"]),
            sub("notes.create_with_text", title="Phone info", body=p["text"]),
        ]


@register
class FileSizeToMessage(LongTemplate):
    name = "long.file_size_to_message"
    apps = ("Files", "Messages")
    tags = ("cross_app", "text", "long_press", "dialog", "scroll")
    instruction = (
        'Text {contact} the size of "{file}" in {folder} like "{file} is 2.4 MB", then '
        "move the file to {target}"
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        folder = rng.choice(data.FOLDERS)
        f = rng.choice(world.files.in_folder(folder))
        return {
            "uid": f.uid,
            "file": f.name,
            "folder": folder,
            "contact": _thread_contact(rng, world),
            "target": rng.choice([d for d in data.FOLDERS if d != folder]),
            "text": f"{f.name} is {f.size}",
        }, world

    def parts(self, p: P) -> list[Part]:
        return [
            look("Files", lambda x: x.goto("Files", folder_path(p["folder"]))),
            texted(p["contact"], p["text"]),
            sub("files.move", uid=p["uid"], file=p["file"], folder=p["folder"], target=p["target"]),
        ]


@register
class ReminderFromMessage(LongTemplate):
    name = "long.reminder_from_message"
    apps = ("Messages", "Clock", "Notes")
    tags = ("cross_app", "text", "picker", "dialog")
    instruction = (
        "{contact} asks you in Messages to be reminded of something at a certain time: "
        "set an alarm at that time with the thing to do as its label, save the same "
        'thing in a new note titled "Reminder", and reply "{text}"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        world = _without_note(world, "Reminder")
        contact = _thread_contact(rng, world)
        hour, minute = free_time(rng, world)
        todo = rng.choice(("Call the bank", "Pay rent", "Book tickets", "Water plants", "Buy milk"))
        world = with_incoming(
            world, contact, f"Please remind me at {hour:02d}:{minute:02d}: {todo}"
        )
        return {
            "contact": contact,
            "hour": hour,
            "minute": minute,
            "todo": todo,
            "text": rng.choice(("Will do", "Alarm set", "Done")),
        }, world

    def parts(self, p: P) -> list[Part]:
        return [
            look("Messages", lambda x: x.goto("Messages", thread_path(p["contact"]))),
            sub("clock.new_alarm_label", hour=p["hour"], minute=p["minute"], label=p["todo"]),
            sub("notes.create_with_text", title="Reminder", body=p["todo"]),
            texted(p["contact"], p["text"]),
        ]


@register
class TripFromMessage(LongTemplate):
    name = "long.trip_from_message"
    apps = ("Messages", "Clock", "Calendar")
    tags = ("cross_app", "text", "tabs", "scroll")
    instruction = (
        "{contact} tells you in Messages where and when they land: add that city to the "
        'world clock, add an event "{title}" on that day, and reply "{text}"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        contact = _thread_contact(rng, world)
        city = rng.choice([c for c in data.CITIES if c not in world.clock.cities])
        day = rng.randrange(10, 31)
        world = with_incoming(world, contact, f"I land in {city} on {date_text(1, day)}!")
        title = f"Pick up {contact.split()[0]}"
        return {
            "contact": contact,
            "city": city,
            "day": day,
            "title": title,
            "text": rng.choice(("See you at the airport", "Safe flight", "I'll be there")),
        }, world

    def parts(self, p: P) -> list[Part]:
        return [
            look("Messages", lambda x: x.goto("Messages", thread_path(p["contact"]))),
            sub("clock.add_city", city=p["city"]),
            sub("calendar.add_event", month=1, day=p["day"], title=p["title"]),
            texted(p["contact"], p["text"]),
        ]


@register
class InviteByMailAndText(LongTemplate):
    name = "long.invite_mail_and_text"
    apps = ("Calendar", "Mail", "Messages")
    tags = ("cross_app", "text", "picker", "dialog")
    instruction = (
        'Add an event "{title}" on {date} at {time}, email {guest} with the subject '
        '"{title}" and the text "{date} at {time}", and text {contact} "{date} at {time}"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        month, day, hour = 1, rng.randrange(10, 31), rng.randrange(10, 21)
        title = rng.choice(
            [
                t
                for t in ("Birthday party", "Game night", "Board games", "Barbecue")
                if not has_event(world, month, day, t)
            ]
        )
        contact = _thread_contact(rng, world)
        guest = _contact(rng, world, {contact})
        return {
            "title": title,
            "month": month,
            "day": day,
            "hour": hour,
            "date": date_text(month, day),
            "time": f"{hour:02d}:00",
            "guest": guest.name,
            "address": guest.email,
            "contact": contact,
        }, world

    def parts(self, p: P) -> list[Part]:
        when = f"{p['date']} at {p['time']}"
        return [
            sub(
                "calendar.add_event_time",
                month=p["month"],
                day=p["day"],
                title=p["title"],
                hour=p["hour"],
            ),
            emailed(p["guest"], p["address"], p["title"], when),
            texted(p["contact"], when),
        ]


@register
class PayBackFromMail(LongTemplate):
    name = "long.cart_from_mail_checkout"
    apps = ("Mail", "Shop")
    tags = ("cross_app", "text", "multi")
    instruction = (
        'Read the email "Gift list" from {contact}, add each product it names to the cart '
        'in the quantity it gives, and check out to {contact}, "{address}", "{city}", '
        "paying with {payment}"
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        c = _contact(rng, world)
        first, second = rng.sample([p.name for p in world.shop.catalog if not p.options], 2)
        q1, q2 = rng.randrange(1, 4), rng.randrange(1, 4)
        world, uid = with_email(
            world, c.name, c.email, "Gift list", f"{q1} x {first} and {q2} x {second}, please!"
        )
        return {
            "contact": c.name,
            "name": c.name,
            "mail_uid": uid,
            "product": first,
            "qty": q1,
            "product2": second,
            "qty2": q2,
            "address": f"{rng.randrange(2, 99)} {rng.choice(data.STREETS)}",
            "city": rng.choice(data.TOWNS),
            "payment": rng.choice(PAYMENTS),
        }, world

    def parts(self, p: P) -> list[Part]:
        def ordered(w: Apps) -> bool:
            want = {(p["product"], p["qty"]), (p["product2"], p["qty2"])}
            return any(
                {(i.product, i.qty) for i in o.items} >= want
                and (o.name, o.address, o.city, o.payment)
                == (p["name"], p["address"], p["city"], p["payment"])
                for o in w.shop.orders
            )

        def buy(x: Any) -> Any:
            for key, qty in (("product", "qty"), ("product2", "qty2")):
                if not in_cart(x.apps, p[key]):
                    return add_product(x, p[key], "", p[qty])
            return fill_checkout(x, p)

        return [look("Mail", read_email(p["mail_uid"])), goal("Shop", buy, ordered)]
