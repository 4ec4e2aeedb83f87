"""Tasks across apps: what to do is in one app (an email, an issue), where to do it in another.

Each starts by reading: the first milestone is having opened the message (or issue) that holds
what the instruction does not say - the order number, the meeting's time, the priority - and
the judge checks the write in the other app.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from adaroll.envs.apps.tasks import calendar as cal
from adaroll.envs.apps.tasks import shop, tracker
from adaroll.envs.apps.tasks.admin import role_and_team, user, user_update, with_article
from adaroll.envs.apps.tasks.draws import among, anyone, derived, other_than
from adaroll.envs.apps.tasks.judge import Expect
from adaroll.envs.apps.tasks.mail import at_message, replied
from adaroll.envs.apps.tasks.notes import at_note
from adaroll.envs.apps.tasks.plan import Step, Tap, button
from adaroll.envs.apps.tasks.rows import Draw, Opens, Params, Row, Work
from adaroll.envs.apps.tasks.world import ROLES, TEAMS, USER, World, days

INBOX = ("mail", "#/folder/Inbox")


def new_mail(sender: str, subject: str, body: str) -> Draw:
    """A new unread message from the person drawn as ``sender`` at the top of the inbox;
    ``subject`` and ``body`` may name earlier draws."""

    def draw(w: World, rng: random.Random, p: Params) -> dict[str, Any]:
        person = p[sender]
        return w.add(
            "mail",
            "messages",
            folder="Inbox",
            sender=person.name,
            sender_email=person.email,
            recipient=USER[1],
            subject=subject.format_map(p),
            body=body.format_map(p),
            date=days(0),
            read=0,
            starred=0,
            reply_to=None,
        )

    return draw


READ = Work(
    "read the email",
    (Expect("update", "mail", "messages", {"read": 1}, key="{m[id]}"),),
    (at_message("m"),),
    judged=False,
)
"""Having opened the message drawn as ``m`` (opening marks it read)."""


def upcoming_event(w: World, rng: random.Random, p: Params) -> dict[str, Any]:
    return rng.choice(
        [e for e in w.rows("calendar", "events") if dt.date.fromisoformat(e["date"]) >= cal.TODAY]
    )


def project_member(w: World, rng: random.Random, p: Params) -> Any:
    """One of the first ten people: the members of the tracker's project."""
    return rng.choice(w.people[:10])


def not_the_user(w: World, rng: random.Random, p: Params) -> Any:
    """A person other than the user drawn as ``u``."""
    return w.person(avoid=tuple(x for x in w.people if x.name == p["u"]["name"]))


def note_named_in_issue(w: World, rng: random.Random, p: Params) -> dict[str, Any]:
    """An unpinned note, which the description of the issue drawn as ``issue`` now names."""
    note = rng.choice([n for n in w.rows("notes", "notes") if not n["pinned"]])
    p["issue"]["description"] = (
        f'Background is in the note "{note["title"]}" ({note["folder"]} folder).'
    )
    return note


def issue_from_its_list(issue: dict[str, Any]) -> tuple[Step, ...]:
    """The issue's page from its list, the tracker being open already (the task starts there)."""
    return tracker.open_issue(issue)[1:]


ROWS = (
    Row(
        "cross.return_from_mail",
        "return the item an email says arrived damaged, then answer the email",
        max_steps=22,
        start=INBOX,
        apps=("mail", "shop"),
        draws={
            "order": shop.delivered_order,
            "item": shop.item_of_order,
            "person": anyone,
            "m": new_mail(
                "person",
                "Broken delivery",
                "Hi Alex,\n\nThe {item[name]} from order {order[number]} arrived damaged. "
                "Could you ask the shop for a return?\n\n{person.first}",
            ),
        },
        instruction="{person.name} emailed you about a damaged delivery. Request a return for "
        'that item in the Shop, giving the reason Damaged, then reply "The return is '
        'requested" to the email.',
        plan=(READ, shop.returned("Damaged"), replied("m", "The return is requested")),
    ),
    Row(
        "cross.event_from_invite",
        "put an emailed invitation in the calendar",
        max_steps=20,
        start=INBOX,
        apps=("mail", "calendar"),
        draws={
            "person": anyone,
            "title": among(*cal.NEW_TITLES),
            "when": cal.slot,
            "m": new_mail(
                "person",
                "Invitation: {title}",
                "Hi Alex,\n\nCan we meet on {when.day} at {when.start} for {when.duration}? "
                "\n\n{person.first}",
            ),
        },
        instruction="{person.name} invited you to a meeting by email. Add it to your calendar "
        'with the title "{title}".',
        plan=(READ, cal.created("in the calendar", "title", "when", None, "Work")),
    ),
    Row(
        "cross.issue_from_mail",
        "file the bug an email reports",
        max_steps=18,
        start=INBOX,
        apps=("mail", "tracker"),
        draws={
            "person": project_member,
            "title": among(*tracker.NEW_ISSUES),
            "priority": among(*tracker.PRIORITIES),
            "symptom": derived(lambda p: p["title"].lower()),
            "m": new_mail(
                "person",
                "Bug report: {title}",
                "Hi Alex,\n\nCustomers report: {symptom}. Please file it with priority "
                "{priority} and assign it to me.\n\n{person.first}",
            ),
        },
        instruction="{person.name} reported a bug by email. File it in the Tracker with the "
        'title "{title}", the priority and the assignee the email asks for.',
        plan=(READ, tracker.filed("{title}", "{priority}", "{person.name}", None)),
    ),
    Row(
        "cross.role_from_mail",
        "change the role and team an email asks for, then answer the email",
        max_steps=22,
        start=INBOX,
        apps=("mail", "admin"),
        draws={
            "u": user(),
            "new": other_than("u", "role", ROLES),
            "team": other_than("u", "team", TEAMS),
            "boss": not_the_user,
            "a_new": with_article("new"),
            "m": new_mail(
                "boss",
                "Access request",
                "Hi Alex,\n\n{u[name]} joins the {team} team: please make them "
                "{a_new} there in the admin console.\n\n{boss.first}",
            ),
        },
        instruction="{boss.name} asked you by email to change someone's access. Do it in Admin, "
        'then reply "Done" to the email.',
        plan=(
            READ,
            Work(
                "role",
                (user_update("u", "the new role and team", role="{new}", team="{team}"),),
                role_and_team("u", "{new}", "{team}"),
            ),
            replied("m", "Done"),
        ),
    ),
    Row(
        "cross.cancelled_event",
        "delete the event an email cancels",
        max_steps=16,
        start=INBOX,
        apps=("mail", "calendar"),
        draws={
            "ev": upcoming_event,
            "person": anyone,
            "day": derived(lambda p: cal.spoken(p["ev"]["date"])),
            "m": new_mail(
                "person",
                "Meeting cancelled",
                "Hi Alex,\n\nI have to cancel {ev[title]} on {day}. Sorry!\n\n{person.first}",
            ),
        },
        instruction="{person.name} cancelled a meeting by email. Delete it from your calendar.",
        plan=(READ, cal.deleted("ev")),
    ),
    Row(
        "cross.note_from_issue",
        "pin the note an issue points to",
        max_steps=14,
        start=tracker.START,
        apps=("tracker", "notes"),
        draws={"issue": tracker.issue("Open"), "note": note_named_in_issue},
        instruction="Issue {issue[key]} refers to a note. Pin that note.",
        # having opened the issue leaves no trace in a database: the one milestone is the
        # note's, reached through the issue
        plan=(
            Work(
                "pinned",
                (
                    Expect(
                        "update",
                        "notes",
                        "notes",
                        {"pinned": 1},
                        key="{note[id]}",
                        what="the note pinned",
                    ),
                ),
                (Opens(issue_from_its_list, "issue"), at_note("note"), Tap(button("Pin"))),
            ),
        ),
        heldout=True,
    ),
    Row(
        "cross.reorder_from_mail",
        "order what an email recommends",
        max_steps=22,
        start=INBOX,
        apps=("mail", "shop"),
        draws={
            "p": shop.product(clothing=False),
            "person": anyone,
            "to": shop.delivery,
            "m": new_mail(
                "person",
                "A recommendation",
                "Hi Alex,\n\nI bought the {p[name]} last month and love it - you should get "
                "one too.\n\n{person.first}",
            ),
        },
        instruction="Order the product {person.name} recommended by email, shipped "
        "{to.shipping} to your {to.address} address.",
        plan=(READ, shop.carted("in the cart", "p"), shop.ordered(("p", ""))),
        allow=shop.CHECKOUT_ALLOW,
    ),
)
