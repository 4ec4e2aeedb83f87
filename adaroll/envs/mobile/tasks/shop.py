"""Shop tasks: search and add products (options, quantities), edit the cart, check out with
an address and payment, buy end to end, and read prices and totals."""

from __future__ import annotations

from dataclasses import replace
from random import Random
from types import MappingProxyType as P
from typing import Any

from adaroll.actions import Action
from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.contacts import full_names
from adaroll.envs.mobile.apps.shop import PAYMENTS, CartItem, ShopState, item_key, money
from adaroll.envs.mobile.expert import Expert, Hop
from adaroll.envs.mobile.tasks.base import TaskTemplate, register
from adaroll.envs.mobile.world import Apps

HOME: Hop = ("home", None, None)
CART: list[Hop] = [HOME, ("cart", None, "btn:cart")]
CHECKOUT: list[Hop] = CART + [("checkout", None, "btn:checkout")]


def open_product(x: Expert, name: str) -> Action | None:
    """Search for ``name`` from the shop's home and open its product page."""
    stack = x.phone.stack
    if (
        stack
        and stack[0].app == "Shop"
        and len(stack) == 1
        and stack[0].screen == "home"
        and stack[0].dialog is None
    ):
        return x.fill("query", name) or x.press("btn:search")
    return x.goto("Shop", [HOME, ("results", name, None), ("product", name, f"product:{name}")])


def add_product(x: Expert, name: str, option: str, qty: int) -> Action:
    """On (or towards) the product page: choose option and quantity, add to the cart."""
    go = open_product(x, name)
    if go:
        return go
    top = x.route
    if top.dialog is not None:
        return x.press("dlg:ok")
    if option and top.field("option") != option:
        return x.press(f"opt:{option}")
    current = int(top.field("qty", "1"))
    if current != qty:
        return x.press("qty:plus" if current < qty else "qty:minus")
    return x.press("btn:add")


def fill_checkout(x: Expert, p: P) -> Action:
    return (
        x.goto("Shop", CHECKOUT)
        or x.fill("name", p["name"])
        or x.fill("address", p["address"])
        or x.fill("city", p["city"])
        or (x.route.field("payment") != p["payment"] and x.press(f"pay:{p['payment']}"))
        or x.press("btn:place")
    )


def variant(product_kind: str, option: str) -> str:
    return f"size {option}" if product_kind == "size" else option


def fill_cart(rng: Random, world: Apps, k: int) -> Apps:
    st: ShopState = world.shop
    items = []
    for prod in rng.sample(st.catalog, k):
        option = rng.choice(prod.options) if prod.options else ""
        items.append(CartItem(prod.name, option, rng.randrange(1, 4)))
    return replace(world, shop=ShopState(st.catalog, tuple(items), st.orders))


def in_cart(world: Apps, product: str, option: str | None = None, qty: int | None = None) -> bool:
    return any(
        i.product == product
        and (option is None or i.option == option)
        and (qty is None or i.qty == qty)
        for i in world.shop.cart
    )


def shipping(rng: Random) -> dict[str, str]:
    return {
        "name": full_names(rng, 1)[0],
        "address": f"{rng.randrange(2, 99)} {rng.choice(data.STREETS)}",
        "city": rng.choice(data.TOWNS),
        "payment": rng.choice(PAYMENTS),
    }


@register
class AddToCart(TaskTemplate):
    name = "shop.add_to_cart"
    apps = ("Shop",)
    tags = ("text",)
    instruction = 'Add "{product}" to the shopping cart'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return {"product": rng.choice([p for p in world.shop.catalog if not p.options]).name}, world

    def check(self, world: Apps, p: P) -> bool:
        return in_cart(world, p["product"])

    def expert(self, x: Expert, p: P) -> Action:
        return add_product(x, p["product"], "", 1)


@register
class AddWithOptions(TaskTemplate):
    name = "shop.add_with_options"
    apps = ("Shop",)
    tags = ("text", "multi")
    instruction = 'Add {qty} "{product}" in {variant} to the shopping cart'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        prod = rng.choice([p for p in world.shop.catalog if p.options])
        option = rng.choice(prod.options)
        return {
            "product": prod.name,
            "option": option,
            "qty": rng.randrange(1, 5),
            "variant": variant(prod.option_kind, option),
        }, world

    def check(self, world: Apps, p: P) -> bool:
        return in_cart(world, p["product"], p["option"], p["qty"])

    def expert(self, x: Expert, p: P) -> Action:
        return add_product(x, p["product"], p["option"], p["qty"])


@register
class RemoveFromCart(TaskTemplate):
    name = "shop.remove_from_cart"
    apps = ("Shop",)
    instruction = 'Remove "{product}" from the shopping cart'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        world = fill_cart(rng, world, rng.randrange(2, 5))
        item = rng.choice(world.shop.cart)
        others = tuple(item_key(i) for i in world.shop.cart if i is not item)
        return {"product": item.product, "key": item_key(item), "others": others}, world

    def check(self, world: Apps, p: P) -> bool:
        keys = {item_key(i) for i in world.shop.cart}
        return p["key"] not in keys and set(p["others"]) <= keys

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Shop", CART) or x.press(f"remove:{p['key']}")


@register
class CartQuantity(TaskTemplate):
    name = "shop.cart_quantity"
    apps = ("Shop",)
    tags = ("multi",)
    instruction = 'Change the quantity of "{product}" in the shopping cart to {qty}'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        world = fill_cart(rng, world, rng.randrange(1, 4))
        item = rng.choice(world.shop.cart)
        qty = rng.choice([q for q in range(1, 6) if q != item.qty])
        return {"product": item.product, "key": item_key(item), "qty": qty}, world

    def check(self, world: Apps, p: P) -> bool:
        return any(item_key(i) == p["key"] and i.qty == p["qty"] for i in world.shop.cart)

    def expert(self, x: Expert, p: P) -> Action:
        go = x.goto("Shop", CART)
        if go:
            return go
        item = next(i for i in x.apps.shop.cart if item_key(i) == p["key"])
        return x.press(f"plus:{p['key']}" if item.qty < p["qty"] else f"minus:{p['key']}")


@register
class Checkout(TaskTemplate):
    name = "shop.checkout"
    apps = ("Shop",)
    tags = ("text", "multi")
    instruction = (
        'Check out the shopping cart: ship to "{name}", "{address}", "{city}" and pay '
        "with {payment}"
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        world = fill_cart(rng, world, rng.randrange(1, 4))
        return {**shipping(rng), "items": world.shop.cart}, world

    def check(self, world: Apps, p: P) -> bool:
        return any(
            o.items == p["items"]
            and (o.name, o.address, o.city, o.payment)
            == (p["name"], p["address"], p["city"], p["payment"])
            for o in world.shop.orders
        )

    def expert(self, x: Expert, p: P) -> Action:
        return fill_checkout(x, p)


@register
class Buy(TaskTemplate):
    name = "shop.buy"
    apps = ("Shop",)
    tags = ("text", "multi")
    instruction = (
        'Buy "{product}" and ship it to "{name}", "{address}", "{city}", paying with {payment}'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        prod = rng.choice([p for p in world.shop.catalog if not p.options])
        return {**shipping(rng), "product": prod.name}, world

    def check(self, world: Apps, p: P) -> bool:
        return any(
            any(i.product == p["product"] for i in o.items)
            and (o.name, o.address, o.city, o.payment)
            == (p["name"], p["address"], p["city"], p["payment"])
            for o in world.shop.orders
        )

    def expert(self, x: Expert, p: P) -> Action:
        if not in_cart(x.apps, p["product"]):
            return add_product(x, p["product"], "", 1)
        return fill_checkout(x, p)


@register
class Price(TaskTemplate):
    name = "shop.price"
    apps = ("Shop",)
    tags = ("answer", "text")
    instruction = 'How much does "{product}" cost? Answer with the price, like $9.99.'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return {"product": rng.choice(world.shop.catalog).name}, world

    def answer(self, world: Apps, p: P) -> str:
        return money(world.shop.product(p["product"]).price)

    def expert(self, x: Expert, p: P) -> Action:
        return open_product(x, p["product"]) or Action.done(self.answer(x.apps, p))


@register
class Cheapest(TaskTemplate):
    name = "shop.cheapest_in_category"
    apps = ("Shop",)
    tags = ("scroll",)
    instruction = "Add the cheapest product of the {category} category to the shopping cart"

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        category = rng.choice(data.CATEGORIES)
        products = [p for p in world.shop.catalog if p.category == category]
        cheapest = min(products, key=lambda p: p.price)
        if sum(p.price == cheapest.price for p in products) > 1:  # make the minimum unique
            catalog = tuple(
                replace(p, price=p.price - 100) if p is cheapest else p for p in world.shop.catalog
            )
            world = replace(world, shop=ShopState(catalog, world.shop.cart, world.shop.orders))
        return {"category": category, "product": cheapest.name}, world

    def check(self, world: Apps, p: P) -> bool:
        return in_cart(world, p["product"])

    def expert(self, x: Expert, p: P) -> Action:
        prod = x.apps.shop.product(p["product"])
        path = [
            HOME,
            ("category", p["category"], f"cat:{p['category']}"),
            ("product", prod.name, f"product:{prod.name}"),
        ]
        go = x.goto("Shop", path)
        if go:
            return go
        if x.route.dialog is not None:
            return x.press("dlg:ok")
        if prod.options and not x.route.field("option"):
            return x.press(f"opt:{prod.options[0]}")
        return x.press("btn:add")


@register
class CartTotal(TaskTemplate):
    name = "shop.cart_total"
    apps = ("Shop",)
    tags = ("answer",)
    heldout = True
    instruction = (
        "What is the total price of the shopping cart? Answer with the amount, like $12.50."
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return {}, fill_cart(rng, world, rng.randrange(1, 4))

    def answer(self, world: Apps, p: P) -> str:
        return money(world.shop.cart_total())

    def expert(self, x: Expert, p: P) -> Action:
        return x.goto("Shop", CART) or Action.done(self.answer(x.apps, p))


@register
class BuyTwo(TaskTemplate):
    name = "shop.buy_two"
    apps = ("Shop",)
    tags = ("text", "multi")
    instruction = (
        'Buy "{product}" and "{product2}" and ship them to "{name}", "{address}", '
        '"{city}", paying with {payment}'
    )

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        first, second = rng.sample([p for p in world.shop.catalog if not p.options], 2)
        return {**shipping(rng), "product": first.name, "product2": second.name}, world

    def check(self, world: Apps, p: P) -> bool:
        return any(
            {i.product for i in o.items} >= {p["product"], p["product2"]}
            and (o.name, o.address, o.city, o.payment)
            == (p["name"], p["address"], p["city"], p["payment"])
            for o in world.shop.orders
        )

    def expert(self, x: Expert, p: P) -> Action:
        for key in ("product", "product2"):
            if not in_cart(x.apps, p[key]):
                return add_product(x, p[key], "", 1)
        return fill_checkout(x, p)
