"""Shop: a paginated catalogue by category and search, product pages with options, a cart,
checkout, past orders and returns, a wishlist.

State (``shop.db``): ``products`` (name, category, price in cents, stock, the options one picks
from, such as sizes), ``cart``, ``orders`` and ``order_items`` (an order keeps its items' names
and prices), ``returns`` (a request per returned item), ``addresses``, ``wishlist`` and ``meta``.
Placing an order takes the cart's items out of stock and empties the cart.
"""

from __future__ import annotations

from typing import Any

from ..db import one, rows
from ..framework import META_SCHEMA, App, HttpError, Request, meta, paginate

SCHEMA = (
    META_SCHEMA
    + """
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL,
    price INTEGER NOT NULL, stock INTEGER NOT NULL, rating REAL NOT NULL,
    options TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '');
CREATE TABLE cart (id INTEGER PRIMARY KEY, product_id INTEGER NOT NULL REFERENCES products(id),
    qty INTEGER NOT NULL, option TEXT NOT NULL DEFAULT '');
CREATE TABLE addresses (id INTEGER PRIMARY KEY, label TEXT NOT NULL, line TEXT NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, number TEXT NOT NULL UNIQUE, date TEXT NOT NULL,
    status TEXT NOT NULL, shipping TEXT NOT NULL, address TEXT NOT NULL, total INTEGER NOT NULL);
CREATE TABLE order_items (id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(id),
    product_id INTEGER NOT NULL, name TEXT NOT NULL, qty INTEGER NOT NULL, price INTEGER NOT NULL,
    option TEXT NOT NULL DEFAULT '');
CREATE TABLE returns (id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(id),
    item_id INTEGER NOT NULL REFERENCES order_items(id), reason TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'Requested');
CREATE TABLE wishlist (product_id INTEGER PRIMARY KEY REFERENCES products(id));
"""
)
PER_PAGE = 8
SHIPPING = {"Standard": 0, "Express": 1500}
REASONS = ("Damaged", "Wrong item", "Too small", "No longer needed")

APP = App("shop", "Shop", SCHEMA)


@APP.route("GET", "categories", kind="read")
def categories(db: Any, req: Request) -> Any:
    cats = rows(
        db.execute(
            "SELECT category AS name, COUNT(*) AS n FROM products GROUP BY category ORDER BY category"
        )
    )
    cart = db.execute("SELECT COALESCE(SUM(qty), 0) FROM cart").fetchone()[0]
    wish = db.execute("SELECT COUNT(*) FROM wishlist").fetchone()[0]
    return {"categories": cats, "cart": cart, "wishlist": wish}


@APP.route("GET", "products", kind="list")
def products(db: Any, req: Request) -> Any:
    where, args = [], []
    if req.query.get("category"):
        where.append("category = ?")
        args.append(req.query["category"])
    if req.query.get("q"):
        where.append("(name LIKE ? OR description LIKE ?)")
        args += [f"%{req.query['q']}%"] * 2
    cond = f"WHERE {' AND '.join(where)}" if where else ""
    sql = f"SELECT id, name, category, price, stock, rating FROM products {cond} ORDER BY name"
    return paginate(db, sql, tuple(args), req.page(), PER_PAGE)


@APP.route("GET", "products/<id>", kind="read")
def product(db: Any, req: Request) -> Any:
    p = one(db.execute("SELECT * FROM products WHERE id = ?", (req.number("id"),)))
    if p is None:
        raise HttpError(404, "no such product")
    p["wished"] = (
        db.execute("SELECT 1 FROM wishlist WHERE product_id = ?", (p["id"],)).fetchone() is not None
    )
    return p


@APP.route("POST", "cart/add", kind="write")
def cart_add(db: Any, req: Request) -> Any:
    pid = int(req.body.get("product_id") or 0)
    p = one(db.execute("SELECT * FROM products WHERE id = ?", (pid,)))
    if p is None:
        raise HttpError(404, "no such product")
    try:
        qty = int(str(req.body.get("qty", "1")).strip() or "1")
    except ValueError:
        raise HttpError(400, "Quantity must be a number") from None
    if qty < 1:
        raise HttpError(400, "Quantity must be at least 1")
    option = str(req.body.get("option") or "")
    if p["options"] and option not in p["options"].split(","):
        raise HttpError(400, f"Choose one of: {p['options'].replace(',', ', ')}")
    have = one(db.execute("SELECT * FROM cart WHERE product_id = ? AND option = ?", (pid, option)))
    total = qty + (have["qty"] if have else 0)
    if total > p["stock"]:
        raise HttpError(400, f"Only {p['stock']} in stock")
    if have:
        db.execute("UPDATE cart SET qty = ? WHERE id = ?", (total, have["id"]))
    else:
        db.execute(
            "INSERT INTO cart (product_id, qty, option) VALUES (?, ?, ?)", (pid, qty, option)
        )
    return {"ok": True}


@APP.route("GET", "cart", kind="read")
def cart(db: Any, req: Request) -> Any:
    items = rows(
        db.execute(
            "SELECT cart.id, cart.qty, cart.option, products.name, products.price, products.id AS "
            "product_id FROM cart JOIN products ON products.id = cart.product_id ORDER BY cart.id"
        )
    )
    addresses = rows(db.execute("SELECT * FROM addresses ORDER BY id"))
    return {
        "items": items,
        "subtotal": sum(i["qty"] * i["price"] for i in items),
        "addresses": addresses,
        "shipping": SHIPPING,
    }


@APP.route("POST", "cart/<id>/update", kind="write")
def cart_update(db: Any, req: Request) -> Any:
    cid = req.number("id")
    item = one(
        db.execute(
            "SELECT cart.*, products.stock FROM cart JOIN products ON products.id = cart.product_id WHERE cart.id = ?",
            (cid,),
        )
    )
    if item is None:
        raise HttpError(404, "no such cart item")
    try:
        qty = int(str(req.body.get("qty", "")).strip())
    except ValueError:
        raise HttpError(400, "Quantity must be a number") from None
    if qty < 0 or qty > item["stock"]:
        raise HttpError(400, f"Quantity must be between 0 and {item['stock']}")
    if qty == 0:
        db.execute("DELETE FROM cart WHERE id = ?", (cid,))
    else:
        db.execute("UPDATE cart SET qty = ? WHERE id = ?", (qty, cid))
    return {"ok": True}


@APP.route("POST", "cart/<id>/remove", kind="write")
def cart_remove(db: Any, req: Request) -> Any:
    db.execute("DELETE FROM cart WHERE id = ?", (req.number("id"),))
    return {"ok": True}


@APP.route("POST", "checkout", kind="write")
def checkout(db: Any, req: Request) -> Any:
    items = rows(
        db.execute(
            "SELECT cart.*, products.name, products.price, products.stock FROM cart JOIN products ON products.id = cart.product_id ORDER BY cart.id"
        )
    )
    if not items:
        raise HttpError(400, "Your cart is empty")
    address = one(
        db.execute("SELECT * FROM addresses WHERE id = ?", (int(req.body.get("address_id") or 0),))
    )
    if address is None:
        raise HttpError(400, "Choose a delivery address")
    shipping = str(req.body.get("shipping") or "")
    if shipping not in SHIPPING:
        raise HttpError(400, "Choose a shipping method")
    last = db.execute("SELECT MAX(CAST(number AS INTEGER)) FROM orders").fetchone()[0] or 100000
    number = str(int(last) + 1)
    total = sum(i["qty"] * i["price"] for i in items) + SHIPPING[shipping]
    cur = db.execute(
        "INSERT INTO orders (number, date, status, shipping, address, total) VALUES (?, ?, 'Processing', ?, ?, ?)",
        (number, meta(db, "today"), shipping, address["line"], total),
    )
    for i in items:
        db.execute(
            "INSERT INTO order_items (order_id, product_id, name, qty, price, option) VALUES (?, ?, ?, ?, ?, ?)",
            (cur.lastrowid, i["product_id"], i["name"], i["qty"], i["price"], i["option"]),
        )
        db.execute(
            "UPDATE products SET stock = stock - ? WHERE id = ?", (i["qty"], i["product_id"])
        )
    db.execute("DELETE FROM cart")
    return {"number": number}


@APP.route("GET", "orders", kind="list")
def orders(db: Any, req: Request) -> Any:
    sql = "SELECT id, number, date, status, total FROM orders ORDER BY date DESC, id DESC"
    return paginate(db, sql, (), req.page(), PER_PAGE)


@APP.route("GET", "orders/<number>", kind="read")
def order(db: Any, req: Request) -> Any:
    o = one(db.execute("SELECT * FROM orders WHERE number = ?", (req.params["number"],)))
    if o is None:
        raise HttpError(404, "no such order")
    o["items"] = rows(
        db.execute("SELECT * FROM order_items WHERE order_id = ? ORDER BY id", (o["id"],))
    )
    o["returns"] = rows(
        db.execute("SELECT * FROM returns WHERE order_id = ? ORDER BY id", (o["id"],))
    )
    o["reasons"] = list(REASONS)
    return o


@APP.route("POST", "returns", kind="write")
def request_return(db: Any, req: Request) -> Any:
    o = one(
        db.execute("SELECT * FROM orders WHERE number = ?", (str(req.body.get("order") or ""),))
    )
    if o is None:
        raise HttpError(404, "no such order")
    if o["status"] != "Delivered":
        raise HttpError(400, "Only delivered orders can be returned")
    item = one(
        db.execute(
            "SELECT * FROM order_items WHERE id = ? AND order_id = ?",
            (int(req.body.get("item_id") or 0), o["id"]),
        )
    )
    if item is None:
        raise HttpError(400, "Choose the item to return")
    reason = str(req.body.get("reason") or "")
    if reason not in REASONS:
        raise HttpError(400, "Choose a reason")
    if db.execute("SELECT 1 FROM returns WHERE item_id = ?", (item["id"],)).fetchone():
        raise HttpError(400, "A return was already requested for this item")
    db.execute(
        "INSERT INTO returns (order_id, item_id, reason) VALUES (?, ?, ?)",
        (o["id"], item["id"], reason),
    )
    return {"ok": True}


@APP.route("GET", "wishlist", kind="list")
def wishlist(db: Any, req: Request) -> Any:
    return {
        "items": rows(
            db.execute(
                "SELECT products.id, products.name, products.price FROM wishlist JOIN products ON "
                "products.id = wishlist.product_id ORDER BY products.name"
            )
        )
    }


@APP.route("POST", "wishlist/<id>/toggle", kind="write")
def wishlist_toggle(db: Any, req: Request) -> Any:
    pid = req.number("id")
    if db.execute("SELECT 1 FROM products WHERE id = ?", (pid,)).fetchone() is None:
        raise HttpError(404, "no such product")
    if db.execute("SELECT 1 FROM wishlist WHERE product_id = ?", (pid,)).fetchone():
        db.execute("DELETE FROM wishlist WHERE product_id = ?", (pid,))
        return {"wished": False}
    db.execute("INSERT INTO wishlist (product_id) VALUES (?)", (pid,))
    return {"wished": True}
