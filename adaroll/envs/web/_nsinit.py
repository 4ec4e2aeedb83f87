"""Namespace setup and init for an isolated browser (standard library only).

Invoked by :mod:`adaroll.envs.web.browser` (as root) as ``python -I -S _nsinit.py REPORT_FD
GO_FD STATE_DIR TMPFS_SIZE_MB -- CMD...``. With GO_FD ``-`` (a browser CRIU can dump, run as
root) it is already pid 1 of namespaces ``unshare --mount --propagation private --pid --net
--time --fork`` made and only does step 3, ``exec``ing Chromium itself. Otherwise it

1. creates a user namespace, reports ``map HOSTPID`` on REPORT_FD and waits for ``go`` on GO_FD
   while the launcher maps the namespace's root (uid/gid 0, the only ids in it) to the browser's
   unprivileged account on the host, then becomes that root: from here on every process of the
   browser is that account on the host, with capabilities only over its own namespaces;
2. creates mount (private propagation), pid, net and time namespaces owned by that user
   namespace and forks; the child is pid 1 of the pid namespace. The parent stays behind as the
   launcher's handle (as ``unshare --fork`` does) and exits with the child's status;
3. in the child: mounts a private tmpfs at STATE_DIR for all mutable browser state (``ud/``
   the profile, ``tmp/`` the TMPDIR, ``home/`` HOME) and a small one at ``/run``, brings ``lo``
   up, reports ``ok HOSTPID`` (its host pid: the process a CRIU dump targets), closes every
   inherited descriptor above 2, points stdio at /dev/null, starts a new session and ``exec``s
   CMD (``tini -- setpriv --bounding-set=-all ... chromium ...``: Chromium runs with no
   capabilities at all).

Why a user namespace rather than plain ``setuid``: CRIU's parasite in the dumped tree's init
must open a procfs of the tree's pid namespace (mounting one when /proc is the host's), and
criu reads every task's rlimits with ``prlimit``, which this machine class only allows across
uids with CAP_SYS_RESOURCE (it has none). Root of a user namespace owned by root may do both.

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
MS_REC = 0x4000
MS_PRIVATE = 0x40000
CLONE_NEWNS = 0x00020000
CLONE_NEWTIME = 0x00000080
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
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


def _enter_namespaces(go_fd: int) -> None:
    """Steps 1 and 2 up to the fork (see the module docstring)."""
    libc = _libc()
    _check(libc.unshare(CLONE_NEWUSER), "unshare(user)")
    _report(f"map {os.getpid()}")
    if os.read(go_fd, 16) != b"go":
        raise RuntimeError("the launcher did not map the user namespace")
    os.close(go_fd)
    os.setgroups([])
    os.setresgid(0, 0, 0)
    os.setresuid(0, 0, 0)
    _check(
        libc.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWTIME),
        "unshare(mount, pid, net, time)",
    )
    _check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "make / private")


def _wait_and_exit(child: int) -> None:
    """The parent's part: exit as the namespace init did."""
    os.closerange(0, os.sysconf("SC_OPEN_MAX") if os.sysconf("SC_OPEN_MAX") > 0 else 4096)
    while True:
        try:
            _, status = os.waitpid(child, 0)
        except InterruptedError:
            continue
        code = os.waitstatus_to_exitcode(status)
        os._exit(128 - code if code < 0 else code)


def main(argv: list[str]) -> int:
    global REPORT_FD
    try:
        report_fd, go_fd, state, size_mb, sep, *cmd = argv
        REPORT_FD = int(report_fd)
        if sep != "--" or not cmd:
            raise ValueError("usage: _nsinit.py REPORT_FD GO_FD STATE_DIR TMPFS_SIZE_MB -- CMD...")
        if go_fd != "-":
            _enter_namespaces(int(go_fd))
    except Exception as exc:  # noqa: BLE001 - reported to the launcher
        _report(f"error {type(exc).__name__}: {exc}")
        return 1
    if go_fd != "-" and (child := os.fork()):
        _wait_and_exit(child)
    try:
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
        os._exit(1)
    _report(f"ok {host_pid}")
    os.closerange(3, os.sysconf("SC_OPEN_MAX") if os.sysconf("SC_OPEN_MAX") > 0 else 4096)
    try:
        os.execve(cmd[0], cmd, env)
    except OSError:
        os._exit(127)
    return 0  # unreachable


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
