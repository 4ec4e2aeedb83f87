"""Launching, reaching and stopping headless Chromium - isolated in its own namespaces.

An isolated browser (the default when running as root, as CI does) follows docs/architecture.md, "Platform notes":

* ``unshare --mount --propagation private --pid --net --time --fork`` runs
  :mod:`adaroll.envs.web._nsinit`, which mounts a private tmpfs at ``state_dir`` for all the
  browser's mutable state (``ud/`` profile, ``tmp/`` TMPDIR, ``home/`` HOME), brings ``lo``
  up, closes inherited descriptors, points stdio at /dev/null, calls ``setsid`` and ``exec``s
  the browser - as root (``user: null``) Chromium itself, as the account (the default)
  ``setpriv``/``tini``/``setpriv``/Chromium (:func:`unprivileged_command`) - so the init of
  its pid namespace (Chromium or ``tini``) is :attr:`BrowserProcess.pid`, by its host pid
  (the process a CRIU dump targets);
* the browser has no route to anything but its own loopback; its DevTools port
  (:data:`DEVTOOLS_PORT` on 127.0.0.1) exists only inside its network namespace. The
  controller reaches it with :func:`open_socket_in_netns`: ``setns`` one thread into the
  namespace, connect, ``setns`` back; the socket keeps its namespace;
* :meth:`BrowserProcess.kill` SIGKILLs the pid-namespace init (the kernel then kills every
  other process of the namespace) and reaps it; the namespaces, the tmpfs and every mount in
  them vanish with it. The host-side directory (an empty mount point) is removed.

Crash safety: every browser is registered with a per-controller *janitor* process
(:mod:`adaroll.envs.web._janitor`) that SIGKILLs registered processes and removes registered
directories when the controller exits in any way (even SIGKILL); ``weakref.finalize`` kills
browsers whose handles are garbage-collected or still alive at interpreter exit.

Browsers without root (``BrowserConfig.user``, the default): when the controller is root, the
browser runs as the account ``adaroll-browser`` (created by ``scripts/install_system.sh``;
uid/gid 65534 ``nobody`` where it does not exist). Isolated, the namespaces are made by root as
above and :mod:`~adaroll.envs.web._nsinit` hands the state tmpfs to the account, then ``exec``s
:func:`unprivileged_command`: ``setpriv`` becomes the account keeping only CAP_SYS_ADMIN and
``exec``s ``tini`` (the namespace init), whose child ``setpriv --no-new-privs`` drops every
capability and ``exec``s Chromium. Every process is that account on the host, and CRIU dumps
and restores such a browser when it runs as the account too (:mod:`adaroll.snapshots.criu`).
Un-isolated as root: ``Popen(user=, group=, extra_groups=[])``. Chromium's own sandbox stays
off (``--no-sandbox``): ``--no-zygote`` (fewer processes, smaller images) requires it off, and
its namespace sandbox would nest a user namespace CRIU does not dump (docs/web.md, "Browsers
without root").

Without root (a developer laptop) the browser runs un-isolated: a plain child process in its
own session with a temporary profile and ``--remote-debugging-port=0``, as the calling user.

Reuse by the CRIU backend: a restored branch is adopted with :meth:`BrowserProcess.adopt`
(call :func:`become_subreaper` before running ``criu restore -d`` so the restored init is
re-parented to this process and can be reaped), then reached with the same
:meth:`BrowserProcess.connect`.

The namespace and process plumbing (``setns``, subreaping, liveness, reaping) and the janitor's
client live in :mod:`adaroll.envs.web.processes`; this module re-exports them.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import pwd
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adaroll.envs.web.cdp import CDPError, CDPSession
from adaroll.envs.web.processes import (  # noqa: F401 - the rest re-exported for callers
    JANITOR,
    become_subreaper,
    entered_netns,
    open_socket_in_netns,
    pid_alive,
    proc_starttime,
    reap,
)

_log = logging.getLogger(__name__)

BROWSER_USER = "adaroll-browser"
"""The unprivileged account browsers run as when AdaRoll runs as root (``scripts/install_system.sh``
creates it: a system user with no login shell and no home)."""
NOBODY = 65534
"""uid and gid of ``nobody``/``nogroup``: the browser's account where :data:`BROWSER_USER` does
not exist (a machine set up before it was added)."""

DEVTOOLS_PORT = 9333
"""DevTools port inside an isolated browser's network namespace (each has its own loopback)."""

_HERE = Path(__file__).resolve().parent
NSINIT_SCRIPT = _HERE / "_nsinit.py"
CHROMIUM_CANDIDATES = ("/usr/lib/chromium/chromium", "chromium", "chromium-browser")
"""The full browser: the reference the stock ``miniwob`` (Selenium) env and BrowserGym drive."""
INIT_CANDIDATES = ("/usr/bin/tini", "tini")
"""The init of an isolated browser's pid namespace (Debian's ``tini``): reaps, forwards signals,
exits with its child. ``setpriv`` (util-linux) drops the child to the browser's account."""
HEADLESS_SHELL_CANDIDATES = ("/usr/lib/chromium/chromium-headless-shell",)
"""What WebEnv launches: Debian's ``chromium-headless-shell``, the same Blink without the full
browser's UI layer. Measured against ``chromium`` on this machine (interleaved, loaded): a page
load costs 80 instead of 115-130 ms of CPU (the browser process does half the work and no WebUI
renderer runs), a CRIU image of book-flight after 10 steps is 72 instead of 172 MB, collector
throughput is 1.3x and screenshot steps 3.2x instead of 2.5x the Selenium env; the experts still
solve every curated template on fresh seeds. Only the binary itself: ``/usr/bin``'s launcher is
a shell script, which would make ``sh`` the namespace init that CRIU dumps."""
INSTALL_HINT = (
    "install it with `sudo bash scripts/install_system.sh` "
    "(Debian: apt-get install chromium chromium-headless-shell)"
)

# Flags from docs/architecture.md ("Platform notes"), plus a few that make rendering and timers deterministic.
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--disable-crash-reporter",
    "--disable-breakpad",
    "--disable-extensions",
    "--disable-default-apps",
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
    # fewer processes: smaller CRIU images, faster restores (measured by the CRIU backend)
    "--no-zygote",
    "--in-process-gpu",
    # no SwiftShader (the software GPU, only a fallback for WebGL and GPU compositing, which
    # --disable-gpu already turns off): 10 MB less per browser and CRIU image; element trees
    # and rewards of the experts' episodes on all curated templates are unchanged (docs/web.md)
    "--disable-software-rasterizer",
    "--password-store=basic",
    "--mute-audio",
    # no --hide-scrollbars: stock MiniWoB++ (the miniwob package's Selenium env) draws them,
    # and a scrollbar narrows its scroll container - without one, layouts (email-inbox's list)
    # differ and coordinates that solve a task here miss in the stock env
    "--disable-smooth-scrolling",
    "--force-device-scale-factor=1",
    "--force-color-profile=srgb",
    "--lang=en-US",
    # task pages are file:// URLs: let them read their own stylesheets (the env preloads the
    # images those refer to, so a cold and a warm browser lay a page out alike)
    "--allow-file-access-from-files",
)


FAST_FRAME_FLAGS = ("--disable-gpu-vsync", "--disable-frame-rate-limit")
"""For browsers that take a screenshot per observation: a screenshot waits for the next frame,
and these let Chromium draw it at once instead of at the next 60 Hz tick (measured: about
twice the screenshot step rate). Not the default: without screenshots, frames drawn unthrottled
only cost CPU (a page animating with ``requestAnimationFrame`` would spin)."""

DISABLED_FEATURES = (
    "Translate",
    "MediaRouter",
    "OptimizationHints",
    "AutofillServerCommunication",
    "SpareRendererForSitePerProcess",
)
ENABLED_FEATURES = ("NetworkServiceInProcess2",)
"""Chromium keeps only the last ``--disable-features``/``--enable-features`` switch, so these
are merged with any given in ``extra_args`` (see :func:`chromium_command`)."""


class BrowserUnavailableError(RuntimeError):
    """Chromium (or the isolation tools) cannot be found or started."""


class BrowserStartupCrash(BrowserUnavailableError):
    """A browser that started exited before its DevTools endpoint answered. Transient: rare
    among thousands of launches (once in CI, once in a loaded experiment run here, killed by
    SIGSEGV), so :meth:`BrowserProcess.launch` tries again."""


def _exit_status(returncode: int | None) -> str:
    if returncode is None:
        return "exited"
    if returncode < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-returncode).name}"
    return f"exited with status {returncode}"


def find_chromium(executable: str | None = None, *, headless_shell: bool = False) -> str:
    """The browser binary to run: ``executable`` when given, else ``$ADAROLL_CHROMIUM``, else
    Debian's full Chromium, or its headless shell with ``headless_shell`` (what WebEnv runs);
    a clear error when none is installed."""
    candidates = [executable] if executable else []
    if os.environ.get("ADAROLL_CHROMIUM"):
        candidates.append(os.environ["ADAROLL_CHROMIUM"])
    candidates += list(HEADLESS_SHELL_CANDIDATES if headless_shell else CHROMIUM_CANDIDATES)
    for cand in candidates:
        path = cand if os.path.isabs(cand) else shutil.which(cand)
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    what = "Chromium's headless shell" if headless_shell else "Chromium"
    raise BrowserUnavailableError(
        f"{what} not found (tried {', '.join(candidates)}); {INSTALL_HINT}"
    )


@functools.lru_cache(maxsize=8)
def chromium_version(executable: str) -> str:
    """What ``EXECUTABLE --version`` prints (e.g. ``Chromium 156.0.8078.114``): part of a web
    run's env settings, as another build may lay out and draw pages differently."""
    try:
        done = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BrowserUnavailableError(f"{executable} --version failed: {exc}") from None
    if done.returncode != 0 or not done.stdout.strip():
        raise BrowserUnavailableError(
            f"{executable} --version failed (exit {done.returncode}): "
            f"{(done.stderr or done.stdout).strip()[-300:]}"
        )
    return done.stdout.strip()


def browser_credentials(user: str | None) -> tuple[int, int] | None:
    """(uid, gid) a browser launched by this root process runs as: ``user``'s (:data:`NOBODY`
    when ``user`` is :data:`BROWSER_USER` and that account does not exist); None when ``user``
    is None (root, as before) or this process is not root (the calling user's). A root account
    is refused: a ValueError naming ``BrowserConfig.user``."""
    if user is None or os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(user)
        uid, gid = entry.pw_uid, entry.pw_gid
    except KeyError:
        if user != BROWSER_USER:
            raise ValueError(
                f"BrowserConfig.user: no account named {user!r} on this machine "
                f"(default {BROWSER_USER!r}, created by scripts/install_system.sh)"
            ) from None
        uid = gid = NOBODY
    if uid == 0 or gid == 0:
        raise ValueError(
            f"BrowserConfig.user: {user!r} is root (uid {uid}, gid {gid}); browsers "
            f"never run as root - name an unprivileged account"
        )
    return uid, gid


INIT_CAPS = "sys_admin"
"""The only capability an unprivileged browser's namespace init (``tini``) keeps: while CRIU dumps
the tree, its parasite mounts a procfs of the tree's pid namespace in that init, which needs
CAP_SYS_ADMIN (the browser's mount namespace shows the host's ``/proc``). Chromium, below it,
keeps none."""


def unprivileged_command(chrome: list[str], uid: int, gid: int) -> list[str]:
    """What an isolated browser's namespace init ``exec``s to run ``chrome`` as ``uid``/``gid``:
    ``setpriv`` drops root for the account keeping only :data:`INIT_CAPS` (also its bounding
    set) and ``exec``s ``tini``, whose child ``setpriv --no-new-privs`` drops every capability
    and ``exec``s Chromium. Every process is then the account on the host, so CRIU, run as the
    account as well, may read their rlimits (``prlimit`` across uids needs CAP_SYS_RESOURCE,
    which this machine class does not grant) - see docs/web.md, "Browsers without root"."""
    init, setpriv = _tool(*INIT_CANDIDATES), _tool("setpriv")
    keep = f"-all,+{INIT_CAPS}"
    return [
        setpriv,
        f"--reuid={uid}",
        f"--regid={gid}",
        "--clear-groups",
        f"--bounding-set={keep}",
        f"--inh-caps={keep}",
        f"--ambient-caps={keep}",
        "--",
        init,
        "--",
        setpriv,
        "--no-new-privs",
        "--inh-caps=-all",
        "--ambient-caps=-all",
        "--",
        *chrome,
    ]


FALLBACK_BASE_DIR = "/tmp"
"""Where an unprivileged browser's host directory goes when the system temp dir (``$TMPDIR``) is
not searchable by its account (e.g. a private 0700 TMPDIR) and ``base_dir`` is not set."""


def _searchable(path: str, uid: int, gid: int) -> bool:
    """Whether ``uid``/``gid`` (no supplementary groups) may pass through every directory on
    the way to ``path`` (the execute bit that applies to it)."""
    current = Path(path).resolve()
    for directory in (current, *current.parents):
        try:
            st = directory.stat()
        except OSError:
            return False
        bit = 0o100 if st.st_uid == uid else 0o010 if st.st_gid == gid else 0o001
        if not st.st_mode & bit:
            return False
    return True


def _runnable(executable: str, uid: int, gid: int) -> bool:
    """Whether ``uid``/``gid`` may execute the file ``executable`` (symlinks followed)."""
    path = Path(executable).resolve()
    try:
        st = path.stat()
    except OSError:
        return False
    bit = 0o100 if st.st_uid == uid else 0o010 if st.st_gid == gid else 0o001
    return bool(st.st_mode & bit) and _searchable(str(path.parent), uid, gid)


def browser_base_dir(config: BrowserConfig, ids: tuple[int, int] | None) -> str:
    """Parent of a browser's host directory: ``config.base_dir``, else the system temp dir -
    or, for a browser of an unprivileged account that cannot pass through the temp dir,
    :data:`FALLBACK_BASE_DIR`. A ``base_dir`` the account cannot pass through is refused (a
    ValueError naming ``BrowserConfig.base_dir``)."""
    base = config.base_dir or tempfile.gettempdir()
    if ids is None or _searchable(base, *ids):
        return base
    if config.base_dir is None and _searchable(FALLBACK_BASE_DIR, *ids):
        return FALLBACK_BASE_DIR
    field_name = "BrowserConfig.base_dir" if config.base_dir else "the temp dir ($TMPDIR)"
    raise ValueError(
        f"{field_name}: {base!r} cannot be passed through by the browser's account (uid "
        f"{ids[0]}, gid {ids[1]}), which must reach its state below it; make it and its "
        f"parents searchable (o+x) or name another directory in BrowserConfig.base_dir"
    )


def isolation_available() -> bool:
    """Namespaced launches need root (CAP_SYS_ADMIN) and util-linux ``unshare``."""
    return os.geteuid() == 0 and shutil.which("unshare") is not None


def chromium_command(
    executable: str,
    *,
    user_data_dir: str,
    port: int,
    window_size: tuple[int, int] = (800, 600),
    extra_args: tuple[str, ...] = (),
    url: str = "about:blank",
) -> list[str]:
    """The Chromium command line (the flags of docs/architecture.md, "Platform notes"). Feature lists in ``extra_args``
    (``--disable-features=A,B``, ``--enable-features=C``) are merged with the defaults."""
    features = {
        "--disable-features=": list(DISABLED_FEATURES),
        "--enable-features=": list(ENABLED_FEATURES),
    }
    rest = []
    for arg in extra_args:
        for prefix, names in features.items():
            if arg.startswith(prefix):
                names += [n for n in arg[len(prefix) :].split(",") if n and n not in names]
                break
        else:
            rest.append(arg)
    return [
        executable,
        *CHROMIUM_FLAGS,
        *(prefix + ",".join(names) for prefix, names in features.items() if names),
        f"--window-size={window_size[0]},{window_size[1]}",
        f"--user-data-dir={user_data_dir}",
        "--remote-debugging-address=127.0.0.1",
        f"--remote-debugging-port={port}",
        *rest,
        url,
    ]


@dataclass(frozen=True)
class BrowserConfig:
    """How to launch a browser."""

    executable: str | None = None
    """Browser binary; None: ``$ADAROLL_CHROMIUM``, else Debian's headless shell
    (:data:`HEADLESS_SHELL_CANDIDATES`)."""
    isolate: bool | None = None
    """Run in private pid/mount/net/time namespaces; None = whenever possible (root)."""
    window_size: tuple[int, int] = (800, 600)
    """Browser window (= viewport) size in CSS pixels."""
    tmpfs_size_mb: int = 512
    """Size limit of the private tmpfs holding the profile and TMPDIR (isolated mode)."""
    startup_timeout: float = 30.0
    """Seconds to wait for the DevTools endpoint to answer."""
    startup_attempts: int = 3
    """Launches to try when the browser exits during startup (a crash, not a timeout or a
    missing binary, which fail at once)."""
    extra_args: tuple[str, ...] = ()
    """Additional Chromium flags."""
    base_dir: str | None = None
    """Parent of the per-browser host directory (default: the system temp dir, or
    :data:`FALLBACK_BASE_DIR` when :attr:`user` cannot pass through that). It must be searchable
    by :attr:`user` (the browser reaches its state through it): :func:`browser_base_dir`."""
    user: str | None = BROWSER_USER
    """Unprivileged account the browser runs as when AdaRoll runs as root (:func:`
    browser_credentials`: :data:`BROWSER_USER` by default, uid/gid 65534 where that account
    does not exist; a root account is refused). Isolated, every process of the browser's
    namespaces is that account on the host (:func:`unprivileged_command`), and CRIU snapshots
    and branches of it run as the account too. None: root inside the namespaces, as before
    issue 31 (an opt-out; nothing needs it). Ignored when AdaRoll is not root."""
    launcher: tuple[str, ...] = ()
    """A program run in Chromium's place inside an isolated browser's namespaces, as the
    browser's account, with Chromium's command line appended to it: it starts what shares the
    namespaces with the browser (the apps env's supervisor starts its app servers) and then
    runs the browser. Empty: Chromium itself. Needs an isolated browser."""


@dataclass
class _Resources:
    """What a :class:`BrowserProcess` must release; kept apart so finalizers need no ``self``."""

    pid: int
    popen: subprocess.Popen[bytes] | None
    owned_dirs: list[str] = field(default_factory=list)
    process_group: bool = False
    killed: bool = False

    def release(self) -> None:
        if self.killed:
            return
        self.killed = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if self.process_group:  # un-isolated: the browser leads its own process group
                os.killpg(self.pid, signal.SIGKILL)
            else:  # isolated: killing the pid-namespace init kills the whole namespace
                os.kill(self.pid, signal.SIGKILL)
        try:
            if self.popen is not None:
                self.popen.wait(timeout=10)  # unshare exits once its child (the init) is dead
                reap(self.pid, timeout=10)
            else:
                reap(self.pid, timeout=10)
        except (TimeoutError, subprocess.TimeoutExpired):
            pass  # the janitor keeps it registered and kills it at exit
        else:
            JANITOR.unregister_pid(self.pid)
        for path in self.owned_dirs:
            shutil.rmtree(path, ignore_errors=True)
            JANITOR.unregister_dir(path)


class BrowserProcess:
    """A running (headless) Chromium and how to reach its DevTools endpoint.

    Attributes used by snapshot backends:

    * ``pid``: host pid of the browser's main process, or when ``isolated`` the init of its pid
      namespace (``tini`` above Chromium for an unprivileged browser);
    * ``state_dir``: absolute path of the browser's mutable state (``ud/`` profile, ``tmp/``
      TMPDIR, ``home/``); when isolated it is a tmpfs visible only inside the browser's mount
      namespace (on the host it is an empty directory, the mount point);
    * ``port``: DevTools port on 127.0.0.1 inside ``net_ns_path`` (host loopback when not
      isolated);
    * ``net_ns_path`` / ``mnt_ns_path``: ``/proc/PID/ns/net`` and ``/proc/PID/ns/mnt``
      (None when not isolated);
    * ``page_url``: the page target's DevTools WebSocket URL when known beforehand (a restored
      branch keeps the target of the browser it was dumped from): :meth:`connect` then opens
      it directly instead of asking for the target list over HTTP first.
    """

    def __init__(
        self,
        pid: int,
        *,
        port: int,
        state_dir: str,
        isolated: bool,
        popen: subprocess.Popen[bytes] | None = None,
        owned_dirs: tuple[str, ...] = (),
        page_url: str | None = None,
    ) -> None:
        self.pid = pid
        self.port = port
        self.state_dir = state_dir
        self.isolated = isolated
        self.page_url = page_url
        self.unprivileged = False
        """Runs as an unprivileged account (:attr:`BrowserConfig.user`)."""
        self._res = _Resources(pid, popen, list(owned_dirs), process_group=not isolated)
        self._finalizer = weakref.finalize(self, _Resources.release, self._res)
        JANITOR.register_pid(pid)
        for path in owned_dirs:
            JANITOR.register_dir(path)

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def launch(cls, config: BrowserConfig | None = None) -> BrowserProcess:
        """Start a browser on ``about:blank`` and wait until its DevTools endpoint answers;
        a browser that exits during startup is replaced, up to ``config.startup_attempts``
        launches in all."""
        config = config or BrowserConfig()
        if config.startup_attempts < 1:
            raise ValueError(f"startup_attempts must be at least 1, got {config.startup_attempts}")
        executable = find_chromium(config.executable, headless_shell=True)
        isolate = isolation_available() if config.isolate is None else config.isolate
        if isolate and not isolation_available():
            raise BrowserUnavailableError("isolated browsers need root and util-linux `unshare`")
        if config.launcher and not isolate:
            raise BrowserUnavailableError("BrowserConfig.launcher needs an isolated browser (root)")
        crashes = []
        while True:
            try:
                return cls._launch_once(executable, config, isolate)
            except BrowserStartupCrash as exc:
                crashes.append(str(exc))
                if len(crashes) == config.startup_attempts:
                    raise BrowserStartupCrash(
                        f"Chromium ({executable}) exited during startup {len(crashes)} times: "
                        + "; ".join(crashes)
                    ) from exc
                _log.warning("%s; launching another browser", exc)

    @classmethod
    def _launch_once(cls, executable: str, config: BrowserConfig, isolate: bool) -> BrowserProcess:
        ids = browser_credentials(config.user)
        if ids is not None and not _runnable(executable, *ids):
            raise BrowserUnavailableError(
                f"BrowserConfig.executable: {executable!r} cannot be run by the browser's "
                f"account (uid {ids[0]}, gid {ids[1]}; BrowserConfig.user {config.user!r}): "
                "it and the directories above it must be executable/searchable by it"
            )
        host_dir = tempfile.mkdtemp(prefix="adaroll-browser-", dir=browser_base_dir(config, ids))
        if ids is not None:  # the browser's account must pass through it to its state
            os.chmod(host_dir, 0o711)
        try:
            if isolate:
                browser = cls._launch_isolated(executable, config, host_dir, ids)
            else:
                browser = cls._launch_plain(executable, config, host_dir, ids)
        except BaseException:
            shutil.rmtree(host_dir, ignore_errors=True)
            raise
        try:
            browser.wait_ready(config.startup_timeout)
        except BaseException:
            browser.kill()
            raise
        return browser

    @classmethod
    def _launch_isolated(
        cls, executable: str, config: BrowserConfig, host_dir: str, ids: tuple[int, int] | None
    ) -> BrowserProcess:
        state_dir = os.path.join(host_dir, "state")
        os.mkdir(state_dir, 0o700)
        chrome = config.launcher + tuple(
            chromium_command(
                executable,
                user_data_dir=f"{state_dir}/ud",
                port=DEVTOOLS_PORT,
                window_size=config.window_size,
                extra_args=config.extra_args,
            )
        )
        read_fd, write_fd = os.pipe()
        cmd = [
            shutil.which("unshare") or "unshare",
            "--mount",
            "--propagation",
            "private",
            "--pid",
            "--net",
            "--time",
            "--fork",
            "--",
            sys.executable,
            "-I",
            "-S",
            str(NSINIT_SCRIPT),
            str(write_fd),
            "-" if ids is None else f"{ids[0]}:{ids[1]}",
            state_dir,
            str(config.tmpfs_size_mb),
            "--",
            *(chrome if ids is None else unprivileged_command(list(chrome), *ids)),
        ]
        try:
            popen = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(write_fd,),
                start_new_session=True,
            )
        except OSError as exc:
            os.close(read_fd)
            raise BrowserUnavailableError(f"cannot start the namespace setup: {exc}") from exc
        finally:
            os.close(write_fd)
        try:
            report = _read_line(read_fd, config.startup_timeout)
        finally:
            os.close(read_fd)
        if not report.startswith("ok "):
            err = b""
            with contextlib.suppress(Exception):
                popen.kill()
                _, err = popen.communicate(timeout=5)
            raise BrowserUnavailableError(
                f"isolated browser launch failed: {report.strip() or 'no report'}; "
                f"{err.decode(errors='replace').strip()}"
            )
        assert popen.stderr is not None
        popen.stderr.close()
        pid = int(report.split()[1])
        browser = cls(
            pid,
            port=DEVTOOLS_PORT,
            state_dir=state_dir,
            isolated=True,
            popen=popen,
            owned_dirs=(host_dir,),
        )
        browser.unprivileged = ids is not None
        return browser

    @classmethod
    def _launch_plain(
        cls, executable: str, config: BrowserConfig, host_dir: str, ids: tuple[int, int] | None
    ) -> BrowserProcess:
        uid, gid = ids or (os.geteuid(), os.getegid())
        state_dir = os.path.join(host_dir, "state")
        os.mkdir(state_dir, 0o700)
        os.chown(state_dir, uid, gid)
        for sub in ("ud", "tmp", "home"):
            os.mkdir(os.path.join(state_dir, sub), mode=0o700)
            os.chown(os.path.join(state_dir, sub), uid, gid)
        as_user: dict[str, Any] = {}
        if ids is not None and os.geteuid() == 0:  # the browser's account, without root's groups
            as_user = {"user": uid, "group": gid, "extra_groups": []}
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": f"{state_dir}/home",
            "TMPDIR": f"{state_dir}/tmp",
            "LANG": "C.UTF-8",
            "TZ": "UTC",
        }
        cmd = chromium_command(
            executable,
            user_data_dir=f"{state_dir}/ud",
            port=0,
            window_size=config.window_size,
            extra_args=config.extra_args,
        )
        popen = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
            **as_user,
        )
        port_file = Path(state_dir, "ud", "DevToolsActivePort")
        deadline = time.monotonic() + config.startup_timeout
        while True:
            with contextlib.suppress(OSError, ValueError, IndexError):
                port = int(port_file.read_text().split()[0])
                break
            if popen.poll() is not None:
                raise BrowserStartupCrash(
                    f"browser {popen.pid} {_exit_status(popen.returncode)} during startup"
                )
            if time.monotonic() > deadline:
                popen.kill()
                popen.wait()
                raise BrowserUnavailableError(
                    f"Chromium ({executable}) did not start within {config.startup_timeout} s"
                )
            time.sleep(0.01)
        browser = cls(
            popen.pid,
            port=port,
            state_dir=state_dir,
            isolated=False,
            popen=popen,
            owned_dirs=(host_dir,),
        )
        browser.unprivileged = uid != 0
        return browser

    @classmethod
    def adopt(
        cls,
        pid: int,
        *,
        state_dir: str,
        port: int = DEVTOOLS_PORT,
        isolated: bool = True,
        owned_dirs: tuple[str, ...] = (),
        popen: subprocess.Popen[bytes] | None = None,
        page_url: str | None = None,
    ) -> BrowserProcess:
        """Take ownership of a browser started elsewhere (e.g. a CRIU-restored branch whose
        init ``pid`` was re-parented to this subreaper). :meth:`kill` will SIGKILL and reap
        it and remove ``owned_dirs``; it is registered with the crash janitor."""
        if not pid_alive(pid):
            raise BrowserUnavailableError(f"process {pid} is not running")
        return cls(
            pid,
            port=port,
            state_dir=state_dir,
            isolated=isolated,
            popen=popen,
            owned_dirs=owned_dirs,
            page_url=page_url,
        )

    def disown_dirs(self) -> tuple[str, ...]:
        """Stop owning the host directories (``kill`` will not remove them; the crash janitor
        still does at exit) and return them - for a snapshot backend whose restored branches
        mount over ``state_dir``: removing a directory that is a mount point in another mount
        namespace detaches that mount there."""
        dirs = tuple(self._res.owned_dirs)
        self._res.owned_dirs.clear()
        return dirs

    def own_dirs(self, dirs: tuple[str, ...]) -> None:
        """Own (remove on ``kill``) these directories (again)."""
        self._res.owned_dirs.extend(d for d in dirs if d not in self._res.owned_dirs)

    # -- reaching it ----------------------------------------------------------------------------
    @property
    def net_ns_path(self) -> str | None:
        return f"/proc/{self.pid}/ns/net" if self.isolated else None

    @property
    def mnt_ns_path(self) -> str | None:
        return f"/proc/{self.pid}/ns/mnt" if self.isolated else None

    def alive(self) -> bool:
        return not self._res.killed and pid_alive(self.pid)

    def open_socket(self, timeout: float = 5.0) -> socket.socket:
        """A TCP socket connected to the DevTools port (inside the browser's netns)."""
        if not self.alive():
            raise BrowserUnavailableError(f"browser {self.pid} is not running")
        return open_socket_in_netns(self.net_ns_path, self.port, timeout=timeout)

    def http_json(self, path: str, timeout: float = 5.0) -> Any:
        """GET a DevTools HTTP endpoint (``/json/version``, ``/json/list``) and parse it."""
        with self.open_socket(timeout) as sock:
            sock.settimeout(timeout)
            request = (
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nConnection: close\r\n\r\n"
            )
            sock.sendall(request.encode())
            raw = b""
            while b"\r\n\r\n" not in raw:
                chunk = sock.recv(65536)
                if not chunk:
                    raise CDPError(f"DevTools HTTP {path}: connection closed")
                raw += chunk
            head, _, body = raw.partition(b"\r\n\r\n")
            length = None
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            while length is None or len(body) < length:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                body += chunk
        status = head.split(b"\r\n", 1)[0]
        if b" 200 " not in status + b" ":
            raise CDPError(f"DevTools HTTP {path}: {status.decode(errors='replace')}")
        return json.loads(body)

    def page_ws_url(self) -> str:
        """The WebSocket URL of the browser's first page target."""
        for target in self.http_json("/json/list"):
            if target.get("type") == "page":
                return str(target["webSocketDebuggerUrl"])
        raise CDPError("the browser has no page target")

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Poll until the DevTools endpoint lists a page target."""
        deadline = time.monotonic() + timeout
        while True:
            if not self.alive():
                raise BrowserStartupCrash(
                    f"browser {self.pid} {self._exit_status()} during startup"
                )
            try:
                self.page_ws_url()
                return
            except (OSError, CDPError, ValueError, BrowserUnavailableError) as exc:
                # (BrowserUnavailableError: it died since the check above; the next one says so)
                if time.monotonic() > deadline:
                    raise BrowserUnavailableError(
                        f"DevTools did not answer within {timeout} s: {exc}"
                    ) from exc
            time.sleep(0.01)

    def _exit_status(self) -> str:
        """How the browser ended, as far as its launcher process tells (isolated: ``unshare``
        exits as its child did)."""
        popen = self._res.popen
        if popen is None:
            return "exited"
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(timeout=2)
        return _exit_status(popen.returncode)

    def connect(self, timeout: float = 10.0) -> CDPSession:
        """A fresh :class:`CDPSession` to the page target (call again after every restore):
        ``page_url`` when it answers, else the page the target list names."""
        if self.page_url:
            with contextlib.suppress(CDPError, OSError):
                return CDPSession.open(
                    self.page_url, sock=self.open_socket(timeout), timeout=timeout
                )
        url = self.page_ws_url()
        return CDPSession.open(url, sock=self.open_socket(timeout), timeout=timeout)

    # -- stopping -------------------------------------------------------------------------------
    def kill(self) -> None:
        """SIGKILL the browser (its whole pid namespace when isolated), reap it and remove the
        directories it owns. Idempotent."""
        self._finalizer()

    close = kill

    def __enter__(self) -> BrowserProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()

    def __repr__(self) -> str:
        return (
            f"BrowserProcess(pid={self.pid}, port={self.port}, isolated={self.isolated}, "
            f"state_dir={self.state_dir!r}, alive={self.alive()})"
        )


def _tool(*candidates: str) -> str:
    """The first of ``candidates`` that is an executable (absolute path or on PATH)."""
    for cand in candidates:
        path = cand if os.path.isabs(cand) else shutil.which(cand)
        if path and os.access(path, os.X_OK):
            return path
    raise BrowserUnavailableError(
        f"{candidates[-1]} not found (tried {', '.join(candidates)}); {INSTALL_HINT}"
    )


def _read_line(fd: int, timeout: float) -> str:
    """Read up to the first newline (or EOF/timeout). ``unshare`` keeps its copy of the pipe
    open, so EOF would only come when the browser exits."""
    deadline = time.monotonic() + timeout
    chunks: list[bytes] = []
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return b"".join(chunks).decode(errors="replace")
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(fd, 4096)
        chunks.append(chunk)
        if not chunk or b"\n" in chunk:
            return b"".join(chunks).decode(errors="replace")
