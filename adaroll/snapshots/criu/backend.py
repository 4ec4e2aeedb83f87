"""The ``criu`` snapshot backend (:class:`CriuSnapshots`): save dumps a live browser, restore
starts an independent branch from the image, verifies it and hands it over as a
:class:`~adaroll.envs.web.env.WebEnv`; images are reference-counted. How and why: the
package's docstring (:mod:`adaroll.snapshots.criu`)."""

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
from adaroll.snapshots.criu.branch import branch_env_class, disown_dirs, return_dirs
from adaroll.snapshots.criu.config import (
    CRIU_COMMON,
    DUMP_HOOK,
    IMAGE_SUBDIR,
    MANIFEST,
    NET_KEY,
    STATE_SUBDIR,
    CriuConfig,
    default_pool_size,
)
from adaroll.snapshots.criu.images import (
    Image,
    StatePin,
    check_manifest,
    env_config_from_dict,
    env_config_to_dict,
    ids_from_meta,
    image_manifest,
)
from adaroll.snapshots.criu.processes import criu_errors, mentioned_images, run_criu, subreaper
from adaroll.snapshots.criu.restore_launcher import (
    NETNS_FD,
    LauncherError,
    Request,
    RestoreLauncher,
)
from adaroll.snapshots.criu.tool import (
    CriuTool,
    check_criu,
    clean_output,
    run_as_account,
    task_ids,
    unprivileged_flags,
)
from adaroll.snapshots.verification import (
    RestoreCheck,
    SnapshotVerificationError,
    stable_screenshot_hash,
    verify_branch,
)

if TYPE_CHECKING:
    from adaroll.envs.web.browser import BrowserProcess


@SNAPSHOT_BACKENDS.register("criu")
class CriuSnapshots(SnapshotBackend):
    """Process-level snapshots of web-environment browsers (:mod:`adaroll.snapshots.criu`).

    ``CriuSnapshots(config=None, **overrides)``: ``overrides`` are :class:`CriuConfig` fields;
    other keyword arguments (e.g. ``make_env``, passed to every backend) are ignored. Raises
    :class:`CriuUnavailableError` at construction when CRIU is not usable.
    """

    name = "criu"
    replays_prefix = False
    whole_app: bool = False
    """Whether the backend restores what a whole-app env (``WebEnv.whole_app``) keeps beside its
    browser (its servers and files: ``app-criu``, :mod:`adaroll.snapshots.criu.apps`); a backend
    without it refuses such an env."""
    branch_class = staticmethod(branch_env_class)  # the env class a restored branch is
    tcp_connections: str = "--tcp-close"
    """criu's flag for established TCP connections, at dump and restore: a browser alone has
    only the controller's DevTools connection, whose far end is outside the dump, so it is
    restored closed (the controller reconnects)."""

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
        self._images: dict[str, Image] = {}
        self._deleted: set[str] = set()
        self._pins: dict[str, StatePin] = {}
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

        if not isinstance(env, WebEnv) or (env.whole_app and not self.whole_app):
            raise SnapshotError(
                f"criu snapshots need a web env (WebEnv; apps: 'app-criu'), got {type(env).__name__}"
            )
        browser = env.browser
        if not browser.isolated:
            raise SnapshotError(
                "criu snapshots need an isolated browser (own pid/mount/net "
                "namespaces: run as root with util-linux `unshare`)"
            )
        if not browser.alive():
            raise SnapshotError(f"cannot snapshot: browser {browser.pid} is not running")
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
        hook.write_text(DUMP_HOOK)
        hook.chmod(0o755)
        log = snapdir / "dump.log"
        ids = task_ids(browser.pid)  # criu runs as the browser's account
        cmd = [
            "nsenter",
            f"--mount=/proc/{browser.pid}/ns/mnt",
            "--",
            *run_as_account(*ids),
            self.tool.path,
            "dump",
            "-t",
            str(browser.pid),
            "-D",
            str(img),
            "-o",
            str(log),
            "--leave-running",
            self.tcp_connections,
            *CRIU_COMMON,
            "--network-lock",
            "skip",
            "--action-script",
            str(hook),
            *unprivileged_flags(ids),
        ]
        ext_net = self.config.external_netns
        if ext_net:
            inode = os.stat(f"/proc/{browser.pid}/ns/net").st_ino
            cmd += ["--external", f"net[{inode}]:{NET_KEY}"]
        env_vars = dict(
            os.environ,
            ADAROLL_STATE_DIR=browser.state_dir,
            ADAROLL_STATE_COPY=str(snapdir / STATE_SUBDIR),
            XDG_RUNTIME_DIR="/run",  # criu --unprivileged's kernel-probe cache: the browser's tmpfs
        )
        t0 = time.perf_counter()
        try:
            run = run_criu(cmd, self.config.command_timeout_s, env=env_vars)
        except subprocess.TimeoutExpired as exc:
            shutil.rmtree(snapdir, ignore_errors=True)
            raise SnapshotError(f"criu dump of browser {browser.pid} timed out") from exc
        dump_s = time.perf_counter() - t0
        if run.returncode != 0 or not (snapdir / STATE_SUBDIR).is_dir():
            detail = criu_errors(log) or clean_output(run.stderr)
            shutil.rmtree(snapdir, ignore_errors=True)
            raise SnapshotError(
                f"criu dump of browser {browser.pid} failed (exit {run.returncode}):\n{detail}"
            )
        manifest = image_manifest(snapdir)
        (snapdir / MANIFEST).write_text(json.dumps(manifest))
        size = sum(entry[0] for entry in manifest.values())
        record = Image(
            snap_id,
            snapdir,
            browser.state_dir,
            int(browser.port),
            episode,
            web.config,
            manifest,
            external_netns=ext_net,
            page_url=web.cdp.url,
            ids=ids,
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
            "browser_ids": list(ids),
            "env_config": env_config_to_dict(web.config),
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
        # criu as a browser's account keeps its own (restore_launcher.ACCOUNT_KDAT_DIR)
        Path(path, "account").mkdir(mode=0o700)
        return path

    def _check_open(self) -> None:
        if self._closed:
            raise SnapshotError("the criu snapshot backend is closed")

    def _acquire_image(self, ref: SnapshotRef) -> Image:
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

    def _foreign_image(self, ref: SnapshotRef) -> Image:
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
        image = Image(
            ref.id,
            snapdir,
            state_dir,
            port,
            episode,
            env_config_from_dict(meta.get("env_config")),
            manifest,
            external_netns=bool(meta.get("external_netns")),
            page_url=str(meta.get("page_url") or ""),
            ids=ids_from_meta(meta.get("browser_ids"), ref.id),
            owned=False,
        )
        self._images[ref.id] = image
        self._pin(state_dir, None)
        return image

    def _pin(self, state_dir: str, browser: BrowserProcess | None) -> None:
        """Make sure ``state_dir`` exists on the host and stays until released (lock held)."""
        pin = self._pins.get(state_dir)
        if pin is None:
            pin = StatePin(state_dir)
            if browser is not None:
                pin.dirs = disown_dirs(browser)
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
        if browser is not None and pin.dirs and return_dirs(browser, pin.dirs):
            return
        for path in pin.dirs:
            shutil.rmtree(path, ignore_errors=True)
            self._janitor.unregister_dir(path)

    def _maybe_delete(self, image: Image) -> None:
        """Delete ``image`` when nothing needs it (lock held)."""
        if image.refs > 0 or image.branches > 0 or image.id not in self._images:
            return
        del self._images[image.id]
        if image.owned:
            shutil.rmtree(image.dir, ignore_errors=True)
            self._deleted.add(image.id)
        self._unpin(image.state_dir)

    def _drop_branch_ref(self, image: Image) -> None:
        with self._lock:
            image.branches -= 1
            self._maybe_delete(image)

    def _restore(self, ref: SnapshotRef, image: Image) -> GUIEnv:
        from adaroll.envs.web.browser import BrowserProcess

        check_manifest(image.dir, image.manifest, ref.id)
        branch_no = next(self._branch_ids)
        bdir = self.dir / "branches" / f"{ref.id}-b{branch_no}"
        bdir.mkdir(mode=0o700)
        pidfile, log, output = bdir / "pid", bdir / "restore.log", bdir / "criu.out"
        criu = [
            *run_as_account(*image.ids),
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
            self.tcp_connections,
            *CRIU_COMMON,
            *unprivileged_flags(image.ids),
        ]
        if image.external_netns:
            criu += ["--inherit-fd", f"fd[{NETNS_FD}]:{NET_KEY}"]
        request = Request(
            image.state_dir,
            str(image.state_copy),
            self.config.branch_tmpfs_mb,
            self._kdat_dir or "",
            image.external_netns,
            tuple(criu),
            str(output),
            str(pidfile),
        )
        with self._restores, subreaper():
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
            errors = criu_errors(log) if log.exists() else stderr
            shutil.rmtree(bdir, ignore_errors=True)
            files = mentioned_images(errors)
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
            env = self.branch_class().attach(browser, image.episode, image.env_config)
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

    def _make_on_close(self, branch_no: int, image: Image) -> Any:
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
