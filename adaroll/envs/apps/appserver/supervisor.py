"""The apps env's process inside its namespaces: the app servers, then the browser.

Run (as the browser's account, in Chromium's place: ``BrowserConfig.launcher``) as::

    python -I -S -c BOOT SPEC_JSON -- CHROMIUM_COMMAND...

``SPEC_JSON``: ``{"state": STATE_DIR or null (the working directory, which the namespace init
made the state tmpfs), "apps": [{"name", "port"}...], "latency_scale": F, "mode": M}``. It
creates ``STATE_DIR/app`` (the databases live on the namespace's private tmpfs, so a CRIU
snapshot copies them with the browser's profile) and binds one listening socket per app. Then,
by ``mode``:

* ``shared`` (the default): this process serves every app, one thread per app's socket (each
  request on a thread of its own, :class:`~.server.AppServer`); it names itself
  ``appsrv-all``;
* ``per-app``: it forks one server process per app (``appsrv-<app>``), which share the loaded
  code with it.

Measured on one apps env: each Python process adds about 12 MB to a CRIU image and 5 MB of PSS
to a live branch, so ``shared`` keeps a snapshot of the whole app near the browser's own size;
``per-app`` isolates the apps from each other's crashes (docs/apps.md, "Servers").

Then it spawns Chromium and waits on its children: when Chromium exits it kills the servers and
exits with Chromium's status (the namespace then ends). A server that dies is reaped and stays
dead: the env finds it missing and reports an env fault. SIGTERM ends everything.

Process tree of one env (host view)::

    tini (namespace init) -> python supervisor [serves all apps] -> chromium ...
    tini (namespace init) -> python supervisor -> [python server per app..., chromium ...]
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading

MODES = ("shared", "per-app")


def _name(text: str) -> None:
    """Name this process (``/proc/PID/comm``): the controller finds the servers by it."""
    try:
        with open("/proc/self/comm", "w") as fh:
            fh.write(text[:15])
    except OSError:
        pass


def _kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def main(argv: list[str]) -> int:
    spec_text, sep, *browser = argv
    if sep != "--" or not browser:
        print("usage: supervisor SPEC_JSON -- BROWSER...", file=sys.stderr)
        return 2
    spec = json.loads(spec_text)
    mode = spec.get("mode", "shared")
    if mode not in MODES:
        print(f"supervisor: mode must be one of {', '.join(MODES)}, got {mode!r}", file=sys.stderr)
        return 2
    data_dir = os.path.join(spec.get("state") or os.getcwd(), "app")  # cwd: the state tmpfs
    os.makedirs(data_dir, mode=0o700, exist_ok=True)
    from .apps import APPS
    from .server import AppServer

    listing = [
        {"name": a["name"], "title": APPS[a["name"]].title, "url": f"http://127.0.0.1:{a['port']}/"}
        for a in spec["apps"]
    ]
    servers = [
        AppServer(APPS[a["name"]], int(a["port"]), data_dir, listing, float(spec["latency_scale"]))
        for a in spec["apps"]
    ]
    children: list[int] = []
    if mode == "per-app":
        for srv in servers:
            pid = os.fork()
            if pid == 0:  # the server: only its own socket
                for other in servers:
                    if other is not srv:
                        other.socket.close()
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                _name(f"appsrv-{srv.app.name}")
                try:
                    srv.serve()
                finally:
                    os._exit(1)
            children.append(pid)
        for srv in servers:
            srv.socket.close()
    else:
        _name("appsrv-all")
        for srv in servers:
            threading.Thread(target=srv.serve, name=srv.app.name, daemon=True).start()
    browser_pid = os.posix_spawn(browser[0], browser, dict(os.environ))

    def stop(*_: object) -> None:
        _kill([*children, browser_pid])
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            return 0
        if pid == browser_pid:
            _kill(children)
            return os.waitstatus_to_exitcode(status) & 0xFF
        # a dead per-app server stays dead: the env reports the fault
