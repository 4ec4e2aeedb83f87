"""Process and namespace plumbing for the browsers of :mod:`adaroll.envs.web.browser`.

One job: the Linux-level pieces a browser's life needs - a thread that enters a network
namespace to open a socket there (:func:`open_socket_in_netns`), becoming a child subreaper
(:func:`become_subreaper`), telling whether a process lives and reaping it (:func:`pid_alive`,
:func:`reap`) - and the client of the crash janitor (:mod:`adaroll.envs.web._janitor`),
:data:`JANITOR`, which kills registered processes and removes registered directories when
this process exits in any way (even SIGKILL).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

CLONE_NEWNET = 0x40000000
PR_SET_CHILD_SUBREAPER = 36
JANITOR_SCRIPT = Path(__file__).resolve().parent / "_janitor.py"

_libc = ctypes.CDLL(None, use_errno=True)
_netns_lock = threading.Lock()


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


@contextlib.contextmanager
def entered_netns(netns_path: str) -> Iterator[None]:
    """Run the body with the *calling thread* inside the network namespace ``netns_path``
    (e.g. ``/proc/PID/ns/net``); sockets created there keep that namespace."""
    with _netns_lock:
        own = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        try:
            target = os.open(netns_path, os.O_RDONLY | os.O_CLOEXEC)
            try:
                _check(_libc.setns(target, CLONE_NEWNET), f"setns({netns_path})")
            finally:
                os.close(target)
            try:
                yield
            finally:
                _check(_libc.setns(own, CLONE_NEWNET), "setns(back)")
        finally:
            os.close(own)


def open_socket_in_netns(
    netns_path: str | None, port: int, *, host: str = "127.0.0.1", timeout: float = 5.0
) -> socket.socket:
    """A TCP socket connected to ``host:port`` as seen from network namespace ``netns_path``
    (the current namespace when None)."""
    if netns_path is None:
        return socket.create_connection((host, port), timeout=timeout)
    with entered_netns(netns_path):
        return socket.create_connection((host, port), timeout=timeout)


def become_subreaper() -> None:
    """Make this process a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``): orphaned
    descendants - e.g. a tree restored by ``criu restore -d`` - are re-parented here and can be
    reaped with ``waitpid``. Idempotent."""
    _check(_libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "prctl(PR_SET_CHILD_SUBREAPER)")


def proc_starttime(pid: int) -> str | None:
    """Start time (clock ticks, /proc/PID/stat field 22) of a live process, None once it is
    dead. A zombie thread-group leader whose other threads still run (SIGKILLed Chromium, or
    a pid-namespace init still tearing its namespace down) counts as alive."""
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes().decode(errors="replace")
        fields = data.rsplit(")", 1)[1].split()
        if fields[0] in ("Z", "X") and len(os.listdir(f"/proc/{pid}/task")) <= 1:
            return None
    except OSError:
        return None
    return fields[19]


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    return proc_starttime(pid) is not None


def reap(pid: int, timeout: float = 10.0) -> None:
    """Wait until ``pid`` is gone: ``waitpid`` when it is our child, else poll /proc."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                return
        except ChildProcessError:
            if not pid_alive(pid):
                return
        if time.monotonic() > deadline:
            raise TimeoutError(f"process {pid} did not exit within {timeout} s")
        time.sleep(0.005)


class _Janitor:
    """Client side of :mod:`adaroll.envs.web._janitor` (one per controller process)."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._pid_owner = 0
        self._lock = threading.Lock()

    def _send(self, line: str) -> None:
        with self._lock:
            if (
                self._proc is None
                or self._pid_owner != os.getpid()
                or self._proc.poll() is not None
            ):
                self._proc = subprocess.Popen(
                    [sys.executable, "-I", "-S", str(JANITOR_SCRIPT)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                    close_fds=True,
                )
                self._pid_owner = os.getpid()
            assert self._proc.stdin is not None
            try:
                self._proc.stdin.write(line.encode() + b"\n")
                self._proc.stdin.flush()
            except OSError:
                pass

    def register_pid(self, pid: int) -> None:
        start = proc_starttime(pid)
        if start is not None:
            self._send(f"pid {pid} {start}")

    def unregister_pid(self, pid: int) -> None:
        self._send(f"unpid {pid}")

    def register_dir(self, path: str) -> None:
        self._send(f"dir {path}")

    def unregister_dir(self, path: str) -> None:
        self._send(f"undir {path}")

    def stop(self) -> None:
        """Close the pipe (the janitor cleans up what is still registered) and reap it."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is not None and self._pid_owner == os.getpid():
            with contextlib.suppress(OSError):
                assert proc.stdin is not None
                proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)


JANITOR = _Janitor()
"""Crash-safety registry: ``register_pid``/``register_dir`` anything that must not outlive
this process; ``unregister_*`` once cleaned up normally."""
atexit.register(JANITOR.stop)  # runs after the browsers' finalizers (registered later)
