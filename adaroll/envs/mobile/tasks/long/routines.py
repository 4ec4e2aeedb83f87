"""Long tasks that are forms over several screens (a product page, the cart, the checkout
form) or a routine of settings across apps (bedtime, travel, a new colleague, a party)."""

from __future__ import annotations

from dataclasses import replace
from random import Random
from types import MappingProxyType as P
from typing import Any

from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.calendar import date_text
from adaroll.envs.mobile.apps.clock import LABELS
from adaroll.envs.mobile.apps.contacts import email_for, full_names, phone_number
from adaroll.envs.mobile.tasks.base import register
from adaroll.envs.mobile.tasks.calendar import has_event
from adaroll.envs.mobile.tasks.clock import free_time
from adaroll.envs.mobile.tasks.contacts import goto_detail
from adaroll.envs.mobile.tasks.long.acts import emailed, texted
from adaroll.envs.mobile.tasks.long.parts import LongTemplate, Part, goal, sub
from adaroll.envs.mobile.tasks.notes import new_title
from adaroll.envs.mobile.tasks.settings import path
from adaroll.envs.mobile.tasks.shop import add_product, fill_checkout, in_cart, shipping, variant
from adaroll.envs.mobile.world import Apps


def _with(world: Apps, **settings: Any) -> Apps:
    return replace(world, settings=replace(world.settings, **settings))


def _order(p: P, want: set[tuple[str, str, int]]) -> Part:
    """Add each (product, option, qty) of ``want`` to the cart, then check out with ``p``'s
    shipping details; the goal is an order holding all of them, shipped as asked."""

    def ordered(w: Apps) -> bool:
        return any(
            {(i.product, i.option, i.qty) for i in o.items} >= want
            and (o.name, o.address, o.city, o.payment)
            == (p["name"], p["address"], p["city"], p["payment"])
            for o in w.shop.orders
        )

    items = sorted(want)

    def act(x: Any) -> Any:
        for product, option, qty in items:
            if not in_cart(x.apps, product, option, qty):
                return add_product(x, product, option, qty)
        return fill_checkout(x, p)

    return goal("Shop", act, ordered)


@register
class BuyWithOptions(LongTemplate):
    name = "long.shop_buy_with_options"
    apps = ("Shop",)
    tags = ("text", "multi")
    instruction = (
        'Buy {q0} "{p0}" in {v0} and {q1} "{p1}" in {v1}, and ship them to "{name}", '
        '"{address}", "{city}", paying with {payment}'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        p: dict[str, Any] = shipping(rng)
        for i, prod in enumerate(rng.sample([x for x in world.shop.catalog if x.options], 2)):
            option = rng.choice(prod.options)
            p |= {
                f"p{i}": prod.name,
                f"o{i}": option,
                f"q{i}": rng.randrange(1, 4),
                f"v{i}": variant(prod.option_kind, option),
            }
        return p, world

    def parts(self, p: P) -> list[Part]:
        return [_order(p, {(p[f"p{i}"], p[f"o{i}"], p[f"q{i}"]) for i in range(2)})]


@register
class BuyThree(LongTemplate):
    name = "long.shop_buy_three"
    apps = ("Shop",)
    tags = ("text", "multi")
    instruction = (
        'Buy "{p0}", "{p1}" and "{p2}" and ship them to "{name}", "{address}", "{city}", '
        "paying with {payment}"
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        picked = rng.sample([x.name for x in world.shop.catalog if not x.options], 3)
        return {**shipping(rng), **{f"p{i}": n for i, n in enumerate(picked)}}, world

    def parts(self, p: P) -> list[Part]:
        return [_order(p, {(p[f"p{i}"], "", 1) for i in range(3)})]


@register
class NewColleague(LongTemplate):
    name = "long.new_colleague"
    apps = ("Contacts", "Mail", "Messages")
    tags = ("text", "multi", "cross_app", "scroll")
    instruction = (
        'Add a contact "{name}" with phone "{phone}" and email "{email}", add them to your '
        'favorites, email them with the subject "Welcome" and the text "{body}", and text '
        'them "{text}"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        name = full_names(rng, 1, {c.name for c in world.contacts.contacts})[0]
        return {
            "name": name,
            "phone": phone_number(rng),
            "email": email_for(name, rng),
            "body": rng.choice(("Welcome to the team", "Glad to have you", "Welcome aboard")),
            "text": rng.choice(data.REPLY_TEXTS),
        }, world

    def parts(self, p: P) -> list[Part]:
        def favorite(x: Any) -> Any:
            c = x.apps.contacts.by_name(p["name"])
            return goto_detail(x, c.uid) or x.press("toggle:favorite")

        def is_favorite(w: Apps) -> bool:
            c = w.contacts.by_name(p["name"])
            return c is not None and c.favorite

        return [
            sub("contacts.add_with_email", name=p["name"], phone=p["phone"], email=p["email"]),
            goal("Contacts", favorite, is_favorite),
            emailed(p["name"], p["email"], "Welcome", p["body"]),
            texted(p["name"], p["text"]),
        ]


@register
class PartyPlanning(LongTemplate):
    name = "long.party_planning"
    apps = ("Calendar", "Notes", "Messages")
    tags = ("text", "multi", "cross_app", "picker", "dialog")
    instruction = (
        'Add an event "{title}" on {date} at {time}, create a note "{note}" with the text '
        '"{body}", and text {c0} and {c1} "{invite}"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        day, hour = rng.randrange(1, 31), rng.randrange(12, 22)
        title = rng.choice(
            [
                t
                for t in ("Birthday party", "Dinner party", "Game night", "Barbecue")
                if not has_event(world, 1, day, t)
            ]
        )
        c0, c1 = rng.sample([t.contact for t in world.messages.threads], 2)
        date = date_text(1, day)
        return {
            "title": title,
            "day": day,
            "hour": hour,
            "date": date,
            "time": f"{hour:02d}:00",
            "note": new_title(rng, world),
            "body": ", ".join(rng.sample(data.NOTE_WORDS, 3)),
            "c0": c0,
            "c1": c1,
            "invite": f"{title} on {date} at {hour:02d}:00",
        }, world

    def parts(self, p: P) -> list[Part]:
        return [
            sub("calendar.add_event_time", month=1, day=p["day"], title=p["title"], hour=p["hour"]),
            sub("notes.create_with_text", title=p["note"], body=p["body"]),
            texted(p["c0"], p["invite"]),
            texted(p["c1"], p["invite"]),
        ]


@register
class MorningSetup(LongTemplate):
    name = "long.morning_setup"
    apps = ("Clock", "Settings")
    tags = ("picker", "dialog", "text", "tabs", "slider", "cross_app", "multi")
    instruction = (
        'Set an alarm for {time} labelled "{label}", add {city} to the world clock, start a '
        "timer for {minutes} minutes, and set the screen brightness to {value}%"
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        hour, minute = free_time(rng, world)
        value = rng.randrange(1, 11) * 10
        world = _with(world, brightness=rng.choice([v for v in range(10, 101, 10) if v != value]))
        return {
            "hour": hour,
            "minute": minute,
            "time": f"{hour:02d}:{minute:02d}",
            "label": rng.choice(LABELS),
            "value": value,
            "city": rng.choice([c for c in data.CITIES if c not in world.clock.cities]),
            "minutes": rng.choice((5, 10, 15, 20, 25, 30, 45)),
        }, world

    def parts(self, p: P) -> list[Part]:
        return [
            sub("clock.new_alarm_label", hour=p["hour"], minute=p["minute"], label=p["label"]),
            sub("clock.add_city", city=p["city"]),
            sub("clock.timer", minutes=p["minutes"]),
            sub("settings.brightness", value=p["value"]),
        ]


@register
class Bedtime(LongTemplate):
    name = "long.settings_bedtime"
    apps = ("Settings",)
    tags = ("multi", "slider", "dialog")
    instruction = (
        "Get the phone ready for the night: turn on the dark theme, Do Not Disturb and "
        "Battery Saver, set the brightness to {value}%, the ring volume to {volume}%, the "
        "ringtone to {tone} and the font size to {size}"
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        value, volume = rng.randrange(1, 5) * 10, rng.randrange(0, 4) * 10
        tone = rng.choice(data.RINGTONES)
        size = rng.choice([s for s in data.FONT_SIZES if s != "Default"])
        world = _with(
            world,
            dark_mode=False,
            dnd=False,
            battery_saver=False,
            brightness=rng.randrange(6, 11) * 10,
            ring_volume=rng.randrange(5, 11) * 10,
            ringtone=rng.choice([t for t in data.RINGTONES if t != tone]),
        )
        return {"value": value, "volume": volume, "tone": tone, "size": size}, world

    def parts(self, p: P) -> list[Part]:
        return [
            sub("settings.dark_theme", target=True),
            sub("settings.brightness", value=p["value"]),
            sub("settings.font_size", size=p["size"]),
            sub("settings.dnd", target=True),
            sub("settings.sound_profile", tone=p["tone"], volume=p["volume"]),
            sub("settings.battery_saver", target=True),
        ]


@register
class Travel(LongTemplate):
    name = "long.travel_ready"
    apps = ("Settings", "Clock", "Calendar")
    tags = ("multi", "cross_app", "dialog", "scroll", "tabs", "text")
    instruction = (
        "Get ready to fly to {city}: turn on airplane mode and Bluetooth, switch the language "
        'to {language}, add {city} to the world clock and add an event "Flight to {city}" '
        "on {date}"
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        city = rng.choice([c for c in data.CITIES if c not in world.clock.cities])
        day = rng.randrange(10, 31)
        world = _with(world, airplane=False, bluetooth=False)
        return {
            "city": city,
            "day": day,
            "date": date_text(1, day),
            "language": rng.choice([x for x in data.LANGUAGES if x != "English"]),
        }, world

    def parts(self, p: P) -> list[Part]:
        def airplane(x: Any) -> Any:
            return x.goto("Settings", path("network")) or x.press("toggle:airplane")

        return [
            goal("Settings", airplane, lambda w: w.settings.airplane),
            sub("settings.bluetooth", target=True),
            sub("settings.language", language=p["language"]),
            sub("clock.add_city", city=p["city"]),
            sub("calendar.add_event", month=1, day=p["day"], title=f"Flight to {p['city']}"),
        ]


@register
class ContactCardRefresh(LongTemplate):
    name = "long.contact_refresh"
    apps = ("Contacts", "Messages")
    tags = ("text", "multi", "cross_app", "scroll")
    instruction = (
        'Change the phone number of {a} to "{pa}" and of {b} to "{pb}", add {a} to your '
        'favorites, and text {a} "{text}"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        a, b = rng.sample([c for c in world.contacts.contacts if not c.favorite], 2)
        return {
            "a": a.name,
            "a_uid": a.uid,
            "pa": phone_number(rng),
            "b": b.name,
            "b_uid": b.uid,
            "pb": phone_number(rng),
            "text": rng.choice(data.REPLY_TEXTS),
        }, world

    def parts(self, p: P) -> list[Part]:
        return [
            sub("contacts.edit_phone", uid=p["a_uid"], name=p["a"], phone=p["pa"]),
            sub("contacts.edit_phone", uid=p["b_uid"], name=p["b"], phone=p["pb"]),
            sub("contacts.favorite", uid=p["a_uid"]),
            texted(p["a"], p["text"]),
        ]
