"""Tracker tasks: close, assign, comment, file, triage, search."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from adaroll.envs.apps.tasks.draws import among, derived, other_than
from adaroll.envs.apps.tasks.fill import ref
from adaroll.envs.apps.tasks.judge import Expect, Text
from adaroll.envs.apps.tasks.plan import (
    Choose,
    Ctx,
    Fill,
    Find,
    Go,
    Loc,
    OpenApp,
    Pick,
    Step,
    Tap,
    button,
    field_,
)
from adaroll.envs.apps.tasks.rows import Draw, Opens, Params, Row, Work
from adaroll.envs.apps.tasks.world import USER, World

PER_PAGE = 10
START = ("tracker", "#/issues?status=Open")
PRIORITIES = ("Low", "Medium", "High", "Urgent")
NEW_ISSUES = (
    "Checkout page times out",
    "Profile photo rotates sideways",
    "Emails show raw HTML",
    "Calendar export misses events",
    "Search box loses focus",
    "Mobile menu will not close",
    "Discount code applied twice",
)
DESCRIPTIONS = (
    "Seen by several customers",
    "Happens every time on Firefox",
    "Started after the last deploy",
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


def at_issue(name: str) -> Opens:
    """The page of the issue drawn as ``name``."""
    return Opens(open_issue, name)


def issue(status: str | None = None) -> Draw:
    """An issue (of ``status`` when given)."""

    def draw(w: World, rng: random.Random, p: Params) -> dict[str, Any]:
        issues = w.rows("tracker", "issues")
        if status is not None:
            issues = [i for i in issues if i["status"] == status]
        return rng.choice(issues)

    return draw


def member(w: World, rng: random.Random, p: Params) -> str:
    """A member of the project, by name."""
    return str(rng.choice(w.rows("tracker", "members"))["name"])


def another_assignee(w: World, rng: random.Random, p: Params) -> str:
    """A member other than the one the issue drawn as ``issue`` is assigned to."""
    members = [m["name"] for m in w.rows("tracker", "members")]
    return str(rng.choice([m for m in members if m != p["issue"]["assignee"]]))


def two_open(w: World, rng: random.Random, p: Params) -> list[dict[str, Any]]:
    return rng.sample([i for i in w.rows("tracker", "issues") if i["status"] == "Open"], 2)


def two_members(w: World, rng: random.Random, p: Params) -> list[str]:
    return rng.sample([m["name"] for m in w.rows("tracker", "members")], 2)


def left_to_reassign(w: World, rng: random.Random, p: Params) -> list[dict[str, Any]]:
    """Exactly two open issues assigned to ``p["old"]`` (the rest of theirs go to
    ``p["new"]``), highest number first."""
    issues = w.rows("tracker", "issues")
    for i in issues:
        if i["assignee"] == p["old"] and i["status"] == "Open":
            i["assignee"] = p["new"]
    mine = rng.sample([i for i in issues if i["status"] == "Open"], 2)
    for i in mine:
        i["assignee"] = p["old"]
    return sorted(mine, key=lambda i: -i["id"])


def search_word(w: World, rng: random.Random, p: Params) -> str:
    """The longest word of the title of the issue drawn as ``issue`` - its whole title when
    the word finds other issues too."""
    title = p["issue"]["title"]
    word = max(title.split(), key=len)
    others = [i for i in w.rows("tracker", "issues") if word.lower() in i["title"].lower()]
    return str(title if len(others) > 1 else word)


def issue_update(name: str, what: str, **values: Any) -> Expect:
    """The issue drawn as ``name`` holds ``values``."""
    return Expect("update", "tracker", "issues", values, key=f"{{{name}[id]}}", what=what)


def set_status(milestone: str, name: str, status: str, what: str) -> Work:
    return Work(
        milestone,
        (issue_update(name, what, status=status),),
        (
            at_issue(name),
            Choose(Loc('[role="radio"]', text=status)),
            Tap(button("Save changes")),
        ),
    )


def filed(title: str, priority: str, who: str, description: str | None) -> Work:
    """The issue filed with these values (no description: the field left empty)."""
    values: dict[str, Any] = {
        "title": Text(title),
        "priority": priority,
        "assignee": who,
        "status": "Open",
    }
    steps: list[Step] = [
        OpenApp("tracker", "Tracker"),
        Go(("#/new",), button("New issue")),
        Fill(field_("Title"), title),
    ]
    if description is not None:
        values["description"] = Text(description)
        steps.append(Fill(field_("Description"), description))
    steps += [
        Choose(Loc('[role="radio"]', text=priority)),
        Pick("assignee", "Assignee", who),
        Tap(button("Create issue")),
    ]
    new = Expect("insert", "tracker", "issues", values, what="the new issue")
    return Work("filed", (new,), tuple(steps))


ROWS = (
    Row(
        "tracker.close",
        "mark an issue done",
        max_steps=10,
        start=START,
        draws={"issue": issue("Open")},
        instruction='Mark issue {issue[key]} "{issue[title]}" as Done.',
        plan=(set_status("closed", "issue", "Done", "the issue done"),),
    ),
    Row(
        "tracker.assign",
        "assign an issue and set its priority",
        max_steps=12,
        start=START,
        draws={
            "issue": issue(),
            "who": another_assignee,
            "priority": other_than("issue", "priority", PRIORITIES),
        },
        instruction="Assign {issue[key]} to {who} and set its priority to {priority}.",
        plan=(
            Work(
                "assigned",
                (
                    issue_update(
                        "issue", "assignee and priority", assignee="{who}", priority="{priority}"
                    ),
                ),
                (
                    at_issue("issue"),
                    Choose(Loc('[role="radio"]', text="{priority}")),
                    Pick("assignee", "Assignee", "{who}"),
                    Tap(button("Save changes")),
                ),
            ),
        ),
    ),
    Row(
        "tracker.comment",
        "comment on an issue",
        max_steps=10,
        start=START,
        draws={"issue": issue(), "text": among(*COMMENTS)},
        instruction='Comment "{text}" on issue {issue[key]}.',
        plan=(
            Work(
                "commented",
                (
                    Expect(
                        "insert",
                        "tracker",
                        "comments",
                        {"issue_id": ref("issue", "id"), "body": Text("{text}"), "author": USER[0]},
                        what="the comment",
                    ),
                ),
                (
                    at_issue("issue"),
                    Fill(field_("Add a comment"), "{text}"),
                    Tap(button("Comment")),
                ),
            ),
        ),
    ),
    Row(
        "tracker.create",
        "file an issue with all its fields",
        max_steps=16,
        start=START,
        draws={
            "title": among(*NEW_ISSUES),
            "description": among(*DESCRIPTIONS),
            "priority": among(*PRIORITIES),
            "who": member,
        },
        instruction='File a new issue "{title}" with the description "{description}", priority '
        "{priority}, assigned to {who}.",
        plan=(filed("{title}", "{priority}", "{who}", "{description}"),),
    ),
    Row(
        "tracker.triage",
        "start one issue and close another",
        max_steps=18,
        start=START,
        draws={("a", "b"): two_open},
        instruction="Triage the open issues: move {a[key]} to In progress and mark {b[key]} as "
        "Done.",
        plan=(
            set_status("started", "a", "In progress", "first in progress"),
            set_status("closed", "b", "Done", "second done"),
        ),
    ),
    Row(
        "tracker.search_close",
        "find an issue by search and close it",
        max_steps=12,
        start=START,
        draws={
            "issue": issue("Open"),
            "word": search_word,
            "query": derived(lambda p: p["word"].replace(" ", "+")),
        },
        instruction='Search the open issues for "{word}" and mark the issue found as Done.',
        plan=(
            Work(
                "closed",
                (issue_update("issue", "the issue done", status="Done"),),
                (
                    OpenApp("tracker", "Tracker"),
                    Go(("#/issues?status=Open",), Loc('.side-link[href="#/issues?status=Open"]')),
                    Fill(Loc("input", text="Search issues"), "{word}"),
                    Go(("#/issues?status=Open&q={query}",), button("Search")),
                    Go(("#/issue/{issue[id]}",), Loc('a.row[href="#/issue/{issue[id]}"]')),
                    Choose(Loc('[role="radio"]', text="Done")),
                    Tap(button("Save changes")),
                ),
            ),
        ),
        heldout=True,
    ),
    Row(
        "tracker.reassign_all",
        "hand every open issue of one person to another",
        max_steps=24,
        start=START,
        draws={("old", "new"): two_members, ("i1", "i2"): left_to_reassign},
        instruction="{old} is on leave: assign each of their open issues to {new}.",
        plan=tuple(
            Work(
                f"reassigned {{{i}[key]}}",
                (issue_update(i, f"{{{i}[key]}} reassigned", assignee="{new}"),),
                (at_issue(i), Pick("assignee", "Assignee", "{new}"), Tap(button("Save changes"))),
            )
            for i in ("i1", "i2")
        ),
    ),
)
