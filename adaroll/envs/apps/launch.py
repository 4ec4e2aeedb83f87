"""Starting an apps env's servers beside its browser, and reaching them from the controller.

One job: the process side of the apps env. :func:`launcher_command` is the
``BrowserConfig.launcher`` that makes the browser's namespace init start the app supervisor
(:mod:`adaroll.envs.apps.appserver.supervisor`) in Chromium's place: the servers run in the
browser's pid, mount, network and time namespaces, as its unprivileged account, with their
databases on its private tmpfs - one unit for a CRIU snapshot. :func:`server_processes` finds
them from the host (``/proc``), :func:`http_call` talks to them inside the namespace, and
:func:`data_path` names a database file as the host reaches it (``/proc/PID/root``: the
namespace's own mounts).
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from adaroll.envs.web.browser import BrowserProcess, BrowserUnavailableError, browser_credentials
from adaroll.envs.web.processes import JANITOR, open_socket_in_netns, pid_alive

APPS_DIR = Path(__file__).resolve().parent
"""The directory holding the ``appserver`` package (appended to the servers' ``sys.path``)."""
SERVER_PYTHONS = ("/usr/bin/python3", "/usr/local/bin/python3")
"""Interpreters tried for the servers after ``server_python`` and this process's own: the
servers need only the standard library (with ``sqlite3``), and the browser's account must be
able to run the interpreter (a virtual environment under ``/root`` it cannot)."""
PROCESS_PREFIX = "appsrv-"
"""Each server process names itself ``appsrv-<app>`` (``/proc/PID/comm``, at most 15
characters)."""
BOOT = (
    "import sys; sys.path.append({dir!r}); from appserver.supervisor import main; "
    "sys.exit(main(sys.argv[1:]))"
)


class AppServerError(BrowserUnavailableError):
    """The app servers cannot be started or answered wrongly."""


def _as_account(ids: tuple[int, int] | None) -> list[str]:
    """Run as the browser's account the way its namespace does: ``setpriv`` to the account,
    then a second ``setpriv`` that drops every capability (a single root ``setpriv`` may still
    reach files the account cannot)."""
    if ids is None:
        return []
    setpriv = shutil.which("setpriv") or "setpriv"
    return [
        *(setpriv, f"--reuid={ids[0]}", f"--regid={ids[1]}", "--clear-groups", "--"),
        *(setpriv, "--no-new-privs", "--inh-caps=-all", "--ambient-caps=-all", "--"),
    ]


def _probe(ids: tuple[int, int] | None, python: str, code_dir: str) -> str:
    """Why ``python`` cannot run the app servers from ``code_dir`` as ``ids`` ("" when it can)."""
    probe = (
        f"import sys; sys.path.append({code_dir!r}); import sqlite3, http.server; "
        "import appserver.supervisor, appserver.apps"
    )
    if not os.path.isfile(python):
        return "missing"
    try:
        done = subprocess.run(
            [*_as_account(ids), python, "-I", "-S", "-c", probe],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    return "" if done.returncode == 0 else (done.stderr.strip().splitlines() or ["failed"])[-1]


def _readable_copy() -> str:
    """A copy of the ``appserver`` package in a directory every account can read (``/tmp``),
    removed when this process exits: for a checkout the browser's account cannot read (under
    a private home directory)."""
    base = tempfile.mkdtemp(prefix="adaroll-appserver-", dir="/tmp")
    os.chmod(base, 0o755)
    JANITOR.register_dir(base)
    atexit.register(shutil.rmtree, base, True)
    shutil.copytree(
        APPS_DIR / "appserver",
        Path(base, "appserver"),
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    for root, dirs, files in os.walk(base):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o755)
        for name in files:
            os.chmod(os.path.join(root, name), 0o644)
    return base


@functools.lru_cache(maxsize=8)
def server_code(explicit: str | None, user: str | None) -> tuple[str, str]:
    """(interpreter, directory holding ``appserver``) that run the app servers as the browser's
    account (``user``): the first interpreter (``explicit``, this process's, the system's) that
    starts, imports ``sqlite3`` and ``http.server`` and finds the package - in this checkout,
    else in a readable copy of it (:func:`_readable_copy`). A clear error lists what was tried."""
    ids = browser_credentials(user)
    candidates = list(dict.fromkeys(c for c in (explicit, sys.executable, *SERVER_PYTHONS) if c))
    if explicit:
        candidates = [
            explicit
        ]  # an explicit choice that fails is an error, not a reason to try others
    tried = []
    code_dirs = [str(APPS_DIR)]
    for attempt in range(2):
        for python in candidates:
            why = _probe(ids, python, code_dirs[-1])
            if not why:
                return python, code_dirs[-1]
            tried.append(f"{python} with {code_dirs[-1]}: {why}")
        if attempt == 0:
            code_dirs.append(_readable_copy())
    who = f"the browser's account ({user})" if ids else "this user"
    raise AppServerError(
        f"no Python that {who} can run with the app servers (sqlite3, http.server and the "
        "appserver package readable): " + "; ".join(tried)
    )


def launcher_command(
    python: str,
    code_dir: str,
    state_dir: str | None,
    ports: dict[str, int],
    latency: float,
    mode: str = "shared",
) -> tuple[str, ...]:
    """The ``BrowserConfig.launcher`` of an apps env: the supervisor (from ``code_dir``, see
    :func:`server_code`) with its spec (``state_dir`` None: the browser's state directory, its working directory; ``mode``:
    ``shared`` or ``per-app`` server processes, :mod:`~adaroll.envs.apps.appserver.supervisor`)."""
    spec = {
        "state": state_dir,
        "apps": [{"name": name, "port": port} for name, port in ports.items()],
        "latency_scale": latency,
        "mode": mode,
    }
    return (python, "-I", "-S", "-c", BOOT.format(dir=code_dir), json.dumps(spec), "--")


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            out += [int(p) for p in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
        except (OSError, ValueError):
            continue
    return out


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def server_processes(browser: BrowserProcess, apps: tuple[str, ...] = ()) -> dict[str, int]:
    """The live app servers of ``browser``'s namespace: app name -> host pid (a server that
    died is missing). Found among the descendants of the namespace init, down to the
    supervisor's children; a process serving every app (``appsrv-all``) stands for each of
    ``apps``."""
    found: dict[str, int] = {}
    level = [browser.pid]
    for _ in range(3):
        nxt: list[int] = []
        for pid in level:
            for child in _children(pid):
                comm = _comm(child)
                if comm.startswith(PROCESS_PREFIX) and pid_alive(child):
                    found[comm[len(PROCESS_PREFIX) :]] = child
                nxt.append(child)
        level = nxt
    shared = found.pop("all", None)
    if shared is not None:
        found.update(dict.fromkeys(apps, shared))
    return found


def data_path(browser: BrowserProcess, name: str) -> str:
    """Host path of file ``name`` of the apps' data directory (``STATE_DIR/app``), reached
    through the namespace init's root: the tmpfs (or a branch's overlay) mounted there."""
    return f"/proc/{browser.pid}/root{browser.state_dir}/app/{name}"


def http_call(
    browser: BrowserProcess,
    port: int,
    method: str,
    path: str,
    body: Any = None,
    timeout: float = 30.0,
) -> tuple[int, Any]:
    """One HTTP/1.0 request to an app server inside ``browser``'s network namespace:
    ``(status, parsed JSON body)``."""
    data = b"" if body is None else json.dumps(body).encode()
    head = (
        f"{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    )
    with open_socket_in_netns(browser.net_ns_path, port, timeout=timeout) as sock:
        sock.settimeout(timeout)
        sock.sendall(head.encode() + data)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    raw = b"".join(chunks)
    header, _, payload = raw.partition(b"\r\n\r\n")
    try:
        status = int(header.split(b" ", 2)[1])
        return status, json.loads(payload) if payload else None
    except (IndexError, ValueError) as exc:
        raise AppServerError(f"app server on port {port}: bad answer to {method} {path}") from exc
