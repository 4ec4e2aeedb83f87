"""The seeded content every task starts from: people, mail, products and orders, events,
issues, notes and user accounts, consistent across the six apps (the colleague who mails you
is the one assigned to your issue and listed in the admin console).

:func:`adaroll.envs.apps.tasks.content.generate` builds a :class:`World` from a task's random
generator; the task's template
then adds or changes the rows its instruction is about. Nothing here depends on the clock:
"today" is :data:`TODAY` in every world, and every date is relative to it.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from typing import Any

TODAY = dt.date(2024, 3, 13)
"""The world's date (a Wednesday); the apps show dates relative to it, never the real one."""
USER = ("Alex Morgan", "alex.morgan@northwind.example")
"""The person the agent acts as."""
DOMAIN = "northwind.example"

FIRST = (
    "Ana",
    "Ben",
    "Chloe",
    "Daniel",
    "Elena",
    "Farid",
    "Grace",
    "Hiro",
    "Irene",
    "Jonas",
    "Kira",
    "Liam",
    "Maya",
    "Nadia",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tara",
    "Umar",
    "Vera",
    "Wei",
    "Yusuf",
    "Zoe",
    "Marco",
    "Lena",
    "Tomas",
    "Ines",
    "Pavel",
)
LAST = (
    "Lopez",
    "Fischer",
    "Nakamura",
    "Okafor",
    "Rossi",
    "Schmidt",
    "Patel",
    "Kowalski",
    "Dubois",
    "Novak",
    "Haddad",
    "Larsen",
    "Silva",
    "Moreau",
    "Jensen",
    "Ivanova",
    "Costa",
    "Berg",
    "Keller",
    "Romero",
)
TEAMS = ("Engineering", "Design", "Sales", "Support", "Finance")
ROLES = ("Viewer", "Editor", "Admin")


def iso(day: dt.date) -> str:
    return day.isoformat()


def days(n: int) -> str:
    """The date ``n`` days from :data:`TODAY` (negative: before) as ISO text."""
    return iso(TODAY + dt.timedelta(days=n))


@dataclass(frozen=True)
class Person:
    name: str
    email: str
    team: str

    @property
    def first(self) -> str:
        return self.name.split()[0]


@dataclass
class World:
    """Rows per app and table (``tables[app][table]``), plus the people they mention."""

    rng: random.Random
    people: list[Person] = field(default_factory=list)
    tables: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)

    def rows(self, app: str, table: str) -> list[dict[str, Any]]:
        return self.tables.setdefault(app, {}).setdefault(table, [])

    def add(self, app: str, table: str, **row: Any) -> dict[str, Any]:
        """Append a row; an ``id`` one past the table's largest is given when none is."""
        rows = self.rows(app, table)
        if "id" not in row:
            row["id"] = max((int(r["id"]) for r in rows if "id" in r), default=0) + 1
        rows.append(row)
        return row

    def one(self, app: str, table: str, **where: Any) -> dict[str, Any]:
        """The single row with these values (an error when there are none or several)."""
        hits = [r for r in self.rows(app, table) if all(r.get(k) == v for k, v in where.items())]
        if len(hits) != 1:
            raise ValueError(f"{len(hits)} rows of {app}.{table} match {where}")
        return hits[0]

    def person(self, *, avoid: tuple[Person, ...] = ()) -> Person:
        """A random person other than ``avoid``."""
        return self.rng.choice([p for p in self.people if p not in avoid])

    def people_of(self, n: int) -> list[Person]:
        return self.rng.sample(self.people, n)


def make_people(rng: random.Random, n: int) -> list[Person]:
    """``n`` people with distinct first names (an instruction names people by them)."""
    names: list[str] = []
    while len(names) < n:
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        if name not in names and name.split()[0] not in {x.split()[0] for x in names}:
            names.append(name)
    return [
        Person(nm, f"{nm.lower().replace(' ', '.')}@{DOMAIN}", rng.choice(TEAMS)) for nm in names
    ]
