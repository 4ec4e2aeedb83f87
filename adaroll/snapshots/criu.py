"""CRIU snapshots of a live browser: one dump, many independent branches (paper section 3.3).

Why CRIU instead of replay: a snapshot must capture *everything* the page holds - DOM, JS
heap, timers, focus, a half-open date picker - and restoring must be cheaper than replaying the
action prefix (replay costs one settle-wait per step and is fragile on animations). A process
snapshot gives both, independent of how the state was reached.

How (DESIGN.md section 4; the web environment's :mod:`adaroll.envs.web.browser` already runs
every browser as the init of its own pid/mount/net/time namespaces with all mutable state -
profile, TMPDIR, HOME - on a private tmpfs at ``state_dir``):

* **save** = ``nsenter --mount=/proc/PID/ns/mnt criu dump -t PID --leave-running --tcp-close
  --ext-unix-sk --file-locks --network-lock skip --action-script HOOK``. criu runs *inside* the
  browser's mount namespace so it sees the tmpfs and leaves that namespace alone (it is not
  dumped); the hook copies ``state_dir`` next to the image on ``post-dump``, while the tasks
  are still frozen, so files and images agree byte for byte (criu checks file sizes on
  restore). ``--network-lock skip``: criu would otherwise lock the (private, unreachable)
  network with ``iptables-restore``, which this machine class does not have. The element-tree
  hash (and, for an env that observes screenshots, a screenshot hash: ``verify_screenshot``)
  are recorded for verification, with the env's episode bookkeeping
  (task, step counter, instruction) that lives outside the browser.
* **restore** = the backend's restore launcher (:mod:`adaroll.snapshots.restore_launcher`, one
  small single-threaded process) moves into a new mount namespace with private propagation,
  mounts a per-branch tmpfs at ``state_dir`` and an overlay on top of it (lower = the copied
  state, upper/work on the tmpfs), spawns ``criu restore -d --pidfile ...`` there and moves
  back: what ``unshare``, ``mount`` and ``ip`` would do, with system calls instead of seven
  programs (about 13 ms less per restore). criu recreates fresh pid and time namespaces
  per restore; the network namespace is dumped as *external* and every branch gets a fresh one
  with ``lo`` up (cheaper than criu rebuilding it with ``ip`` commands),
  so branches never share a port, a file or a pid. criu's kernel-probe cache is shown to it at
  ``/run`` from a tmpfs directory (criu re-probes the kernel, ~0.1-0.2 s, whenever ``/run`` is
  not a tmpfs). The controller is a child subreaper while restoring, so the restored init is
  re-parented to it and can be reaped; the branch is
  adopted as a :class:`~adaroll.envs.web.browser.BrowserProcess` (reached by ``setns`` into its
  network namespace) and wrapped by :meth:`~adaroll.envs.web.env.WebEnv.attach` - a full
  :class:`~adaroll.envs.web.env.WebEnv` that continues the episode.
* **verification** (paper A.1): after every restore the branch must be alive, answer over CDP,
  and show the element-tree hash and the screenshot hash (if one was recorded) of save time. A mismatch raises
  :class:`SnapshotVerificationError` (``verify="raise"``) or is recorded on the branch
  (``verify="report"``: ``branch.restore_info["check"]``). The rollout layer then replays the
  checkpoint's prefix instead (:mod:`adaroll.snapshots.fallback`) and counts the fallback.
  The checks and the screenshot hashes: :mod:`adaroll.snapshots.verification`.
* **resources**: a pool caps live branches (sized from cores and available memory, about 50 MB
  PSS per branch measured here), a semaphore caps concurrent restores (criu restore is CPU-bound).
  Images are reference-counted (``save`` = 1 reference, :meth:`CriuSnapshots.retain` adds,
  :meth:`CriuSnapshots.release` drops) and a branch holds its image (the overlay's lower layer)
  until it is closed; an image is deleted when neither holds it.
* **cleanup**: closing a branch SIGKILLs its pid-namespace init (the kernel kills the rest) and
  reaps it; its namespaces, tmpfs and overlay vanish with it. Crash safety comes from the web
  environment's janitor process (every restored init and this backend's directory are
  registered with it), so a SIGKILLed controller leaves no browser, mount or image behind.

Why the backend takes over the browser's host directory (``state_dir``'s parent): in the host
mount namespace ``state_dir`` is just an empty directory, but it is the *mount point* of every
branch's overlay. Removing it on the host (as closing the original env would) lazily unmounts
it in every other namespace too (Linux >= 3.18), and live branches would lose their profile
and TMPDIR. So :meth:`save` takes ownership of that directory from the browser (see
:func:`_disown_dirs`) and removes it only when no image needs it and the original browser is
gone.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adaroll.actions import Action
from adaroll.envs.base import GUIEnv
from adaroll.snapshots.base import (
    SNAPSHOT_BACKENDS,
    SnapshotBackend,
    SnapshotError,
    SnapshotRef,
    new_snapshot_id,
)
from adaroll.snapshots.criu_tool import CriuTool, CriuUnavailableError, check_criu, clean_output
from adaroll.snapshots.restore_launcher import NETNS_FD, LauncherError, Request, RestoreLauncher
from adaroll.snapshots.verification import (
    RestoreCheck,
    SnapshotVerificationError,
    array_hash,
    screenshot_hash,
    stable_screenshot_hash,
    verify_branch,
)

if TYPE_CHECKING:
    from adaroll.envs.web.browser import BrowserProcess
    from adaroll.envs.web.env import WebEnv, WebEnvConfig

__all__ = [
    "CriuConfig",
    "CriuSnapshots",
    "CriuUnavailableError",
    "RestoreCheck",
    "SnapshotVerificationError",
    "array_hash",
    "screenshot_hash",
    "stable_screenshot_hash",
    "default_pool_size",
]

# Options shared by dump and restore: open CDP sockets are closed (not dumped, restored closed),
# unix sockets to peers outside the tree are external, flock/fcntl locks are dumped.
CRIU_COMMON = ("--tcp-close", "--ext-unix-sk", "--file-locks")
IMAGE_SUBDIR = "img"
STATE_SUBDIR = "state"
MANIFEST = "manifest.json"
BRANCH_PSS_MB = 100
"""PSS of one live restored branch measured on this machine class: 48-49 MB for
chromium-headless-shell without SwiftShader on book-flight and choose-date with
``collect_garbage`` (95-108 MB without it and with SwiftShader; benchmarks/restore_latency.py;
about 170 with the full chromium, DESIGN.md section 4). Sizing the pool by 100 leaves room for
larger pages."""

# criu action script; paths come from the environment (criu passes its own to the script).
_HOOK = """#!/bin/sh
# copy the browser's mutable state while its tasks are frozen (after the dump, before resume)
[ "$CRTOOLS_SCRIPT_ACTION" = "post-dump" ] || exit 0
exec cp -a -- "$ADAROLL_STATE_DIR" "$ADAROLL_STATE_COPY"
"""

NET_KEY = "adaroll-net"
"""Name of the browser's network namespace as an external resource of the image."""


def _mem_available_mb() -> int:
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    return 4096


def default_pool_size(
    branch_mb: int = BRANCH_PSS_MB, memory_fraction: float = 0.5, per_core: int = 8
) -> int:
    """Live-branch cap: what half the available memory holds at ``branch_mb`` each, and at most
    ``per_core`` branches per core (idle branches cost little CPU, busy ones compete for it)."""
    by_mem = int(_mem_available_mb() * memory_fraction) // max(1, branch_mb)
    by_cpu = per_core * (os.cpu_count() or 1)
    return max(1, min(by_mem, by_cpu))


@dataclass(frozen=True)
class CriuConfig:
    """Knobs of the ``criu`` snapshot backend."""

    criu: str | None = None
    """CRIU binary; None: ``$ADAROLL_CRIU``, ``$ADAROLL_CRIU_PREFIX/bin/criu``,
    ``/opt/adaroll-criu/bin/criu`` (``scripts/install_criu.sh``), ``criu`` on PATH."""
    root_dir: str | None = None
    """Parent of this backend's image/branch directory; None: ``$ADAROLL_CRIU_DIR`` or the
    system temp dir. Must be on a filesystem that existed when the browsers started (the dump
    hook copies state into it from inside the browser's mount namespace)."""
    max_branches: int | None = None
    """Cap on concurrently live branches; None: :func:`default_pool_size`."""
    max_concurrent_restores: int | None = None
    """Cap on restores running at once; None: the number of cores."""
    pool_timeout_s: float = 120.0
    """How long :meth:`CriuSnapshots.restore` waits for a free branch slot before failing."""
    verify: str = "raise"
    """After restore: ``raise`` on a mismatch, ``report`` (record it on the branch), ``off``."""
    verify_screenshot: bool | None = None
    """Also compare a screenshot hash (besides liveness and the element-tree hash). None: when
    the env observes screenshots (``WebEnv`` with ``screenshot``); an element-list policy sees
    nothing the pixels add, and the check waits for a frame (about 30 of a restore's ~120 ms)."""
    collect_garbage: bool = True
    """Before a dump, let V8 collect garbage and Chromium drop its caches (``WebEnv.
    collect_garbage``; nothing the page can observe changes). A browser that has played a few
    episodes dumps a quarter smaller then (77 -> 59 MB on book-flight), and every branch of
    the image restores faster and takes less memory; the dump pays ~40 ms once."""
    branch_tmpfs_mb: int = 512
    """Size limit of each branch's tmpfs (the overlay's upper layer: what the branch writes)."""
    command_timeout_s: float = 120.0
    """Timeout of one ``criu dump``/``criu restore`` run."""
    external_netns: bool = True
    """Dump the browser's network namespace as an external resource and give every branch a
    fresh one (``lo`` up) instead of having criu rebuild it by running
    ``ip addr/route/rule restore`` and probing for iptables: ~6 fewer programs per restore.
    The branch's only socket that matters - DevTools on 127.0.0.1 - is restored either way."""
    kdat_cache: bool = True
    """Let restores reuse CRIU's kernel-feature cache: criu keeps it in ``/run/criu.kdat`` only
    when ``/run`` is a tmpfs (not so here), and re-probes the kernel on every run otherwise
    (~0.1-0.2 s). Restores see a per-backend directory on ``/dev/shm`` at ``/run`` (with the
    iptables lock file criu otherwise mounts a tmpfs for), unmounted again once criu is done."""

    def __post_init__(self) -> None:
        if self.verify not in ("raise", "report", "off"):
            raise ValueError(f"verify must be raise/report/off, got {self.verify!r}")
        for name in ("max_branches", "max_concurrent_restores"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be >= 1, got {value}")


# -- child subreaper, only while restoring ---------------------------------------------------------

_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
_subreaper_before = False
_subreaper_lock = threading.Lock()
_subreaper_users = 0


@contextlib.contextmanager
def _subreaper() -> Any:
    """Be a child subreaper while at least one restore runs.

    ``criu restore -d`` exits once the tree runs, orphaning the restored init; a subreaper
    inherits it (and can reap it) instead of pid 1. Being one only *during* restores keeps the
    side effect small: outside them, unrelated orphans (e.g. of a crashed subprocess) still go
    to init instead of piling up here as zombies. Already adopted branches stay our children."""
    import ctypes

    global _subreaper_users
    libc = ctypes.CDLL(None, use_errno=True)
    global _subreaper_before
    with _subreaper_lock:
        if _subreaper_users == 0:
            flag = ctypes.c_int(0)
            libc.prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0)
            _subreaper_before = bool(flag.value)  # someone else made us one: leave it set
            if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
                err = ctypes.get_errno()
                raise SnapshotError(f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(err)}")
        _subreaper_users += 1
    try:
        yield
    finally:
        with _subreaper_lock:
            _subreaper_users -= 1
            if _subreaper_users == 0 and not _subreaper_before:
                libc.prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


# -- the seam with the web environment ------------------------------------------------------------


def _disown_dirs(browser: BrowserProcess) -> tuple[str, ...]:
    """Take over the directories ``browser`` would remove when killed (its host directory,
    parent of ``state_dir``); the crash janitor still removes them if this process dies."""
    return tuple(browser.disown_dirs())


def _return_dirs(browser: BrowserProcess, dirs: tuple[str, ...]) -> bool:
    """Give ``dirs`` back to a still-running ``browser`` (it removes them when killed)."""
    if not browser.alive():
        return False
    browser.own_dirs(dirs)
    return True


# -- bookkeeping ----------------------------------------------------------------------------------


@dataclass
class _Pin:
    """Keeps a ``state_dir`` mount point on the host alive while images need it."""

    state_dir: str
    dirs: tuple[str, ...] = ()
    """Directories to remove when released (taken from the browser, or created here)."""
    browser: Any = None
    """The original browser (weakly referenced) the dirs came from, if any."""
    users: int = 0


@dataclass
class _Image:
    id: str
    dir: Path
    state_dir: str
    port: int
    episode: dict[str, Any]
    env_config: Any
    manifest: dict[str, Any]
    external_netns: bool = False
    page_url: str = ""
    """The page target's DevTools WebSocket URL, which a branch keeps ("" for older images)."""
    owned: bool = True
    refs: int = 1
    branches: int = 0

    @property
    def img(self) -> Path:
        return self.dir / IMAGE_SUBDIR

    @property
    def state_copy(self) -> Path:
        return self.dir / STATE_SUBDIR


def _manifest(snapdir: Path) -> dict[str, list[int]]:
    """Relative path -> [size, mtime_ns] of every regular file of the image and the copied
    state. Why the mtime: a file damaged in place keeps its size; nothing writes to an image
    after the dump (restores read it, branches write to their overlay's upper layer), so a
    changed mtime means a changed file - found by one ``stat`` instead of hashing ~250 MB."""
    out: dict[str, list[int]] = {}
    for sub in (IMAGE_SUBDIR, STATE_SUBDIR):
        base = snapdir / sub
        for dirpath, _, files in os.walk(base):
            for name in files:
                path = Path(dirpath, name)
                with contextlib.suppress(OSError):
                    st = path.lstat()
                    if path.is_file() and not path.is_symlink():
                        out[str(path.relative_to(snapdir))] = [st.st_size, st.st_mtime_ns]
    return out


def _check_manifest(snapdir: Path, manifest: dict[str, Any], snap_id: str) -> None:
    """Fail with the file's name when an image/state file is missing, has changed size or was
    modified after the dump. (Manifests of older images hold the size alone.)"""
    base = str(snapdir)
    for rel, recorded in manifest.items():
        size, mtime = (recorded, None) if isinstance(recorded, int) else recorded
        path = os.path.join(base, rel)  # (os.stat on a str: a third of Path.stat's time)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise SnapshotError(f"criu snapshot {snap_id}: image file {path} is missing") from None
        if st.st_size != size:
            raise SnapshotError(
                f"criu snapshot {snap_id}: image file {path} is corrupt "
                f"(size {st.st_size}, recorded {size})"
            )
        if mtime is not None and st.st_mtime_ns != mtime:
            raise SnapshotError(
                f"criu snapshot {snap_id}: image file {path} is corrupt (modified after the dump)"
            )


def _criu_errors(log: Path, limit: int = 12) -> str:
    """The ``Error`` lines of a criu log (without the harmless noise), for error messages."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return f"(no log at {log})"
    errs = [
        ln.strip()
        for ln in lines
        if "Error" in ln and "RLIMIT_NOFILE" not in ln and "iptables" not in ln
    ]
    return "\n".join(errs[-limit:]) or "\n".join(lines[-5:])


def _mentioned_images(text: str) -> list[str]:
    import re

    return sorted(set(re.findall(r"[\w.-]+\.img", text)))


def _branch_env_class() -> type[WebEnv]:
    """``WebEnv`` subclass for branches (built lazily: the web extras are optional)."""
    global _BRANCH_CLASS
    if _BRANCH_CLASS is None:
        from adaroll.envs.web.env import WebEnv

        class CriuBranchEnv(WebEnv):
            """A :class:`WebEnv` on a CRIU-restored browser; closing it kills the branch and
            returns its pool slot. ``restore_info`` holds timings and the verification."""

            restore_info: dict[str, Any]
            _on_close: Any = None

            def close(self) -> None:
                try:
                    super().close()
                finally:
                    callback, self._on_close = self._on_close, None
                    if callback is not None:
                        callback()

        _BRANCH_CLASS = CriuBranchEnv
    return _BRANCH_CLASS


_BRANCH_CLASS: Any = None


# -- the backend ----------------------------------------------------------------------------------


@SNAPSHOT_BACKENDS.register("criu")
class CriuSnapshots(SnapshotBackend):
    """Process-level snapshots of web-environment browsers (see the module docstring).

    ``CriuSnapshots(config=None, **overrides)``: ``overrides`` are :class:`CriuConfig` fields;
    other keyword arguments (e.g. ``make_env``, passed to every backend) are ignored. Raises
    :class:`CriuUnavailableError` at construction when CRIU is not usable.
    """

    name = "criu"
    replays_prefix = False

    def __init__(self, config: CriuConfig | None = None, **overrides: Any) -> None:
        config = config or CriuConfig()
        known = {f.name for f in dataclasses.fields(CriuConfig)}
        fields = {k: v for k, v in overrides.items() if k in known}
        if fields:
            config = dataclasses.replace(config, **fields)
        self.config = config
        self.tool: CriuTool = check_criu(config.criu)
        from adaroll.envs.web.browser import JANITOR

        self._janitor = JANITOR
        self.max_branches = config.max_branches or default_pool_size()
        self.max_restores = config.max_concurrent_restores or (os.cpu_count() or 1)
        self._pool = threading.BoundedSemaphore(self.max_branches)
        self._restores = threading.BoundedSemaphore(self.max_restores)
        self._lock = threading.RLock()
        root = config.root_dir or os.environ.get("ADAROLL_CRIU_DIR") or tempfile.gettempdir()
        os.makedirs(root, mode=0o700, exist_ok=True)
        self.dir = Path(tempfile.mkdtemp(prefix="adaroll-criu-", dir=root)).resolve()
        # images hold a whole browser's memory (page contents, cookies): owner-only, like the
        # mkdtemp directory above them
        (self.dir / "snaps").mkdir(mode=0o700)
        (self.dir / "branches").mkdir(mode=0o700)
        self._janitor.register_dir(str(self.dir))
        self._kdat_dir = self._make_kdat_dir() if config.kdat_cache else None
        self._launcher = RestoreLauncher(str(self.dir / "launcher.err"))
        self._images: dict[str, _Image] = {}
        self._deleted: set[str] = set()
        self._pins: dict[str, _Pin] = {}
        self._branches: dict[int, Any] = {}
        self._branch_ids = iter(range(1, 1 << 62))
        self._closed = False
        self._finalizer = weakref.finalize(
            self,
            CriuSnapshots._cleanup_dir,
            str(self.dir),
            *([self._kdat_dir] if self._kdat_dir else []),
        )

    # -- protocol -------------------------------------------------------------------------------
    def save(self, env: GUIEnv, prefix: tuple[Action, ...]) -> SnapshotRef:
        """Dump ``env``'s browser (it keeps running) and record what verification needs."""
        self._check_open()
        from adaroll.envs.web.env import WebEnv  # the web extras are optional: import on use

        if not isinstance(env, WebEnv):
            raise SnapshotError(
                f"criu snapshots need a web environment (WebEnv), got {type(env).__name__}"
            )
        browser = env.browser
        if not browser.isolated:
            raise SnapshotError(
                "criu snapshots need an isolated browser (own pid/mount/net "
                "namespaces: run as root with util-linux `unshare`)"
            )
        if not browser.alive():
            raise SnapshotError(f"cannot snapshot: browser {browser.pid} is not running")
        if browser.unprivileged:
            raise SnapshotError(
                "criu snapshots cannot restore an unprivileged browser yet (user "
                'namespace; docs/web.md, "Browsers without root"): launch '
                "it with env.options.browser.user: null"
            )
        web = env
        if self.config.collect_garbage:
            web.collect_garbage()
        episode = web.episode_state()
        obs = web.observe()
        tree = obs.element_tree_hash()
        check_pixels = self.config.verify_screenshot
        if check_pixels is None:
            check_pixels = bool(web.config.screenshot)
        shot = stable_screenshot_hash(web) if check_pixels else ""
        snap_id = new_snapshot_id(f"criu-{os.getpid()}")  # ids of other processes differ
        snapdir = self.dir / "snaps" / snap_id
        img = snapdir / IMAGE_SUBDIR
        snapdir.mkdir(mode=0o700)
        img.mkdir(mode=0o700)
        hook = snapdir / "hook.sh"
        hook.write_text(_HOOK)
        hook.chmod(0o755)
        log = snapdir / "dump.log"
        cmd = [
            "nsenter",
            f"--mount=/proc/{browser.pid}/ns/mnt",
            "--",
            self.tool.path,
            "dump",
            "-t",
            str(browser.pid),
            "-D",
            str(img),
            "-o",
            str(log),
            "--leave-running",
            *CRIU_COMMON,
            "--network-lock",
            "skip",
            "--action-script",
            str(hook),
        ]
        ext_net = self.config.external_netns
        if ext_net:
            inode = os.stat(f"/proc/{browser.pid}/ns/net").st_ino
            cmd += ["--external", f"net[{inode}]:{NET_KEY}"]
        env_vars = dict(
            os.environ,
            ADAROLL_STATE_DIR=browser.state_dir,
            ADAROLL_STATE_COPY=str(snapdir / STATE_SUBDIR),
        )
        t0 = time.perf_counter()
        try:
            run = _run(cmd, self.config.command_timeout_s, env=env_vars)
        except subprocess.TimeoutExpired as exc:
            shutil.rmtree(snapdir, ignore_errors=True)
            raise SnapshotError(f"criu dump of browser {browser.pid} timed out") from exc
        dump_s = time.perf_counter() - t0
        if run.returncode != 0 or not (snapdir / STATE_SUBDIR).is_dir():
            detail = _criu_errors(log) or clean_output(run.stderr)
            shutil.rmtree(snapdir, ignore_errors=True)
            raise SnapshotError(
                f"criu dump of browser {browser.pid} failed (exit {run.returncode}):\n{detail}"
            )
        manifest = _manifest(snapdir)
        (snapdir / MANIFEST).write_text(json.dumps(manifest))
        size = sum(entry[0] for entry in manifest.values())
        record = _Image(
            snap_id,
            snapdir,
            browser.state_dir,
            int(browser.port),
            episode,
            web.config,
            manifest,
            external_netns=ext_net,
            page_url=web.cdp.url,
        )
        with self._lock:
            self._pin(browser.state_dir, browser)
            self._images[snap_id] = record
        meta = {
            "image_dir": str(snapdir),
            "state_dir": browser.state_dir,
            "port": int(browser.port),
            "episode": episode,
            "screenshot_hash": shot,
            "image_bytes": size,
            "dump_seconds": round(dump_s, 4),
            "criu_version": self.tool.version_text,
            "external_netns": ext_net,
            "page_url": web.cdp.url,
            "env_config": _config_to_dict(web.config),
        }
        return SnapshotRef(snap_id, self.name, web.task, tuple(prefix), tree, meta)

    def restore(self, ref: SnapshotRef) -> GUIEnv:
        """A new, independent branch in the saved state: a :class:`WebEnv` (closing it kills
        the branch). Blocks while the branch pool is full (``pool_timeout_s``)."""
        self._check_open()
        image = self._acquire_image(ref)
        if not self._pool.acquire(timeout=self.config.pool_timeout_s):
            self._drop_branch_ref(image)
            raise SnapshotError(
                f"criu branch pool full: {self.max_branches} live branches for "
                f"{self.config.pool_timeout_s} s; close branches or raise "
                "max_branches"
            )
        try:
            env = self._restore(ref, image)
        except BaseException:
            self._pool.release()
            self._drop_branch_ref(image)
            raise
        # from here on the branch owns its pool slot and image reference (returned on close)
        try:
            self._check_branch(env, ref)
        except BaseException:
            env.close()
            raise
        return env

    def retain(self, ref: SnapshotRef) -> None:
        """Add a reference to ``ref``'s image (e.g. a second checkpoint sharing it)."""
        with self._lock:
            image = self._images.get(ref.id)
            if image is None or image.refs <= 0:
                raise SnapshotError(f"criu snapshot {ref.id} is not held by this backend")
            image.refs += 1

    def release(self, ref: SnapshotRef) -> None:
        """Drop one reference; the image is deleted once no reference and no live branch
        needs it."""
        with self._lock:
            image = self._images.get(ref.id)
            if image is None or image.refs <= 0:
                return
            image.refs -= 1
            self._maybe_delete(image)

    def holds(self, ref: SnapshotRef) -> bool:
        with self._lock:
            image = self._images.get(ref.id)
            return image is not None and image.refs > 0

    def live_branches(self) -> int:
        with self._lock:
            return len(self._branches)

    def close(self) -> None:
        """Kill every live branch, delete every image and this backend's directory."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            branches = list(self._branches.values())
        for env in branches:
            with contextlib.suppress(Exception):
                env.close()
        with self._lock:
            for image in list(self._images.values()):
                image.refs = 0
                image.branches = 0
                self._maybe_delete(image)
            for state in list(self._pins):
                self._unpin(state, force=True)
        self._launcher.close()
        self._finalizer()
        self._janitor.unregister_dir(str(self.dir))
        if self._kdat_dir:
            self._janitor.unregister_dir(self._kdat_dir)

    def __enter__(self) -> CriuSnapshots:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ------------------------------------------------------------------------------
    @staticmethod
    def _cleanup_dir(path: str, *more: str) -> None:
        for p in (path, *more):
            shutil.rmtree(p, ignore_errors=True)

    def _make_kdat_dir(self) -> str | None:
        """A directory on a tmpfs for criu's kernel-feature cache (None: no tmpfs found)."""
        try:
            mounts = Path("/proc/self/mounts").read_text().splitlines()
        except OSError:
            return None
        if not any(line.split()[1:3] == ["/dev/shm", "tmpfs"] for line in mounts if line):
            return None
        path = tempfile.mkdtemp(prefix=f"adaroll-criu-kdat-{os.getpid()}-", dir="/dev/shm")
        self._janitor.register_dir(path)
        # criu takes iptables' lock file for granted: without one it mounts a tmpfs over /run
        # in a throwaway mount namespace, whose teardown waits for an RCU grace period
        # (0.2-50 ms of a restore here); it never runs iptables on an external netns
        Path(path, "xtables.lock").touch(mode=0o600)
        return path

    def _check_open(self) -> None:
        if self._closed:
            raise SnapshotError("the criu snapshot backend is closed")

    def _acquire_image(self, ref: SnapshotRef) -> _Image:
        """The image record of ``ref`` with one more branch reference."""
        with self._lock:
            image = self._images.get(ref.id)
            if image is not None and str(image.dir) != str(ref.meta.get("image_dir", image.dir)):
                raise SnapshotError(
                    f"criu snapshot {ref.id}: a different image of this backend has the same id"
                )
            if image is None and ref.id in self._deleted:
                raise SnapshotError(f"criu snapshot {ref.id} was released (image deleted)")
            if image is None:
                image = self._foreign_image(ref)
            elif image.refs <= 0:
                raise SnapshotError(f"criu snapshot {ref.id} was released")
            image.branches += 1
            return image

    def _foreign_image(self, ref: SnapshotRef) -> _Image:
        """An image saved by another backend instance/process (``ref.meta`` names it); used in
        place, never deleted here."""
        if ref.backend != self.name:
            raise SnapshotError(f"snapshot {ref.id} was made by backend {ref.backend!r}, not criu")
        meta = ref.meta
        try:
            snapdir = Path(meta["image_dir"])
            state_dir, port, episode = meta["state_dir"], int(meta["port"]), meta["episode"]
        except (KeyError, TypeError, ValueError):
            raise SnapshotError(
                f"criu snapshot {ref.id}: its meta lacks image_dir/state_dir/port/episode"
            ) from None
        manifest_path = snapdir / MANIFEST
        try:
            manifest = json.loads(manifest_path.read_text())
        except FileNotFoundError:
            raise SnapshotError(
                f"criu snapshot {ref.id}: image file {manifest_path} is missing"
            ) from None
        except ValueError:
            raise SnapshotError(
                f"criu snapshot {ref.id}: image file {manifest_path} is corrupt"
            ) from None
        image = _Image(
            ref.id,
            snapdir,
            state_dir,
            port,
            episode,
            _config_from_dict(meta.get("env_config")),
            manifest,
            external_netns=bool(meta.get("external_netns")),
            page_url=str(meta.get("page_url") or ""),
            owned=False,
        )
        self._images[ref.id] = image
        self._pin(state_dir, None)
        return image

    def _pin(self, state_dir: str, browser: BrowserProcess | None) -> None:
        """Make sure ``state_dir`` exists on the host and stays until released (lock held)."""
        pin = self._pins.get(state_dir)
        if pin is None:
            pin = _Pin(state_dir)
            if browser is not None:
                pin.dirs = _disown_dirs(browser)
                pin.browser = weakref.ref(browser)
            if not os.path.isdir(state_dir):
                created = []
                path = Path(state_dir)
                while not path.exists():
                    created.append(str(path))
                    path = path.parent
                # searchable (not listable) by the browser's unprivileged user, which passes
                # through them to the state mounted at state_dir
                os.makedirs(state_dir, mode=0o711, exist_ok=True)
                if created:
                    pin.dirs = (*pin.dirs, created[-1])
                    self._janitor.register_dir(created[-1])
            self._pins[state_dir] = pin
        pin.users += 1

    def _unpin(self, state_dir: str, force: bool = False) -> None:
        pin = self._pins.get(state_dir)
        if pin is None:
            return
        pin.users -= 1
        if pin.users > 0 and not force:
            return
        del self._pins[state_dir]
        browser = pin.browser() if pin.browser is not None else None
        if browser is not None and pin.dirs and _return_dirs(browser, pin.dirs):
            return
        for path in pin.dirs:
            shutil.rmtree(path, ignore_errors=True)
            self._janitor.unregister_dir(path)

    def _maybe_delete(self, image: _Image) -> None:
        """Delete ``image`` when nothing needs it (lock held)."""
        if image.refs > 0 or image.branches > 0 or image.id not in self._images:
            return
        del self._images[image.id]
        if image.owned:
            shutil.rmtree(image.dir, ignore_errors=True)
            self._deleted.add(image.id)
        self._unpin(image.state_dir)

    def _drop_branch_ref(self, image: _Image) -> None:
        with self._lock:
            image.branches -= 1
            self._maybe_delete(image)

    def _restore(self, ref: SnapshotRef, image: _Image) -> GUIEnv:
        from adaroll.envs.web.browser import BrowserProcess

        _check_manifest(image.dir, image.manifest, ref.id)
        branch_no = next(self._branch_ids)
        bdir = self.dir / "branches" / f"{ref.id}-b{branch_no}"
        bdir.mkdir(mode=0o700)
        pidfile, log = bdir / "pid", bdir / "restore.log"
        criu = [
            self.tool.path,
            "restore",
            "-D",
            str(image.img),
            "-W",
            str(bdir),
            "-o",
            str(log),
            "-d",
            "--pidfile",
            str(pidfile),
            *CRIU_COMMON,
        ]
        if image.external_netns:
            criu += ["--inherit-fd", f"fd[{NETNS_FD}]:{NET_KEY}"]
        output = bdir / "criu.out"
        request = Request(
            image.state_dir,
            str(image.state_copy),
            self.config.branch_tmpfs_mb,
            self._kdat_dir or "",
            image.external_netns,
            tuple(criu),
            str(output),
        )
        with self._restores, _subreaper():
            t1 = time.perf_counter()
            try:
                returncode = self._launcher.run(request, self.config.command_timeout_s)
            except (subprocess.TimeoutExpired, LauncherError) as exc:
                self._kill_pidfile(pidfile)
                shutil.rmtree(bdir, ignore_errors=True)
                what = "timed out" if isinstance(exc, subprocess.TimeoutExpired) else str(exc)
                raise SnapshotError(f"criu restore of {ref.id}: {what}") from exc
            criu_s = time.perf_counter() - t1
        if returncode != 0 or not pidfile.exists():
            self._kill_pidfile(pidfile)
            stderr = clean_output(output.read_text(errors="replace")) if output.exists() else ""
            errors = _criu_errors(log) if log.exists() else stderr
            shutil.rmtree(bdir, ignore_errors=True)
            files = _mentioned_images(errors)
            named = f" (files: {', '.join(str(image.img / f) for f in files)})" if files else ""
            raise SnapshotError(
                f"criu restore of snapshot {ref.id} from {image.img} failed "
                f"(exit {returncode}){named}:\n{errors}\n{stderr[-500:]}"
            )
        pid = int(pidfile.read_text().split()[0])
        try:
            browser = BrowserProcess.adopt(
                pid,
                state_dir=image.state_dir,
                port=image.port,
                isolated=True,
                owned_dirs=(str(bdir),),
                page_url=image.page_url or None,
            )
        except BaseException:
            self._kill(pid)
            shutil.rmtree(bdir, ignore_errors=True)
            raise
        try:
            t2 = time.perf_counter()
            if not image.page_url:  # an older image: ask for the page target once it answers
                browser.wait_ready(timeout=30.0)
            env = _branch_env_class().attach(
                browser, image.episode, image.env_config, owns_browser=True
            )
            connect_s = time.perf_counter() - t2
        except BaseException as exc:
            browser.kill()
            if isinstance(exc, Exception):
                raise SnapshotError(
                    f"restored branch of {ref.id} (pid {pid}) does not answer over CDP: {exc}"
                ) from exc
            raise
        with self._lock:
            self._branches[branch_no] = env
        env._on_close = self._make_on_close(branch_no, image)  # type: ignore[attr-defined]
        env.restore_info = {
            "snapshot": ref.id,
            "pid": pid,
            "criu_seconds": criu_s,
            "connect_seconds": connect_s,
        }
        return env

    def _check_branch(self, env: Any, ref: SnapshotRef) -> None:
        """Verify a new branch (paper A.1) and record the result in ``env.restore_info``."""
        t0 = time.perf_counter()
        check = self._verify(env, ref)
        info = env.restore_info
        info["verify_seconds"] = time.perf_counter() - t0
        info["check"] = check
        if not check.ok and self.config.verify == "raise":
            raise SnapshotVerificationError(
                f"restored branch of {ref.id} does not match the snapshot: {check.describe()}",
                check,
            )

    def _make_on_close(self, branch_no: int, image: _Image) -> Any:
        ref = weakref.ref(self)

        def on_close() -> None:
            backend = ref()
            if backend is None:
                return
            with backend._lock:
                if backend._branches.pop(branch_no, None) is None:
                    return
            backend._pool.release()
            backend._drop_branch_ref(image)

        return on_close

    def _verify(self, env: Any, ref: SnapshotRef) -> RestoreCheck:
        if self.config.verify == "off":
            return RestoreCheck(True, True, None)
        return verify_branch(env, ref, screenshots=self.config.verify_screenshot is not False)

    @staticmethod
    def _kill(pid: int) -> None:
        from adaroll.envs.web.browser import reap

        with contextlib.suppress(OSError):
            os.kill(pid, 9)
        with contextlib.suppress(Exception):
            reap(pid, timeout=10)

    def _kill_pidfile(self, pidfile: Path) -> None:
        with contextlib.suppress(OSError, ValueError, IndexError):
            self._kill(int(pidfile.read_text().split()[0]))


def _run(
    cmd: list[str], timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a criu command line in its own process group, killing the whole group on timeout
    (``sh`` may be criu's parent, and killing only the direct child would leave criu running).
    Restored trees are unaffected: criu gives them their own (dumped) sessions."""
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, 9)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _config_to_dict(config: Any) -> dict[str, Any]:
    with contextlib.suppress(TypeError):
        return dataclasses.asdict(config)
    return {}


def _config_from_dict(data: dict[str, Any] | None) -> WebEnvConfig:
    """Rebuild a :class:`WebEnvConfig` from :func:`_config_to_dict` output (JSON lists ->
    tuples); unknown fields are dropped."""
    from adaroll.envs.web.browser import BrowserConfig
    from adaroll.envs.web.env import WebEnvConfig

    data = dict(data or {})
    browser = data.pop("browser", None) or {}
    bfields = {f.name for f in dataclasses.fields(BrowserConfig)}
    bconf: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in browser.items() if k in bfields
    }
    efields = {f.name for f in dataclasses.fields(WebEnvConfig)}
    econf = {k: v for k, v in data.items() if k in efields}
    return WebEnvConfig(browser=BrowserConfig(**bconf), **econf)
