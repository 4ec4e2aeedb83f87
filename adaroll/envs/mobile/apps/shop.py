"""Shop: search and categories, product pages with options and quantity, a cart with
per-item controls, and a checkout form (address, payment) that places orders."""

from __future__ import annotations

from dataclasses import dataclass
from random import Random
from typing import Any

from adaroll.envs.mobile import data
from adaroll.envs.mobile.apps.base import App
from adaroll.envs.mobile.screen import APPBAR_BOTTOM, CHECKED, ROW_H, SELECTED, H, ViewBuilder, memo
from adaroll.envs.mobile.state import Phone, Route
from adaroll.envs.mobile.widgets import (
    appbar,
    notice,
    push,
    row,
    text_field,
    text_row,
)

PAYMENTS = ("Card", "Cash on delivery")


@dataclass(frozen=True, slots=True)
class Product:
    name: str
    category: str
    price: int
    """In cents."""
    option_kind: str
    """"size", "color" or "" (no options)."""

    @property
    def options(self) -> tuple[str, ...]:
        return data.OPTIONS.get(self.option_kind, ())


@dataclass(frozen=True, slots=True)
class CartItem:
    product: str
    option: str
    qty: int


@dataclass(frozen=True, slots=True)
class Order:
    number: int
    items: tuple[CartItem, ...]
    name: str
    address: str
    city: str
    payment: str


@dataclass(frozen=True, slots=True)
class ShopState:
    catalog: tuple[Product, ...]
    cart: tuple[CartItem, ...] = ()
    orders: tuple[Order, ...] = ()

    def product(self, name: str) -> Product | None:
        return next((p for p in self.catalog if p.name == name), None)

    def get(self, name: str) -> Product:
        """The catalogue product ``name`` (cart items and routes always name one)."""
        product = self.product(name)
        if product is None:
            raise KeyError(f"no product {name!r} in the catalogue")
        return product

    def cart_total(self) -> int:
        return sum(self.get(i.product).price * i.qty for i in self.cart)


def money(cents: int) -> str:
    return f"${cents // 100}.{cents % 100:02d}"


def generate(rng: Random, _made: dict[str, Any]) -> ShopState:
    catalog = tuple(
        Product(name, cat, max(199, round(base * rng.uniform(0.8, 1.2) / 100) * 100 - 1), kind)
        for name, cat, base, kind in data.PRODUCTS
    )
    return ShopState(catalog)


def add_to_cart(st: ShopState, product: str, option: str, qty: int) -> ShopState:
    items, merged = [], False
    for i in st.cart:
        if i.product == product and i.option == option:
            i, merged = CartItem(product, option, min(9, i.qty + qty)), True
        items.append(i)
    if not merged:
        items.append(CartItem(product, option, qty))
    return ShopState(st.catalog, tuple(items), st.orders)


def item_key(item: CartItem) -> str:
    return f"{item.product}/{item.option}"


# -- handlers -----------------------------------------------------------------------------------


def _search(p: Phone, a: Any) -> Phone:
    query = p.screen.field("query").strip()
    if not query:
        return p
    return (
        p.set_top(p.screen.with_field("query", ""))
        .update_top(focus=None)
        .push(Route("Shop", "results", query))
    )


def _open_product(name: str):
    return push(Route("Shop", "product", name, fields=(("qty", "1"),)))


def _option(value: str):
    return lambda p, a: p.set_top(p.screen.with_field("option", value))


def _qty(delta: int):
    def handler(p: Phone, a: Any) -> Phone:
        qty = min(9, max(1, int(p.screen.field("qty", "1")) + delta))
        return p.set_top(p.screen.with_field("qty", str(qty)))

    return handler


def _add(p: Phone, a: Any) -> Phone:
    top, st = p.screen, p.apps.shop
    product = st.get(top.arg)
    option = top.field("option")
    if product.options and not option:
        return p.update_top(dialog=("need_option", product.option_kind))
    p = p.set_app("shop", add_to_cart(st, product.name, option, int(top.field("qty", "1"))))
    return p.set_top(p.screen.with_field("added", "1"))


def _change(key: str, delta: int | None):
    """Cart item +1/-1 (delta) or remove it (None)."""

    def handler(p: Phone, a: Any) -> Phone:
        st: ShopState = p.apps.shop
        items = []
        for i in st.cart:
            if item_key(i) == key:
                if delta is None:
                    continue
                i = CartItem(i.product, i.option, min(9, max(1, i.qty + delta)))
            items.append(i)
        return p.set_app("shop", ShopState(st.catalog, tuple(items), st.orders))

    return handler


def _pay(method: str):
    return lambda p, a: p.set_top(p.screen.with_field("payment", method))


def _place(p: Phone, a: Any) -> Phone:
    top, st = p.screen, p.apps.shop
    name, address, city = (top.field(k).strip() for k in ("name", "address", "city"))
    payment = top.field("payment")
    if not (name and address and city and payment) or not st.cart:
        return p.update_top(dialog=("incomplete",), focus=None)
    order = Order(len(st.orders) + 1, st.cart, name, address, city, payment)
    p = p.set_app("shop", ShopState(st.catalog, (), st.orders + (order,)))
    return p.with_stack((ROOT, Route("Shop", "confirmation", order.number)))


def _continue(p: Phone, a: Any) -> Phone:
    return p.with_stack((ROOT,))


ROOT = Route("Shop", "home")
_CART = push(Route("Shop", "cart"))
_CHECKOUT = push(Route("Shop", "checkout"))


# -- screens ------------------------------------------------------------------------------------


def _cart_action(st: ShopState) -> tuple[str, str, Any]:
    return ("btn:cart", f"Cart ({sum(i.qty for i in st.cart)})", _CART)


@memo
def _product_rows(catalog: tuple[Product, ...], search: bool, arg: str) -> tuple[Any, ...]:
    """Search results (``search``) or a category's products, as rows."""
    q = arg.casefold()
    products = [p for p in catalog if (q in p.name.casefold() if search else p.category == arg)]
    rows = [
        row(f"{p.name} · {money(p.price)}", f"product:{p.name}", _open_product(p.name))
        for p in products
    ]
    return tuple(rows) or (text_row("No results"),)


_HOME_ROWS = tuple(
    [row(c, f"cat:{c}", push(Route("Shop", "category", c))) for c in data.CATEGORIES]
    + [row("Your orders", "row:orders", push(Route("Shop", "orders")))]
)


def view(phone: Phone, route: Route, b: ViewBuilder) -> None:
    st: ShopState = phone.apps.shop
    screen = route.screen
    if screen == "home":
        appbar(b, "Shop", (_cart_action(st),), show_back=False)
        text_field(b, route, "query", "Search products", (24, 236, 840, 376), _search)
        b.add("button", "Search", (856, 236, 1056, 376), "btn:search", _search)
        b.vlist(_HOME_ROWS, 400, H, route.scroll)
    elif screen in ("results", "category"):
        title = f"Results for {route.arg}" if screen == "results" else route.arg
        appbar(b, title, (_cart_action(st),))
        b.vlist(
            _product_rows(st.catalog, screen == "results", route.arg),
            APPBAR_BOTTOM,
            H,
            route.scroll,
        )
    elif screen == "product":
        _product(st, route, b)
    elif screen == "cart":
        _cart(st, route, b)
    elif screen == "checkout":
        _checkout(route, b)
    elif screen == "confirmation":
        appbar(b, "Order placed")
        b.add("text", f"Thank you! Order #{route.arg} is on its way.", (48, 300, 1032, 440))
        b.add("button", "Continue shopping", (240, 520, 840, 680), "btn:continue", _continue)
    else:  # orders
        appbar(b, "Your orders")
        rows = [
            text_row(
                f"Order #{o.number}: {sum(i.qty for i in o.items)} items, "
                f"{money(sum(st.get(i.product).price * i.qty for i in o.items))}",
                ROW_H,
            )
            for o in st.orders
        ]
        b.vlist(rows or [text_row("No orders yet")], APPBAR_BOTTOM, H, route.scroll)


def _product(st: ShopState, route: Route, b: ViewBuilder) -> None:
    product = st.get(route.arg)
    if route.dialog is not None:
        notice(b, f"Choose a {route.dialog[1]}", [f"Pick a {route.dialog[1]} before adding."])
        return
    appbar(b, product.name, (_cart_action(st),))
    b.add("text", money(product.price), (48, 240, 1032, 360))
    if product.options:
        b.add("text", f"{product.option_kind.capitalize()}:", (48, 380, 1032, 480))
        chosen = route.field("option")
        for i, opt in enumerate(product.options):
            x = 48 + i * 250
            b.add(
                "button",
                opt,
                (x, 500, x + 230, 640),
                f"opt:{opt}",
                _option(opt),
                bits=SELECTED if opt == chosen else 0,
            )
    b.add("button", "-", (48, 700, 248, 840), "qty:minus", _qty(-1))
    b.add("text", f"Quantity: {route.field('qty', '1')}", (280, 700, 800, 840))
    b.add("button", "+", (832, 700, 1032, 840), "qty:plus", _qty(1))
    b.add("button", "Add to cart", (48, 900, 1032, 1060), "btn:add", _add)
    if route.field("added"):
        b.add("text", "Added to cart", (48, 1100, 1032, 1220))


def _cart(st: ShopState, route: Route, b: ViewBuilder) -> None:
    appbar(b, "Cart")
    b.vlist(_cart_rows(st), APPBAR_BOTTOM, 1880, route.scroll)
    b.add("text", f"Total: {money(st.cart_total())}", (48, 1900, 1032, 2020))
    b.add(
        "button",
        "Checkout",
        (240, 2060, 840, 2220),
        "btn:checkout",
        _CHECKOUT,
        enabled=bool(st.cart),
    )


@memo
def _cart_rows(st: ShopState) -> tuple[Any, ...]:
    rows = []
    for item in st.cart:
        key = item_key(item)
        label = item.product + (f" ({item.option})" if item.option else "")
        price = money(st.get(item.product).price * item.qty)
        rows.append(
            (
                180,
                (
                    (
                        "list_item",
                        f"{label} x{item.qty} {price}",
                        0,
                        600,
                        f"item:{key}",
                        None,
                        None,
                        0,
                    ),
                    ("button", "-", 600, 740, f"minus:{key}", _change(key, -1), None, 0),
                    ("button", "+", 740, 880, f"plus:{key}", _change(key, 1), None, 0),
                    ("button", "Remove", 880, 1080, f"remove:{key}", _change(key, None), None, 0),
                ),
            )
        )
    return tuple(rows) or (text_row("Your cart is empty"),)


def _checkout(route: Route, b: ViewBuilder) -> None:
    if route.dialog is not None:
        notice(b, "Missing details", ["Fill in name, address, city and payment."])
        return
    appbar(b, "Checkout")
    for i, (name, hint) in enumerate(
        (("name", "Full name"), ("address", "Street address"), ("city", "City"))
    ):
        y = 250 + i * 160
        text_field(b, route, name, hint, (48, y, 1032, y + 140))
    b.add("text", "Payment", (48, 740, 1032, 840))
    chosen = route.field("payment")
    for i, method in enumerate(PAYMENTS):
        y = 850 + i * 150
        b.add(
            "checkbox",
            method,
            (48, y, 1032, y + 140),
            f"pay:{method}",
            _pay(method),
            bits=CHECKED if method == chosen else 0,
        )
    b.add("button", "Place order", (240, 1180, 840, 1340), "btn:place", _place)


APP = App("Shop", "shop", ROOT, generate, view)
