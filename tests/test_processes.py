"""The leftover-process check the browser tests rely on: it sees a new browser process, and
leaves out a lazily started process of a browser that was already running, and browsers that
other work on the machine started."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from tests.processes import left_behind, live_processes

SLEEPER = "import time; time.sleep(30)"


def _fake_browser(profile: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", SLEEPER, "chromium", f"--user-data-dir={profile}"]
    )


def test_a_new_browser_process_is_left_behind_unless_its_browser_ran_before() -> None:
    before = live_processes()
    first = _fake_browser("/tmp/profile-a")
    try:
        assert list(left_behind(before, "chromium", wait_s=0.2)) == [first.pid]
        running = live_processes()
        child = _fake_browser("/tmp/profile-a")  # e.g. a utility process started later
        other = _fake_browser("/tmp/profile-b")
        try:
            assert list(left_behind(running, "chromium", wait_s=0.2)) == [other.pid]
        finally:
            for p in (child, other):
                p.kill()
                p.wait()
    finally:
        first.kill()
        first.wait()
    assert left_behind(before, "chromium") == {}


def test_a_browser_that_other_work_started_is_not_left_behind() -> None:
    """Another job on the machine (a process running before the check) starts a browser while
    the work runs: not the work's leftover. A browser this process started still is."""
    launcher = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, subprocess, time; sys.stdin.readline(); "
            f"subprocess.Popen([sys.executable, '-c', {SLEEPER!r}, 'chromium', "
            "'--user-data-dir=/tmp/profile-other']); time.sleep(30)",
        ],
        stdin=subprocess.PIPE,
    )
    try:
        before = live_processes()
        assert launcher.stdin is not None
        launcher.stdin.write(b"go\n")
        launcher.stdin.flush()
        ours = _fake_browser("/tmp/profile-ours")
        try:
            deadline = time.monotonic() + 10
            while not any("/tmp/profile-other" in c for c in live_processes().values()):
                assert time.monotonic() < deadline, "the other job's browser did not start"
                time.sleep(0.05)
            assert list(left_behind(before, "chromium", wait_s=0.2)) == [ours.pid]
        finally:
            ours.kill()
            ours.wait()
    finally:
        for pid, cmd in live_processes().items():
            if "/tmp/profile-other" in cmd:
                os.kill(pid, 9)
        launcher.kill()
        launcher.wait()
