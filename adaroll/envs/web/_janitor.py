"""Crash janitor for browser processes (standard library only).

Started once per controller process by :mod:`adaroll.envs.web.processes` (for the browsers of
:mod:`adaroll.envs.web.browser`), with a pipe on stdin.
The controller registers what it owns, one command per line::

    pid PID STARTTIME     kill PID on exit (STARTTIME from /proc/PID/stat guards pid reuse)
    unpid PID             no longer owned (already killed and reaped)
    dir PATH              remove PATH on exit
    undir PATH

When the pipe reaches end-of-file - the controller exited normally, crashed or was SIGKILLed -
the janitor SIGKILLs every registered process that still exists, removes the registered
directories and exits. Killing a browser's pid-namespace init tears down its whole namespace
(and with it its tmpfs and mounts).
"""

import os
import shutil
import signal
import sys
import time


def starttime(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode(errors="replace")
    except OSError:
        return None
    fields = data.rsplit(")", 1)[1].split()
    if fields[0] in ("Z", "X"):  # a zombie is dead, unless other threads still run
        try:
            if len(os.listdir(f"/proc/{pid}/task")) <= 1:
                return None
        except OSError:
            return None
    return fields[19]  # field 22 of stat: start time in clock ticks


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # outlive a Ctrl-C of the controller
    pids: dict[int, str] = {}
    dirs: list[str] = []
    for line in sys.stdin:
        parts = line.split(" ", 1)
        cmd, arg = parts[0], parts[1].rstrip("\n") if len(parts) > 1 else ""
        if cmd == "pid":
            pid, start = arg.split()
            pids[int(pid)] = start
        elif cmd == "unpid":
            pids.pop(int(arg), None)
        elif cmd == "dir":
            dirs.append(arg)
        elif cmd == "undir" and arg in dirs:
            dirs.remove(arg)
    for pid, start in pids.items():
        if starttime(pid) == start:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and any(starttime(p) == s for p, s in pids.items()):
        time.sleep(0.02)
    for path in dirs:
        shutil.rmtree(path, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
