"""Shop tasks: cart, checkout, returns, wishlist, search."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from adaroll.envs.apps.tasks.draws import among, between, derived
from adaroll.envs.apps.tasks.fill import ref
from adaroll.envs.apps.tasks.judge import Allow, Expect
from adaroll.envs.apps.tasks.plan import (
    Choose,
    Ctx,
    Fill,
    Find,
    Go,
    Loc,
    OpenApp,
    Step,
    Tap,
    button,
    field_,
)
from adaroll.envs.apps.tasks.rows import Draw, Opens, Params, Row, Work
from adaroll.envs.apps.tasks.world import World

PER_PAGE = 8
START = ("shop", "#/catalog")
ADDRESSES = {"Home": "12 Elm Street, Springfield", "Office": "400 Market Avenue, Springfield"}
REASONS = {
    "Damaged": "it arrived damaged",
    "Wrong item": "it is the wrong item",
    "Too small": "it is too small",
    "No longer needed": "it is no longer needed",
}
"""Return reasons (the form's radio buttons) and how an instruction says them."""
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


def at_product(name: str) -> Opens:
    """The page of the product drawn as ``name``."""
    return Opens(open_product, name)


@dataclass(frozen=True)
class Delivery:
    """Where an order goes (``address``: a key of :data:`ADDRESSES`) and how."""

    address: str
    shipping: str

    @property
    def street(self) -> str:
        return ADDRESSES[self.address]


def delivery(w: World, rng: random.Random, p: Params) -> Delivery:
    return Delivery(rng.choice(tuple(ADDRESSES)), rng.choice(("Standard", "Express")))


def in_stock(p: dict[str, Any]) -> dict[str, Any]:
    """Product ``p`` with stock for any quantity a task asks for."""
    p["stock"] = max(p["stock"], 6)
    return p


def product(*, clothing: bool | None = None) -> Draw:
    """A product in stock (clothing or not, when asked)."""

    def draw(w: World, rng: random.Random, p: Params) -> dict[str, Any]:
        items = w.rows("shop", "products")
        if clothing is not None:
            items = [x for x in items if (x["category"] == "Clothing") == clothing]
        return in_stock(rng.choice(items))

    return draw


def not_wished(w: World, rng: random.Random, p: Params) -> dict[str, Any]:
    """A product not on the wishlist yet."""
    wished = {r["product_id"] for r in w.rows("shop", "wishlist")}
    return rng.choice([x for x in w.rows("shop", "products") if x["id"] not in wished])


def two_products(w: World, rng: random.Random, p: Params) -> list[dict[str, Any]]:
    """Two products other than clothing, in stock."""
    pair = rng.sample([x for x in w.rows("shop", "products") if x["category"] != "Clothing"], 2)
    return [in_stock(x) for x in pair]


def cart_of(n: int) -> Draw:
    """``n`` products other than clothing, in stock, put in the cart once each; then one of
    them, with its cart line: ``(product, line)``."""

    def draw(w: World, rng: random.Random, p: Params) -> tuple[dict[str, Any], dict[str, Any]]:
        chosen = rng.sample(
            [x for x in w.rows("shop", "products") if x["category"] != "Clothing"], n
        )
        for x in chosen:
            in_stock(x)
            w.add("shop", "cart", product_id=x["id"], qty=1, option="")
        one = rng.choice(chosen)
        return one, w.one("shop", "cart", product_id=one["id"])

    return draw


def delivered_order(w: World, rng: random.Random, p: Params) -> dict[str, Any]:
    return rng.choice([o for o in w.rows("shop", "orders") if o["status"] == "Delivered"])


def item_of_order(w: World, rng: random.Random, p: Params) -> dict[str, Any]:
    """An item of the order drawn as ``order``."""
    return rng.choice(
        [i for i in w.rows("shop", "order_items") if i["order_id"] == p["order"]["id"]]
    )


def search_word(w: World, rng: random.Random, p: Params) -> str:
    """The longest word of the name of the product drawn as ``p`` - its whole name when the
    word finds other products too."""
    name = p["p"]["name"]
    word = max(name.split(), key=len)
    hits = [
        x
        for x in w.rows("shop", "products")
        if word.lower() in (x["name"] + x["description"]).lower()
    ]
    return str(name if len(hits) > 1 else word)


@dataclass(frozen=True)
class QtyAtLeast:
    """A :class:`Tap`'s ``until``: the cart line ``line`` (its key) holds ``qty`` or more."""

    line: str
    qty: int

    def __call__(self, ctx: Ctx) -> bool:
        row = ctx.state()["shop"]["cart"].get(self.line)
        return row is not None and row["qty"] >= self.qty


def carted(milestone: str, name: str) -> Work:
    """The product drawn as ``name`` in the cart, on the way to an order."""
    return Work(
        milestone,
        (Expect("insert", "shop", "cart", {"product_id": ref(name, "id")}),),
        (at_product(name), Tap(button("Add to cart"))),
        judged=False,
    )


def ordered(*items: tuple[str, str]) -> Work:
    """The cart ordered (``items``: each product's draw and option) with the delivery drawn
    as ``to``: an order and its items."""
    order = Expect(
        "insert",
        "shop",
        "orders",
        {"shipping": "{to.shipping}", "address": "{to.street}", "status": "Processing"},
        what="the new order",
    )
    lines = tuple(
        Expect(
            "insert",
            "shop",
            "order_items",
            {"product_id": ref(name, "id"), "qty": 1, "option": option},
            what=f"{{{name}[name]}} in the order",
        )
        for name, option in items
    )
    return Work(
        "ordered",
        (order, *lines),
        (
            Go(("#/cart",), Loc('.side-link[href="#/cart"]')),
            Go(("#/checkout",), button("Checkout")),
            Choose(Loc('[role="radio"]', text="{to.address}")),
            Choose(Loc('[role="radio"]', text="{to.shipping}")),
            Tap(button("Place order")),
        ),
    )


def returned(reason: str) -> Work:
    """A return of the item drawn as ``item`` of the order drawn as ``order`` requested (from
    anywhere: the order's page, the item's Return button, the reason, submit)."""
    number = "{order[number]}"
    return Work(
        "return requested",
        (
            Expect(
                "insert",
                "shop",
                "returns",
                {"order_id": ref("order", "id"), "item_id": ref("item", "id"), "reason": reason},
                what="the return",
            ),
        ),
        (
            OpenApp("shop", "Shop"),
            Go(("#/orders",), Loc('.side-link[href="#/orders"]')),
            Go((f"#/order/{number}",), Loc(f'a.row[href="#/order/{number}"]')),
            Go(
                (f"#/return/{number}/{{item[id]}}",),
                Loc(".row", has="{item[name]}", first=True).child("button", "Return"),
            ),
            Choose(Loc('[role="radio"]', text=reason)),
            Tap(button("Submit return")),
        ),
    )


CART = (OpenApp("shop", "Shop"), Go(("#/cart",), Loc('.side-link[href="#/cart"]')))
CART_ROW = Loc(".row", has="{p[name]}", first=True)
"""The cart's row of the product drawn as ``p``."""

ROWS = (
    Row(
        "shop.add_to_cart",
        "add a quantity of a product to the cart",
        max_steps=12,
        start=START,
        draws={"p": product(clothing=False), "qty": between(2, 4)},
        instruction="Add {qty} of the {p[name]} to the cart.",
        plan=(
            Work(
                "in the cart",
                (
                    Expect(
                        "insert",
                        "shop",
                        "cart",
                        {"product_id": ref("p", "id"), "qty": ref("qty"), "option": ""},
                        what="the cart line",
                    ),
                ),
                (at_product("p"), Fill(field_("Quantity"), "{qty}"), Tap(button("Add to cart"))),
            ),
        ),
    ),
    Row(
        "shop.buy_clothing",
        "buy a clothing item in a size, shipping and address chosen",
        max_steps=18,
        start=START,
        draws={
            "p": product(clothing=True),
            "size": lambda w, rng, p: rng.choice(p["p"]["options"].split(",")),
            "to": delivery,
        },
        instruction="Buy the {p[name]} in size {size}, shipped {to.shipping} to your "
        "{to.address} address.",
        plan=(
            Work(
                "in the cart",
                (
                    Expect(
                        "insert", "shop", "cart", {"product_id": ref("p", "id"), "option": "{size}"}
                    ),
                ),
                (
                    at_product("p"),
                    Choose(Loc('[role="radio"]', text="{size}")),
                    Tap(button("Add to cart")),
                ),
                judged=False,
            ),
            ordered(("p", "{size}")),
        ),
        allow=CHECKOUT_ALLOW,
    ),
    Row(
        "shop.return_item",
        "request a return for an item of a delivered order",
        max_steps=12,
        start=START,
        draws={
            "order": delivered_order,
            "item": item_of_order,
            "reason": among(*REASONS),
            "words": derived(lambda p: REASONS[p["reason"]]),
        },
        instruction="Return the {item[name]} from order {order[number]}: {words}.",
        plan=(returned("{reason}"),),
    ),
    Row(
        "shop.wishlist_add",
        "add a product to the wishlist",
        max_steps=8,
        start=START,
        draws={"p": not_wished},
        instruction="Put the {p[name]} on your wishlist.",
        plan=(
            Work(
                "wished",
                (
                    Expect(
                        "insert",
                        "shop",
                        "wishlist",
                        {"product_id": ref("p", "id")},
                        what="the wishlist entry",
                    ),
                ),
                (at_product("p"), Tap(button("Add to wishlist"))),
            ),
        ),
        heldout=True,
    ),
    Row(
        "shop.remove_from_cart",
        "remove a product from the cart",
        max_steps=6,
        start=START,
        draws={("p", "line"): cart_of(3)},
        instruction="Remove the {p[name]} from your cart.",
        plan=(
            Work(
                "removed",
                (Expect("delete", "shop", "cart", key="{line[id]}", what="the cart line removed"),),
                (*CART, Tap(CART_ROW.child("button", "Remove"))),
            ),
        ),
    ),
    Row(
        "shop.cart_quantity",
        "change a cart line's quantity",
        max_steps=8,
        start=START,
        draws={("p", "line"): cart_of(2), "qty": between(2, 3)},
        instruction="Change the quantity of the {p[name]} in your cart to {qty}.",
        plan=(
            Work(
                "quantity set",
                (
                    Expect(
                        "update",
                        "shop",
                        "cart",
                        {"qty": ref("qty")},
                        key="{line[id]}",
                        what="the quantity",
                    ),
                ),
                # "+" until the line holds the quantity: one tap per missing unit
                (
                    *CART,
                    Tap(CART_ROW.child("button", "+"), until=QtyAtLeast("{line[id]}", ref("qty"))),
                ),
            ),
        ),
    ),
    Row(
        "shop.search_buy",
        "search, then order the product found",
        max_steps=18,
        start=START,
        draws={
            "p": product(clothing=False),
            "word": search_word,
            "to": delivery,
            "query": derived(lambda p: p["word"].replace(" ", "+")),
        },
        instruction='Search the shop for "{word}" and order the product it finds, shipped '
        "{to.shipping} to your {to.address} address.",
        plan=(
            Work(
                "in the cart",
                (Expect("insert", "shop", "cart", {"product_id": ref("p", "id")}),),
                (
                    OpenApp("shop", "Shop"),
                    Fill(Loc("input", text="Search products"), "{word}"),
                    Go(("#/catalog?q={query}",), button("Search")),
                    Go(("#/product/{p[id]}",), Loc('a.row[href="#/product/{p[id]}"]')),
                    Tap(button("Add to cart")),
                ),
                judged=False,
            ),
            ordered(("p", "")),
        ),
        allow=CHECKOUT_ALLOW,
    ),
    Row(
        "shop.two_items",
        "buy two products in one order",
        max_steps=24,
        start=START,
        draws={("a", "b"): two_products, "to": delivery},
        instruction="Order one {a[name]} and one {b[name]} together, shipped {to.shipping} to "
        "your {to.address} address.",
        plan=(
            carted("first in the cart", "a"),
            carted("second in the cart", "b"),
            ordered(("a", ""), ("b", "")),
        ),
        allow=CHECKOUT_ALLOW,
    ),
)
