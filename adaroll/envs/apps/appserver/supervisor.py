"""The apps env's process inside its namespaces: app servers first, then the browser.

Run (as the browser's account, in Chromium's place: ``BrowserConfig.launcher``) as::

    python -I -S -c BOOT SPEC_JSON -- CHROMIUM_COMMAND...

``SPEC_JSON``: ``{"state": STATE_DIR or null (the working directory, which the namespace init
made the state tmpfs), "apps": [{"name", "port"}...], "latency_scale": F}``. It creates
``STATE_DIR/app`` (the databases live on the namespace's private tmpfs, so a CRIU
snapshot copies them with the browser's profile), binds one listening socket per app, forks one
server process per app (:class:`~.server.AppServer`; the forked children share the loaded code
with this process), then spawns Chromium and waits on its children: when Chromium exits it
kills the servers and exits with Chromium's status (the namespace then ends). A server that
dies is reaped and stays dead: the env finds it missing and reports an env fault
(docs/apps.md, "Faults"). SIGTERM ends everything.

Process tree of one env (host view)::

    tini (namespace init) -> python supervisor -> [python server per app..., chromium ...]
"""

from __future__ import annotations

import json
import os
import signal
import sys


def main(argv: list[str]) -> int:
    spec_text, sep, *browser = argv
    if sep != "--" or not browser:
        print("usage: supervisor SPEC_JSON -- BROWSER...", file=sys.stderr)
        return 2
    spec = json.loads(spec_text)
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
    children: dict[int, str] = {}
    for srv in servers:
        pid = os.fork()
        if pid == 0:  # the server: only its own socket
            for other in servers:
                if other is not srv:
                    other.socket.close()
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            try:  # the controller finds the server by this name (launch.server_processes)
                with open("/proc/self/comm", "w") as fh:
                    fh.write(f"appsrv-{srv.app.name}"[:15])
            except OSError:
                pass
            try:
                srv.serve()
            finally:
                os._exit(1)
        children[pid] = srv.app.name
    for srv in servers:
        srv.socket.close()
    browser_pid = os.posix_spawn(browser[0], browser, dict(os.environ))

    def stop(*_: object) -> None:
        for pid in [*children, browser_pid]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            return 0
        if pid == browser_pid:
            for server_pid in children:
                try:
                    os.kill(server_pid, signal.SIGKILL)
                except OSError:
                    pass
            return os.waitstatus_to_exitcode(status) & 0xFF
        children.pop(pid, None)  # a dead server stays dead: the env reports the fault
