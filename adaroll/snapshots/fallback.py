"""Verified restores with a replay fallback (paper A.1 health check; issue 10).

A snapshot restore can go wrong in ways that no exception reports: a damaged image that still
restores, a branch that dies right after, a state that differs from the one saved. So every
restore the rollout layer makes goes through :func:`restore_verified`:

* the branch must come back (no :class:`~adaroll.snapshots.base.SnapshotError` - a missing or
  corrupt image file is reported by the backend with the file's name - and no
  :class:`~adaroll.envs.base.EnvFault` while checking it);
* it must pass the backend's own verification when it has one (CRIU records the element-tree
  and screenshot hashes at save time, ``env.restore_info["check"]``), else show the element
  tree recorded in the ref;
* otherwise the branch is closed and the checkpoint's prefix is **replayed** in a fresh env
  (:class:`~adaroll.snapshots.replay.ReplaySnapshots`), which must reach the recorded element
  tree. The result says why the snapshot was not used and how many steps were replayed, for
  the ledger (``restore_fallbacks``, ``replayed_steps``).

Replay is slower and more fragile than a restore (docs/architecture.md, "Platform notes") but depends on nothing
saved, so it is the right second chance; when it fails too the error names both failures.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from adaroll.envs.base import EnvFault, GUIEnv
from adaroll.snapshots.base import SnapshotBackend, SnapshotError, SnapshotRef
from adaroll.snapshots.replay import ReplaySnapshots

log = logging.getLogger("adaroll")


@dataclass
class Restored:
    """A branch ready to roll out, and how it was obtained."""

    env: GUIEnv
    fallback: str = ""
    """Why the snapshot could not be used ("" when it was)."""
    replayed_steps: int = 0
    """Env steps replayed by the fallback."""


def restore_verified(
    backend: SnapshotBackend, ref: SnapshotRef, make_env: Callable[[], GUIEnv]
) -> Restored:
    """Restore ``ref`` and check the branch; on any failure replay the prefix instead.

    Raises :class:`SnapshotError` when the replay does not reach the recorded state either,
    and lets an :class:`EnvFault` of the replaying env through (the caller replaces envs)."""
    try:
        env = backend.restore(ref)
    except (SnapshotError, EnvFault) as exc:
        why = f"{type(exc).__name__}: {exc}"
    else:
        why = _mismatch(env, ref)
        if not why:
            return Restored(env)
        env.close()
    if backend.replays_prefix:
        raise SnapshotError(f"snapshot {ref.id} (replay backend) is unusable: {why}")
    log.warning(
        "snapshot %s unusable, replaying its %d-step prefix instead: %s",
        ref.id,
        len(ref.prefix),
        why,
    )
    env = ReplaySnapshots(make_env=make_env).restore(ref)
    try:
        tree = env.observe().element_tree_hash()
    except BaseException:
        env.close()
        raise
    if ref.element_tree_hash and tree != ref.element_tree_hash:
        env.close()
        raise SnapshotError(
            f"snapshot {ref.id} is unusable ({why}) and replaying its prefix "
            f"reached element tree {tree}, not the recorded "
            f"{ref.element_tree_hash}"
        )
    return Restored(env, why, len(ref.prefix))


def _mismatch(env: GUIEnv, ref: SnapshotRef) -> str:
    """Why a restored branch may not be used ("" when it may)."""
    check = env.restore_info.get("check") if env.restore_info is not None else None
    if check is not None:  # the backend verified it (CRIU)
        return "" if check.ok else f"verification failed: {check.describe()}"
    if not ref.element_tree_hash:
        return ""
    try:
        tree = env.observe().element_tree_hash()
    except EnvFault as exc:
        return f"restored branch does not answer: {exc}"
    if tree != ref.element_tree_hash:
        return f"element tree {tree} != recorded {ref.element_tree_hash}"
    return ""
