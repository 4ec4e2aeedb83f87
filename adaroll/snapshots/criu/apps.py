"""``app-criu``: whole-app snapshots - the app servers, their databases and the browser, dumped
as one unit with CRIU and restored into independent branches.

The apps env already runs everything an app is inside one set of namespaces (:mod:`adaroll.
envs.apps.env`): the namespace init, the supervisor, one server process per app and Chromium,
with the databases on the namespace's private tmpfs. The web env's CRIU backend
(:class:`~adaroll.snapshots.criu.CriuSnapshots`) dumps the init's whole process tree and copies
the tmpfs in the ``post-dump`` hook while the tasks are frozen, and every branch gets its own
pid, mount, network and time namespaces with an overlay over that copy. So each branch has its
own servers listening on its own loopback and its own database files (the overlay's upper
layer): a write in one branch is invisible to every other branch and to the parent
(``tests/snapshots/criu/test_apps_branches.py``: 8 branches, a different write in each).

What this backend adds to the browser backend:

* **connections survive**: the browser's connections to the app servers are dumped and restored
  established (``--tcp-established``; both ends are in the dumped tree), so a request in flight
  at the dump completes in every branch: each branch's server applies it to its own database
  and answers its own page. A dump of a page with work pending (a request, a short timer) is
  verified against the state it leads to: the parent settles right after the dump, and each
  branch settles before its check (``ref.meta["unsettled"]``). The env's own checkpoints are
  settled, so this only concerns a user's ``save`` mid-request;
* **refuses what it cannot restore faithfully**: an env whose servers do not all run;
* **a state checksum at dump**: the databases as dumped - read from the state copy the hook made
  while the tree was frozen - are hashed (:func:`~adaroll.envs.apps.state.checksum`) and must
  equal the live state just before the dump (else the dump raced with a write and is refused);
* **verification after restore** (:class:`AppRestoreCheck`): besides the browser checks (alive,
  element tree), every app server must run in the branch and the branch's databases must hash
  to the checksum of the dump. A mismatch is refused: ``verify="raise"`` raises
  :class:`~adaroll.snapshots.verification.SnapshotVerificationError`, which the rollout layer
  answers by replaying the prefix and counting the fallback
  (:func:`~adaroll.snapshots.fallback.restore_verified`);
* **branches are apps envs** (:class:`~adaroll.envs.apps.env.AppsEnv` via
  :func:`~adaroll.snapshots.criu.branch.branch_class_of`): the judge reads the branch's own
  databases, through its own mount namespace.

Replay (``replay``) remains the fallback for any apps snapshot; the ``memory`` backend does not
apply (the state is not in this process).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from adaroll.actions import Action
from adaroll.envs.apps.config import APP_NAMES
from adaroll.envs.apps.env import AppsEnv
from adaroll.envs.apps.launch import server_processes
from adaroll.envs.apps.state import checksum, read_database
from adaroll.envs.base import EnvFault, GUIEnv
from adaroll.envs.web.cdp import CDPError
from adaroll.snapshots.base import SNAPSHOT_BACKENDS, SnapshotError, SnapshotRef
from adaroll.snapshots.criu.backend import CriuSnapshots
from adaroll.snapshots.criu.branch import branch_class_of
from adaroll.snapshots.criu.config import STATE_SUBDIR
from adaroll.snapshots.verification import RestoreCheck, stable_screenshot_hash


@dataclass(frozen=True)
class AppRestoreCheck:
    """The browser's check (:class:`RestoreCheck`) plus the apps': servers and databases."""

    browser: RestoreCheck
    missing_servers: tuple[str, ...]
    expected_state: str
    got_state: str
    error: str = ""

    @property
    def ok(self) -> bool:
        return (
            self.browser.ok
            and not self.missing_servers
            and not self.error
            and self.got_state == self.expected_state
        )

    def describe(self) -> str:
        if self.ok:
            return "ok"
        parts = [] if self.browser.ok else [self.browser.describe()]
        if self.missing_servers:
            parts.append(f"app server(s) {', '.join(self.missing_servers)} not running")
        if self.error:
            parts.append(f"databases unreadable ({self.error})")
        elif self.got_state != self.expected_state:
            parts.append(f"database state {self.got_state} != {self.expected_state} at dump")
        return "; ".join(parts)


def dumped_state_checksum(image_dir: str) -> str:
    """The checksum of the databases as dumped: the state copy next to the image."""
    data = Path(image_dir, STATE_SUBDIR, "app")
    return checksum({app: read_database(str(data / f"{app}.db")) for app in APP_NAMES})


@SNAPSHOT_BACKENDS.register("app-criu")
class AppCriuSnapshots(CriuSnapshots):
    """Whole-app CRIU snapshots of :class:`AppsEnv` (module docstring). Same options as
    :class:`~adaroll.snapshots.criu.CriuSnapshots`."""

    name = "app-criu"
    whole_app = True
    tcp_connections = "--tcp-established"

    def save(self, env: GUIEnv, prefix: tuple[Action, ...]) -> SnapshotRef:
        if not isinstance(env, AppsEnv):
            raise SnapshotError(
                f"app-criu snapshots an apps env (AppsEnv), got {type(env).__name__}; "
                "use 'criu' for a web env"
            )
        try:
            env.check_servers()
            live = env.state_checksum()
            unsettled = env.pending_work()
        except (EnvFault, CDPError) as exc:
            raise SnapshotError(f"cannot snapshot a broken apps env: {exc}") from exc
        ref = super().save(env, prefix)
        try:
            dumped = dumped_state_checksum(ref.meta["image_dir"])
        except Exception as exc:
            self.release(ref)
            raise SnapshotError(
                f"app-criu {ref.id}: the dumped databases are unreadable: {exc}"
            ) from exc
        if dumped != live:
            self.release(ref)
            raise SnapshotError(
                f"app-criu {ref.id}: the databases changed during the dump ({dumped} != {live})"
            )
        ref.meta["state_checksum"] = dumped
        if unsettled:
            ref = self._settled(env, ref, unsettled)
        return ref

    def _settled(self, env: AppsEnv, ref: SnapshotRef, unsettled: int) -> SnapshotRef:
        """What a branch of a dump with work pending must come to: the parent, settled now,
        as every branch is before its check (its requests complete there too)."""
        try:
            busy = env.settle()
            tree = env.observe().element_tree_hash()
            state = env.state_checksum()
            shot = stable_screenshot_hash(env) if ref.meta.get("screenshot_hash") else ""
        except (EnvFault, CDPError) as exc:
            self.release(ref)
            raise SnapshotError(
                f"app-criu {ref.id}: the parent broke while settling: {exc}"
            ) from exc
        if busy:
            self.release(ref)
            raise SnapshotError(
                f"app-criu {ref.id}: the page was still busy {env.config.settle_timeout_ms} ms "
                "after the dump: a branch would have no settled state to be checked against"
            )
        meta = {**ref.meta, "unsettled": unsettled, "state_checksum": state}
        if shot:
            meta["screenshot_hash"] = shot
        return replace(ref, element_tree_hash=tree, meta=meta)

    @staticmethod
    def branch_class() -> Any:
        return branch_class_of(AppsEnv)

    def _verify(self, env: Any, ref: SnapshotRef) -> Any:
        if ref.meta.get("unsettled"):  # the dump's pending requests complete in the branch first
            try:
                env.settle()
            except (EnvFault, CDPError) as exc:
                return RestoreCheck(False, False, None, error=f"settling after restore: {exc}")
        base = super()._verify(env, ref)
        if self.config.verify == "off":
            return base
        want = str(ref.meta.get("state_checksum", ""))
        try:
            # one walk of the branch's process tree for all apps (a walk reads every thread's
            # children file of Chromium's processes: a few ms per walk on a loaded machine)
            alive = server_processes(env.browser, APP_NAMES)
            missing = tuple(a for a in APP_NAMES if a not in alive)
            got = env.state_checksum() if not missing else ""
        except (EnvFault, OSError) as exc:
            return AppRestoreCheck(base, (), want, "", error=str(exc))
        return AppRestoreCheck(base, missing, want, got)
