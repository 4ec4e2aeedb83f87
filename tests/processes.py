"""What a piece of work leaves running: take the live processes before it, and after it ask
which new ones whose command line names a program (chromium, criu) are still alive."""

from __future__ import annotations

import os
import re
import signal
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


def namespace_pids(init: int) -> list[int]:
    """The processes in the pid namespace whose init is ``init`` (an isolated browser's)."""
    namespace = os.readlink(f"/proc/{init}/ns/pid")
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and os.readlink(entry / "ns" / "pid") == namespace:
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _ancestors(pid: int) -> set[int]:
    out = set()
    while pid > 1 and pid not in out:
        out.add(pid)
        pid = _parent(pid)
    return out


def started_by_other_work(pid: int, before: dict[int, str], ours: set[int]) -> bool:
    """The process descends from one that was running before the work began and is not this
    process or one of its ancestors: another job on a shared machine (a training run's
    browsers), not something the work left. Orphans (re-parented to init) count as the work's."""
    parent = _parent(pid)
    while parent > 1 and parent not in ours:
        if parent in before:
            return True
        parent = _parent(parent)
    return False


def left_behind(before: dict[int, str], *programs: str, wait_s: float = 10.0) -> dict[int, str]:
    """Processes started since ``before`` whose command line names one of ``programs`` and
    that are still alive after up to ``wait_s`` seconds (a kill takes a moment to land).
    A new process of a browser that was already running before (its profile folder is in
    ``before``; Chromium starts some utility processes lazily) belongs to whoever started that
    browser, not to the work, and is left out; so is one that other work started
    (:func:`started_by_other_work`)."""
    earlier = {profile for cmd in before.values() if (profile := _profile(cmd)) is not None}
    ours = _ancestors(os.getpid())
    deadline = time.monotonic() + wait_s
    while True:
        new = {
            pid: cmd
            for pid, cmd in live_processes().items()
            if before.get(pid) != cmd
            and any(p in cmd for p in programs)
            and _profile(cmd) not in earlier
            and not started_by_other_work(pid, before, ours)
        }
        if not new or time.monotonic() > deadline:
            return new
        time.sleep(0.1)


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (children, their children, ...)."""
    children: dict[int, list[int]] = {}
    for child in live_processes():
        children.setdefault(_parent(child), []).append(child)
    out, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        out.append(child)
        todo += children.get(child, [])
    return out


def uids(pid: int) -> tuple[int, int, int, int]:
    """Real, effective, saved and filesystem uid of ``pid`` as the host sees them."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            real, effective, saved, fs = (int(v) for v in line.split()[1:5])
            return real, effective, saved, fs
    raise ValueError(f"/proc/{pid}/status has no Uid line")


def chromium_main(browser) -> int:
    """The Chromium browser process of a :class:`BrowserProcess` (what a hang or crash from
    outside hits): its ``pid``, or for an isolated browser of the unprivileged account, whose
    namespace init is ``tini``, the init's child."""
    if not (browser.isolated and browser.unprivileged):
        return browser.pid
    children = [p for p in descendants(browser.pid) if _parent(p) == browser.pid]
    assert len(children) == 1, children
    return children[0]


def kill_and_wait(pid: int, timeout_s: float = 10.0) -> None:
    """SIGKILL ``pid`` and return once it and every process that dies with it (its namespace,
    when it is a pid namespace's init; its descendants) is gone. A kill lands asynchronously:
    a namespace's other processes die only as its init exits, and until then a browser can
    still answer a request sent right after ``os.kill`` returned."""
    doomed = {pid, *descendants(pid)}
    if os.readlink(f"/proc/{pid}/ns/pid") != os.readlink("/proc/self/ns/pid"):
        doomed.update(namespace_pids(pid))
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout_s
    while doomed & live_processes().keys():
        if time.monotonic() > deadline:
            raise AssertionError(f"still alive {timeout_s} s after SIGKILL: {sorted(doomed)}")
        time.sleep(0.01)
