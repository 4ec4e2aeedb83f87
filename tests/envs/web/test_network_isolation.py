"""Browsers cannot reach the network (issue 10, isolation): built in the test, not assumed.

The test makes its own network namespace (``unshare --net``) with a veth pair whose end
``v0`` holds a non-loopback address, runs an HTTP server on that address, and inside that
namespace shows:

* control: the server is reachable from outside the browser sandbox - by a plain HTTP client
  and by an *un-isolated* browser whose MiniWoB++ page ``fetch``es it (so the page code and the
  server work);
* the same page in a sandboxed :class:`WebEnv` browser (its own network namespace, loopback
  only) cannot: ``fetch`` rejects, a navigation fails, and the server never sees a request;
* every listening TCP socket of either browser (their DevTools endpoints) is bound to
  127.0.0.1, never to a routable address.

Under CI (``CI=true``) a missing Chromium, root or ``ip`` (iproute2) fails the test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.components import require

pytestmark = pytest.mark.web

ADDRESS = "10.213.7.1"

SCRIPT = textwrap.dedent(
    r"""
    import http.server, json, subprocess, threading, urllib.request
    from adaroll.envs.base import TaskSpec
    from adaroll.envs.web import WebEnv
    from adaroll.envs.web.browser import BrowserConfig, BrowserProcess

    ADDRESS = "__ADDRESS__"
    for cmd in (["ip", "link", "set", "lo", "up"],
                ["ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1"],
                ["ip", "addr", "add", ADDRESS + "/24", "dev", "v0"],
                ["ip", "link", "set", "v0", "up"], ["ip", "link", "set", "v1", "up"]):
        subprocess.run(cmd, check=True)

    seen = []
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(self.path)
            self.send_response(200)
            self.send_header("Access-Control-Allow-Origin", "*")
            self.end_headers()
            self.wfile.write(b"reachable")
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer((ADDRESS, 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = "http://%s:%d" % (ADDRESS, server.server_address[1])
    out = {"port": server.server_address[1]}
    out["client"] = urllib.request.urlopen(base + "/client", timeout=5).read().decode()

    FETCH = ("fetch('%s/%s').then(r => r.text(), e => 'error: ' + e)")
    TASK = TaskSpec("web", "click-button", 0)

    def probe(env, name):
        env.reset(options={"task": TASK})
        got = {"fetch": env.evaluate(FETCH % (base, name + "-fetch"), await_promise=True)}
        nav = env.cdp.call("Page.navigate", {"url": base + "/" + name + "-nav"})
        got["navigate_error"] = nav.get("errorText", "")
        got["listen"] = listening(env.browser.pid)
        return got

    def listening(pid):
        # LISTEN sockets (state 0A) in the browser's network namespace: "addr:port" in hex
        rows = []
        for table in ("tcp", "tcp6"):
            for line in open("/proc/%d/net/%s" % (pid, table)).read().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A":
                    rows.append(fields[1])
        return rows

    plain = BrowserProcess.launch(BrowserConfig(isolate=False))
    env = WebEnv(browser=plain)
    out["plain"] = probe(env, "plain")
    env.close(); plain.kill()
    env = WebEnv()
    out["isolated"] = probe(env, "isolated")
    out["isolated"]["devices"] = [ln.split(":")[0].strip() for ln in
                                  open("/proc/%d/net/dev" % env.browser.pid).read().splitlines()[2:]]
    env.close()
    out["seen"] = seen
    print("RESULT " + json.dumps(out), flush=True)
    """
).replace("__ADDRESS__", ADDRESS)


def test_a_sandboxed_page_cannot_reach_a_server_on_the_hosts_network(browser):
    require(os.geteuid() == 0, "building a network namespace needs root")
    require(shutil.which("ip") is not None, "needs `ip` (iproute2); run scripts/install_system.sh")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    run = subprocess.run(
        ["unshare", "--net", "--", sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    lines = [ln for ln in run.stdout.splitlines() if ln.startswith("RESULT ")]
    assert run.returncode == 0 and lines, run.stderr[-3000:]
    out = json.loads(lines[0][len("RESULT ") :])
    # control: reachable from outside the sandbox, by a client and by a page
    assert out["client"] == "reachable"
    assert out["plain"]["fetch"] == "reachable", out["plain"]
    assert out["plain"]["navigate_error"] == ""
    # the sandboxed page: no route, and the server never heard of it
    assert out["isolated"]["devices"] == ["lo"]
    assert out["isolated"]["fetch"].startswith("error: TypeError"), out["isolated"]
    assert out["isolated"]["navigate_error"].startswith("net::ERR_"), out["isolated"]
    assert "/plain-fetch" in out["seen"] and "/plain-nav" in out["seen"]
    assert not [p for p in out["seen"] if p.startswith("/isolated")], out["seen"]
    # control endpoints: loopback only (the HTTP server is the test's own listener)
    server = f"{out['port']:04X}"
    for name in ("plain", "isolated"):
        listen = [a for a in out[name]["listen"] if not a.endswith(":" + server)]
        assert listen, f"{name}: no DevTools listener found"
        loopback = ("0100007F:", "00000000000000000000000001000000:")  # 127.0.0.1, ::1
        assert all(a.startswith(loopback) for a in listen), (name, listen)
