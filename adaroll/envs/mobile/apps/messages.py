"""Messages: conversation list (long press to delete), a thread with a compose bar, and a
new-conversation screen whose "To" field suggests contacts as you type."""

from __future__ import annotations

from dataclasses import dataclass
from random import Random
from typing import Any

from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.base import App
from adaroll.envs.mobile.screen import APPBAR_BOTTOM, H, ViewBuilder, W, memo
from adaroll.envs.mobile.state import Phone, Route, next_uid
from adaroll.envs.mobile.widgets import (
    appbar,
    confirm,
    fab,
    open_dialog,
    push,
    row,
    text_field,
    text_row,
)


@dataclass(frozen=True, slots=True)
class Message:
    outgoing: bool
    text: str


@dataclass(frozen=True, slots=True)
class Thread:
    uid: int
    contact: str
    messages: tuple[Message, ...]

    @property
    def last_incoming(self) -> str | None:
        return next((m.text for m in reversed(self.messages) if not m.outgoing), None)


@dataclass(frozen=True, slots=True)
class MessagesState:
    threads: tuple[Thread, ...]
    """Most recent conversation first."""

    def thread(self, contact: str) -> Thread | None:
        return next((t for t in self.threads if t.contact == contact), None)


def generate(rng: Random, made: dict[str, Any]) -> MessagesState:
    names = [c.name for c in made["contacts"].contacts]
    chosen = rng.sample(names, min(len(names), rng.randrange(6, 10)))
    threads = []
    for i, name in enumerate(chosen):
        msgs = [
            Message(rng.random() < 0.4, rng.choice(data.MESSAGE_TEXTS + data.REPLY_TEXTS))
            for _ in range(rng.randrange(1, 4))
        ]
        msgs.append(Message(False, rng.choice(data.MESSAGE_TEXTS)))
        threads.append(Thread(i + 1, name, tuple(msgs)))
    return MessagesState(tuple(threads))


def send(state: MessagesState, contact: str, text: str) -> MessagesState:
    """Append an outgoing message (creating the thread) and move the thread to the top."""
    old = state.thread(contact)
    if old is None:
        thread = Thread(next_uid(state.threads), contact, (Message(True, text),))
    else:
        thread = Thread(old.uid, contact, old.messages + (Message(True, text),))
    return MessagesState((thread,) + tuple(t for t in state.threads if t.contact != contact))


def _send(p: Phone, a: Any) -> Phone:
    top = p.screen
    text = top.field("message").strip()
    if not text:
        return p
    return p.set_app("messages", send(p.apps.messages, top.arg, text)).set_top(
        top.with_field("message", "")
    )


def _delete(contact: str):
    def handler(p: Phone, a: Any) -> Phone:
        st: MessagesState = p.apps.messages
        return p.set_app(
            "messages", MessagesState(tuple(t for t in st.threads if t.contact != contact))
        ).update_top(dialog=None)

    return handler


def _open_thread(contact: str):
    return lambda p, a: p.set_top(Route("Messages", "thread", contact))


def _preview(text: str) -> str:
    return text if len(text) <= 24 else text[:23] + "…"


_NEW = push(Route("Messages", "compose"))
MSG_H = 130


def view(phone: Phone, route: Route, b: ViewBuilder) -> None:
    st: MessagesState = phone.apps.messages
    screen = route.screen
    if screen == "threads":
        if route.dialog is not None:
            contact = route.dialog[1]
            confirm(
                b,
                "Delete conversation?",
                f"All messages with {contact} will be deleted.",
                "Delete",
                _delete(contact),
            )
            return
        appbar(b, "Messages", show_back=False)
        b.vlist(_thread_rows(st), APPBAR_BOTTOM, H, route.scroll)
        fab(b, "Start chat", _NEW)
        return
    if screen == "thread":
        appbar(b, route.arg)
        bar_top = b.kb_top - 170 if b.keyboard else H - 190
        thread = st.thread(route.arg)
        msgs = thread.messages if thread is not None else ()
        fit = (bar_top - APPBAR_BOTTOM - 20) // MSG_H
        y = APPBAR_BOTTOM + 10
        for m in msgs[-fit:]:
            who = "You" if m.outgoing else route.arg.split(" ")[0]
            box = (
                (300, y, W - 24, y + MSG_H - 10) if m.outgoing else (24, y, W - 300, y + MSG_H - 10)
            )
            b.add("text", f"{who}: {m.text}", box)
            y += MSG_H
        text_field(b, route, "message", "Text message", (24, bar_top, 820, bar_top + 150), _send)
        b.add("button", "Send", (840, bar_top, 1056, bar_top + 150), "btn:send", _send)
        return
    # compose: pick the recipient
    appbar(b, "New conversation")
    text_field(b, route, "to", "Type a name", (24, APPBAR_BOTTOM + 16, 1056, APPBAR_BOTTOM + 156))
    query = route.field("to").strip().casefold()
    b.vlist(_suggestions(phone.apps.contacts, query), APPBAR_BOTTOM + 180, H, route.scroll)


@memo
def _thread_rows(st: MessagesState) -> tuple[Any, ...]:
    return tuple(_thread_row(t) for t in st.threads) or (text_row("No conversations"),)


@memo
def _thread_row(t: Thread) -> Any:
    return row(
        f"{t.contact}: {_preview(t.messages[-1].text)}",
        f"thread:{t.contact}",
        push(Route("Messages", "thread", t.contact)),
        open_dialog("delete", t.contact),
    )


@memo
def _suggestions(contacts: Any, query: str) -> tuple[Any, ...]:
    people = sorted(c.name for c in contacts.contacts)
    if query:
        people = [n for n in people if query in n.casefold()]
    rows = [row(n, f"suggest:{n}", _open_thread(n)) for n in people[:8]]
    return tuple(rows) or (text_row("No matching contacts"),)


APP = App("Messages", "messages", Route("Messages", "threads"), generate, view)
