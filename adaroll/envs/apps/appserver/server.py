"""One app's HTTP server: a threaded ``http.server`` in front of the app's SQLite database.

Endpoints (``HTTP/1.0``: one request per connection, so an idle server - what a snapshot
dumps - holds no connection, and Chromium's keep-alive never pins a thread):

* ``GET /`` - the app's page: a shell that loads ``/static/common.js`` (the shared front end:
  layout, app switcher, spinner, toasts, pagination, hash routes) and ``/static/<app>.js``;
* ``GET /static/<file>`` - the front end's files (from this package's ``static/``);
* ``GET|POST /api/<route>`` - the app's JSON API (:class:`~.framework.App` routes), after the
  route's latency (:data:`~.framework.LATENCY_MS` times ``latency_scale``), with a database
  connection per request;
* ``POST /__admin/load`` - replace the database with a task's seeded content (``{"tables":
  {...}}``) and keep a copy of it as the task's start (``<app>.start.db``: the judge diffs
  against it); ``GET /__admin/health`` - ``{"app", "pid"}``. The controller calls these; the
  page never does.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from . import db
from .framework import LATENCY_MS, App, HttpError, Request

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
CONTENT_TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}
MAX_BODY = 1 << 20

SHELL = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<link rel="stylesheet" href="/static/common.css"></head>
<body><script>window.APP_CONFIG = {config};</script>
<script src="/static/common.js"></script><script src="/static/{name}.js"></script></body></html>
"""


class AppServer(ThreadingHTTPServer):
    """Serves one :class:`App`; ``apps`` lists every app of the env (name, title, url) for the
    app switcher."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        app: App,
        port: int,
        data_dir: str,
        apps: list[dict[str, str]],
        latency_scale: float = 1.0,
    ) -> None:
        self.app = app
        self.db_path = os.path.join(data_dir, f"{app.name}.db")
        self.start_path = os.path.join(data_dir, f"{app.name}.start.db")
        self.latency_scale = latency_scale
        config = {"app": app.name, "title": app.title, "apps": apps}
        self.shell = SHELL.format(
            title=app.title, name=app.name, config=json.dumps(config)
        ).encode()
        super().__init__(("127.0.0.1", port), Handler)

    def serve(self) -> None:
        """Handle requests until the process is killed; no periodic wake-up in between."""
        self.timeout = None
        while True:
            self.handle_request()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    server: AppServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass  # stdio is /dev/null inside the namespace

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    # -- dispatch -------------------------------------------------------------------------------
    def _dispatch(self, method: str) -> None:
        url = urlsplit(self.path)
        path = url.path
        try:
            if method == "GET" and path in ("/", "/index.html"):
                self._send(200, self.server.shell, "text/html; charset=utf-8")
            elif method == "GET" and path.startswith("/static/"):
                self._static(path[len("/static/") :])
            elif path.startswith("/api/"):
                query = dict(parse_qsl(url.query))
                self._json(200, self._api(method, path[len("/api/") :], query))
            elif path == "/__admin/health" and method == "GET":
                self._json(200, {"app": self.server.app.name, "pid": os.getpid()})
            elif path == "/__admin/load" and method == "POST":
                tables = self._body().get("tables")
                if not isinstance(tables, dict):
                    raise HttpError(400, "load needs {'tables': {table: [rows]}}")
                db.load(self.server.db_path, self.server.app.schema, tables)
                shutil.copyfile(self.server.db_path, self.server.start_path)
                self._json(200, {"loaded": sum(len(v) for v in tables.values())})
            else:
                raise HttpError(404, f"no such page: {method} {path}")
        except HttpError as exc:
            self._json(exc.status, {"error": exc.message})
        except Exception as exc:  # noqa: BLE001 - a server error is an answer, not a crash
            self._json(500, {"error": f"{type(exc).__name__}: {exc}"})

    def _api(self, method: str, route_path: str, query: dict[str, str]) -> Any:
        found = self.server.app.find(method, route_path)
        if found is None:
            raise HttpError(404, f"no such API: {method} {route_path}")
        route, params = found
        body = self._body() if method == "POST" else {}
        delay = LATENCY_MS[route.kind] * self.server.latency_scale / 1000.0
        if delay > 0:
            time.sleep(delay)
        with db.connect(self.server.db_path) as conn:
            return route.handler(conn, Request(params, query, body))

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            raise HttpError(413, "request too large")
        raw = self.rfile.read(length) if length else b"{}"
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            raise HttpError(400, "the body is not JSON") from None
        if not isinstance(body, dict):
            raise HttpError(400, "the body must be a JSON object")
        return body

    def _static(self, name: str) -> None:
        if "/" in name or name.startswith("."):
            raise HttpError(404, "no such file")
        path = os.path.join(STATIC_DIR, name)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            raise HttpError(404, f"no such file: {name}") from None
        ext = os.path.splitext(name)[1]
        self._send(200, data, CONTENT_TYPES.get(ext, "application/octet-stream"))

    # -- answers --------------------------------------------------------------------------------
    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")

    def _send(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)
