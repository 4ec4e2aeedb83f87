"""Tracker tasks: close, assign, comment, file, triage, search."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from adaroll.envs.apps.tasks.base import Spec, template
from adaroll.envs.apps.tasks.judge import Expect, Text
from adaroll.envs.apps.tasks.plan import (
    Choose,
    Ctx,
    Fill,
    Find,
    Go,
    Loc,
    Milestone,
    OpenApp,
    Pick,
    Step,
    Tap,
    button,
    field_,
)
from adaroll.envs.apps.tasks.world import USER, World

PER_PAGE = 10
START = ("tracker", "#/issues?status=Open")
NEW_ISSUES = (
    "Checkout page times out",
    "Profile photo rotates sideways",
    "Emails show raw HTML",
    "Calendar export misses events",
    "Search box loses focus",
    "Mobile menu will not close",
    "Discount code applied twice",
)
COMMENTS = (
    "I can reproduce this on staging",
    "Fixed in the next release",
    "Needs design input first",
    "Duplicate of an older report",
)


def list_page(status: str, iid: int) -> Callable[[Ctx], int]:
    """Page of issue ``iid`` in the list of ``status`` ("": all), newest first."""

    def page(ctx: Ctx) -> int:
        ids = sorted(
            (
                int(k)
                for k, i in ctx.state()["tracker"]["issues"].items()
                if not status or i["status"] == status
            ),
            reverse=True,
        )
        return ids.index(iid) // PER_PAGE + 1

    return page


def open_issue(issue: dict[str, Any]) -> tuple[Step, ...]:
    status = issue["status"]
    view = f"#/issues?status={status.replace(' ', '+')}"
    return (
        OpenApp("tracker", "Tracker"),
        Go((view,), Loc(f'.side-link[href="{view}"]')),
        Find(
            Loc(f'a.row[href="#/issue/{issue["id"]}"]'),
            (f"#/issue/{issue['id']}",),
            list_page(status, issue["id"]),
        ),
    )


def update(issue: dict[str, Any], what: str, **values: Any) -> Expect:
    return Expect("update", "tracker", "issues", values, key=str(issue["id"]), what=what)


def pick_issue(
    w: World, rng: random.Random, status: str | None = None, **change: Any
) -> dict[str, Any]:
    issues = w.rows("tracker", "issues")
    if status is not None:
        issues = [i for i in issues if i["status"] == status]
    issue = rng.choice(issues)
    issue.update(change)
    return issue


@template("tracker.close", apps=("tracker",), max_steps=10, summary="mark an issue done")
def close(w: World, rng: random.Random) -> Spec:
    issue = pick_issue(w, rng, "Open")
    return Spec(
        f'Mark issue {issue["key"]} "{issue["title"]}" as Done.',
        START,
        (
            Milestone(
                "closed",
                (update(issue, "the issue done", status="Done"),),
                (
                    *open_issue(issue),
                    Choose(Loc('[role="radio"]', text="Done")),
                    Tap(button("Save changes")),
                ),
            ),
        ),
    )


@template(
    "tracker.assign",
    apps=("tracker",),
    max_steps=12,
    summary="assign an issue and set its priority",
)
def assign(w: World, rng: random.Random) -> Spec:
    issue = pick_issue(w, rng)
    members = [m["name"] for m in w.rows("tracker", "members") if m["name"] != issue["assignee"]]
    who = rng.choice(members)
    priority = rng.choice(
        [p for p in ("Low", "Medium", "High", "Urgent") if p != issue["priority"]]
    )
    return Spec(
        f"Assign {issue['key']} to {who} and set its priority to {priority}.",
        START,
        (
            Milestone(
                "assigned",
                (update(issue, "assignee and priority", assignee=who, priority=priority),),
                (
                    *open_issue(issue),
                    Choose(Loc('[role="radio"]', text=priority)),
                    Pick("assignee", "Assignee", who),
                    Tap(button("Save changes")),
                ),
            ),
        ),
    )


@template("tracker.comment", apps=("tracker",), max_steps=10, summary="comment on an issue")
def comment(w: World, rng: random.Random) -> Spec:
    issue = pick_issue(w, rng)
    text = rng.choice(COMMENTS)
    return Spec(
        f'Comment "{text}" on issue {issue["key"]}.',
        START,
        (
            Milestone(
                "commented",
                (
                    Expect(
                        "insert",
                        "tracker",
                        "comments",
                        {"issue_id": issue["id"], "body": Text(text), "author": USER[0]},
                        what="the comment",
                    ),
                ),
                (*open_issue(issue), Fill(field_("Add a comment"), text), Tap(button("Comment"))),
            ),
        ),
    )


def new_issue_steps(title: str, description: str, priority: str, who: str) -> tuple[Step, ...]:
    return (
        OpenApp("tracker", "Tracker"),
        Go(("#/new",), button("New issue")),
        Fill(field_("Title"), title),
        Fill(field_("Description"), description),
        Choose(Loc('[role="radio"]', text=priority)),
        Pick("assignee", "Assignee", who),
        Tap(button("Create issue")),
    )


def filed(title: str, priority: str, who: str, description: str | None) -> Expect:
    values: dict[str, Any] = {
        "title": Text(title),
        "priority": priority,
        "assignee": who,
        "status": "Open",
    }
    if description is not None:
        values["description"] = Text(description)
    return Expect("insert", "tracker", "issues", values, what="the new issue")


@template(
    "tracker.create", apps=("tracker",), max_steps=16, summary="file an issue with all its fields"
)
def create(w: World, rng: random.Random) -> Spec:
    title = rng.choice(NEW_ISSUES)
    description = rng.choice(
        (
            "Seen by several customers",
            "Happens every time on Firefox",
            "Started after the last deploy",
        )
    )
    priority = rng.choice(("Low", "Medium", "High", "Urgent"))
    who = rng.choice(w.rows("tracker", "members"))["name"]
    return Spec(
        f'File a new issue "{title}" with the description "{description}", priority {priority}, '
        f"assigned to {who}.",
        START,
        (
            Milestone(
                "filed",
                (filed(title, priority, who, description),),
                new_issue_steps(title, description, priority, who),
            ),
        ),
    )


@template(
    "tracker.triage", apps=("tracker",), max_steps=18, summary="start one issue and close another"
)
def triage(w: World, rng: random.Random) -> Spec:
    a, b = rng.sample([i for i in w.rows("tracker", "issues") if i["status"] == "Open"], 2)
    return Spec(
        f"Triage the open issues: move {a['key']} to In progress and mark {b['key']} as Done.",
        START,
        (
            Milestone(
                "started",
                (update(a, "first in progress", status="In progress"),),
                (
                    *open_issue(a),
                    Choose(Loc('[role="radio"]', text="In progress")),
                    Tap(button("Save changes")),
                ),
            ),
            Milestone(
                "closed",
                (update(b, "second done", status="Done"),),
                (
                    *open_issue(b),
                    Choose(Loc('[role="radio"]', text="Done")),
                    Tap(button("Save changes")),
                ),
            ),
        ),
    )


@template(
    "tracker.search_close",
    apps=("tracker",),
    max_steps=12,
    summary="find an issue by search and close it",
    heldout=True,
)
def search_close(w: World, rng: random.Random) -> Spec:
    issue = pick_issue(w, rng, "Open")
    word = max(issue["title"].split(), key=len)
    others = [i for i in w.rows("tracker", "issues") if word.lower() in i["title"].lower()]
    if len(others) > 1:
        word = issue["title"]
    view = f"#/issues?status=Open&q={word.replace(' ', '+')}"
    return Spec(
        f'Search the open issues for "{word}" and mark the issue found as Done.',
        START,
        (
            Milestone(
                "closed",
                (update(issue, "the issue done", status="Done"),),
                (
                    OpenApp("tracker", "Tracker"),
                    Go(("#/issues?status=Open",), Loc('.side-link[href="#/issues?status=Open"]')),
                    Fill(Loc("input", text="Search issues"), word),
                    Go((view,), button("Search")),
                    Go((f"#/issue/{issue['id']}",), Loc(f'a.row[href="#/issue/{issue["id"]}"]')),
                    Choose(Loc('[role="radio"]', text="Done")),
                    Tap(button("Save changes")),
                ),
            ),
        ),
    )


@template(
    "tracker.reassign_all",
    apps=("tracker",),
    max_steps=24,
    summary="hand every open issue of one person to another",
)
def reassign_all(w: World, rng: random.Random) -> Spec:
    members = [m["name"] for m in w.rows("tracker", "members")]
    old, new = rng.sample(members, 2)
    issues = w.rows("tracker", "issues")
    for i in issues:
        if i["assignee"] == old and i["status"] == "Open":
            i["assignee"] = new
    mine = rng.sample([i for i in issues if i["status"] == "Open"], 2)
    for i in mine:
        i["assignee"] = old
    mine.sort(key=lambda i: -i["id"])
    return Spec(
        f"{old} is on leave: assign each of their open issues to {new}.",
        START,
        tuple(
            Milestone(
                f"reassigned {i['key']}",
                (update(i, f"{i['key']} reassigned", assignee=new),),
                (*open_issue(i), Pick("assignee", "Assignee", new), Tap(button("Save changes"))),
            )
            for i in mine
        ),
    )
