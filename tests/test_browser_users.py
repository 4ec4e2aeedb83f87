"""No browser runs as root: every process of a default WebEnv browser, of a CRIU branch
restored from it and of a BrowserGym env (by default) has the unprivileged account's uid on the
host; Chromium keeps no capability (the WebEnv namespace init only CAP_SYS_ADMIN, which CRIU's
dump needs); a BrowserGym browser runs Chromium's own sandbox and reaches only its
``allowed_hosts``; a root account is refused. Needs root (to have something to drop),
Chromium, CRIU for the branch and BrowserGym's packages for its test: under CI a missing one
fails (tests/components.py)."""

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


CAP_SYS_ADMIN = 1 << 21


def _status(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/status") as f:
        return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)


def _thread_nices(pid: int) -> list[int]:
    """The nice value of every thread of ``pid`` (field 19 of /proc/PID/task/TID/stat)."""
    nices = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                nices.append(int(f.read().rsplit(")", 1)[1].split()[16]))
        except (FileNotFoundError, ProcessLookupError):  # a thread that just ended
            continue
    return nices


def _check_namespace(init: int, uid: int, gid: int) -> None:
    """Every process of the browser's pid namespace (the init included) is the account, with
    no supplementary group; Chromium has no capability and cannot gain any (no_new_privs); the
    init (``tini``) keeps CAP_SYS_ADMIN alone."""
    pids = namespace_pids(init)
    chromium = [p for p in _chromium(pids) if p != init]  # (tini's command names it)
    assert len(chromium) >= 2  # the browser process and at least a renderer
    assert {uids(p) for p in pids} == {(uid, uid, uid, uid)}
    assert not any(0 in uids(p) for p in pids)
    for pid in pids:
        status = _status(pid)
        assert status["Gid"].split() == [str(gid)] * 4 and not status["Groups"].strip(), status
        if pid in chromium:
            assert int(status["CapEff"], 16) == int(status["CapPrm"], 16) == 0, status
            assert status["NoNewPrivs"] == "1"
            # as root, Chromium raises its display threads to nice -8 (and CRIU restores them
            # so), starving the trainer on a shared machine; the account cannot
            assert min(_thread_nices(pid)) >= os.getpriority(os.PRIO_PROCESS, 0), pid
    assert int(_status(init)["CapPrm"], 16) == CAP_SYS_ADMIN
    assert "tini" in live_processes()[init]


def test_default_webenv_browser_runs_as_the_account() -> None:
    require_chromium()
    uid, gid = _account()
    from adaroll.envs.web import WebEnv

    assert BrowserConfig().user == BROWSER_USER  # the default, nothing set
    env = WebEnv()
    try:
        obs, _ = env.reset(options={"task": "web:click-button#3"})
        assert obs.elements  # the page works as that account
        assert env.browser.isolated and env.browser.unprivileged
        _check_namespace(env.browser.pid, uid, gid)
    finally:
        env.close()


def test_plain_webenv_browser_runs_as_the_account() -> None:
    require_chromium()
    uid, _ = _account()
    from adaroll.envs.web import WebEnv

    env = WebEnv(browser={"isolate": False})
    try:
        obs, _ = env.reset(options={"task": "web:click-button#3"})
        assert obs.elements
        browser = env.browser
        pids = [browser.pid, *descendants(browser.pid)]
        assert len(_chromium(pids)) >= 2
        assert {uids(p) for p in pids} == {(uid, uid, uid, uid)}
        assert browser.unprivileged
    finally:
        env.close()


def test_criu_branches_of_the_default_browser_run_as_the_account() -> None:
    """CRIU dumps the unprivileged browser and restores branches that are the account too, in
    the saved state (the branch's observation equals the original's), and the original keeps
    working after the dump."""
    require_chromium()
    uid, gid = _account()
    from adaroll.envs.web import WebEnv
    from adaroll.snapshots.criu import CriuSnapshots
    from adaroll.snapshots.criu.tool import CriuUnavailableError

    env = WebEnv()
    try:
        obs, _ = env.reset(options={"task": "web:click-button#3"})
        try:
            snaps = CriuSnapshots(verify="raise")
        except CriuUnavailableError as exc:
            require(False, f"CRIU: {exc}")
        with snaps:
            ref = snaps.save(env, ())
            assert ref.meta["browser_ids"] == [uid, gid]
            branches = [snaps.restore(ref) for _ in range(2)]
            try:
                pids = set()
                for branch in branches:
                    assert branch.restore_info["check"].ok
                    assert branch.observe().element_tree_hash() == obs.element_tree_hash()
                    _check_namespace(branch.browser.pid, uid, gid)
                    pids.update(namespace_pids(branch.browser.pid))
                assert env.browser.pid not in pids  # branches are new processes
            finally:
                for branch in branches:
                    branch.close()
            assert snaps.live_branches() == 0
        assert env.observe().element_tree_hash() == obs.element_tree_hash()
        _check_namespace(env.browser.pid, uid, gid)
    finally:
        env.close()


def test_a_root_account_is_refused_and_a_missing_one_named(tmp_path) -> None:
    _account()
    from adaroll.envs.web.browser import BrowserUnavailableError

    locked = tmp_path / "chromium"  # pytest's tmp_path is root's alone (0700)
    locked.write_text("#!/bin/sh\n")
    locked.chmod(0o755)
    with pytest.raises(BrowserUnavailableError, match="BrowserConfig.executable: .* cannot be run"):
        BrowserProcess.launch(BrowserConfig(executable=str(locked)))
    with pytest.raises(ValueError, match="BrowserConfig.user: 'root' is root"):
        BrowserProcess.launch(BrowserConfig(user="root"))
    with pytest.raises(ValueError, match="no account named 'no-such-adaroll-user'"):
        browser_credentials("no-such-adaroll-user")
    assert browser_credentials(None) is None  # the opt-out: root inside the namespaces
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


def test_a_base_dir_the_account_cannot_pass_through_is_refused_or_avoided(
    tmp_path, monkeypatch
) -> None:
    """A private (0700) temp dir would lock the account out of its own state: the browser's
    host directory then goes to /tmp, and a ``base_dir`` named explicitly is refused."""
    from adaroll.envs.web.browser import FALLBACK_BASE_DIR, browser_base_dir

    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    ids = (os.getuid() + 4321, os.getgid() + 4321)  # an account that owns none of them
    monkeypatch.setattr("tempfile.tempdir", str(private))
    assert browser_base_dir(BrowserConfig(), ids) == FALLBACK_BASE_DIR
    assert browser_base_dir(BrowserConfig(), None) == str(private)  # root: as before
    assert browser_base_dir(BrowserConfig(base_dir="/tmp"), ids) == "/tmp"  # (1777)
    with pytest.raises(ValueError, match="BrowserConfig.base_dir: .* cannot be passed through"):
        browser_base_dir(BrowserConfig(base_dir=str(private)), ids)


def test_whom_criu_runs_as_comes_from_the_image_and_bad_meta_is_named() -> None:
    from adaroll.snapshots.base import SnapshotError
    from adaroll.snapshots.criu.images import ids_from_meta
    from adaroll.snapshots.criu.tool import run_as_account, unprivileged_flags

    assert ids_from_meta(None, "s") == (0, 0)  # an image of a root browser from before
    assert ids_from_meta([999, 995], "s") == (999, 995)
    with pytest.raises(SnapshotError, match="criu snapshot s: meta browser_ids must be"):
        ids_from_meta("999", "s")
    assert run_as_account(0, 0) == [] and unprivileged_flags((0, 0)) == ()
    prefix = run_as_account(999, 995)
    assert prefix[1:4] == ["--reuid=999", "--regid=995", "--clear-groups"]
    # never CAP_SETUID (7) or CAP_SETGID (6): criu 4.2 would make the restored init uid 0
    assert not {"+cap_6", "+cap_7"} & set(prefix[4].split(","))
    assert unprivileged_flags((999, 995)) == ("--unprivileged",)
