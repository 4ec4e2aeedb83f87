"""Fork-server snapshots: exact, cheap branches for *any* Python env, without CRIU (issue 9.7).

An env that cannot copy its own state (any Gymnasium-style env) is run in a worker process and
driven over a pipe; its state is then captured by the kernel, copy-on-write, with ``os.fork``:

* **save** forks the worker that holds the live episode into a *zygote*: a process that keeps
  the exact state (Python heap, RNG, open files) and blocks on its own control pipe;
* **restore** asks the zygote to fork once more; the new child is a branch that continues the
  episode, driven through a :class:`ForkServerEnv` proxy (a full :class:`GUIEnv`);
* **release** kills the zygote (branches already restored keep running); **close** kills
  everything.

Process tree (one per backend)::

    main (trainer) ── server ──┬── worker (env from the factory) ── zygote ── branch, branch, ...
                               └── worker ── zygote ── branch ── zygote ── branch ...

The *server* is forked from the main process on first use and never runs an env. Every other
process is forked on a command from the main process: ``spawn`` (server -> a new worker that
builds an env with the factory) and ``fork`` (worker/zygote/branch -> an exact copy). With each
such command the main process sends the child's end of a fresh socketpair (``SCM_RIGHTS``), so
it talks to every process directly, and each child closes the control pipe of its parent.
Every process runs the same command loop over its own pipe: ``reset``/``step``/``observe``/
``replay``/``meta``/``fork``/``exit``; Actions, Observations and exceptions travel pickled.

Two ways in:

* ``backend.make_env()`` returns a proxy over a fresh worker. Rollouts that run their env this
  way save with no replay at all: ``save`` forks the worker itself.
* ``save(env, prefix)`` with a normal in-process env (what ``env.snapshot_backend: forkserver``
  gives the pipeline): a worker replays ``prefix`` once, at save time, and the zygote is forked
  from it; the cost is counted in :attr:`ForkServerSnapshots.replayed_steps_on_save`. The replayed
  state is checked against the live env's element-tree hash (a nondeterministic env fails with
  :class:`SnapshotError` instead of yielding wrong branches). Restores never replay.

The env factory: ``env_factory`` (a callable or an import path ``"pkg.module:attr"``), else
``env_name`` + ``env_options`` (resolved with :func:`adaroll.envs.make_env_factory` in the
worker), else ``make_env`` (the callable every backend receives from the pipeline). Because
processes are forked, not spawned, closures work and nothing needs to pickle but commands.

Fork safety (read before using it with your env):

* Only the forking thread survives a fork. An env that runs threads cannot be frozen: ``fork``
  refuses (``SnapshotError``) when the worker has more than one thread. Envs must not start
  threads in the worker.
* The server is forked from the main process, which may hold threads (Ray, torch intra-op
  pools, pytest plugins): the server and its descendants must not use locks or pools another
  thread could have held. Concretely, **torch must not be used in the worker** (it is inherited
  if the main process imported it - as pytest with ``tests/fakes.py`` does - but never
  called; an OpenMP pool does not survive a fork). Create the backend early, before threads
  start, where possible: the server is forked at the first ``make_env``/``save``.
* PR_SET_PDEATHSIG fires when the *thread* that forked the server exits; create the backend
  from a long-lived thread (normally the main thread).
* Every process of the tree ignores SIGCHLD, so the kernel reaps exited children at once (no
  zombies). An env that ``wait``\\s for its own subprocesses gets ``ECHILD``
  (``subprocess`` treats that as exit code 0).

Cleanup and crash safety: the server is a child subreaper, so branches orphaned by a released
zygote (or dead worker) are re-parented to it and reaped. The tree lives in its own process
group (also: terminal Ctrl-C does not reach it). If the main process dies, the server gets
SIGTERM (``PR_SET_PDEATHSIG``, checked against a main process that died before it was set) and
SIGKILLs the whole group, every branch with it (tests/test_fault_injection.py kills a trainer
while it restores branches); and every other process exits on
EOF of its control pipe (the watchdog for a branch busy in ``step``: it exits at its next read).
A branch that dies (crash, OOM kill) turns every later call on its proxy into a
:class:`SnapshotError` naming the pid.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import signal
import socket
import threading
import time
import traceback
import weakref
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.reduction import recv_handle, send_handle
from typing import Any

from adaroll.actions import Action
from adaroll.envs.base import GUIEnv, Observation, TaskSpec, replay
from adaroll.snapshots.base import (
    SNAPSHOT_BACKENDS,
    SnapshotBackend,
    SnapshotError,
    SnapshotRef,
    new_snapshot_id,
)

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36

_MAIN_SIDE: weakref.WeakSet[Connection] = weakref.WeakSet()
"""Main-process ends of every control pipe in this process, closed in a freshly forked server
(so a server never keeps another tree's pipe open, which would defeat its EOF watchdog)."""


def _prctl(option: int, arg: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, arg, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def resolve_factory(spec: str | Callable[..., GUIEnv]) -> Callable[..., GUIEnv]:
    """A callable, or ``"package.module:attr"`` imported and returned."""
    if callable(spec):
        return spec
    module, sep, attr = str(spec).partition(":")
    if not sep:
        raise ValueError(f"env factory {spec!r}: expected 'package.module:attr'")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- child side


def _meta(env: GUIEnv) -> dict[str, Any]:
    """Episode bookkeeping sent with every reply, cached by the proxy (no extra round trips)."""
    out: dict[str, Any] = {"name": env.name}
    for key in ("task", "instruction", "max_steps", "steps_taken"):
        try:
            out[key] = getattr(env, key)
        except Exception:  # before the first reset some envs have no episode
            out[key] = None
    return out


def _fork_child(
    parent_conn: Connection | None, child_fd: int, body: Callable[[Connection], None]
) -> int:
    """Fork; the child closes its parent's pipe, runs ``body`` over ``child_fd`` and never
    returns into the caller's code (``os._exit``)."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            if parent_conn is not None:
                parent_conn.close()
            body(Connection(child_fd))
        except BaseException:
            code = 1
            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(child_fd)
    return pid


def _serve_env(env: GUIEnv, conn: Connection) -> None:
    """The command loop of a worker, zygote or branch. Returns on ``exit`` or EOF."""
    while True:
        try:
            cmd, *args = conn.recv()
        except (EOFError, OSError):  # main process gone: the pipe-EOF watchdog
            return
        if cmd == "exit":
            return
        try:
            if cmd == "fork":
                fd = recv_handle(conn)
                if threading.active_count() > 1:
                    os.close(fd)
                    raise SnapshotError(
                        f"cannot fork env {type(env).__name__}: its process runs "
                        f"{threading.active_count()} threads (threads do not survive fork)"
                    )
                result: Any = _fork_child(conn, fd, lambda c: _serve_env(env, c))
            elif cmd == "reset":
                result = env.reset(seed=args[0], options=args[1])
            elif cmd == "step":
                result = env.step(args[0])
            elif cmd == "observe":
                result = env.observe()
            elif cmd == "replay":
                result = replay(env, args[0], args[1])
            elif cmd == "meta":
                result = None
            elif cmd == "close":
                env.close()
                result = None
            else:
                raise ValueError(f"unknown fork-server command {cmd!r}")
            reply: tuple[Any, ...] = ("ok", result, _meta(env))
        except Exception as exc:
            reply = ("err", exc, traceback.format_exc())
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
        except Exception:  # an unpicklable result or exception
            conn.send(("err", SnapshotError(f"{cmd}: reply not picklable: {reply[1]!r}"), ""))


def _serve_worker(factory: Callable[[], GUIEnv], conn: Connection) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the server's group-kill handler is not ours
    try:
        env = factory()
    except Exception as exc:
        conn.send(("err", exc, traceback.format_exc()))
        return
    conn.send(("ok", os.getpid(), _meta(env)))
    _serve_env(env, conn)


def _serve_server(factory: Callable[[], GUIEnv], conn: Connection, parent: int) -> None:
    """The fork server: spawns workers, reaps every orphan of the tree, dies with the main
    process ``parent`` (PDEATHSIG) taking the whole process group with it."""
    for other in list(_MAIN_SIDE):
        other.close()
    os.setpgid(0, 0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps exited children
    signal.signal(signal.SIGTERM, lambda *_: os.killpg(0, signal.SIGKILL))
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the main process died before the signal was armed
        os.killpg(0, signal.SIGKILL)
    conn.send(("ok", os.getpid(), {}))
    while True:
        try:
            cmd, *args = conn.recv()
        except (EOFError, OSError):
            os.killpg(0, signal.SIGKILL)
        if cmd == "spawn":
            fd = recv_handle(conn)
            conn.send(("ok", _fork_child(conn, fd, lambda c: _serve_worker(factory, c)), {}))
        elif cmd == "shutdown":  # the main process killed every pid it knows; wait for them
            signal.alarm(int(args[0]) + 1)
            try:
                while True:
                    os.waitpid(-1, 0)
            except ChildProcessError:
                pass
            conn.send(("ok", None, {}))
            return


# --------------------------------------------------------------------------- main side


class _Process:
    """The main process's handle on one process of the tree."""

    def __init__(self, conn: Connection, pid: int, role: str, timeout_s: float | None) -> None:
        self.conn, self.pid, self.role, self.timeout_s = conn, pid, role, timeout_s
        self.dead = False
        # one command at a time: two threads restoring from one zygote would interleave their
        # messages and handles on its pipe and read each other's replies (a deadlock)
        self._lock = threading.Lock()
        _MAIN_SIDE.add(conn)

    def call(self, cmd: str, *args: Any, handle: int | None = None) -> tuple[Any, dict[str, Any]]:
        with self._lock:
            return self._call_locked(cmd, *args, handle=handle)

    def _call_locked(
        self, cmd: str, *args: Any, handle: int | None = None
    ) -> tuple[Any, dict[str, Any]]:
        if self.dead:
            raise SnapshotError(f"fork-server {self.role} (pid {self.pid}) is closed or dead")
        try:
            self.conn.send((cmd, *args))
            if handle is not None:
                send_handle(self.conn, handle, self.pid)
            if self.timeout_s is not None and not self.conn.poll(self.timeout_s):
                self.kill()
                raise SnapshotError(
                    f"fork-server {self.role} (pid {self.pid}) did not answer "
                    f"{cmd!r} within {self.timeout_s} s; killed"
                )
            status, result, meta = self.conn.recv()
        except (EOFError, OSError) as exc:
            self.dead = True
            self.conn.close()
            raise SnapshotError(
                f"fork-server {self.role} (pid {self.pid}) died during {cmd!r}: "
                f"{type(exc).__name__}: {exc or 'connection closed'}"
            ) from None
        if status == "err":
            if isinstance(result, Exception):
                raise result
            raise SnapshotError(f"{self.role} {cmd!r} failed: {result!r}\n{meta}")
        return result, meta

    def fork(self, role: str, cmd: str = "fork") -> tuple[_Process, dict[str, Any]]:
        ours, theirs = socket.socketpair()
        try:
            pid, meta = self.call(cmd, handle=theirs.fileno())
        finally:
            theirs.close()
        child = _Process(Connection(ours.detach()), int(pid), role, self.timeout_s)
        if cmd == "spawn":  # the worker answers once its env is built
            _, meta = child.call_ready()
        return child, meta

    def call_ready(self) -> tuple[Any, dict[str, Any]]:
        try:
            status, result, meta = self.conn.recv()
        except (EOFError, OSError):
            self.dead = True
            raise SnapshotError(f"fork-server {self.role} (pid {self.pid}) died at start") from None
        if status == "err":
            self.kill()
            raise SnapshotError(
                f"building the env in the fork-server worker failed: {result!r}"
            ) from (result if isinstance(result, BaseException) else None)
        return result, meta

    def exit(self) -> None:
        """Ask the process to exit (its parent or the server reaps it)."""
        if not self.dead:
            self.dead = True
            try:
                self.conn.send(("exit",))
            except OSError:
                pass
            self.conn.close()

    def kill(self) -> None:
        if not self.conn.closed:
            self.conn.close()
        if not self.dead:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.dead = True


class ForkServerEnv(GUIEnv):
    """A :class:`GUIEnv` proxy over an env living in a fork-server process (worker or branch)."""

    def __init__(
        self, backend: ForkServerSnapshots, process: _Process, meta: dict[str, Any]
    ) -> None:
        self._backend, self._process, self._meta = backend, process, meta
        self.name = str(meta.get("name") or "")

    @property
    def pid(self) -> int:
        """The pid of the process holding this env (for tests and diagnostics)."""
        return self._process.pid

    def _call(self, cmd: str, *args: Any) -> Any:
        result, self._meta = self._process.call(cmd, *args)
        return result

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        return self._call("reset", seed, options)

    def step(self, action: Action) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        return self._call("step", action)  # type: ignore[no-any-return]

    def observe(self) -> Observation:
        return self._call("observe")  # type: ignore[no-any-return]

    def _get(self, key: str) -> Any:
        if self._process.dead:
            raise SnapshotError(f"fork-server env (pid {self.pid}) is closed or dead")
        value = self._meta.get(key)
        if value is None:
            raise RuntimeError(f"env has no {key} before reset")
        return value

    @property
    def task(self) -> TaskSpec:
        return self._get("task")  # type: ignore[no-any-return]

    @property
    def instruction(self) -> str:
        return self._get("instruction")  # type: ignore[no-any-return]

    @property
    def max_steps(self) -> int:
        return self._get("max_steps")  # type: ignore[no-any-return]

    @property
    def steps_taken(self) -> int:
        return self._get("steps_taken")  # type: ignore[no-any-return]

    def close(self) -> None:
        """Ends the process (the env's own ``close`` runs first); idempotent."""
        if not self._process.dead:
            try:
                self._process.call("close")
            except Exception:
                pass
            self._process.exit()
        self._backend._forget(self._process)


@SNAPSHOT_BACKENDS.register("forkserver")
class ForkServerSnapshots(SnapshotBackend):
    """Zygote snapshots of envs running in forked worker processes (see module docstring)."""

    name = "forkserver"
    replays_prefix = False  # restores never replay; saves of in-process envs do, counted below

    def __init__(
        self,
        make_env: Callable[[], GUIEnv] | None = None,
        *,
        env_factory: str | Callable[[], GUIEnv] | None = None,
        env_name: str | None = None,
        env_options: dict[str, Any] | None = None,
        call_timeout_s: float | None = None,
        verify_save: bool = True,
        **_: Any,
    ) -> None:
        """``env_factory`` > ``env_name`` (+ ``env_options``) > ``make_env`` picks the env
        builder run in each worker. ``call_timeout_s``: a process that does not answer a command
        in time is killed (``None``: wait forever). ``verify_save``: compare the replayed
        state's element-tree hash with the in-process env's at save time."""
        if env_factory is not None:
            factory: Callable[[], GUIEnv] = resolve_factory(env_factory)
            if env_options:
                factory = _bind(factory, env_options)
        elif env_name is not None:
            from adaroll.envs import make_env_factory

            factory = _named_factory(env_name, dict(env_options or {}))
            make_env_factory(
                env_name, **(env_options or {})
            )  # unknown name: fail here, listing names
        elif make_env is not None:
            factory = make_env
        else:
            raise ValueError("forkserver snapshots need env_factory, env_name or make_env")
        self._factory = factory
        self._timeout = call_timeout_s
        self._verify = verify_save
        self._server: _Process | None = None
        self._replayer: _Process | None = None
        self._zygotes: dict[str, _Process] = {}
        self._live: dict[int, _Process] = {}  # workers and branches handed out as proxies
        self.replayed_steps_on_save = 0
        """Env steps replayed to rebuild in-process envs' states in a worker at save time."""
        self.saves = self.restores = 0

    # -- processes

    def _server_process(self) -> _Process:
        if self._server is None or self._server.dead:
            ours, theirs = socket.socketpair()
            factory, parent = self._factory, os.getpid()

            def body(conn: Connection) -> None:
                ours.close()
                _serve_server(factory, conn, parent)

            pid = _fork_child(None, theirs.detach(), body)
            self._server = _Process(Connection(ours.detach()), pid, "server", self._timeout)
            self._server.call_ready()
        return self._server

    def _spawn(self) -> tuple[_Process, dict[str, Any]]:
        return self._server_process().fork("worker", cmd="spawn")

    def make_env(self) -> ForkServerEnv:
        """A fresh env in its own worker process; ``save`` on it forks it (no replay)."""
        proc, meta = self._spawn()
        self._live[proc.pid] = proc
        return ForkServerEnv(self, proc, meta)

    def _forget(self, proc: _Process) -> None:
        self._live.pop(proc.pid, None)

    def pids(self) -> list[int]:
        """Pids of every process this backend holds (server, workers, zygotes, branches)."""
        procs = [self._server, self._replayer, *self._zygotes.values(), *self._live.values()]
        return [p.pid for p in procs if p is not None and not p.dead]

    @property
    def process_group(self) -> int | None:
        """The process group of the whole tree (the server's pid), or None before first use."""
        return self._server.pid if self._server is not None and not self._server.dead else None

    # -- protocol

    def save(self, env: GUIEnv, prefix: tuple[Action, ...]) -> SnapshotRef:
        if isinstance(env, ForkServerEnv) and env._backend is self:
            source, tree_hash = env._process, env.observe().element_tree_hash()
        else:
            if self._replayer is None or self._replayer.dead:
                self._replayer, _ = self._spawn()
            obs, _ = self._replayer.call("replay", env.task, tuple(prefix))
            self.replayed_steps_on_save += len(prefix)
            source, tree_hash = self._replayer, obs.element_tree_hash()
            if self._verify and tree_hash != env.observe().element_tree_hash():
                raise SnapshotError(
                    f"replaying {len(prefix)} steps of {env.task.id} in the fork-server "
                    "worker did not reproduce the env's state (nondeterministic env?)"
                )
        zygote, meta = source.fork("zygote")
        ref = SnapshotRef(
            new_snapshot_id("fork"),
            self.name,
            meta["task"],
            tuple(prefix),
            tree_hash,
            {"zygote_pid": zygote.pid},
        )
        self._zygotes[ref.id] = zygote
        self.saves += 1
        return ref

    def restore(self, ref: SnapshotRef) -> GUIEnv:
        zygote = self._zygotes.get(ref.id)
        if zygote is None:
            raise SnapshotError(
                f"fork-server snapshot {ref.id} is not held (released, or saved by another process)"
            )
        branch, meta = zygote.fork("branch")
        self._live[branch.pid] = branch
        self.restores += 1
        return ForkServerEnv(self, branch, meta)

    def holds(self, ref: SnapshotRef) -> bool:
        return ref.id in self._zygotes and not self._zygotes[ref.id].dead

    def release(self, ref: SnapshotRef) -> None:
        zygote = self._zygotes.pop(ref.id, None)
        if zygote is not None:
            zygote.kill()

    def close(self, timeout_s: float = 5.0) -> None:
        """SIGKILL every process of the tree and wait until the server has reaped them all."""
        for proc in [*self._live.values(), *self._zygotes.values(), self._replayer]:
            if proc is not None:
                proc.kill()
        self._live.clear()
        self._zygotes.clear()
        self._replayer = None
        server, self._server = self._server, None
        if server is None or server.dead:
            return
        try:
            server.conn.send(("shutdown", timeout_s))
            if server.conn.poll(timeout_s + 2):
                server.conn.recv()
        except (EOFError, OSError):
            pass
        server.conn.close()
        try:
            os.killpg(server.pid, signal.SIGKILL)  # anything the server could not reap in time
        except (ProcessLookupError, PermissionError):
            pass
        _waitpid(server.pid, timeout_s)
        server.dead = True

    def __del__(self) -> None:
        try:
            self.close(timeout_s=1.0)
        except Exception:
            pass


def _waitpid(pid: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done or time.monotonic() > deadline:
            return
        time.sleep(0.005)


def _bind(factory: Callable[..., GUIEnv], options: dict[str, Any]) -> Callable[[], GUIEnv]:
    return lambda: factory(**options)


def _named_factory(name: str, options: dict[str, Any]) -> Callable[[], GUIEnv]:
    def build() -> GUIEnv:
        from adaroll.envs import make_env_factory

        return make_env_factory(name, **options)()

    return build
