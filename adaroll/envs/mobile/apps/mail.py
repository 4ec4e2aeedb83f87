"""Mail: folders as tabs (Inbox, Starred, Archive, Sent), a reader with star/archive/delete/
mark-unread, and a composer (reply, forward, new) whose To field suggests contacts."""

from __future__ import annotations

from dataclasses import dataclass, replace
from random import Random
from typing import Any

from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.base import App
from adaroll.envs.mobile.apps.contacts import email_for, full_names
from adaroll.envs.mobile.screen import TABS_BOTTOM, H, ViewBuilder, memo
from adaroll.envs.mobile.state import Phone, Route
from adaroll.envs.mobile.widgets import (
    appbar,
    fab,
    notice,
    push,
    replace_top,
    row,
    tabs,
    text_field,
    text_row,
)


@dataclass(frozen=True, slots=True)
class Email:
    uid: int
    sender: str
    address: str
    subject: str
    body: str
    read: bool = False
    starred: bool = False
    folder: str = "inbox"
    """"inbox", "archive" or "trash"."""


@dataclass(frozen=True, slots=True)
class Sent:
    to: str
    subject: str
    body: str


@dataclass(frozen=True, slots=True)
class MailState:
    emails: tuple[Email, ...]
    """Newest first."""
    sent: tuple[Sent, ...] = ()

    def by_uid(self, uid: int) -> Email | None:
        return next((e for e in self.emails if e.uid == uid), None)

    def by_subject(self, subject: str) -> Email | None:
        return next((e for e in self.emails if e.subject == subject), None)


def generate(rng: Random, made: dict[str, Any]) -> MailState:
    contacts = made["contacts"].contacts
    strangers = full_names(rng, 4, {c.name for c in contacts})
    people = [(c.name, c.email) for c in rng.sample(contacts, 5)] + [
        (n, email_for(n, rng)) for n in strangers
    ]
    subjects = rng.sample(data.MAIL_SUBJECTS, rng.randrange(10, 16))
    emails = tuple(
        Email(
            i + 1,
            *rng.choice(people),
            subject,
            rng.choice(data.MAIL_BODIES),
            read=rng.random() < 0.6,
            starred=rng.random() < 0.15,
        )
        for i, subject in enumerate(subjects)
    )
    return MailState(emails)


def _update(p: Phone, uid: int, **changes: Any) -> Phone:
    st: MailState = p.apps.mail
    emails = tuple(replace(e, **changes) if e.uid == uid else e for e in st.emails)
    return p.set_app("mail", MailState(emails, st.sent))


def _open(uid: int):
    def handler(p: Phone, a: Any) -> Phone:
        return _update(p, uid, read=True).push(Route("Mail", "email", uid))

    return handler


def _set_and_leave(uid: int, **changes: Any):
    return lambda p, a: _update(p, uid, **changes).pop()


def _star(uid: int, starred: bool):
    return lambda p, a: _update(p, uid, starred=starred)


def _compose(mode: str, e: Email | None):
    if e is None:
        return push(Route("Mail", "compose", ("new", None)))
    if mode == "reply":
        fields = (("to", e.address), ("subject", f"Re: {e.subject}"))
    else:
        fields = (("subject", f"Fwd: {e.subject}"), ("body", e.body))
    return push(Route("Mail", "compose", (mode, e.uid), fields=fields))


def valid_address(text: str) -> bool:
    local, _, domain = text.partition("@")
    return bool(local) and "." in domain and " " not in text


def _send(p: Phone, a: Any) -> Phone:
    top = p.screen
    to, subject, body = (
        top.field("to").strip(),
        top.field("subject").strip(),
        top.field("body").strip(),
    )
    if not valid_address(to):
        return p.update_top(dialog=("invalid",), focus=None)
    st: MailState = p.apps.mail
    return p.set_app("mail", MailState(st.emails, st.sent + (Sent(to, subject, body),))).pop()


def _suggest(address: str):
    return lambda p, a: p.set_top(p.screen.with_field("to", address)).update_top(focus=None)


_TABS = {t: replace_top(Route("Mail", "inbox", t)) for t in ("Inbox", "Starred", "Archive", "Sent")}


@memo
def _rows(st: MailState, tab: str) -> tuple[Any, ...]:
    if tab == "Sent":
        rows = [text_row(f"To {s.to}: {s.subject}", 168) for s in reversed(st.sent)]
    else:
        shown = [
            e
            for e in st.emails
            if (
                e.folder == "archive"
                if tab == "Archive"
                else e.folder == "inbox" and (tab == "Inbox" or e.starred)
            )
        ]
        rows = [_email_row(e) for e in shown]
    return tuple(rows) or (text_row("Nothing here"),)


@memo
def _email_row(e: Email) -> Any:
    return row(
        ("" if e.read else "Unread: ") + f"{e.sender}: {e.subject}", f"mail:{e.uid}", _open(e.uid)
    )


def view(phone: Phone, route: Route, b: ViewBuilder) -> None:
    st: MailState = phone.apps.mail
    screen = route.screen
    if screen == "inbox":
        tab = route.arg or "Inbox"
        appbar(b, "Mail", show_back=False)
        tabs(b, tuple(_TABS), tab, _TABS.__getitem__)
        b.vlist(_rows(st, tab), TABS_BOTTOM, H, route.scroll)
        fab(b, "Compose", _compose("new", None))
        return
    if screen == "email":
        e = st.by_uid(route.arg)
        if e is None:
            appbar(b, "Email")
            return
        appbar(
            b,
            "",
            (
                ("btn:star", "Unstar" if e.starred else "Star", _star(e.uid, not e.starred)),
                ("btn:archive", "Archive", _set_and_leave(e.uid, folder="archive")),
                ("btn:delete", "Delete", _set_and_leave(e.uid, folder="trash")),
            ),
        )
        b.add("text", e.subject, (48, 240, 1032, 380))
        b.add("text", f"From: {e.sender} <{e.address}>", (48, 390, 1032, 500))
        b.add("text", e.body, (48, 520, 1032, 760))
        b.add("button", "Reply", (48, 800, 360, 940), "btn:reply", _compose("reply", e))
        b.add("button", "Forward", (384, 800, 696, 940), "btn:forward", _compose("forward", e))
        b.add(
            "button",
            "Mark unread",
            (720, 800, 1032, 940),
            "btn:unread",
            _set_and_leave(e.uid, read=False),
        )
        return
    # compose
    if route.dialog is not None:
        notice(b, "Invalid address", ["Enter a valid email address in To."])
        return
    appbar(b, "Compose", (("btn:send", "Send", _send),))
    text_field(b, route, "to", "To", (48, 240, 1032, 380))
    query = route.field("to").strip().casefold()
    if route.focus == "to" and query and not valid_address(query):
        people = sorted(phone.apps.contacts.contacts, key=lambda c: c.name)
        matches = [c for c in people if query in c.name.casefold() or query in c.email][:4]
        if matches:  # a dropdown under To covers the other fields
            for i, c in enumerate(matches):
                y = 390 + i * 140
                b.add(
                    "list_item",
                    f"{c.name} <{c.email}>",
                    (48, y, 1032, y + 140),
                    f"suggest:{c.name}",
                    _suggest(c.email),
                )
            return
    text_field(b, route, "subject", "Subject", (48, 400, 1032, 540))
    text_field(b, route, "body", "Compose email", (48, 560, 1032, 1100))


APP = App("Mail", "mail", Route("Mail", "inbox", "Inbox"), generate, view)
