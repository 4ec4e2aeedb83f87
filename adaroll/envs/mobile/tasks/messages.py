"""Messages tasks: reply, start a conversation, delete one, read a message, and share a
phone number looked up in Contacts (cross-app)."""

from __future__ import annotations

from random import Random
from types import MappingProxyType as P
from typing import Any

from adaroll.actions import Action, ActionKind
from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.contacts import full_names, phone_number
from adaroll.envs.mobile.expert import Expert, Hop
from adaroll.envs.mobile.tasks.base import TaskTemplate, register
from adaroll.envs.mobile.tasks.contacts import LIST, goto_detail
from adaroll.envs.mobile.world import Apps

THREADS: Hop = ("threads", None, None)


def thread_path(contact: str) -> list[Hop]:
    return [THREADS, ("thread", contact, f"thread:{contact}")]


def sent_last(world: Apps, contact: str, text: str) -> bool:
    t = world.messages.thread(contact)
    return t is not None and t.messages[-1].outgoing and t.messages[-1].text == text


def send_in_thread(x: Expert, contact: str, text: str) -> Action:
    """From anywhere: open the existing thread with ``contact`` and send ``text``."""
    return (
        x.goto("Messages", thread_path(contact)) or x.fill("message", text) or x.press("btn:send")
    )


def in_app(x: Expert, app: str) -> bool:
    return x.top is not None and x.route.app == app


@register
class Reply(TaskTemplate):
    name = "messages.reply"
    apps = ("Messages",)
    tags = ("text",)
    instruction = 'Reply "{text}" to {contact}'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        thread = rng.choice(world.messages.threads)
        return {"contact": thread.contact, "text": rng.choice(data.REPLY_TEXTS)}, world

    def check(self, world: Apps, p: P) -> bool:
        return sent_last(world, p["contact"], p["text"])

    def expert(self, x: Expert, p: P) -> Action:
        return send_in_thread(x, p["contact"], p["text"])


@register
class NewConversation(TaskTemplate):
    name = "messages.new_conversation"
    apps = ("Messages",)
    tags = ("text",)
    instruction = 'Start a conversation with "{contact}" and send "{text}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        busy = {t.contact for t in world.messages.threads}
        free = [c.name for c in world.contacts.contacts if c.name not in busy]
        return {"contact": rng.choice(free), "text": rng.choice(data.MESSAGE_TEXTS)}, world

    def check(self, world: Apps, p: P) -> bool:
        return sent_last(world, p["contact"], p["text"])

    def expert(self, x: Expert, p: P) -> Action:
        top, contact = x.top, p["contact"]
        if (
            top is not None
            and top.app == "Messages"
            and top.screen == "thread"
            and top.arg == contact
        ):
            return x.fill("message", p["text"]) or x.press("btn:send")
        return (
            x.goto("Messages", [THREADS, ("compose", None, "fab")])
            or x.fill("to", contact)
            or x.press(f"suggest:{contact}")
        )


@register
class DeleteConversation(TaskTemplate):
    name = "messages.delete_conversation"
    apps = ("Messages",)
    tags = ("long_press", "dialog")
    instruction = "Delete the conversation with {contact}"

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        thread = rng.choice(world.messages.threads)
        return {"contact": thread.contact, "count": len(world.messages.threads)}, world

    def check(self, world: Apps, p: P) -> bool:
        threads = world.messages.threads
        return len(threads) == p["count"] - 1 and world.messages.thread(p["contact"]) is None

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Messages", [THREADS]) or (
            x.press("dlg:ok") if x.route.dialog else x.long_press(f"thread:{p['contact']}")
        )


@register
class LastMessage(TaskTemplate):
    name = "messages.last_message"
    apps = ("Messages",)
    tags = ("answer",)
    heldout = True
    instruction = "What did {contact} write in their last message to you? Answer with the message."

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return {"contact": rng.choice(world.messages.threads).contact}, world

    def answer(self, world: Apps, p: P) -> str:
        return world.messages.thread(p["contact"]).last_incoming

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Messages", thread_path(p["contact"])) or Action.done(self.answer(x.apps, p))


@register
class SharePhone(TaskTemplate):
    name = "messages.share_phone"
    apps = ("Contacts", "Messages")
    tags = ("cross_app", "text", "scroll")
    instruction = (
        "Look up the phone number of {person} in Contacts and send it to {contact} in Messages"
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        contact = rng.choice(world.messages.threads).contact
        person = rng.choice([c for c in world.contacts.contacts if c.name != contact])
        return {
            "contact": contact,
            "person": person.name,
            "uid": person.uid,
            "phone": person.phone,
        }, world

    def check(self, world: Apps, p: P) -> bool:
        t = world.messages.thread(p["contact"])
        return t is not None and any(m.outgoing and p["phone"] in m.text for m in t.messages)

    def expert(self, x: Expert, p: P) -> Action:
        if in_app(x, "Messages"):
            return send_in_thread(x, p["contact"], p["phone"])
        return goto_detail(x, p["uid"]) or Action(ActionKind.OPEN_APP, app="Messages")


@register
class MessageFromCard(TaskTemplate):
    name = "messages.from_contact_card"
    apps = ("Contacts", "Messages")
    tags = ("cross_app", "text", "scroll")
    instruction = 'Open {contact} in Contacts, tap Message and send "{text}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        c = rng.choice(world.contacts.contacts)
        return {"contact": c.name, "uid": c.uid, "text": rng.choice(data.REPLY_TEXTS)}, world

    def check(self, world: Apps, p: P) -> bool:
        return sent_last(world, p["contact"], p["text"])

    def expert(self, x: Expert, p: P) -> Action:
        if in_app(x, "Messages"):
            return send_in_thread(x, p["contact"], p["text"])
        return goto_detail(x, p["uid"]) or x.press("btn:message")


@register
class AddAndText(TaskTemplate):
    name = "messages.add_contact_and_text"
    apps = ("Contacts", "Messages")
    tags = ("cross_app", "text", "scroll", "multi")
    instruction = (
        'Add a contact "{contact}" with the phone number "{phone}", then open their '
        'contact card, tap Message and send "{text}"'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        existing = {c.name for c in world.contacts.contacts}
        name = full_names(rng, 1, existing)[0]
        return {
            "contact": name,
            "phone": phone_number(rng),
            "text": rng.choice(data.REPLY_TEXTS),
        }, world

    def check(self, world: Apps, p: P) -> bool:
        c = world.contacts.by_name(p["contact"])
        return c is not None and c.phone == p["phone"] and sent_last(world, p["contact"], p["text"])

    def expert(self, x: Expert, p: P) -> Action:
        if in_app(x, "Messages"):
            return send_in_thread(x, p["contact"], p["text"])
        c = x.apps.contacts.by_name(p["contact"])
        if c is None:
            go = x.goto("Contacts", [LIST, ("edit", None, "fab")])
            return (
                go
                or x.fill("name", p["contact"])
                or x.fill("phone", p["phone"])
                or x.press("btn:save")
            )
        return goto_detail(x, c.uid) or x.press("btn:message")
