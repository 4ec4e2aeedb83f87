"""No browser runs as root: every process of a WebEnv browser launched with
``BrowserConfig.user`` and of a BrowserGym env (by default) has the unprivileged account's uid
on the host, a BrowserGym browser runs Chromium's own sandbox and reaches only its
``allowed_hosts``, and a root account is refused. Needs root (to have something to drop), Chromium and, for BrowserGym, its packages:
under CI a missing one fails (tests/components.py)."""

from __future__ import annotations

import http.server
import os
import threading

import pytest

from adaroll.envs.web.browser import (
    BROWSER_USER,
    NOBODY,
    BrowserConfig,
    BrowserProcess,
    browser_credentials,
)
from tests.components import require, require_browsergym, require_chromium
from tests.processes import descendants, live_processes, namespace_pids, uids

pytestmark = pytest.mark.web


def _account() -> tuple[int, int]:
    require(os.geteuid() == 0, "dropping a browser's privileges needs root")
    ids = browser_credentials(BROWSER_USER)
    assert ids is not None and 0 not in ids
    return ids


def _seccomp(pid: int) -> int:
    """The process's seccomp mode (0 off, 2 filter)."""
    with open(f"/proc/{pid}/status") as f:
        return int(next(line.split()[1] for line in f if line.startswith("Seccomp:")))


def _chromium(pids: list[int]) -> list[int]:
    names = live_processes()
    return [p for p in pids if "chrom" in names.get(p, "")]


@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "plain"])
def test_every_webenv_browser_process_runs_as_the_browser_account(isolate: bool) -> None:
    require_chromium()
    uid, _ = _account()
    from adaroll.envs.web import WebEnv

    env = WebEnv(browser={"user": BROWSER_USER, "isolate": isolate})
    try:
        obs, _ = env.reset(options={"task": "web:click-button#3"})
        assert obs.elements  # the page works as that account
        browser = env.browser
        pids = namespace_pids(browser.pid) if isolate else [browser.pid, *descendants(browser.pid)]
        chromium = _chromium(pids)
        assert len(chromium) >= 2  # the browser process and at least a renderer
        assert {uids(p) for p in pids} == {(uid, uid, uid, uid)}  # the namespace's init too
        assert browser.unprivileged
    finally:
        env.close()


def test_criu_refuses_an_unprivileged_browser_clearly() -> None:
    require_chromium()
    _account()
    from adaroll.envs.web import WebEnv
    from adaroll.envs.web.criu import CriuSnapshots
    from adaroll.envs.web.criu.tool import CriuUnavailableError
    from adaroll.snapshots.base import SnapshotError

    env = WebEnv(browser={"user": BROWSER_USER})
    try:
        env.reset(options={"task": "web:click-button#3"})
        try:
            snaps = CriuSnapshots()
        except CriuUnavailableError as exc:
            require(False, f"CRIU: {exc}")
        with snaps, pytest.raises(SnapshotError, match="env.options.browser.user: null"):
            snaps.save(env, ())
    finally:
        env.close()


def test_a_root_account_is_refused_and_a_missing_one_named() -> None:
    _account()
    with pytest.raises(ValueError, match="BrowserConfig.user: 'root' is root"):
        BrowserProcess.launch(BrowserConfig(user="root"))
    with pytest.raises(ValueError, match="no account named 'no-such-adaroll-user'"):
        browser_credentials("no-such-adaroll-user")
    assert browser_credentials(None) is None  # root, as before: what CRIU snapshots need
    assert NOBODY == 65534


@pytest.fixture(scope="module")
def http_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def _fetch(env, url: str) -> str:
    page = env._gym.unwrapped.context.new_page()
    try:
        return f"status {page.goto(url, timeout=10_000).status}"
    except Exception as exc:  # noqa: BLE001 - Playwright's error is the observation
        return str(exc).splitlines()[0]
    finally:
        page.close()


def test_browsergym_browsers_run_unprivileged_and_reach_only_allowed_hosts(http_server) -> None:
    require_browsergym()
    uid, _ = _account()
    from adaroll.envs.browsergym import BrowserGymEnv

    # browsers that other tests' fixtures keep open in this process are not this env's
    before = set(_chromium(descendants(os.getpid())))
    env = BrowserGymEnv(slow_mo=0, pre_observation_delay=0.0, allowed_hosts=("127.0.0.1",))
    try:
        obs, _ = env.reset(options={"task": "browsergym:miniwob.click-test-2#1"})
        assert obs.elements
        chromium = [p for p in _chromium(descendants(os.getpid())) if p not in before]
        assert len(chromium) >= 4  # the task's browser and the chat's, each with renderers
        assert {uids(p) for p in chromium} == {(uid, uid, uid, uid)}
        # Chromium's own sandbox is on: every renderer runs under seccomp-bpf in a user
        # namespace of its own, and no process was started with --no-sandbox
        names = live_processes()
        renderers = [p for p in chromium if "--type=renderer" in names.get(p, "")]
        assert renderers and all(_seccomp(p) == 2 for p in renderers)
        assert all(
            os.readlink(f"/proc/{p}/ns/user") != os.readlink("/proc/self/ns/user")
            for p in renderers
        )
        assert not any("--no-sandbox" in names.get(p, "") for p in chromium)
        assert _fetch(env, http_server) == "status 200"  # the allowed host
        # the same server by another name (and so any host not listed) is out of reach
        other = _fetch(env, http_server.replace("127.0.0.1", "localhost"))
        assert "ERR_PROXY_CONNECTION_FAILED" in other or "ERR_NAME_NOT_RESOLVED" in other, other
    finally:
        env.close()


def test_allowed_hosts_become_chromium_flags_and_bad_ones_are_refused() -> None:
    from adaroll.envs.browsergym.launch import network_args

    assert network_args(None) == []
    rules, proxy, bypass = network_args(("shop.internal", "10.0.0.7"))
    assert rules == "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE shop.internal, EXCLUDE 10.0.0.7"
    assert proxy == "--proxy-server=127.0.0.1:9"
    assert bypass == "--proxy-bypass-list=<-loopback>;shop.internal;10.0.0.7"  # <-loopback> first
    with pytest.raises(ValueError, match="allowed_hosts: 'a b' is not a host name"):
        network_args(("a b",))
