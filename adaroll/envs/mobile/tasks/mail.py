"""Mail tasks: star, delete, archive a sender's emails, compose, reply, forward to a contact
(suggested in To), read the sender, mark as unread."""

from __future__ import annotations

from dataclasses import replace
from random import Random
from types import MappingProxyType as P
from typing import Any

from adaroll.actions import Action
from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.mail import Email, MailState
from adaroll.envs.mobile.expert import Expert, Hop
from adaroll.envs.mobile.tasks.base import TaskTemplate, register
from adaroll.envs.mobile.world import Apps

INBOX: Hop = ("inbox", "Inbox", "tab:Inbox")


def email_path(uid: int) -> list[Hop]:
    return [INBOX, ("email", uid, f"mail:{uid}")]


def pick(rng: Random, world: Apps, **where: Any) -> Email:
    return rng.choice(
        [
            e
            for e in world.mail.emails
            if e.folder == "inbox" and all(getattr(e, k) == v for k, v in where.items())
        ]
    )


def _ident(e: Email) -> dict[str, Any]:
    return {"uid": e.uid, "subject": e.subject, "sender": e.sender, "address": e.address}


def sent(world: Apps, to: str, subject: str, body: str | None) -> bool:
    return any(
        s.to == to and s.subject == subject and (body is None or s.body == body)
        for s in world.mail.sent
    )


@register
class Star(TaskTemplate):
    name = "mail.star"
    apps = ("Mail",)
    tags = ("scroll",)
    instruction = 'Star the email "{subject}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return _ident(pick(rng, world, starred=False)), world

    def check(self, world: Apps, p: P) -> bool:
        e = world.mail.by_uid(p["uid"])
        return e is not None and e.starred

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Mail", email_path(p["uid"])) or x.press("btn:star")


@register
class Delete(TaskTemplate):
    name = "mail.delete"
    apps = ("Mail",)
    tags = ("scroll",)
    instruction = 'Delete the email "{subject}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return _ident(pick(rng, world)), world

    def check(self, world: Apps, p: P) -> bool:
        e = world.mail.by_uid(p["uid"])
        return e is not None and e.folder == "trash"

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Mail", email_path(p["uid"])) or x.press("btn:delete")


@register
class ArchiveSender(TaskTemplate):
    name = "mail.archive_sender"
    apps = ("Mail",)
    tags = ("multi", "scroll")
    instruction = "Archive every email from {sender}"

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        emails = list(world.mail.emails)
        src = rng.choice(emails)
        targets = set(rng.sample(range(len(emails)), rng.randrange(2, 4)))
        emails = [
            replace(e, sender=src.sender, address=src.address, folder="inbox")
            if i in targets
            else e
            for i, e in enumerate(emails)
        ]
        world = replace(world, mail=MailState(tuple(emails), world.mail.sent))
        others = tuple((e.uid, e.folder) for e in emails if e.sender != src.sender)
        return {"sender": src.sender, "others": others}, world

    def check(self, world: Apps, p: P) -> bool:
        emails = world.mail.emails
        return (
            all(e.folder == "archive" for e in emails if e.sender == p["sender"])
            and tuple((e.uid, e.folder) for e in emails if e.sender != p["sender"]) == p["others"]
        )

    def expert(self, x: Expert, p: P) -> Action:
        top = x.top
        if top is not None and top.app == "Mail" and top.screen == "email":
            e = x.apps.mail.by_uid(top.arg)
            if e is not None and e.sender == p["sender"] and e.folder == "inbox":
                return x.press("btn:archive")
        e = next(e for e in x.apps.mail.emails if e.sender == p["sender"] and e.folder == "inbox")
        return x.goto("Mail", email_path(e.uid)) or x.press("btn:archive")


@register
class Compose(TaskTemplate):
    name = "mail.compose"
    apps = ("Mail",)
    tags = ("text",)
    instruction = 'Send an email to "{to}" with the subject "{subject}" and the text "{body}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        c = rng.choice(world.contacts.contacts)
        return {
            "to": c.email,
            "subject": rng.choice(data.MAIL_SUBJECTS),
            "body": rng.choice(data.REPLY_TEXTS),
        }, world

    def check(self, world: Apps, p: P) -> bool:
        return sent(world, p["to"], p["subject"], p["body"])

    def expert(self, x: Expert, p: P) -> Action:
        return (
            x.goto("Mail", [INBOX, ("compose", ("new", None), "fab")])
            or x.fill("to", p["to"])
            or x.fill("subject", p["subject"])
            or x.fill("body", p["body"])
            or x.press("btn:send")
        )


@register
class Reply(TaskTemplate):
    name = "mail.reply"
    apps = ("Mail",)
    tags = ("text", "scroll")
    instruction = 'Reply to the email "{subject}" with "{text}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return {**_ident(pick(rng, world)), "text": rng.choice(data.REPLY_TEXTS)}, world

    def check(self, world: Apps, p: P) -> bool:
        return sent(world, p["address"], f"Re: {p['subject']}", p["text"])

    def expert(self, x: Expert, p: P) -> Action:
        path = email_path(p["uid"]) + [("compose", ("reply", p["uid"]), "btn:reply")]
        return x.goto("Mail", path) or x.fill("body", p["text"]) or x.press("btn:send")


@register
class Forward(TaskTemplate):
    name = "mail.forward"
    apps = ("Mail",)
    tags = ("text", "scroll")
    instruction = 'Forward the email "{subject}" to "{contact}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        e = pick(rng, world)
        c = rng.choice([c for c in world.contacts.contacts if c.email != e.address])
        return {**_ident(e), "contact": c.name, "to": c.email}, world

    def check(self, world: Apps, p: P) -> bool:
        return sent(world, p["to"], f"Fwd: {p['subject']}", None)

    def expert(self, x: Expert, p: P) -> Action:
        path = email_path(p["uid"]) + [("compose", ("forward", p["uid"]), "btn:forward")]
        go = x.goto("Mail", path)
        if go:
            return go
        if x.route.field("to") == p["to"]:
            return x.press("btn:send")
        return x.fill("to", p["contact"]) or x.press(f"suggest:{p['contact']}")


@register
class SenderAnswer(TaskTemplate):
    name = "mail.sender"
    apps = ("Mail",)
    tags = ("answer", "scroll")
    instruction = 'Who sent the email "{subject}"? Answer with their name.'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return _ident(pick(rng, world)), world

    def answer(self, world: Apps, p: P) -> str:
        return p["sender"]

    def expert(self, x: Expert, p: P) -> Action:
        key = f"mail:{p['uid']}"  # the inbox row shows "Sender: Subject"
        return x.goto("Mail", [INBOX]) or (
            Action.done(p["sender"]) if x.visible(key) else x.press(key)
        )


@register
class MarkUnread(TaskTemplate):
    name = "mail.mark_unread"
    apps = ("Mail",)
    tags = ("scroll",)
    heldout = True
    instruction = 'Mark the email "{subject}" as unread'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return _ident(pick(rng, world, read=True)), world

    def check(self, world: Apps, p: P) -> bool:
        e = world.mail.by_uid(p["uid"])
        return e is not None and not e.read

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Mail", email_path(p["uid"])) or x.press("btn:unread")
