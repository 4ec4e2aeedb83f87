"""Expert moves and world edits shared by the long-horizon templates (on top of the single-app
templates' own helpers)."""

from __future__ import annotations

from dataclasses import replace
from random import Random
from typing import Any

from adaroll.actions import Action
from adaroll.envs.mobile.apps.mail import Email, MailState
from adaroll.envs.mobile.apps.messages import Message, MessagesState, Thread
from adaroll.envs.mobile.expert import Expert
from adaroll.envs.mobile.state import next_uid
from adaroll.envs.mobile.tasks.long.parts import Part, goal
from adaroll.envs.mobile.tasks.mail import INBOX
from adaroll.envs.mobile.tasks.messages import THREADS, send_in_thread, sent_last
from adaroll.envs.mobile.tasks.notes import LIST as NOTES_LIST
from adaroll.envs.mobile.tasks.notes import editor_path
from adaroll.envs.mobile.world import Apps

NEW_EMAIL = ("compose", ("new", None), "fab")


# -- Messages ----------------------------------------------------------------------------------
def text_contact(x: Expert, contact: str, text: str) -> Action | None:
    """Send ``text`` to ``contact``: in their thread if there is one, else start one."""
    top = x.top
    if top is not None and top.app == "Messages" and top.screen == "thread" and top.arg == contact:
        return x.fill("message", text) or x.press("btn:send")
    if x.apps.messages.thread(contact) is not None:
        return send_in_thread(x, contact, text)
    return (
        x.goto("Messages", [THREADS, ("compose", None, "fab")])
        or x.fill("to", contact)
        or x.press(f"suggest:{contact}")
    )


def texted(contact: str, text: str) -> Part:
    return goal(
        "Messages", lambda x: text_contact(x, contact, text), lambda w: sent_last(w, contact, text)
    )


def with_incoming(world: Apps, contact: str, text: str) -> Apps:
    """``world`` with a new incoming message from ``contact`` (their thread made if needed)."""
    st: MessagesState = world.messages
    old = st.thread(contact)
    if old is None:
        thread = Thread(next_uid(st.threads), contact, (Message(False, text),))
    else:
        thread = Thread(old.uid, contact, old.messages + (Message(False, text),))
    threads = (thread,) + tuple(t for t in st.threads if t.contact != contact)
    return replace(world, messages=MessagesState(threads))


# -- Mail --------------------------------------------------------------------------------------
def with_email(world: Apps, sender: str, address: str, subject: str, body: str) -> tuple[Apps, int]:
    """``world`` with a new unread email at the top of the inbox, and its uid."""
    st: MailState = world.mail
    uid = next_uid(st.emails)
    email = Email(uid, sender, address, subject, body)
    return replace(world, mail=MailState((email,) + st.emails, st.sent)), uid


def email_contact(x: Expert, name: str, address: str, subject: str, body: str) -> Action | None:
    """Write a new email to the contact ``name`` (picked from the To suggestions) and send it."""
    go = x.goto("Mail", [INBOX, NEW_EMAIL])
    if go:
        return go
    if x.route.dialog is not None:
        return x.press("dlg:ok")
    if x.route.field("to") != address:
        return x.fill("to", name) or x.press(f"suggest:{name}")
    return x.fill("subject", subject) or x.fill("body", body) or x.press("btn:send")


def emailed(name: str, address: str, subject: str, body: str) -> Part:
    def check(w: Apps) -> bool:
        return any(s.to == address and s.subject == subject and s.body == body for s in w.mail.sent)

    return goal("Mail", lambda x: email_contact(x, name, address, subject, body), check)


def read_email(uid: int) -> Any:
    return lambda x: x.goto("Mail", [INBOX, ("email", uid, f"mail:{uid}")])


# -- Notes -------------------------------------------------------------------------------------
def note_body_is(uid: int, body: str) -> Part:
    """Rewrite the body of note ``uid`` to ``body`` and save."""

    def act(x: Expert) -> Action | None:
        return x.goto("Notes", editor_path(uid)) or x.fill("body", body) or x.press("btn:save")

    def check(w: Apps) -> bool:
        n = w.notes.by_uid(uid)
        return n is not None and n.body.strip() == body

    return goal("Notes", act, check)


def note_gone(uid: int, title: str) -> Part:
    """Delete note ``uid`` (titled ``title``: a note made later may reuse the uid)."""

    def act(x: Expert) -> Action | None:
        return x.goto("Notes", editor_path(uid)) or (
            x.press("dlg:ok") if x.route.dialog else x.press("btn:delete")
        )

    return goal(
        "Notes", act, lambda w: not any(n.uid == uid and n.title == title for n in w.notes.notes)
    )


def open_note(uid: int) -> Any:
    return lambda x: x.goto("Notes", editor_path(uid))


NOTES_HOME = [NOTES_LIST]


# -- params ------------------------------------------------------------------------------------
def code(rng: Random) -> str:
    return str(rng.randrange(100000, 1000000))


def others(rng: Random, names: list[str], k: int, exclude: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
    return rng.sample([n for n in names if n not in exclude], k)
