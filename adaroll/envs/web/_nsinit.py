"""Namespace init for an isolated browser (run by ``unshare``, standard library only).

Invoked as ``python -I -S _nsinit.py REPORT_FD STATE_DIR TMPFS_SIZE_MB -- CMD...`` as pid 1
of fresh pid/mount/net/time namespaces (``unshare --mount --propagation private --pid --net
--time --fork``). It mounts a private tmpfs at STATE_DIR for all mutable browser state (``ud/``
the profile, ``tmp/`` the TMPDIR, ``home/`` HOME) and a small one at ``/run``, brings ``lo`` up, reports its host pid on
REPORT_FD, closes every inherited descriptor above 2, points stdio at /dev/null, starts a new
session and ``exec``s CMD - so the browser itself is the namespace init, the process a CRIU dump targets.

Failures are written to REPORT_FD as ``error <message>`` before exiting with status 1.
"""

import ctypes
import fcntl
import os
import socket
import struct
import sys

MS_NOSUID = 0x2
MS_NODEV = 0x4
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
REPORT_FD = -1


def _report(text: str) -> None:
    if REPORT_FD < 0:
        return
    try:
        os.write(REPORT_FD, text.encode() + b"\n")
    except OSError:
        pass


def _mount_tmpfs(path: str, size_mb: int, mode: str = "0700") -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    opts = f"mode={mode},size={size_mb}m".encode()
    if libc.mount(b"tmpfs", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, opts) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount tmpfs at {path}: {os.strerror(err)}")


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifreq = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH", fcntl.ioctl(s, SIOCGIFFLAGS, ifreq)[:18])[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))


def main(argv: list[str]) -> int:
    global REPORT_FD
    try:
        report_fd, state, size_mb, sep, *cmd = argv
        REPORT_FD = int(report_fd)
        if sep != "--" or not cmd:
            raise ValueError("usage: _nsinit.py REPORT_FD STATE_DIR TMPFS_SIZE_MB -- CMD...")
        _mount_tmpfs(state, int(size_mb))
        # a private /run: the host's is not needed (headless, no D-Bus) and CRIU keeps its
        # kernel-probe cache /run/criu.kdat only on a tmpfs (faster dumps)
        _mount_tmpfs("/run", 1, mode="0755")
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": f"{state}/home",
            "TMPDIR": f"{state}/tmp",
            "XDG_CONFIG_HOME": f"{state}/home/.config",
            "XDG_CACHE_HOME": f"{state}/home/.cache",
            "LANG": "C.UTF-8",
            "TZ": "UTC",
        }
        for sub in ("ud", "tmp", "home"):
            os.mkdir(f"{state}/{sub}", 0o700)
        _loopback_up()
        host_pid = int(os.readlink("/proc/self"))  # /proc is still the host's procfs
        os.setsid()
        devnull = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.close(devnull)
    except Exception as exc:  # noqa: BLE001 - reported to the launcher
        _report(f"error {type(exc).__name__}: {exc}")
        return 1
    _report(f"ok {host_pid}")
    os.closerange(3, os.sysconf("SC_OPEN_MAX") if os.sysconf("SC_OPEN_MAX") > 0 else 4096)
    try:
        os.execve(cmd[0], cmd, env)
    except OSError:
        return 127
    return 0  # unreachable


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
