"""Every app's base content, drawn from a world's generator (:func:`fill`).

Sizes are chosen so that lists page: about 24 messages in the inbox (10 per page), 40 products
(8 per page), 28 issues (10 per page), 24 user accounts (10 per page), and a dozen notes per
folder at most. Names of things (subjects, products, events, issues, notes) are unique within a
world, so an instruction that names one names exactly one.
"""

from __future__ import annotations

import random

from adaroll.envs.apps.tasks.world import (
    DOMAIN,
    ROLES,
    TEAMS,
    TODAY,
    USER,
    World,
    days,
    iso,
    make_people,
)

SUBJECTS = (
    "Quarterly budget review",
    "Team offsite agenda",
    "Design feedback on the dashboard",
    "Lunch on Friday",
    "Conference travel plans",
    "Weekly status update",
    "Server maintenance window",
    "Welcome to the team",
    "Code review request",
    "Customer escalation",
    "Holiday schedule",
    "Hiring committee notes",
    "Product launch checklist",
    "Security training reminder",
    "Parking permit renewal",
    "Book club pick",
    "Marketing campaign draft",
    "Office move update",
    "Expense report approval",
    "Onboarding documents",
    "Release notes draft",
    "Board meeting minutes",
    "Vendor contract renewal",
    "Sales pipeline review",
    "Accessibility audit results",
    "Recruiting event volunteers",
    "Printer on floor three",
    "New coffee machine",
    "Quarterly OKR check-in",
    "Partner workshop follow-up",
    "Support rota for April",
    "Laptop refresh programme",
    "Website copy edits",
    "Analytics dashboard access",
)
BODIES = (
    "Could you take a look before Thursday? Thanks!",
    "Here is a short summary. Let me know what you think.",
    "Please find the details below and reply if anything is unclear.",
    "Just a reminder so it does not slip through the cracks.",
    "I have put together a first draft; comments welcome.",
    "Can we discuss this at our next meeting?",
)
PRODUCTS = {
    "Electronics": (
        "Wireless Mouse",
        "USB-C Hub",
        "Noise Cancelling Headphones",
        "Bluetooth Speaker",
        "Webcam HD",
        "Portable Charger",
        "Mechanical Keyboard",
    ),
    "Kitchen": (
        "Chef Knife",
        "French Press",
        "Cast Iron Skillet",
        "Salad Spinner",
        "Espresso Cups",
        "Cutting Board",
        "Tea Kettle",
    ),
    "Books": (
        "The Quiet Garden",
        "Patterns of Design",
        "A Year of Soups",
        "Deep Sea Tales",
        "Mountain Atlas",
        "Learning Python Fast",
        "The Last Lighthouse",
    ),
    "Outdoor": (
        "Camping Lantern",
        "Trail Backpack",
        "Water Bottle",
        "Folding Chair",
        "Hiking Poles",
        "Picnic Blanket",
    ),
    "Office": (
        "Desk Lamp",
        "Notebook Set",
        "Standing Desk Mat",
        "Cable Organizer",
        "Monitor Stand",
        "Whiteboard Markers",
    ),
    "Clothing": (
        "Rain Jacket",
        "Wool Sweater",
        "Running Shoes",
        "Cotton T-Shirt",
        "Denim Jeans",
        "Winter Hat",
    ),
}
SIZES = "S,M,L,XL"
EVENTS = (
    "Design review",
    "Sprint planning",
    "Budget sync",
    "Customer call",
    "Dentist appointment",
    "Yoga class",
    "Team retrospective",
    "Product demo",
    "Hiring interview",
    "Roadmap workshop",
    "Quarterly planning",
    "Lunch with mentors",
    "Security briefing",
    "Marketing sync",
    "Parent teacher meeting",
    "Car service",
    "Book club",
    "Board prep",
    "Vendor meeting",
    "All hands",
)
LOCATIONS = ("Room 4B", "Main office", "Zoom", "Cafe Luna", "Room 2A", "City library")
ISSUES = (
    "Login button misaligned on Safari",
    "Search returns stale results",
    "Export to CSV drops accents",
    "Dark mode toggle resets",
    "Slow dashboard on first load",
    "Broken link in footer",
    "Password reset email delayed",
    "Avatar upload fails over 2 MB",
    "Typo on pricing page",
    "Session expires too early",
    "Charts overlap on mobile",
    "Date picker shows wrong week",
    "Notifications sent twice",
    "Missing alt text on images",
    "API rate limit too strict",
    "Invoice totals rounded wrong",
    "Sidebar scroll jumps",
    "Timezone shown as UTC",
    "Filters lost after refresh",
    "Keyboard trap in modal",
    "Signup form accepts blank name",
    "Logo blurry on retina screens",
    "Report builder crashes on empty data",
    "Cookie banner covers buttons",
    "Audit log misses deletions",
    "Team invite link expired",
    "Tooltip text cut off",
    "Print view missing header",
    "Autosave loses last paragraph",
    "Graph legend colors swapped",
)
NOTES = {
    "Personal": (
        "Grocery list",
        "Birthday gift ideas",
        "Books to read",
        "Gym routine",
        "Home repairs",
    ),
    "Work": (
        "Quarterly goals",
        "Interview questions",
        "Meeting notes: kickoff",
        "Team contacts",
        "Project risks",
        "Launch timeline",
    ),
    "Recipes": ("Pasta carbonara", "Lentil soup", "Banana bread", "Green curry"),
    "Travel": ("Packing list", "Lisbon itinerary", "Visa documents"),
}
SENDERS = ("Orders", "Travel desk", "IT Service Desk", "Payroll", "Facilities")


def fill(w: World) -> None:
    """Add every app's base content to ``w``."""
    _mail(w)
    _shop(w)
    _calendar(w)
    _tracker(w)
    _notes(w)
    _admin(w)


def _mail(w: World) -> None:
    rng = w.rng
    for i, (name, custom) in enumerate(
        (
            ("Inbox", 0),
            ("Sent", 0),
            ("Archive", 0),
            ("Trash", 0),
            ("Receipts", 1),
            ("Travel", 1),
            ("Projects", 1),
        )
    ):
        w.rows("mail", "folders").append({"name": name, "position": i, "custom": custom})
    subjects = rng.sample(SUBJECTS, len(SUBJECTS))
    plan = ["Inbox"] * 20 + ["Archive"] * 5 + ["Sent"] * 4 + ["Projects"] * 3 + ["Trash"] * 2
    for i, folder in enumerate(plan):
        person = w.person()
        sent = folder == "Sent"
        w.add(
            "mail",
            "messages",
            folder=folder,
            sender=USER[0] if sent else person.name,
            sender_email=USER[1] if sent else person.email,
            recipient=person.email if sent else USER[1],
            subject=subjects[i],
            body=f"Hi {('there' if sent else USER[0].split()[0])},\n\n{rng.choice(BODIES)}\n\n"
            f"{USER[0] if sent else person.first}",
            date=days(-rng.randint(1, 40)),
            read=1 if sent or rng.random() < 0.6 else 0,
            starred=int(rng.random() < 0.12),
            reply_to=None,
        )


def _shop(w: World) -> None:
    rng = w.rng
    for category, names in PRODUCTS.items():
        for name in names:
            price = rng.randint(6, 180) * 100 - rng.choice((1, 5, 51))
            w.add(
                "shop",
                "products",
                name=name,
                category=category,
                price=price,
                stock=rng.randint(4, 25),
                rating=round(rng.uniform(3.0, 5.0), 1),
                options=SIZES if category == "Clothing" else "",
                description=f"{name}: a {category.lower()} favourite.",
            )
    w.add("shop", "addresses", label="Home", line="12 Elm Street, Springfield")
    w.add("shop", "addresses", label="Office", line="400 Market Avenue, Springfield")
    products = w.rows("shop", "products")
    numbers = rng.sample(range(100201, 100999), 6)
    for i, number in enumerate(sorted(numbers)):
        status = ("Delivered", "Delivered", "Delivered", "Delivered", "Shipped", "Processing")[i]
        items = rng.sample(products, rng.randint(1, 3))
        order = w.add(
            "shop",
            "orders",
            number=str(number),
            date=days(-60 + i * 9),
            status=status,
            shipping=rng.choice(("Standard", "Express")),
            address="12 Elm Street, Springfield",
            total=0,
        )
        total = 0
        for p in items:
            qty = rng.randint(1, 2)
            option = rng.choice(p["options"].split(",")) if p["options"] else ""
            w.add(
                "shop",
                "order_items",
                order_id=order["id"],
                product_id=p["id"],
                name=p["name"],
                qty=qty,
                price=p["price"],
                option=option,
            )
            total += qty * p["price"]
        order["total"] = total
    for p in rng.sample(products, 2):
        w.rows("shop", "wishlist").append({"product_id": p["id"]})


def _calendar(w: World) -> None:
    rng = w.rng
    titles = rng.sample(EVENTS, 16)
    for title in titles:
        start = rng.randint(8, 16)
        length = rng.choice((1, 1, 2))
        w.add(
            "calendar",
            "events",
            title=title,
            date=days(rng.randint(-9, 16)),
            start=f"{start:02d}:00",
            end=f"{start + length:02d}:00",
            location=rng.choice(LOCATIONS),
            calendar="Personal"
            if title
            in (
                "Dentist appointment",
                "Yoga class",
                "Car service",
                "Book club",
                "Parent teacher meeting",
            )
            else "Work",
        )


def _tracker(w: World) -> None:
    rng = w.rng
    members = sorted(w.people[:10], key=lambda p: p.name)
    for p in members:
        w.rows("tracker", "members").append({"name": p.name, "email": p.email})
    titles = rng.sample(ISSUES, 26)
    for i, title in enumerate(titles):
        created = days(-40 + i)
        w.add(
            "tracker",
            "issues",
            key=f"WEB-{101 + i}",
            title=title,
            description=f"Reported by {rng.choice(members).name}. Steps to reproduce are in "
            "the linked ticket.",
            status=rng.choice(("Open", "Open", "In progress", "Done")),
            priority=rng.choice(("Low", "Medium", "Medium", "High", "Urgent")),
            assignee=rng.choice([""] + [m.name for m in members]),
            created=created,
            updated=created,
        )


def _notes(w: World) -> None:
    rng = w.rng
    for i, folder in enumerate(NOTES):
        w.rows("notes", "folders").append({"name": folder, "position": i})
    for folder, titles in NOTES.items():
        for title in titles:
            w.add(
                "notes",
                "notes",
                folder=folder,
                title=title,
                body=f"{title}\n- first point\n- second point",
                pinned=int(rng.random() < 0.15),
                updated=days(-rng.randint(1, 60)),
            )


def _admin(w: World) -> None:
    rng = w.rng
    for team in TEAMS:
        w.rows("admin", "teams").append({"name": team})
    w.add("admin", "users", name=USER[0], email=USER[1], role="Admin", team="Engineering", active=1)
    for p in w.people:
        w.add(
            "admin",
            "users",
            name=p.name,
            email=p.email,
            role=rng.choice(ROLES[:2] * 3 + ROLES[2:]),
            team=p.team,
            active=int(rng.random() < 0.9),
        )
    for name in rng.sample(("jordan.lee", "sam.rivera", "kai.nguyen", "mia.chen"), 2):
        w.add("admin", "invites", email=f"{name}@{DOMAIN}", role="Viewer", team=rng.choice(TEAMS))
    for key, value in (
        ("org_name", "Northwind Labs"),
        ("session_timeout", "30"),
        ("require_2fa", "0"),
        ("allow_signups", "1"),
        ("default_role", "Viewer"),
    ):
        w.rows("admin", "settings").append({"key": key, "value": value})


def generate(rng: random.Random) -> World:
    """A fresh world: every app's base content, drawn from ``rng``."""
    world = World(rng, make_people(rng, 22))
    for app in ("mail", "shop", "calendar", "tracker", "notes", "admin"):
        world.rows(app, "meta").extend(
            [
                {"key": "today", "value": iso(TODAY)},
                {"key": "user", "value": USER[0]},
                {"key": "email", "value": USER[1]},
            ]
        )
    fill(world)
    return world
