"""The leftover-process check the browser tests rely on: it sees a new browser process, and
leaves out a lazily started process of a browser that was already running."""

from __future__ import annotations

import subprocess
import sys

from tests.processes import left_behind, live_processes

SLEEPER = "import time; time.sleep(30)"


def _fake_browser(profile: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", SLEEPER, "chromium", f"--user-data-dir={profile}"])


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
