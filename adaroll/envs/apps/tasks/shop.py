"""Shop tasks: cart, checkout, returns, wishlist, search."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from adaroll.envs.apps.tasks.base import Spec, template
from adaroll.envs.apps.tasks.judge import Allow, Expect
from adaroll.envs.apps.tasks.plan import (
    Choose,
    Ctx,
    Fill,
    Find,
    Go,
    Loc,
    Milestone,
    OpenApp,
    Step,
    Tap,
    button,
    field_,
)
from adaroll.envs.apps.tasks.world import World

PER_PAGE = 8
START = ("shop", "#/catalog")
ADDRESSES = {"Home": "12 Elm Street, Springfield", "Office": "400 Market Avenue, Springfield"}
CHECKOUT_ALLOW = (
    Allow("shop", "cart", frozenset({"insert", "update", "delete"})),
    Allow("shop", "products", frozenset({"update"}), frozenset({"stock"})),
)
"""An order empties the cart and takes its items out of stock."""


def catalog_page(category: str, pid: int) -> Callable[[Ctx], int]:
    def page(ctx: Ctx) -> int:
        shown = sorted(
            (p for p in ctx.state()["shop"]["products"].values() if p["category"] == category),
            key=lambda p: p["name"],
        )
        ids = [p["id"] for p in shown]
        return ids.index(pid) // PER_PAGE + 1

    return page


def open_product(p: dict[str, Any]) -> tuple[Step, ...]:
    view = f"#/catalog?category={p['category']}"
    return (
        OpenApp("shop", "Shop"),
        Go((view,), Loc(f'.side-link[href="{view}"]')),
        Find(
            Loc(f'a.row[href="#/product/{p["id"]}"]'),
            (f"#/product/{p['id']}",),
            catalog_page(p["category"], p["id"]),
        ),
    )


def checkout(address: str, shipping: str) -> tuple[Step, ...]:
    return (
        Go(("#/cart",), Loc('.side-link[href="#/cart"]')),
        Go(("#/checkout",), button("Checkout")),
        Choose(Loc('[role="radio"]', text=address)),
        Choose(Loc('[role="radio"]', text=shipping)),
        Tap(button("Place order")),
    )


def order_expects(
    address: str, shipping: str, items: list[tuple[dict[str, Any], int, str]]
) -> tuple[Expect, ...]:
    return (
        Expect(
            "insert",
            "shop",
            "orders",
            {"shipping": shipping, "address": ADDRESSES[address], "status": "Processing"},
            what="the new order",
        ),
        *(
            Expect(
                "insert",
                "shop",
                "order_items",
                {"product_id": p["id"], "qty": qty, "option": option},
                what=f"{p['name']} in the order",
            )
            for p, qty, option in items
        ),
    )


def product(w: World, rng: random.Random, *, clothing: bool | None = None) -> dict[str, Any]:
    items = w.rows("shop", "products")
    if clothing is not None:
        items = [p for p in items if (p["category"] == "Clothing") == clothing]
    p = rng.choice(items)
    p["stock"] = max(p["stock"], 6)
    return p


@template(
    "shop.add_to_cart",
    apps=("shop",),
    max_steps=12,
    summary="add a quantity of a product to the cart",
)
def add_to_cart(w: World, rng: random.Random) -> Spec:
    p = product(w, rng, clothing=False)
    qty = rng.randint(2, 4)
    return Spec(
        f"Add {qty} of the {p['name']} to the cart.",
        START,
        (
            Milestone(
                "in the cart",
                (
                    Expect(
                        "insert",
                        "shop",
                        "cart",
                        {"product_id": p["id"], "qty": qty, "option": ""},
                        what="the cart line",
                    ),
                ),
                (*open_product(p), Fill(field_("Quantity"), str(qty)), Tap(button("Add to cart"))),
            ),
        ),
    )


@template(
    "shop.buy_clothing",
    apps=("shop",),
    max_steps=18,
    summary="buy a clothing item in a size, shipping and address chosen",
)
def buy_clothing(w: World, rng: random.Random) -> Spec:
    p = product(w, rng, clothing=True)
    size = rng.choice(p["options"].split(","))
    address, shipping = rng.choice(tuple(ADDRESSES)), rng.choice(("Standard", "Express"))
    return Spec(
        f"Buy the {p['name']} in size {size}, shipped {shipping} to your {address} address.",
        START,
        (
            Milestone(
                "in the cart",
                (Expect("insert", "shop", "cart", {"product_id": p["id"], "option": size}),),
                (
                    *open_product(p),
                    Choose(Loc('[role="radio"]', text=size)),
                    Tap(button("Add to cart")),
                ),
            ),
            Milestone(
                "ordered",
                order_expects(address, shipping, [(p, 1, size)]),
                checkout(address, shipping),
            ),
        ),
        allow=CHECKOUT_ALLOW,
        goal=order_expects(address, shipping, [(p, 1, size)]),
    )


def returned(order: dict[str, Any], item: dict[str, Any], reason: str) -> Expect:
    return Expect(
        "insert",
        "shop",
        "returns",
        {"order_id": order["id"], "item_id": item["id"], "reason": reason},
        what="the return",
    )


def return_steps(order: dict[str, Any], item: dict[str, Any], reason: str) -> tuple[Step, ...]:
    """From anywhere: the order's page, the item's Return button, the reason, submit."""
    number = order["number"]
    return (
        OpenApp("shop", "Shop"),
        Go(("#/orders",), Loc('.side-link[href="#/orders"]')),
        Go((f"#/order/{number}",), Loc(f'a.row[href="#/order/{number}"]')),
        Go(
            (f"#/return/{number}/{item['id']}",),
            Loc(".row", has=item["name"], first=True).child("button", "Return"),
        ),
        Choose(Loc('[role="radio"]', text=reason)),
        Tap(button("Submit return")),
    )


@template(
    "shop.return_item",
    apps=("shop",),
    max_steps=12,
    summary="request a return for an item of a delivered order",
)
def return_item(w: World, rng: random.Random) -> Spec:
    orders = [o for o in w.rows("shop", "orders") if o["status"] == "Delivered"]
    order = rng.choice(orders)
    item = rng.choice([i for i in w.rows("shop", "order_items") if i["order_id"] == order["id"]])
    reason = rng.choice(("Damaged", "Wrong item", "Too small", "No longer needed"))
    words = {
        "Damaged": "it arrived damaged",
        "Wrong item": "it is the wrong item",
        "Too small": "it is too small",
        "No longer needed": "it is no longer needed",
    }[reason]
    return Spec(
        f"Return the {item['name']} from order {order['number']}: {words}.",
        START,
        (
            Milestone(
                "return requested",
                (returned(order, item, reason),),
                return_steps(order, item, reason),
            ),
        ),
    )


@template(
    "shop.wishlist_add",
    apps=("shop",),
    max_steps=8,
    summary="add a product to the wishlist",
    heldout=True,
)
def wishlist_add(w: World, rng: random.Random) -> Spec:
    wished = {r["product_id"] for r in w.rows("shop", "wishlist")}
    p = rng.choice([x for x in w.rows("shop", "products") if x["id"] not in wished])
    return Spec(
        f"Put the {p['name']} on your wishlist.",
        START,
        (
            Milestone(
                "wished",
                (
                    Expect(
                        "insert",
                        "shop",
                        "wishlist",
                        {"product_id": p["id"]},
                        what="the wishlist entry",
                    ),
                ),
                (*open_product(p), Tap(button("Add to wishlist"))),
            ),
        ),
    )


def _fill_cart(w: World, rng: random.Random, n: int) -> list[dict[str, Any]]:
    chosen = rng.sample([p for p in w.rows("shop", "products") if p["category"] != "Clothing"], n)
    for p in chosen:
        p["stock"] = max(p["stock"], 6)
        w.add("shop", "cart", product_id=p["id"], qty=1, option="")
    return chosen


@template(
    "shop.remove_from_cart", apps=("shop",), max_steps=6, summary="remove a product from the cart"
)
def remove_from_cart(w: World, rng: random.Random) -> Spec:
    items = _fill_cart(w, rng, 3)
    p = rng.choice(items)
    line = w.one("shop", "cart", product_id=p["id"])
    return Spec(
        f"Remove the {p['name']} from your cart.",
        START,
        (
            Milestone(
                "removed",
                (
                    Expect(
                        "delete", "shop", "cart", key=str(line["id"]), what="the cart line removed"
                    ),
                ),
                (
                    OpenApp("shop", "Shop"),
                    Go(("#/cart",), Loc('.side-link[href="#/cart"]')),
                    Tap(Loc(".row", has=p["name"], first=True).child("button", "Remove")),
                ),
            ),
        ),
    )


@template(
    "shop.cart_quantity", apps=("shop",), max_steps=8, summary="change a cart line's quantity"
)
def cart_quantity(w: World, rng: random.Random) -> Spec:
    items = _fill_cart(w, rng, 2)
    p = rng.choice(items)
    line = w.one("shop", "cart", product_id=p["id"])
    qty = rng.randint(2, 3)
    plus = Loc(".row", has=p["name"], first=True).child("button", "+")
    return Spec(
        f"Change the quantity of the {p['name']} in your cart to {qty}.",
        START,
        (
            Milestone(
                "quantity set",
                (
                    Expect(
                        "update",
                        "shop",
                        "cart",
                        {"qty": qty},
                        key=str(line["id"]),
                        what="the quantity",
                    ),
                ),
                (
                    OpenApp("shop", "Shop"),
                    Go(("#/cart",), Loc('.side-link[href="#/cart"]')),
                    *(Tap(plus, until=_qty_at_least(line["id"], n)) for n in range(2, qty + 1)),
                ),
            ),
        ),
    )


def _qty_at_least(line: int, n: int) -> Callable[[Ctx], bool]:
    def done(ctx: Ctx) -> bool:
        row = ctx.state()["shop"]["cart"].get(str(line))
        return row is not None and row["qty"] >= n

    return done


@template(
    "shop.search_buy", apps=("shop",), max_steps=18, summary="search, then order the product found"
)
def search_buy(w: World, rng: random.Random) -> Spec:
    p = product(w, rng, clothing=False)
    word = max(p["name"].split(), key=len)
    hits = [
        x
        for x in w.rows("shop", "products")
        if word.lower() in (x["name"] + x["description"]).lower()
    ]
    if len(hits) > 1:
        word = p["name"]
    address, shipping = rng.choice(tuple(ADDRESSES)), rng.choice(("Standard", "Express"))
    view = f"#/catalog?q={word.replace(' ', '+')}"
    return Spec(
        f'Search the shop for "{word}" and order the product it finds, shipped {shipping} to '
        f"your {address} address.",
        START,
        (
            Milestone(
                "in the cart",
                (Expect("insert", "shop", "cart", {"product_id": p["id"]}),),
                (
                    OpenApp("shop", "Shop"),
                    Fill(Loc("input", text="Search products"), word),
                    Go((view,), button("Search")),
                    Go((f"#/product/{p['id']}",), Loc(f'a.row[href="#/product/{p["id"]}"]')),
                    Tap(button("Add to cart")),
                ),
            ),
            Milestone(
                "ordered",
                order_expects(address, shipping, [(p, 1, "")]),
                checkout(address, shipping),
            ),
        ),
        allow=CHECKOUT_ALLOW,
        goal=order_expects(address, shipping, [(p, 1, "")]),
    )


@template("shop.two_items", apps=("shop",), max_steps=24, summary="buy two products in one order")
def two_items(w: World, rng: random.Random) -> Spec:
    a, b = rng.sample([p for p in w.rows("shop", "products") if p["category"] != "Clothing"], 2)
    for p in (a, b):
        p["stock"] = max(p["stock"], 6)
    address, shipping = rng.choice(tuple(ADDRESSES)), rng.choice(("Standard", "Express"))
    order = order_expects(address, shipping, [(a, 1, ""), (b, 1, "")])
    return Spec(
        f"Order one {a['name']} and one {b['name']} together, shipped {shipping} to your "
        f"{address} address.",
        START,
        (
            Milestone(
                "first in the cart",
                (Expect("insert", "shop", "cart", {"product_id": a["id"]}),),
                (*open_product(a), Tap(button("Add to cart"))),
            ),
            Milestone(
                "second in the cart",
                (Expect("insert", "shop", "cart", {"product_id": b["id"]}),),
                (*open_product(b), Tap(button("Add to cart"))),
            ),
            Milestone("ordered", order, checkout(address, shipping)),
        ),
        allow=CHECKOUT_ALLOW,
        goal=order,
    )
