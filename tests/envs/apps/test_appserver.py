"""An app server on its own (no browser, no namespace): seeded content in, JSON out, a database
connection per request (none left open between requests), the start copy the judge diffs
against, and clear errors."""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from adaroll.envs.apps.appserver.apps import APPS
from adaroll.envs.apps.appserver.server import AppServer
from adaroll.envs.apps.state import read_database
from adaroll.envs.apps.tasks.catalog import instance


@pytest.fixture()
def mail_server(tmp_path):
    server = AppServer(APPS["mail"], 0, str(tmp_path), [], latency_scale=0.0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server, f"http://127.0.0.1:{server.server_address[1]}", tmp_path
    server.shutdown()
    server.server_close()


def call(base, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        base + path, data=data, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def open_db_fds(tmp_path: Path) -> list[str]:
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(tmp_path)):
            out.append(target)
    return out


def test_seeded_content_is_served_paged_and_written_with_a_connection_per_request(mail_server):
    server, base, tmp_path = mail_server
    tables = instance("mail.archive", 7).tables["mail"]
    status, out = call(base, "/__admin/load", {"tables": tables})
    assert status == 200 and out["loaded"] == sum(len(rows) for rows in tables.values())
    status, page = call(base, "/api/messages?folder=Inbox&page=2")
    inbox = [m for m in tables["messages"] if m["folder"] == "Inbox"]
    assert status == 200 and page["page"] == 2 and page["total"] == len(inbox)
    assert page["pages"] == -(-len(inbox) // 10) and len(page["items"]) <= 10
    mid = page["items"][0]["id"]
    assert call(base, f"/api/messages/{mid}/update", {"folder": "Archive"}) == (200, {"ok": True})
    assert open_db_fds(tmp_path) == []  # nothing held open between requests
    now = read_database(str(tmp_path / "mail.db"))
    start = read_database(str(tmp_path / "mail.start.db"))
    assert now["messages"][str(mid)]["folder"] == "Archive"
    assert start["messages"][str(mid)]["folder"] == "Inbox"


def test_bad_requests_get_clear_errors(mail_server):
    _, base, _ = mail_server
    call(base, "/__admin/load", {"tables": instance("mail.archive", 7).tables["mail"]})
    assert call(base, "/api/nothing") == (404, {"error": "no such API: GET nothing"})
    assert call(base, "/api/send", {"to": "nobody", "subject": "x"})[1] == {
        "error": "nobody is not an e-mail address"
    }
    assert call(base, "/api/send", {"to": "a@b.example"})[1] == {"error": "Subject is required"}
    status, out = call(base, "/__admin/load", {"tables": {"messages": [{"nope": 1}]}})
    assert status == 500 and "nope" in out["error"]


def test_the_page_shell_and_front_end_files(mail_server):
    _, base, _ = mail_server
    with urllib.request.urlopen(base + "/", timeout=10) as resp:
        html = resp.read().decode()
    assert "/static/common.js" in html and "/static/mail.js" in html
    with urllib.request.urlopen(base + "/static/common.css", timeout=10) as resp:
        assert resp.headers["Content-Type"] == "text/css"
    assert call(base, "/static/../server.py")[0] == 404


def test_servers_run_from_a_readable_copy_when_the_checkout_is_private(monkeypatch):
    """A checkout the browser's account cannot read (under a private home) is copied to /tmp."""
    from adaroll.envs.apps import launch

    calls = []

    def probe(ids, python, code_dir):
        calls.append(code_dir)
        return "" if code_dir != str(launch.APPS_DIR) else "PermissionError: appserver"

    monkeypatch.setattr(launch, "_probe", probe)
    python, code_dir = launch.server_code.__wrapped__("/usr/bin/python3", None)
    assert python == "/usr/bin/python3" and calls == [str(launch.APPS_DIR), code_dir]
    copied = Path(code_dir, "appserver", "supervisor.py")
    assert copied.read_text() == (launch.APPS_DIR / "appserver" / "supervisor.py").read_text()
    assert copied.stat().st_mode & 0o004 and Path(code_dir).stat().st_mode & 0o001
    monkeypatch.setattr(launch, "_probe", lambda ids, python, code_dir: "no sqlite3")
    with pytest.raises(launch.AppServerError, match="no sqlite3"):
        launch.server_code.__wrapped__("/usr/bin/python3", None)
