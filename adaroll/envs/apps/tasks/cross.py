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
from adaroll.envs.apps.tasks.admin import ARTICLE, open_user
from adaroll.envs.apps.tasks.admin import update as user_update
from adaroll.envs.apps.tasks.admin import user as pick_user
from adaroll.envs.apps.tasks.base import Spec, template
from adaroll.envs.apps.tasks.judge import Expect
from adaroll.envs.apps.tasks.mail import open_message, replied
from adaroll.envs.apps.tasks.notes import open_note
from adaroll.envs.apps.tasks.plan import (
    Choose,
    Fill,
    Go,
    Loc,
    Milestone,
    OpenApp,
    Pick,
    Tap,
    button,
    field_,
)
from adaroll.envs.apps.tasks.world import TEAMS, USER, World, days

INBOX = ("mail", "#/folder/Inbox")


def new_mail(w: World, sender: Any, subject: str, body: str) -> dict[str, Any]:
    """A new unread message at the top of the inbox."""
    return w.add(
        "mail",
        "messages",
        folder="Inbox",
        sender=sender.name,
        sender_email=sender.email,
        recipient=USER[1],
        subject=subject,
        body=body,
        date=days(0),
        read=0,
        starred=0,
        reply_to=None,
    )


def read(m: dict[str, Any]) -> Milestone:
    """Having opened message ``m`` (opening marks it read)."""
    return Milestone(
        "read the email",
        (Expect("update", "mail", "messages", {"read": 1}, key=str(m["id"])),),
        open_message("Inbox", m["id"]),
    )


@template(
    "cross.return_from_mail",
    apps=("mail", "shop"),
    max_steps=22,
    summary="return the item an email says arrived damaged, then answer the email",
)
def return_from_mail(w: World, rng: random.Random) -> Spec:
    order = rng.choice([o for o in w.rows("shop", "orders") if o["status"] == "Delivered"])
    item = rng.choice([i for i in w.rows("shop", "order_items") if i["order_id"] == order["id"]])
    person = w.person()
    m = new_mail(
        w,
        person,
        "Broken delivery",
        f"Hi Alex,\n\nThe {item['name']} from order {order['number']} arrived damaged. "
        f"Could you ask the shop for a return?\n\n{person.first}",
    )
    done = shop.returned(order, item, "Damaged")
    answer = replied(m, "The return is requested")
    return Spec(
        f"{person.name} emailed you about a damaged delivery. Request a return for that item in the "
        'Shop, giving the reason Damaged, then reply "The return is requested" to the email.',
        INBOX,
        (
            read(m),
            Milestone("return requested", (done,), shop.return_steps(order, item, "Damaged")),
            answer,
        ),
        goal=(done, *answer.expects),
    )


@template(
    "cross.event_from_invite",
    apps=("mail", "calendar"),
    max_steps=20,
    summary="put an emailed invitation in the calendar",
)
def event_from_invite(w: World, rng: random.Random) -> Spec:
    person = w.person()
    title = rng.choice(cal.NEW_TITLES)
    date, start, duration = cal._slot(rng)
    m = new_mail(
        w,
        person,
        f"Invitation: {title}",
        f"Hi Alex,\n\nCan we meet on {cal.spoken(date)} at {start} for {duration}? "
        f"\n\n{person.first}",
    )
    event = cal.created(title, date, start, duration, None, "Work")
    return Spec(
        f"{person.name} invited you to a meeting by email. Add it to your calendar with the title "
        f'"{title}".',
        INBOX,
        (
            read(m),
            Milestone(
                "in the calendar",
                (event,),
                cal.new_event_steps(title, date, start, duration, "", "Work"),
            ),
        ),
        goal=(event,),
    )


@template(
    "cross.issue_from_mail",
    apps=("mail", "tracker"),
    max_steps=18,
    summary="file the bug an email reports",
)
def issue_from_mail(w: World, rng: random.Random) -> Spec:
    person = rng.choice(w.people[:10])  # a member of the tracker's project
    title = rng.choice(tracker.NEW_ISSUES)
    priority = rng.choice(("Low", "Medium", "High", "Urgent"))
    m = new_mail(
        w,
        person,
        f"Bug report: {title}",
        f"Hi Alex,\n\nCustomers report: {title.lower()}. Please file it with priority "
        f"{priority} and assign it to me.\n\n{person.first}",
    )
    issue = tracker.filed(title, priority, person.name, None)
    steps = (
        OpenApp("tracker", "Tracker"),
        Go(("#/new",), button("New issue")),
        Fill(field_("Title"), title),
        Choose(Loc('[role="radio"]', text=priority)),
        Pick("assignee", "Assignee", person.name),
        Tap(button("Create issue")),
    )
    return Spec(
        f'{person.name} reported a bug by email. File it in the Tracker with the title "{title}", '
        "the priority and the assignee the email asks for.",
        INBOX,
        (read(m), Milestone("filed", (issue,), steps)),
        goal=(issue,),
    )


@template(
    "cross.role_from_mail",
    apps=("mail", "admin"),
    max_steps=22,
    summary="change the role and team an email asks for, then answer the email",
)
def role_from_mail(w: World, rng: random.Random) -> Spec:
    u = pick_user(w, rng)
    new = rng.choice([r for r in ("Viewer", "Editor", "Admin") if r != u["role"]])
    team = rng.choice([t for t in TEAMS if t != u["team"]])
    boss = w.person(avoid=tuple(p for p in w.people if p.name == u["name"]))
    m = new_mail(
        w,
        boss,
        "Access request",
        f"Hi Alex,\n\n{u['name']} joins the {team} team: please make them "
        f"{ARTICLE[new]} there in the admin console.\n\n{boss.first}",
    )
    change = user_update(u, "the new role and team", role=new, team=team)
    answer = replied(m, "Done")
    return Spec(
        f"{boss.name} asked you by email to change someone's access. Do it in Admin, then reply "
        '"Done" to the email.',
        INBOX,
        (
            read(m),
            Milestone(
                "role",
                (change,),
                (
                    *open_user(u),
                    Choose(Loc('[role="radio"]', text=new)),
                    Pick("team", "Team", team),
                    Tap(button("Save changes")),
                ),
            ),
            answer,
        ),
        goal=(change, *answer.expects),
    )


@template(
    "cross.cancelled_event",
    apps=("mail", "calendar"),
    max_steps=16,
    summary="delete the event an email cancels",
)
def cancelled_event(w: World, rng: random.Random) -> Spec:
    ev = rng.choice(
        [e for e in w.rows("calendar", "events") if dt.date.fromisoformat(e["date"]) >= cal.TODAY]
    )
    person = w.person()
    m = new_mail(
        w,
        person,
        "Meeting cancelled",
        f"Hi Alex,\n\nI have to cancel {ev['title']} on {cal.spoken(ev['date'])}. "
        f"Sorry!\n\n{person.first}",
    )
    gone = Expect("delete", "calendar", "events", key=str(ev["id"]), what="the event deleted")
    return Spec(
        f"{person.name} cancelled a meeting by email. Delete it from your calendar.",
        INBOX,
        (read(m), Milestone("deleted", (gone,), cal.delete_steps(ev))),
        goal=(gone,),
    )


@template(
    "cross.note_from_issue",
    apps=("tracker", "notes"),
    max_steps=14,
    summary="pin the note an issue points to",
    heldout=True,
)
def note_from_issue(w: World, rng: random.Random) -> Spec:
    issue = rng.choice([i for i in w.rows("tracker", "issues") if i["status"] == "Open"])
    note = rng.choice([n for n in w.rows("notes", "notes") if not n["pinned"]])
    issue["description"] = f'Background is in the note "{note["title"]}" ({note["folder"]} folder).'
    pinned = Expect(
        "update", "notes", "notes", {"pinned": 1}, key=str(note["id"]), what="the note pinned"
    )
    # having opened the issue leaves no trace in a database: the first milestone is the note's
    # page, reached through the issue
    return Spec(
        f"Issue {issue['key']} refers to a note. Pin that note.",
        tracker.START,
        (
            Milestone(
                "pinned",
                (pinned,),
                (*tracker.open_issue(issue)[1:], *open_note(note), Tap(button("Pin"))),
            ),
        ),
    )


@template(
    "cross.reorder_from_mail",
    apps=("mail", "shop"),
    max_steps=22,
    summary="order what an email recommends",
)
def reorder_from_mail(w: World, rng: random.Random) -> Spec:
    p = shop.product(w, rng, clothing=False)
    person = w.person()
    address, shipping = rng.choice(tuple(shop.ADDRESSES)), rng.choice(("Standard", "Express"))
    m = new_mail(
        w,
        person,
        "A recommendation",
        f"Hi Alex,\n\nI bought the {p['name']} last month and love it - you should get "
        f"one too.\n\n{person.first}",
    )
    order = shop.order_expects(address, shipping, [(p, 1, "")])
    return Spec(
        f"Order the product {person.name} recommended by email, shipped {shipping} to your "
        f"{address} address.",
        INBOX,
        (
            read(m),
            Milestone(
                "in the cart",
                (Expect("insert", "shop", "cart", {"product_id": p["id"]}),),
                (*shop.open_product(p), Tap(button("Add to cart"))),
            ),
            Milestone("ordered", order, shop.checkout(address, shipping)),
        ),
        allow=shop.CHECKOUT_ALLOW,
        goal=order,
    )
