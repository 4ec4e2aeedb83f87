"""A small, synchronous Chrome DevTools Protocol client over one WebSocket.

Why not Playwright's ``connect_over_cdp``? The web environment's browsers run in their own
network namespaces (docs/architecture.md, "Platform notes"), so their DevTools port on ``127.0.0.1`` exists only
inside each namespace. The controller reaches it by ``setns``-ing one thread into the
namespace, opening a TCP socket and switching back; the socket keeps its namespace. A CDP
client therefore has to accept an *already-connected socket*. ``websocket-client`` does
(``websocket.create_connection(url, socket=sock)``); Playwright does not - its driver is a
separate Node.js process that opens its own connections from the host namespace, and each
``connect_over_cdp`` enumerates every context and target before it returns. CRIU-restored
branches need a fresh connection after every restore (open CDP sockets are closed by
``--tcp-close``), so reconnecting must be cheap: here it is one HTTP request for the target
list plus one WebSocket handshake (about a millisecond), then re-enabling the few domains the
environment uses. The environment needs only a handful of commands (``Runtime.evaluate``,
``Input.dispatch*``, ``Page.navigate``/``captureScreenshot``), so a hundred-line client keeps
the dependency surface to one pure-Python package and makes every wait explicit.

The client is single-threaded: one caller at a time per session. Events that arrive while
waiting for a command's result are buffered (bounded) and can be awaited with
:meth:`CDPSession.wait_event`.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import websocket

DEFAULT_TIMEOUT = 30.0
MAX_BUFFERED_EVENTS = 2048


class CDPError(RuntimeError):
    """A DevTools command failed, the connection broke, or a wait timed out."""


class CDPTimeoutError(CDPError, TimeoutError):
    """No answer (or no awaited event) within the timeout."""


class JavaScriptError(CDPError):
    """``Runtime.evaluate`` threw inside the page."""


class CDPSession:
    """One WebSocket connection to a DevTools target (a page, or the browser endpoint)."""

    def __init__(self, ws: websocket.WebSocket, *, url: str = "") -> None:
        self._ws = ws
        self.url = url
        self._ids = itertools.count(1)
        self._events: collections.deque[dict[str, Any]] = collections.deque(
            maxlen=MAX_BUFFERED_EVENTS
        )
        self._closed = False
        self._limit = float("inf")
        """Monotonic time no wait may pass (set by :meth:`deadline`)."""

    @classmethod
    def open(
        cls, ws_url: str, *, sock: socket.socket | None = None, timeout: float = 10.0
    ) -> CDPSession:
        """Connect to ``ws_url``; over ``sock`` when given (a socket already connected to the
        endpoint's host and port, e.g. one opened inside another network namespace)."""
        try:
            ws = websocket.create_connection(
                ws_url,
                timeout=timeout,
                socket=sock,
                suppress_origin=True,  # Chromium rejects foreign Origin headers
                skip_utf8_validation=True,
                enable_multithread=False,
            )
        except (OSError, websocket.WebSocketException) as exc:
            if sock is not None:
                sock.close()
            raise CDPError(f"cannot open DevTools WebSocket {ws_url}: {exc}") from exc
        if ws.sock is not None:
            ws.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(ws, url=ws_url)

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                self._ws.close(timeout=0.2)
            except Exception:  # noqa: BLE001 - closing a dead socket is fine
                pass

    def __enter__(self) -> CDPSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def deadline(self, seconds: float) -> Iterator[None]:
        """Bound every command and wait in the body *together* by ``seconds``: an env call
        (a step is a dozen commands, each with its own generous timeout) then cannot hang
        longer than that on a stopped browser. Nested bounds keep the earliest deadline."""
        outer = self._limit
        self._limit = min(outer, time.monotonic() + seconds)
        try:
            yield
        finally:
            self._limit = outer

    # -- low level ----------------------------------------------------------------------------
    def _recv(self, deadline: float) -> dict[str, Any]:
        why = "timed out waiting for the browser"
        if self._limit < deadline:
            why += " (env call bound reached)"
        remaining = min(deadline, self._limit) - time.monotonic()
        if remaining <= 0:
            raise CDPTimeoutError(why)
        self._ws.settimeout(remaining)
        try:
            raw = self._ws.recv()
        except websocket.WebSocketTimeoutException:
            raise CDPTimeoutError(why) from None
        except (OSError, websocket.WebSocketException) as exc:
            self._closed = True
            raise CDPError(f"DevTools connection lost: {exc}") from exc
        if not raw:
            self._closed = True
            raise CDPError("DevTools connection closed by the browser")
        return json.loads(raw)

    def call(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Send one command and return its ``result`` (raises :class:`CDPError` on error)."""
        return self.call_all((method, params or {}), timeout=timeout)[0]

    def call_all(
        self, *commands: tuple[str, dict[str, Any]], timeout: float | None = None
    ) -> list[dict[str, Any]]:
        """Send several commands at once and return their results in order: one round trip
        instead of one per command (the browser runs them in the order sent)."""
        if self._closed:
            raise CDPError(f"{commands[0][0]}: DevTools session is closed")
        ids = [next(self._ids) for _ in commands]
        try:
            for msg_id, (method, params) in zip(ids, commands, strict=True):
                self._ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        except (OSError, websocket.WebSocketException) as exc:
            self._closed = True
            raise CDPError(f"{commands[0][0]}: DevTools connection lost: {exc}") from exc
        deadline = time.monotonic() + (DEFAULT_TIMEOUT if timeout is None else timeout)
        results: dict[int, dict[str, Any]] = {}
        while len(results) < len(ids):
            msg = self._recv(deadline)
            if msg.get("id") in ids:
                if "error" in msg:
                    err = msg["error"]
                    method = commands[ids.index(msg["id"])][0]
                    raise CDPError(f"{method}: {err.get('message')} ({err.get('code')})")
                results[msg["id"]] = msg.get("result", {})
            elif "method" in msg:
                self._events.append(msg)
        return [results[msg_id] for msg_id in ids]

    def wait_event(
        self,
        method: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        predicate: Callable[[dict[str, Any]], bool] | None = None,
    ) -> dict[str, Any]:
        """Return the params of the first (buffered or new) event ``method`` that satisfies
        ``predicate``; earlier buffered events of other kinds are kept."""
        for event in list(self._events):
            if event["method"] == method and (predicate is None or predicate(event["params"])):
                self._events.remove(event)
                return event["params"]
        deadline = time.monotonic() + timeout
        while True:
            msg = self._recv(deadline)
            if "method" not in msg:
                continue
            if msg["method"] == method and (predicate is None or predicate(msg["params"])):
                return msg["params"]
            self._events.append(msg)

    def clear_events(self) -> None:
        self._events.clear()

    # -- conveniences -------------------------------------------------------------------------
    def evaluate(
        self, expression: str, *, await_promise: bool = False, timeout: float | None = None
    ) -> Any:
        """Evaluate a JavaScript expression in the page and return its JSON value."""
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": await_promise},
            timeout=timeout,
        )
        return evaluation_value(result)


def evaluation_value(result: dict[str, Any]) -> Any:
    """The JSON value of a ``Runtime.evaluate`` result (``returnByValue``); a thrown exception
    raises :class:`JavaScriptError`."""
    if "exceptionDetails" in result:
        details = result["exceptionDetails"]
        text = details.get("exception", {}).get("description") or details.get("text")
        raise JavaScriptError(f"JavaScript error: {text}")
    return result.get("result", {}).get("value")
