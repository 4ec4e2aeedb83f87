"""Admin tasks: roles, deactivation, invitations, settings, teams."""

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
from adaroll.envs.apps.tasks.world import DOMAIN, TEAMS, USER, World

PER_PAGE = 10
START = ("admin", "#/users")
ARTICLE = {"Viewer": "a Viewer", "Editor": "an Editor", "Admin": "an Admin"}


def users_page(uid: int) -> Callable[[Ctx], int]:
    def page(ctx: Ctx) -> int:
        users = sorted(ctx.state()["admin"]["users"].values(), key=lambda u: u["name"])
        return [u["id"] for u in users].index(uid) // PER_PAGE + 1

    return page


def open_user(user: dict[str, Any]) -> tuple[Step, ...]:
    return (
        OpenApp("admin", "Admin"),
        Go(("#/users",), Loc('.side-link[href="#/users"]')),
        Find(
            Loc(f'a.row[href="#/user/{user["id"]}"]'),
            (f"#/user/{user['id']}",),
            users_page(user["id"]),
        ),
    )


def user(w: World, rng: random.Random, **where: Any) -> dict[str, Any]:
    users = [
        u
        for u in w.rows("admin", "users")
        if u["name"] != USER[0] and all(u[k] == v for k, v in where.items())
    ]
    return rng.choice(users)


def update(u: dict[str, Any], what: str, **values: Any) -> Expect:
    return Expect("update", "admin", "users", values, key=str(u["id"]), what=what)


def deactivated(u: dict[str, Any]) -> Milestone:
    """User ``u``'s account switched off and saved."""
    return Milestone(
        "deactivated",
        (update(u, "the account deactivated", active=0),),
        (
            *open_user(u),
            Choose(Loc('[role="switch"]', text="Account active"), on=False),
            Tap(button("Save changes")),
        ),
    )


def role_steps(u: dict[str, Any], role: str) -> tuple[Step, ...]:
    return (*open_user(u), Choose(Loc('[role="radio"]', text=role)), Tap(button("Save changes")))


@template("admin.role", apps=("admin",), max_steps=10, summary="change a user's role")
def role(w: World, rng: random.Random) -> Spec:
    u = user(w, rng)
    new = rng.choice([r for r in ("Viewer", "Editor", "Admin") if r != u["role"]])
    return Spec(
        f"Make {u['name']} {ARTICLE[new]}.",
        START,
        (Milestone("role", (update(u, "the new role", role=new),), role_steps(u, new)),),
    )


@template("admin.deactivate", apps=("admin",), max_steps=10, summary="deactivate an account")
def deactivate(w: World, rng: random.Random) -> Spec:
    u = user(w, rng, active=1)
    return Spec(
        f"Deactivate the account of {u['name']}.",
        START,
        (deactivated(u),),
    )


def invite_steps(email: str, role: str, team: str) -> tuple[Step, ...]:
    return (
        OpenApp("admin", "Admin"),
        Go(("#/invites",), Loc('.side-link[href="#/invites"]')),
        Go(("#/invite",), button("Invite someone")),
        Fill(field_("Email"), email),
        Choose(Loc('[role="radio"]', text=role)),
        Pick("team", "Team", team),
        Tap(button("Send invitation")),
    )


NEWCOMERS = ("robin.hart", "alma.vidal", "noah.brandt", "ida.lund", "felix.ortega")


@template(
    "admin.invite", apps=("admin",), max_steps=14, summary="invite someone with a role and team"
)
def invite(w: World, rng: random.Random) -> Spec:
    email = f"{rng.choice(NEWCOMERS)}@{DOMAIN}"
    role, team = rng.choice(("Viewer", "Editor", "Admin")), rng.choice(TEAMS)
    return Spec(
        f"Invite {email} to the {team} team as {ARTICLE[role]}.",
        START,
        (
            Milestone(
                "invited",
                (
                    Expect(
                        "insert",
                        "admin",
                        "invites",
                        {"email": email, "role": role, "team": team},
                        what="the invitation",
                    ),
                ),
                invite_steps(email, role, team),
            ),
        ),
    )


@template(
    "admin.settings", apps=("admin",), max_steps=16, summary="change three organisation settings"
)
def settings(w: World, rng: random.Random) -> Spec:
    name = rng.choice(("Northwind Labs Europe", "Northwind Group", "Northwind Research"))
    timeout = rng.choice(("15", "45", "60", "90"))
    return Spec(
        f'Rename the organisation to "{name}", set the session timeout to {timeout} minutes and '
        "require two-factor sign-in.",
        START,
        (
            Milestone(
                "saved",
                (
                    Expect("update", "admin", "settings", {"value": Text(name)}, key="org_name"),
                    Expect(
                        "update", "admin", "settings", {"value": timeout}, key="session_timeout"
                    ),
                    Expect("update", "admin", "settings", {"value": "1"}, key="require_2fa"),
                ),
                (
                    OpenApp("admin", "Admin"),
                    Go(("#/settings",), Loc('.side-link[href="#/settings"]')),
                    Fill(field_("Organisation name"), name),
                    Fill(field_("Session timeout (minutes)"), timeout),
                    Choose(Loc('[role="switch"]', text="Require two-factor sign-in")),
                    Tap(button("Save settings")),
                ),
            ),
        ),
    )


@template("admin.revoke", apps=("admin",), max_steps=6, summary="revoke an invitation")
def revoke(w: World, rng: random.Random) -> Spec:
    inv = rng.choice(w.rows("admin", "invites"))
    return Spec(
        f"Revoke the pending invitation for {inv['email']}.",
        START,
        (
            Milestone(
                "revoked",
                (
                    Expect(
                        "delete",
                        "admin",
                        "invites",
                        key=str(inv["id"]),
                        what="the invitation revoked",
                    ),
                ),
                (
                    OpenApp("admin", "Admin"),
                    Go(("#/invites",), Loc('.side-link[href="#/invites"]')),
                    Tap(Loc(".row", has=inv["email"]).child("button", "Revoke")),
                ),
            ),
        ),
    )


@template(
    "admin.move_team",
    apps=("admin",),
    max_steps=12,
    summary="move a user to a team with a new role",
    heldout=True,
)
def move_team(w: World, rng: random.Random) -> Spec:
    u = user(w, rng)
    team = rng.choice([t for t in TEAMS if t != u["team"]])
    new = rng.choice([r for r in ("Viewer", "Editor", "Admin") if r != u["role"]])
    return Spec(
        f"Move {u['name']} to the {team} team and make them {ARTICLE[new]}.",
        START,
        (
            Milestone(
                "moved",
                (update(u, "team and role", team=team, role=new),),
                (
                    *open_user(u),
                    Choose(Loc('[role="radio"]', text=new)),
                    Pick("team", "Team", team),
                    Tap(button("Save changes")),
                ),
            ),
        ),
    )


@template(
    "admin.offboard",
    apps=("admin",),
    max_steps=20,
    summary="deactivate one account and invite a replacement",
)
def offboard(w: World, rng: random.Random) -> Spec:
    u = user(w, rng, active=1)
    email = f"{rng.choice(NEWCOMERS)}@{DOMAIN}"
    return Spec(
        f"{u['name']} has left: deactivate their account and invite {email} to the {u['team']} "
        f"team as {ARTICLE[u['role']]}.",
        START,
        (
            deactivated(u),
            Milestone(
                "invited",
                (
                    Expect(
                        "insert",
                        "admin",
                        "invites",
                        {"email": email, "role": u["role"], "team": u["team"]},
                        what="the invitation",
                    ),
                ),
                invite_steps(email, u["role"], u["team"]),
            ),
        ),
    )
