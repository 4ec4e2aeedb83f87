"""Mail tasks: archive, delete, star, move, reply, forward, compose, triage."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from adaroll.envs.apps.tasks.draws import among, anyone, derived
from adaroll.envs.apps.tasks.fill import ref
from adaroll.envs.apps.tasks.judge import Expect, Has, Text
from adaroll.envs.apps.tasks.plan import (
    Ctx,
    Fill,
    Find,
    Go,
    Loc,
    OpenApp,
    Shows,
    Step,
    Tap,
    button,
    field_,
)
from adaroll.envs.apps.tasks.rows import Opens, Params, Row, Work
from adaroll.envs.apps.tasks.world import World

PER_PAGE = 10
START = ("mail", "#/folder/Inbox")
REPLIES = (
    "Thanks, I will take a look today",
    "Sounds good to me",
    "Can we move this to next week",
    "Approved, please go ahead",
    "I will join the call",
)


def page_of(folder: str, mid: int) -> Callable[[Ctx], int]:
    """The page of message ``mid`` in ``folder``'s list, from the live database."""

    def page(ctx: Ctx) -> int:
        msgs = list(ctx.state()["mail"]["messages"].values())
        if folder == "Starred":
            shown = [m for m in msgs if m["starred"] and m["folder"] != "Trash"]
        else:
            shown = [m for m in msgs if m["folder"] == folder]
        shown.sort(key=lambda m: (m["date"], m["id"]), reverse=True)
        ids = [m["id"] for m in shown]
        return ids.index(mid) // PER_PAGE + 1 if mid in ids else 1

    return page


def open_message(folder: str, mid: int, *later: str) -> tuple[Step, ...]:
    """Steps to message ``mid`` of ``folder``; ``later``: views past it (its reply form)."""
    return (
        OpenApp("mail", "Mail"),
        Go((f"#/folder/{folder}",), Loc(f'.side-link[href="#/folder/{folder}"]')),
        Find(
            Loc(f'a.row[href="#/message/{mid}"]'),
            (f"#/message/{mid}", *later),
            page_of(folder, mid),
        ),
    )


def inbox_message(m: dict[str, Any], *later: str) -> tuple[Step, ...]:
    return open_message("Inbox", m["id"], *later)


def at_message(name: str, *later: str) -> Opens:
    """The page of the inbox message drawn as ``name``."""
    return Opens(inbox_message, name, later)


def inboxed(w: World) -> list[dict[str, Any]]:
    return [m for m in w.rows("mail", "messages") if m["folder"] == "Inbox"]


def inbox(w: World, rng: random.Random, p: Params) -> dict[str, Any]:
    """A message of the inbox."""
    return rng.choice(inboxed(w))


def msg_update(name: str, what: str, **values: Any) -> Expect:
    """The message drawn as ``name`` holds ``values``."""
    return Expect("update", "mail", "messages", values, key=f"{{{name}[id]}}", what=what)


def archived(name: str, what: str) -> Work:
    return Work(
        "archived",
        (msg_update(name, what, folder="Archive"),),
        (at_message(name), Tap(button("Archive"))),
    )


def deleted(name: str, what: str) -> Work:
    return Work(
        "deleted",
        (msg_update(name, what, folder="Trash"),),
        (at_message(name), Tap(button("Delete"))),
    )


def starred(milestone: str, name: str, what: str) -> Work:
    return Work(
        milestone,
        (msg_update(name, what, starred=1),),
        (at_message(name), Tap(button("Star"))),
    )


def replied(name: str, text: str) -> Work:
    """The reply ``text`` to the message drawn as ``name`` sent (opened, Reply, typed, Send)."""
    reply_view = f"#/compose?reply={{{name}[id]}}"
    sent = Expect(
        "insert",
        "mail",
        "messages",
        {
            "folder": "Sent",
            "recipient": f"{{{name}[sender_email]}}",
            "reply_to": ref(name, "id"),
            "subject": Text(f"Re: {{{name}[subject]}}"),
            "body": Text(text),
        },
        what="the reply",
    )
    return Work(
        "replied",
        (sent,),
        (
            at_message(name, reply_view),
            Go((reply_view,), button("Reply")),
            Fill(field_("Message"), text),
            Tap(button("Send")),
        ),
    )


def three_from_one_sender(w: World, rng: random.Random, p: Params) -> list[dict[str, Any]]:
    """Three inbox messages now from ``p["person"]``, unstarred, newest first (the order the
    expert stars them in); the sender's own messages leave the inbox first."""
    person = p["person"]
    msgs = inboxed(w)
    for m in msgs:
        if m["sender"] == person.name:
            m["folder"] = "Archive"
    chosen = rng.sample([m for m in msgs if m["folder"] == "Inbox"], 3)
    for m in chosen:
        m.update(sender=person.name, sender_email=person.email, starred=0)
    return sorted(chosen, key=lambda m: (m["date"], m["id"]), reverse=True)


def three_to_triage(w: World, rng: random.Random, p: Params) -> list[dict[str, Any]]:
    """Three inbox messages, the second unstarred (it is to be starred)."""
    chosen = rng.sample(inboxed(w), 3)
    chosen[1]["starred"] = 0
    return chosen


def someone_else(w: World, rng: random.Random, p: Params) -> Any:
    """A person other than the sender of the message drawn as ``m``."""
    return w.person(avoid=tuple(x for x in w.people if x.name == p["m"]["sender"]))


ROWS = (
    Row(
        "mail.archive",
        "archive one message",
        max_steps=8,
        start=START,
        draws={"m": inbox},
        instruction='Archive the email "{m[subject]}" from {m[sender]}.',
        plan=(archived("m", "the message archived"),),
    ),
    Row(
        "mail.delete",
        "delete one message",
        max_steps=8,
        start=START,
        draws={"m": inbox},
        instruction='Delete the email from {m[sender]} with the subject "{m[subject]}".',
        plan=(deleted("m", "the message in the trash"),),
    ),
    Row(
        "mail.move",
        "move a message to a folder",
        max_steps=10,
        start=START,
        draws={"m": inbox, "folder": among("Receipts", "Travel", "Projects")},
        instruction='Move the email "{m[subject]}" to the {folder} folder.',
        plan=(
            Work(
                "moved",
                (msg_update("m", "the message in {folder}", folder="{folder}"),),
                (
                    at_message("m"),
                    Tap(
                        button("Move to ▾"),
                        until=Shows(Loc('[role="menuitem"]', text="{folder}")),
                    ),
                    Tap(Loc('[role="menuitem"]', text="{folder}")),
                ),
            ),
        ),
    ),
    Row(
        "mail.star_from",
        "star every message from one sender",
        max_steps=18,
        start=START,
        draws={"person": anyone, ("m1", "m2", "m3"): three_from_one_sender},
        instruction="Star every email in the inbox from {person.name}.",
        plan=tuple(
            starred(f"starred {{{m}[id]}}", m, f"message {{{m}[id]}} starred")
            for m in ("m1", "m2", "m3")
        ),
    ),
    Row(
        "mail.reply",
        "reply to a message with a text",
        max_steps=12,
        start=START,
        draws={"m": inbox, "text": among(*REPLIES)},
        instruction='Reply to {m[sender]}\'s email "{m[subject]}" with "{text}".',
        plan=(replied("m", "{text}"),),
    ),
    Row(
        "mail.forward",
        "forward a message to someone",
        max_steps=12,
        start=START,
        draws={
            "m": inbox,
            "to": someone_else,
            "quote": derived(lambda p: p["m"]["body"].split("\n\n")[1]),
        },
        instruction='Forward the email "{m[subject]}" to {to.email}.',
        plan=(
            Work(
                "forwarded",
                (
                    Expect(
                        "insert",
                        "mail",
                        "messages",
                        {
                            "folder": "Sent",
                            "recipient": "{to.email}",
                            "subject": Text("Fwd: {m[subject]}"),
                            "body": Has("{quote}"),
                        },
                        what="the forwarded message",
                    ),
                ),
                (
                    at_message("m", "#/compose?forward={m[id]}"),
                    Go(("#/compose?forward={m[id]}",), button("Forward")),
                    Fill(field_("To"), "{to.email}"),
                    Tap(button("Send")),
                ),
            ),
        ),
    ),
    Row(
        "mail.compose",
        "write a new message",
        max_steps=12,
        start=START,
        draws={
            "to": anyone,
            "subject": among("Team lunch", "Project kickoff", "Quick question", "Friday demo"),
            "body": among(*REPLIES),
        },
        instruction='Send an email to {to.email} with the subject "{subject}" and the message '
        '"{body}".',
        plan=(
            Work(
                "sent",
                (
                    Expect(
                        "insert",
                        "mail",
                        "messages",
                        {
                            "folder": "Sent",
                            "recipient": "{to.email}",
                            "subject": Text("{subject}"),
                            "body": Text("{body}"),
                            "reply_to": None,
                        },
                        what="the new message",
                    ),
                ),
                (
                    OpenApp("mail", "Mail"),
                    Go(("#/compose",), button("Compose")),
                    Fill(field_("To"), "{to.email}"),
                    Fill(field_("Subject"), "{subject}"),
                    Fill(field_("Message"), "{body}"),
                    Tap(button("Send")),
                ),
            ),
        ),
    ),
    Row(
        "mail.triage",
        "archive one message, star another, delete a third",
        max_steps=24,
        start=START,
        draws={("a", "b", "c"): three_to_triage},
        instruction='Clean up the inbox: archive "{a[subject]}", star "{b[subject]}" and delete '
        '"{c[subject]}".',
        plan=(
            archived("a", "first archived"),
            starred("starred", "b", "second starred"),
            deleted("c", "third deleted"),
        ),
    ),
    Row(
        "mail.reply_archive",
        "reply to a message, then archive it",
        max_steps=16,
        start=START,
        draws={"m": inbox, "text": among(*REPLIES)},
        instruction='Reply "{text}" to the email "{m[subject]}", then archive that email.',
        plan=(replied("m", "{text}"), archived("m", "the message archived")),
    ),
)
