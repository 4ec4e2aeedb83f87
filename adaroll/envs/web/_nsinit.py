"""Namespace setup and init for an isolated browser (standard library only).

Invoked by :mod:`adaroll.envs.web.browser` (as root) as ``python -I -S _nsinit.py REPORT_FD
OWNER STATE_DIR TMPFS_SIZE_MB -- CMD...``, already pid 1 of namespaces ``unshare --mount
--propagation private --pid --net --time --fork`` made. It mounts a private tmpfs at STATE_DIR
for all mutable browser state (``ud/`` the profile, ``tmp/`` the TMPDIR, ``home/`` HOME), owned
by OWNER (``UID:GID``, the browser's account; ``-``: root), and a small one at ``/run``, brings
``lo`` up, makes STATE_DIR its working directory, reports ``ok HOSTPID`` on REPORT_FD (its host
pid: the process a CRIU dump targets), closes every inherited descriptor above 2, points stdio
at /dev/null, starts a new session and ``exec``s CMD.

For an unprivileged browser CMD drops to the account itself (``setpriv --reuid --regid
--clear-groups`` keeping only CAP_SYS_ADMIN, then ``tini``, whose child ``setpriv
--no-new-privs`` drops every capability and ``exec``s Chromium; see
:func:`adaroll.envs.web.browser.unprivileged_command`): every process of the namespace is the
account on the host, and CRIU (run as that account too) can dump and restore it. Why the
working directory matters: CRIU's parasite in the dumped tree's init mounts a procfs of the
tree's pid namespace there during a dump (the mount namespace shows the host's ``/proc``).

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


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount_tmpfs(path: str, size_mb: int, mode: str = "0700") -> None:
    opts = f"mode={mode},size={size_mb}m".encode()
    _check(
        _libc().mount(b"tmpfs", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, opts),
        f"mount tmpfs at {path}",
    )


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifreq = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH", fcntl.ioctl(s, SIOCGIFFLAGS, ifreq)[:18])[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))


def _owner(text: str) -> tuple[int, int] | None:
    if text == "-":
        return None
    uid, _, gid = text.partition(":")
    return int(uid), int(gid)


def main(argv: list[str]) -> int:
    global REPORT_FD
    try:
        report_fd, owner_text, state, size_mb, sep, *cmd = argv
        REPORT_FD = int(report_fd)
        if sep != "--" or not cmd:
            raise ValueError("usage: _nsinit.py REPORT_FD OWNER STATE_DIR TMPFS_SIZE_MB -- CMD...")
        owner = _owner(owner_text)
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
        for sub in ("", "/ud", "/tmp", "/home"):
            if sub:
                os.mkdir(f"{state}{sub}", 0o700)
            if owner is not None:
                os.chown(f"{state}{sub}", *owner)
        _loopback_up()
        # a working directory of its own: CRIU's parasite mounts a procfs there during a dump
        os.chdir(state)
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
        os._exit(127)
    return 0  # unreachable


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
