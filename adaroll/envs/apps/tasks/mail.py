"""Mail tasks: archive, delete, star, move, reply, forward, compose, triage."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from adaroll.envs.apps.tasks.base import Spec, template
from adaroll.envs.apps.tasks.judge import Expect, Has, Text
from adaroll.envs.apps.tasks.plan import (
    Ctx,
    Fill,
    Find,
    Go,
    Loc,
    Milestone,
    OpenApp,
    Step,
    Tap,
    button,
    field_,
)
from adaroll.envs.apps.tasks.world import World

PER_PAGE = 10


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


def inbox(w: World, rng: random.Random, *, unread: bool | None = None) -> dict[str, Any]:
    """A random message of the inbox (unread or read when asked)."""
    msgs = [m for m in w.rows("mail", "messages") if m["folder"] == "Inbox"]
    if unread is not None:
        msgs = [m for m in msgs if bool(m["read"]) != unread] or msgs
    return rng.choice(msgs)


def msg_update(mid: int, what: str, **values: Any) -> Expect:
    return Expect("update", "mail", "messages", values, key=str(mid), what=what)


START = ("mail", "#/folder/Inbox")


@template("mail.archive", apps=("mail",), max_steps=8, summary="archive one message")
def archive(w: World, rng: random.Random) -> Spec:
    m = inbox(w, rng)
    return Spec(
        f'Archive the email "{m["subject"]}" from {m["sender"]}.',
        START,
        (
            Milestone(
                "archived",
                (msg_update(m["id"], "the message archived", folder="Archive"),),
                (*open_message("Inbox", m["id"]), Tap(button("Archive"))),
            ),
        ),
    )


@template("mail.delete", apps=("mail",), max_steps=8, summary="delete one message")
def delete(w: World, rng: random.Random) -> Spec:
    m = inbox(w, rng)
    return Spec(
        f'Delete the email from {m["sender"]} with the subject "{m["subject"]}".',
        START,
        (
            Milestone(
                "deleted",
                (msg_update(m["id"], "the message in the trash", folder="Trash"),),
                (*open_message("Inbox", m["id"]), Tap(button("Delete"))),
            ),
        ),
    )


@template("mail.move", apps=("mail",), max_steps=10, summary="move a message to a folder")
def move(w: World, rng: random.Random) -> Spec:
    m = inbox(w, rng)
    folder = rng.choice(("Receipts", "Travel", "Projects"))
    return Spec(
        f'Move the email "{m["subject"]}" to the {folder} folder.',
        START,
        (
            Milestone(
                "moved",
                (msg_update(m["id"], f"the message in {folder}", folder=folder),),
                (
                    *open_message("Inbox", m["id"]),
                    Tap(
                        button("Move to ▾"),
                        until=lambda c: c.visible(Loc('[role="menuitem"]', text=folder)),
                    ),
                    Tap(Loc('[role="menuitem"]', text=folder)),
                ),
            ),
        ),
    )


@template(
    "mail.star_from", apps=("mail",), max_steps=18, summary="star every message from one sender"
)
def star_from(w: World, rng: random.Random) -> Spec:
    person = w.person()
    msgs = [m for m in w.rows("mail", "messages") if m["folder"] == "Inbox"]
    for m in msgs:  # the sender's own messages: none yet in the inbox
        if m["sender"] == person.name:
            m["folder"] = "Archive"
    chosen = rng.sample([m for m in msgs if m["folder"] == "Inbox"], 3)
    for m in chosen:
        m.update(sender=person.name, sender_email=person.email, starred=0)
    return Spec(
        f"Star every email in the inbox from {person.name}.",
        START,
        tuple(
            Milestone(
                f"starred {m['id']}",
                (msg_update(m["id"], f"message {m['id']} starred", starred=1),),
                (*open_message("Inbox", m["id"]), Tap(button("Star"))),
            )
            for m in sorted(chosen, key=lambda m: (m["date"], m["id"]), reverse=True)
        ),
    )


REPLIES = (
    "Thanks, I will take a look today",
    "Sounds good to me",
    "Can we move this to next week",
    "Approved, please go ahead",
    "I will join the call",
)


def replied(m: dict[str, Any], text: str) -> Milestone:
    """The reply ``text`` to message ``m`` sent (opened, Reply, typed, Send)."""
    sent = Expect(
        "insert",
        "mail",
        "messages",
        {
            "folder": "Sent",
            "recipient": m["sender_email"],
            "reply_to": m["id"],
            "subject": Text("Re: " + m["subject"]),
            "body": Text(text),
        },
        what="the reply",
    )
    reply_view = f"#/compose?reply={m['id']}"
    return Milestone(
        "replied",
        (sent,),
        (
            *open_message("Inbox", m["id"], reply_view),
            Go((reply_view,), button("Reply")),
            Fill(field_("Message"), text),
            Tap(button("Send")),
        ),
    )


@template("mail.reply", apps=("mail",), max_steps=12, summary="reply to a message with a text")
def reply(w: World, rng: random.Random) -> Spec:
    m = inbox(w, rng)
    text = rng.choice(REPLIES)
    return Spec(
        f'Reply to {m["sender"]}\'s email "{m["subject"]}" with "{text}".',
        START,
        (replied(m, text),),
    )


@template("mail.forward", apps=("mail",), max_steps=12, summary="forward a message to someone")
def forward(w: World, rng: random.Random) -> Spec:
    m = inbox(w, rng)
    to = w.person(avoid=tuple(p for p in w.people if p.name == m["sender"]))
    sent = Expect(
        "insert",
        "mail",
        "messages",
        {
            "folder": "Sent",
            "recipient": to.email,
            "subject": Text("Fwd: " + m["subject"]),
            "body": Has(m["body"].split("\n\n")[1]),
        },
        what="the forwarded message",
    )
    return Spec(
        f'Forward the email "{m["subject"]}" to {to.email}.',
        START,
        (
            Milestone(
                "forwarded",
                (sent,),
                (
                    *open_message("Inbox", m["id"], f"#/compose?forward={m['id']}"),
                    Go((f"#/compose?forward={m['id']}",), button("Forward")),
                    Fill(field_("To"), to.email),
                    Tap(button("Send")),
                ),
            ),
        ),
    )


@template("mail.compose", apps=("mail",), max_steps=12, summary="write a new message")
def compose(w: World, rng: random.Random) -> Spec:
    to = w.person()
    subject = rng.choice(("Team lunch", "Project kickoff", "Quick question", "Friday demo"))
    body = rng.choice(REPLIES)
    sent = Expect(
        "insert",
        "mail",
        "messages",
        {
            "folder": "Sent",
            "recipient": to.email,
            "subject": Text(subject),
            "body": Text(body),
            "reply_to": None,
        },
        what="the new message",
    )
    return Spec(
        f'Send an email to {to.email} with the subject "{subject}" and the message "{body}".',
        START,
        (
            Milestone(
                "sent",
                (sent,),
                (
                    OpenApp("mail", "Mail"),
                    Go(("#/compose",), button("Compose")),
                    Fill(field_("To"), to.email),
                    Fill(field_("Subject"), subject),
                    Fill(field_("Message"), body),
                    Tap(button("Send")),
                ),
            ),
        ),
    )


@template(
    "mail.triage",
    apps=("mail",),
    max_steps=24,
    summary="archive one message, star another, delete a third",
)
def triage(w: World, rng: random.Random) -> Spec:
    a, b, c = rng.sample([m for m in w.rows("mail", "messages") if m["folder"] == "Inbox"], 3)
    b["starred"] = 0
    return Spec(
        f'Clean up the inbox: archive "{a["subject"]}", star "{b["subject"]}" and delete '
        f'"{c["subject"]}".',
        START,
        (
            Milestone(
                "archived",
                (msg_update(a["id"], "first archived", folder="Archive"),),
                (*open_message("Inbox", a["id"]), Tap(button("Archive"))),
            ),
            Milestone(
                "starred",
                (msg_update(b["id"], "second starred", starred=1),),
                (*open_message("Inbox", b["id"]), Tap(button("Star"))),
            ),
            Milestone(
                "deleted",
                (msg_update(c["id"], "third deleted", folder="Trash"),),
                (*open_message("Inbox", c["id"]), Tap(button("Delete"))),
            ),
        ),
    )


@template(
    "mail.reply_archive",
    apps=("mail",),
    max_steps=16,
    summary="reply to a message, then archive it",
)
def reply_archive(w: World, rng: random.Random) -> Spec:
    m = inbox(w, rng)
    text = rng.choice(REPLIES)
    return Spec(
        f'Reply "{text}" to the email "{m["subject"]}", then archive that email.',
        START,
        (
            replied(m, text),
            Milestone(
                "archived",
                (msg_update(m["id"], "the message archived", folder="Archive"),),
                (*open_message("Inbox", m["id"]), Tap(button("Archive"))),
            ),
        ),
    )
