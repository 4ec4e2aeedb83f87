"""Admin tasks: roles, deactivation, invitations, settings, teams."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from adaroll.envs.apps.tasks.draws import among, derived, other_than, row_of
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
from adaroll.envs.apps.tasks.world import DOMAIN, ROLES, TEAMS, USER, World

PER_PAGE = 10
START = ("admin", "#/users")
ARTICLE = {"Viewer": "a Viewer", "Editor": "an Editor", "Admin": "an Admin"}
NEWCOMERS = ("robin.hart", "alma.vidal", "noah.brandt", "ida.lund", "felix.ortega")


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


def at_user(name: str) -> Opens:
    """The page of the user drawn as ``name``."""
    return Opens(open_user, name)


def user(**where: Any) -> Draw:
    """A user other than the agent's own account, with ``where``'s values."""

    def draw(w: World, rng: random.Random, p: Params) -> dict[str, Any]:
        users = [
            u
            for u in w.rows("admin", "users")
            if u["name"] != USER[0] and all(u[k] == v for k, v in where.items())
        ]
        return rng.choice(users)

    return draw


def with_article(name: str, column: str | None = None) -> Draw:
    """The role drawn as ``name`` (or that record's ``column``) with its article: "an Editor"."""

    def role(p: Params) -> str:
        drawn = p[name]
        return ARTICLE[drawn if column is None else drawn[column]]

    return derived(role)


def newcomer(w: World, rng: random.Random, p: Params) -> str:
    """The address of someone not yet in the organisation."""
    return f"{rng.choice(NEWCOMERS)}@{DOMAIN}"


def user_update(name: str, what: str, **values: Any) -> Expect:
    """The user drawn as ``name`` holds ``values``."""
    return Expect("update", "admin", "users", values, key=f"{{{name}[id]}}", what=what)


def role_and_team(name: str, role: str, team: str) -> tuple[Step | Opens, ...]:
    """On the user's page: the role's radio button, the team's dropdown, saved."""
    return (
        at_user(name),
        Choose(Loc('[role="radio"]', text=role)),
        Pick("team", "Team", team),
        Tap(button("Save changes")),
    )


def deactivated(name: str) -> Work:
    """The account of the user drawn as ``name`` switched off and saved."""
    return Work(
        "deactivated",
        (user_update(name, "the account deactivated", active=0),),
        (
            at_user(name),
            Choose(Loc('[role="switch"]', text="Account active"), on=False),
            Tap(button("Save changes")),
        ),
    )


def invited(email: str, role: str, team: str) -> Work:
    return Work(
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
        (
            OpenApp("admin", "Admin"),
            Go(("#/invites",), Loc('.side-link[href="#/invites"]')),
            Go(("#/invite",), button("Invite someone")),
            Fill(field_("Email"), email),
            Choose(Loc('[role="radio"]', text=role)),
            Pick("team", "Team", team),
            Tap(button("Send invitation")),
        ),
    )


ROWS = (
    Row(
        "admin.role",
        "change a user's role",
        max_steps=10,
        start=START,
        draws={"u": user(), "new": other_than("u", "role", ROLES), "a_new": with_article("new")},
        instruction="Make {u[name]} {a_new}.",
        plan=(
            Work(
                "role",
                (user_update("u", "the new role", role="{new}"),),
                (
                    at_user("u"),
                    Choose(Loc('[role="radio"]', text="{new}")),
                    Tap(button("Save changes")),
                ),
            ),
        ),
    ),
    Row(
        "admin.deactivate",
        "deactivate an account",
        max_steps=10,
        start=START,
        draws={"u": user(active=1)},
        instruction="Deactivate the account of {u[name]}.",
        plan=(deactivated("u"),),
    ),
    Row(
        "admin.invite",
        "invite someone with a role and team",
        max_steps=14,
        start=START,
        draws={
            "email": newcomer,
            "role": among(*ROLES),
            "team": among(*TEAMS),
            "a_role": with_article("role"),
        },
        instruction="Invite {email} to the {team} team as {a_role}.",
        plan=(invited("{email}", "{role}", "{team}"),),
    ),
    Row(
        "admin.settings",
        "change three organisation settings",
        max_steps=16,
        start=START,
        draws={
            "name": among("Northwind Labs Europe", "Northwind Group", "Northwind Research"),
            "timeout": among("15", "45", "60", "90"),
        },
        instruction='Rename the organisation to "{name}", set the session timeout to {timeout} '
        "minutes and require two-factor sign-in.",
        plan=(
            Work(
                "saved",
                (
                    Expect(
                        "update", "admin", "settings", {"value": Text("{name}")}, key="org_name"
                    ),
                    Expect(
                        "update", "admin", "settings", {"value": "{timeout}"}, key="session_timeout"
                    ),
                    Expect("update", "admin", "settings", {"value": "1"}, key="require_2fa"),
                ),
                (
                    OpenApp("admin", "Admin"),
                    Go(("#/settings",), Loc('.side-link[href="#/settings"]')),
                    Fill(field_("Organisation name"), "{name}"),
                    Fill(field_("Session timeout (minutes)"), "{timeout}"),
                    Choose(Loc('[role="switch"]', text="Require two-factor sign-in")),
                    Tap(button("Save settings")),
                ),
            ),
        ),
    ),
    Row(
        "admin.revoke",
        "revoke an invitation",
        max_steps=6,
        start=START,
        draws={"inv": row_of("admin", "invites")},
        instruction="Revoke the pending invitation for {inv[email]}.",
        plan=(
            Work(
                "revoked",
                (
                    Expect(
                        "delete", "admin", "invites", key="{inv[id]}", what="the invitation revoked"
                    ),
                ),
                (
                    OpenApp("admin", "Admin"),
                    Go(("#/invites",), Loc('.side-link[href="#/invites"]')),
                    Tap(Loc(".row", has="{inv[email]}").child("button", "Revoke")),
                ),
            ),
        ),
    ),
    Row(
        "admin.move_team",
        "move a user to a team with a new role",
        max_steps=12,
        start=START,
        draws={
            "u": user(),
            "team": other_than("u", "team", TEAMS),
            "new": other_than("u", "role", ROLES),
            "a_new": with_article("new"),
        },
        instruction="Move {u[name]} to the {team} team and make them {a_new}.",
        plan=(
            Work(
                "moved",
                (user_update("u", "team and role", team="{team}", role="{new}"),),
                role_and_team("u", "{new}", "{team}"),
            ),
        ),
        heldout=True,
    ),
    Row(
        "admin.offboard",
        "deactivate one account and invite a replacement",
        max_steps=20,
        start=START,
        draws={"u": user(active=1), "email": newcomer, "a_role": with_article("u", "role")},
        instruction="{u[name]} has left: deactivate their account and invite {email} to the "
        "{u[team]} team as {a_role}.",
        plan=(deactivated("u"), invited("{email}", "{u[role]}", "{u[team]}")),
    ),
)
