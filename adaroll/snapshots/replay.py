"""Replay snapshots: reset with the same task and re-execute the action prefix (any env)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from adaroll.actions import Action
from adaroll.envs.base import GUIEnv, replay
from adaroll.snapshots.base import SNAPSHOT_BACKENDS, SnapshotBackend, SnapshotRef, new_snapshot_id


@SNAPSHOT_BACKENDS.register("replay")
class ReplaySnapshots(SnapshotBackend):
    """Stores nothing but the prefix; every restore costs ``len(prefix)`` replayed env steps."""

    name = "replay"
    replays_prefix = True

    def __init__(self, make_env: Callable[[], GUIEnv], **_: Any) -> None:
        self._make_env = make_env

    def save(self, env: GUIEnv, prefix: tuple[Action, ...]) -> SnapshotRef:
        return SnapshotRef(
            new_snapshot_id("replay"),
            self.name,
            env.task,
            tuple(prefix),
            env.observe().element_tree_hash(),
        )

    def restore(self, ref: SnapshotRef) -> GUIEnv:
        env = self._make_env()
        try:
            replay(env, ref.task, ref.prefix)
        except BaseException:
            env.close()
            raise
        return env
