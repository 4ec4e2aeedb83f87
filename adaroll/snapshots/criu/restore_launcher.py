"""Starting ``criu restore`` in a branch's own namespaces without running a program per step.

Why: a branch needs a private mount namespace with a tmpfs and an overlay at the browser's
``state_dir``, criu's kernel-probe cache bound at ``/run``, and (external network namespace) a
fresh network namespace with ``lo`` up. Done with programs (``unshare``, ``sh``, three
``mount``, ``mkdir``, ``ip``, ``umount``) that costs about 16 ms of ``exec`` per restore, a sixth
of the whole restore. Here a *launcher* process, started once per backend, single-threaded and
small, does the same with system calls: it moves itself into the branch's new namespaces,
mounts, spawns criu there (``posix_spawn``, which does not copy the launcher), and moves back
to its own namespaces. Only a single-threaded process may switch mount namespaces, and the
controller has threads; forking the controller per restore would copy a large process.

The launcher half of this file runs as ``python -I -S restore_launcher.py CONTROL_FD``
(standard library only). Protocol over the ``SOCK_SEQPACKET`` control socket: each message is
a JSON :class:`Request` with one attached descriptor, the request's reply socket. On it the
launcher sends ``pid N`` (criu's process group: the caller kills it on timeout), then
``exit RC`` when criu has finished, or ``error MESSAGE`` when the namespaces could not be set
up. Restores run concurrently (the launcher waits on each criu's pidfd). The launcher exits
when the control socket closes (the controller is gone) and ignores SIGINT and SIGTERM (the
controller handles them and closes it).

A restore in flight when the controller dies (killed, or crashed) still finishes: criu runs in
a session of its own. Its branch would then belong to no one, so the launcher, when the exit
status cannot be delivered, kills the restored tree named by the request's pidfile; when the
control socket closes it first waits for the restores in flight (killing them after
:data:`DRAIN_S`).

Branches die with their controller: the launcher is their parent-death signal. Before it reports
a restore's success it opens a pidfd on the restored tree's root (the branch's pid-namespace
init, whose death ends the namespace, its mounts and its tmpfs) and keeps it until that process
exits; when the control socket closes - the controller exited, crashed or was SIGKILLed - it
SIGKILLs every branch still alive. A restore that finishes after that is killed by the network
namespace the launcher made for it (every process in it is the branch's): its pidfile may be
gone, removed with the backend's directory by the crash janitor. (A real ``PR_SET_PDEATHSIG`` cannot be given to a restored
tree: only a process can set its own, and criu's ``restore -d`` parent exits at once.) The
launcher runs in a session of its own, so a signal to the controller's process group does not
stop it first.

The restored tree is re-parented to the controller, not to the launcher: the controller is a
child subreaper while it starts the launcher and while any restore runs, so the launcher and
criu carry the kernel's "has a subreaper ancestor" mark and an orphan walks up to it.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import types
from dataclasses import asdict, dataclass

CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MNT_DETACH = 0x2
ACCOUNT_KDAT_DIR = "/run/account"
"""$XDG_RUNTIME_DIR of criu run as a browser's account (``--unprivileged`` keeps its kernel-probe
cache there): a directory of the backend's cache, which is bound at ``/run`` while criu runs."""
NETNS_FD = 3
"""The descriptor criu inherits the branch's network namespace on (``--inherit-fd fd[3]:...``)."""
_MAX_MESSAGE = 1 << 16
DRAIN_S = 60.0
"""How long a launcher whose controller is gone waits for the restores in flight before it kills
them (the controller's own timeout no longer applies)."""


@dataclass(frozen=True)
class Request:
    """One restore: the mounts of its namespace and the criu command line."""

    state_dir: str
    """Mount point of the branch's tmpfs and overlay (the browser's ``state_dir``)."""
    lower: str
    """The overlay's lower layer: the state copied at dump time."""
    tmpfs_mb: int
    """Size of the branch's tmpfs (the overlay's upper layer)."""
    kdat_dir: str
    """Directory bound at ``/run`` while criu runs (its kernel-probe cache); "" for none."""
    new_netns: bool
    """Give the branch a fresh network namespace with ``lo`` up, on descriptor 3."""
    argv: tuple[str, ...]
    """The criu command line."""
    output: str
    """File that receives criu's stdout and stderr."""
    pidfile: str = ""
    """criu's ``--pidfile``: the restored tree's root, killed when no controller takes it."""


class LauncherError(RuntimeError):
    """The launcher could not start criu (the namespaces, its output file) or died."""


# -- the launcher (runs in its own process; standard library only) ------------------------------

_libc = ctypes.CDLL(None, use_errno=True)


def _sys(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(
    source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None
) -> None:
    def raw(text: str | None) -> bytes | None:
        return None if text is None else text.encode()

    _sys(
        _libc.mount(raw(source), raw(target), raw(fstype), flags, raw(data)),
        f"mount {fstype or 'bind'} at {target}",
    )


def _nsinit() -> types.ModuleType:
    """The isolated browser's namespace init (standard library only), loaded from its file:
    this one runs as a script with ``-I``, where the ``adaroll`` package is not importable."""
    path = os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "envs", "web", "_nsinit.py"
    )
    spec = importlib.util.spec_from_file_location("adaroll_nsinit", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_loopback_up = _nsinit()._loopback_up


def _say(reply: socket.socket, text: str) -> bool:
    """Whether the controller got ``text`` (it may have given up on this restore, or died)."""
    try:
        reply.send(text.encode())
    except OSError:
        return False
    return True


def _watch_branch(pidfile: str) -> int | None:
    """A pidfd on the restored tree's root named by ``pidfile`` (None when it is already gone).
    Opened before the controller hears of the branch, so the pid cannot have been reused."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open(pidfile) as f:
            return os.pidfd_open(int(f.read().split()[0]))
    return None


def _kill_network(inode: int) -> None:
    """SIGKILL every process in the network namespace ``inode`` (a branch's: criu restored
    its whole tree into it); nothing for 0."""
    if not inode:
        return
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            if os.stat(f"/proc/{entry}/ns/net").st_ino == inode:
                os.kill(int(entry), signal.SIGKILL)


def _kill_branch(pidfd: int) -> None:
    """SIGKILL the branch root behind ``pidfd`` (its pid namespace ends with it); close it."""
    with contextlib.suppress(OSError):
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    os.close(pidfd)


@dataclass
class _Running:
    """A criu the launcher started and has not yet seen exit."""

    reply: socket.socket
    pidfd: int
    branch_mnt: int
    """The branch's mount namespace (to take the cache at /run away once criu is done)."""
    unmount_cache: bool
    pidfile: str
    net_inode: int = 0
    """The branch's network namespace (0: criu makes its own): every process in it is the
    branch's, which finds the branch when its pidfile is gone (the janitor removed it)."""


class _Launcher:
    """Sets up each branch's namespaces *in this process*, spawns criu into them (vfork-style
    ``posix_spawn``: no copy of this process), and goes back to its own namespaces."""

    def __init__(self) -> None:
        self.own_mnt = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
        self.own_net = os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        self.devnull = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        self.running: dict[int, _Running] = {}
        self.branches: set[int] = set()
        """pidfds of the restored trees still alive: killed when the controller is gone."""

    def start(self, req: Request, reply: socket.socket) -> None:
        try:
            pid, branch_mnt, net_inode = self._spawn(req)
        except Exception as exc:  # noqa: BLE001 - reported to the controller
            _say(reply, f"error {type(exc).__name__}: {exc}")
            reply.close()
            return
        finally:
            self._return_home()
        self.running[pid] = _Running(
            reply, os.pidfd_open(pid), branch_mnt, bool(req.kdat_dir), req.pidfile, net_inode
        )
        _say(reply, f"pid {pid}")

    def _spawn(self, req: Request) -> tuple[int, int, int]:
        """criu started in the branch's new namespaces, the branch's mount namespace and its
        network namespace's inode (0 when criu makes it)."""
        netns = self._enter_branch_namespaces(req)
        net_inode = os.fstat(netns).st_ino if netns is not None else 0
        out = branch_mnt = -1
        try:
            branch_mnt = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
            out = os.open(req.output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            actions = [
                (os.POSIX_SPAWN_DUP2, self.devnull, 0),
                (os.POSIX_SPAWN_DUP2, out, 1),
                (os.POSIX_SPAWN_DUP2, out, 2),
            ]
            if netns is not None:
                actions.append((os.POSIX_SPAWN_DUP2, netns, NETNS_FD))
            # its own session and process group: the controller kills the group on timeout
            pid = os.posix_spawn(
                req.argv[0],
                list(req.argv),
                os.environ,
                file_actions=actions,
                setsid=True,
                setsigdef=(signal.SIGINT, signal.SIGTERM, signal.SIGCHLD),
            )
        except BaseException:
            if branch_mnt >= 0:
                os.close(branch_mnt)
            raise
        finally:
            for fd in (out, -1 if netns is None else netns):
                if fd >= 0:
                    os.close(fd)
        return pid, branch_mnt, net_inode

    def finish(self, pid: int) -> None:
        run = self.running.pop(pid)
        _, status = os.waitpid(pid, 0)
        os.close(run.pidfd)
        code = os.waitstatus_to_exitcode(status)
        branch = _watch_branch(run.pidfile) if code == 0 and run.pidfile else None
        if branch is not None:
            self.branches.add(branch)
        if not _say(run.reply, f"exit {code}"):  # no controller takes it
            if branch is not None:
                self.branches.discard(branch)
                _kill_branch(branch)
            _kill_network(run.net_inode)  # the pidfile may be gone with its directory
        run.reply.close()
        if run.unmount_cache:  # the branch keeps running in that namespace (after the reply:
            # an unmount waits for an RCU grace period, the branch need not)
            _sys(_libc.setns(run.branch_mnt, CLONE_NEWNS), "setns to the branch")
            _libc.umount2(b"/run", MNT_DETACH)
            self._return_home()
        os.close(run.branch_mnt)

    def drain(self) -> None:
        """Wait for the restores in flight (their controller is gone), killing what is left
        after :data:`DRAIN_S`; each one's branch is killed by :meth:`finish`."""
        deadline = time.monotonic() + DRAIN_S
        while self.running:
            by_pidfd = {run.pidfd: pid for pid, run in self.running.items()}
            left = deadline - time.monotonic()
            if left <= 0:
                for pid in by_pidfd.values():
                    with contextlib.suppress(OSError):
                        os.killpg(pid, signal.SIGKILL)
            ready, _, _ = select.select(list(by_pidfd), [], [], max(left, 0.0) + 1.0)
            for fd in ready:
                self.finish(by_pidfd[fd])

    def forget(self, pidfd: int) -> None:
        """The branch behind ``pidfd`` exited (closed by its controller, or crashed)."""
        self.branches.discard(pidfd)
        os.close(pidfd)

    def kill_branches(self) -> None:
        """The controller is gone: SIGKILL every branch it restored that is still alive."""
        for pidfd in sorted(self.branches):
            _kill_branch(pidfd)
        self.branches.clear()

    def _enter_branch_namespaces(self, req: Request) -> int | None:
        """Move this process into the branch's new namespaces and set them up; the network
        namespace's descriptor (criu's descriptor 3) when it is new."""
        _sys(_libc.unshare(CLONE_NEWNS | (CLONE_NEWNET if req.new_netns else 0)), "unshare")
        _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing mounted here leaks to the host
        state = req.state_dir
        _mount("adaroll-branch", state, "tmpfs", 0, f"mode=0700,size={req.tmpfs_mb}m")
        os.mkdir(f"{state}/.upper")
        os.mkdir(f"{state}/.work")
        # the overlay's root takes the upper directory's owner and mode: the browser's, as the
        # saved state has them (an unprivileged browser could not use a root-owned state_dir)
        with contextlib.suppress(FileNotFoundError):  # (a missing lower fails the mount below)
            lower = os.stat(req.lower)
            os.chown(f"{state}/.upper", lower.st_uid, lower.st_gid)
            os.chmod(f"{state}/.upper", lower.st_mode & 0o7777)
        _mount(
            "adaroll-branch",
            state,
            "overlay",
            0,
            f"lowerdir={req.lower},upperdir={state}/.upper,workdir={state}/.work",
        )
        netns = None
        if req.new_netns:
            _loopback_up()
            netns = os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        if req.kdat_dir:
            _mount(req.kdat_dir, "/run", None, MS_BIND)
        return netns

    def _return_home(self) -> None:
        _sys(_libc.setns(self.own_mnt, CLONE_NEWNS), "setns back to the launcher's mounts")
        _sys(_libc.setns(self.own_net, CLONE_NEWNET), "setns back to the launcher's network")


def serve(control_fd: int) -> int:
    # the controller handles Ctrl-C and SIGTERM and closes us: a signal to its whole process
    # group must not stop us before we have killed the branches it can no longer take
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    control = socket.socket(fileno=control_fd)
    control.set_inheritable(False)
    launcher = _Launcher()
    control.send(b"ready")
    while True:
        by_pidfd = {run.pidfd: pid for pid, run in launcher.running.items()}
        branches = list(launcher.branches)
        ready, _, _ = select.select([control.fileno(), *by_pidfd, *branches], [], [])
        for fd in ready:
            if fd in by_pidfd:
                launcher.finish(by_pidfd[fd])
            elif fd in branches:
                launcher.forget(fd)
        if control.fileno() not in ready:
            continue
        try:
            message, fds, _, _ = socket.recv_fds(control, _MAX_MESSAGE, 1)
        except OSError:
            message, fds = b"", []
        if not message:  # the controller closed the socket, or died: its branches die too
            launcher.drain()
            launcher.kill_branches()
            return 0
        if len(fds) != 1:
            for fd in fds:
                os.close(fd)
            continue
        reply = socket.socket(fileno=fds[0])
        reply.set_inheritable(False)
        try:
            data = json.loads(message)
            req = Request(**{**data, "argv": tuple(data["argv"])})
        except (ValueError, TypeError, KeyError) as exc:
            _say(reply, f"error bad request: {exc}")
            reply.close()
            continue
        launcher.start(req, reply)


# -- the controller's side ---------------------------------------------------------------------


class RestoreLauncher:
    """The controller's handle on one launcher process (started on first use, restarted if it
    died). Thread-safe: concurrent :meth:`run` calls restore concurrently."""

    def __init__(self, stderr_path: str) -> None:
        self._stderr_path = stderr_path
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None

    def run(self, req: Request, timeout: float) -> int:
        """Restore per ``req``; criu's exit status. Raises :class:`LauncherError` when the
        namespaces could not be set up or the launcher died, :class:`subprocess.TimeoutExpired`
        after killing the child's process group (criu included) on timeout."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with ours:
            try:
                self._send(json.dumps(asdict(req)).encode(), theirs.fileno())
            finally:
                theirs.close()
            ours.settimeout(timeout)
            child = 0
            try:
                while True:
                    reply = ours.recv(_MAX_MESSAGE).decode()
                    kind, _, value = reply.partition(" ")
                    if kind == "pid":
                        child = int(value)
                    elif kind == "exit":
                        return int(value)
                    elif kind == "error":
                        raise LauncherError(f"setting up the branch's namespaces: {value}")
                    else:
                        raise LauncherError(
                            "the restore launcher's child ended without a "
                            f"result ({reply!r}); see {self._stderr_path}"
                        )
            except TimeoutError:
                if child:
                    with contextlib.suppress(OSError):
                        os.killpg(child, signal.SIGKILL)
                raise subprocess.TimeoutExpired(list(req.argv), timeout) from None

    def close(self) -> None:
        with self._lock:
            if self._control is not None:
                self._control.close()  # the launcher exits on end of file
                self._control = None
            if self._proc is not None:
                try:
                    self._proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
                self._proc = None

    def _send(self, message: bytes, reply_fd: int) -> None:
        with self._lock:
            for attempt in (1, 2):  # a launcher that died is started again once
                if self._control is None or self._proc is None or self._proc.poll() is not None:
                    self._start()
                assert self._control is not None
                try:
                    socket.send_fds(self._control, [message], [reply_fd])
                    return
                except OSError as exc:
                    self._control.close()
                    self._control = None
                    if attempt == 2:
                        raise LauncherError(
                            f"the restore launcher does not take requests: "
                            f"{exc}; see {self._stderr_path}"
                        ) from exc

    def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with open(self._stderr_path, "ab") as err, theirs:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", os.path.abspath(__file__), str(theirs.fileno())],
                env=dict(os.environ, XDG_RUNTIME_DIR=ACCOUNT_KDAT_DIR),  # criu's environment
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,  # outlives a kill of the controller's process group
            )
        ours.settimeout(30)
        try:
            ready = ours.recv(16)
        except TimeoutError:
            ready = b""
        if ready != b"ready":
            ours.close()
            self._proc.kill()
            self._proc.wait()
            raise LauncherError(f"the restore launcher did not start; see {self._stderr_path}")
        ours.settimeout(None)
        self._control = ours


if __name__ == "__main__":
    sys.exit(serve(int(sys.argv[1])))
