"""What a piece of work leaves running: take the live processes before it, and after it ask
which new ones whose command line names a program (chromium, criu) are still alive."""

from __future__ import annotations

import re
import time
from pathlib import Path

_PROFILE = re.compile(r"--user-data-dir=(\S+)")


def _profile(cmd: str) -> str | None:
    match = _PROFILE.search(cmd)
    return match.group(1) if match else None


def live_processes() -> dict[int, str]:
    """Every live process (zombies left out): pid -> command line."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X"):
            out[int(entry.name)] = cmdline
    return out


def left_behind(before: dict[int, str], *programs: str, wait_s: float = 10.0) -> dict[int, str]:
    """Processes started since ``before`` whose command line names one of ``programs`` and
    that are still alive after up to ``wait_s`` seconds (a kill takes a moment to land).
    A new process of a browser that was already running before (its profile folder is in
    ``before``; Chromium starts some utility processes lazily) belongs to whoever started that
    browser, not to the work, and is left out."""
    earlier = {profile for cmd in before.values() if (profile := _profile(cmd)) is not None}
    deadline = time.monotonic() + wait_s
    while True:
        new = {pid: cmd for pid, cmd in live_processes().items()
               if before.get(pid) != cmd and any(p in cmd for p in programs)
               and _profile(cmd) not in earlier}  # fmt: skip
        if not new or time.monotonic() > deadline:
            return new
        time.sleep(0.1)
