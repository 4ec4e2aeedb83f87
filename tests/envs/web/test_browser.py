"""The browser launcher: namespaces, DevTools over setns sockets, cleanup (also after a crash)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from adaroll.envs.web.browser import BrowserProcess, isolation_available, pid_alive
from tests.components import require
from tests.processes import namespace_pids

pytestmark = pytest.mark.web


def _mounts_mentioning(path: str) -> list[str]:
    return [line for line in Path("/proc/self/mounts").read_text().splitlines() if path in line]


def _processes_mentioning(text: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if text in cmdline and pid_alive(int(entry.name)):
                pids.append(int(entry.name))
    return pids


def test_isolated_browser_namespaces_and_cleanup(browser):
    require(isolation_available(), "isolated browsers need root")  # CI runs as root
    b = BrowserProcess.launch()
    try:
        assert b.isolated and b.alive()
        # own pid namespace, with the browser as its init
        nspid = [
            ln
            for ln in Path(f"/proc/{b.pid}/status").read_text().splitlines()
            if ln.startswith("NSpid:")
        ][0].split()
        assert nspid[-1] == "1" and nspid[1] == str(b.pid)
        for ns in ("net", "mnt", "pid", "time"):
            assert os.readlink(f"/proc/{b.pid}/ns/{ns}") != os.readlink(f"/proc/self/ns/{ns}")
        # no route anywhere: the namespace has only a loopback device
        devices = [
            ln.split(":")[0].strip()
            for ln in Path(f"/proc/{b.pid}/net/dev").read_text().splitlines()[2:]
        ]
        assert devices == ["lo"]
        # mutable state on a private tmpfs that the host does not see
        inside = Path(f"/proc/{b.pid}/mounts").read_text()
        assert any(
            ln.split()[1] == b.state_dir and ln.split()[2] == "tmpfs" for ln in inside.splitlines()
        )
        assert not _mounts_mentioning(b.state_dir)
        assert Path(f"/proc/{b.pid}/root{b.state_dir}/ud").is_dir()
        # DevTools reachable only through the namespace; reconnecting works
        for _ in range(2):
            with b.connect() as cdp:
                assert cdp.evaluate("6 * 7") == 42
        host_dir = str(Path(b.state_dir).parent)
        pid = b.pid
    finally:
        b.kill()
    assert not pid_alive(pid)
    assert not Path(host_dir).exists()
    assert not _processes_mentioning(b.state_dir)
    b.kill()  # idempotent


def test_adopt_takes_ownership(browser):
    original = BrowserProcess.launch()
    adopted = BrowserProcess.adopt(
        original.pid, state_dir=original.state_dir, port=original.port, isolated=original.isolated
    )
    with adopted.connect() as cdp:
        assert cdp.evaluate("1 + 1") == 2
    adopted.kill()
    deadline = time.monotonic() + 10
    while pid_alive(original.pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not pid_alive(original.pid)
    original.kill()


def test_browsers_die_with_a_killed_controller(tmp_path):
    """The crash janitor kills browsers and removes their directories after a SIGKILL."""
    script = textwrap.dedent(
        """
        import os, signal, sys
        from adaroll.envs.web.browser import BrowserProcess
        b = BrowserProcess.launch()
        print(b.pid, b.state_dir, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60
    )
    pid_text, state_dir = out.stdout.split()
    pid = int(pid_text)
    deadline = time.monotonic() + 15
    while (pid_alive(pid) or Path(state_dir).parent.exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(pid)
    assert not Path(state_dir).parent.exists()
    left = _processes_mentioning(state_dir)
    info = [(p, Path(f"/proc/{p}/stat").read_text()[:60], out.stdout) for p in left]
    assert not left, info


def _flaky_chromium(tmp_path: Path, crashes: int) -> tuple[str, Path]:
    """A Chromium wrapper that exits with status 3 on its first ``crashes`` starts."""
    from adaroll.envs.web.browser import find_chromium

    starts = tmp_path / "starts"
    script = tmp_path / "chromium"
    script.write_text(
        textwrap.dedent(f"""\
        #!/bin/sh
        n=$(cat {starts} 2>/dev/null || echo 0)
        echo $((n + 1)) > {starts}
        [ "$n" -lt {crashes} ] && exit 3
        exec {find_chromium()} "$@"
        """)
    )
    script.chmod(0o755)
    return str(script), starts


def test_a_browser_that_dies_during_startup_is_replaced(browser, tmp_path):
    from adaroll.envs.web.browser import BrowserConfig

    executable, starts = _flaky_chromium(tmp_path, crashes=2)
    # as root: the script lives in pytest's root-only tmp_path (the account cannot run it there)
    proc = BrowserProcess.launch(
        BrowserConfig(executable=executable, startup_attempts=3, user=None)
    )
    try:
        assert starts.read_text().strip() == "3"
        assert proc.alive() and proc.page_ws_url().startswith("ws://")
    finally:
        proc.kill()


def test_a_browser_that_keeps_dying_during_startup_is_a_clear_error(browser, tmp_path):
    from adaroll.envs.web.browser import BrowserConfig, BrowserStartupCrash

    executable, starts = _flaky_chromium(tmp_path, crashes=5)
    base = Path(tempfile.mkdtemp(prefix="adr-", dir="/tmp"))  # short: Chromium's socket paths
    try:
        with pytest.raises(
            BrowserStartupCrash, match=r"during startup 2 times: .*exited with status 3"
        ):
            BrowserProcess.launch(
                BrowserConfig(
                    executable=executable, startup_attempts=2, base_dir=str(base), user=None
                )
            )
        assert starts.read_text().strip() == "2"
        assert not list(base.iterdir())  # each failed launch removed its directory
    finally:
        shutil.rmtree(base)


def test_the_env_runs_the_headless_shell_and_an_explicit_binary_wins(browser, monkeypatch):
    from adaroll.envs.web.browser import find_chromium

    monkeypatch.delenv("ADAROLL_CHROMIUM", raising=False)
    shell = find_chromium(headless_shell=True)
    assert shell == "/usr/lib/chromium/chromium-headless-shell"
    assert find_chromium() == "/usr/lib/chromium/chromium"  # the stock env's reference browser
    proc = BrowserProcess.launch()
    try:
        # the browser process: the namespace init, or its child below ``tini`` (unprivileged)
        from tests.processes import descendants

        first = [proc.pid, *descendants(proc.pid)][: 2 if proc.unprivileged else 1]
        assert os.path.realpath(f"/proc/{first[-1]}/exe") == os.path.realpath(shell)
    finally:
        proc.kill()
    monkeypatch.setenv("ADAROLL_CHROMIUM", "/usr/lib/chromium/chromium")
    assert find_chromium(headless_shell=True) == "/usr/lib/chromium/chromium"
    assert find_chromium("/bin/true", headless_shell=True) == "/bin/true"


def test_the_browser_loads_no_software_gpu(web_env):
    """``--disable-gpu`` alone still loads SwiftShader (10 MB more per browser and CRIU image);
    ``--disable-software-rasterizer`` keeps it out of every process of a browser that drew a page."""
    from adaroll.envs.base import TaskSpec

    require(isolation_available(), "an isolated browser's processes are its pid namespace's")
    web_env.reset(options={"task": TaskSpec("web", "click-button", 0)})
    web_env.screenshot()
    root = web_env.browser.pid
    pids = namespace_pids(root)
    assert root in pids and len(pids) >= 2  # the browser and the page's renderer
    assert not [pid for pid in pids if "swiftshader" in Path(f"/proc/{pid}/maps").read_text()]
