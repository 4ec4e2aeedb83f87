"""In-process snapshots for envs that can copy their own state exactly (``SupportsStateCopy``)."""

from __future__ import annotations

from typing import Any

from adaroll.actions import Action
from adaroll.envs.base import GUIEnv
from adaroll.snapshots.base import (
    SNAPSHOT_BACKENDS,
    SnapshotBackend,
    SnapshotError,
    SnapshotRef,
    SupportsStateCopy,
    new_snapshot_id,
)


@SNAPSHOT_BACKENDS.register("memory")
class MemorySnapshots(SnapshotBackend):
    """Keeps immutable env states in a dict; a restore is a fresh env over the same state."""

    name = "memory"
    replays_prefix = False

    def __init__(self, **_: Any) -> None:
        self._states: dict[str, tuple[Any, SupportsStateCopy]] = {}

    def save(self, env: GUIEnv, prefix: tuple[Action, ...]) -> SnapshotRef:
        if not isinstance(env, SupportsStateCopy):
            raise SnapshotError(f"env {type(env).__name__} cannot copy its state; use 'replay'")
        ref = SnapshotRef(
            new_snapshot_id("mem"),
            self.name,
            env.task,
            tuple(prefix),
            env.observe().element_tree_hash(),
        )
        self._states[ref.id] = (env.get_state(), env)
        return ref

    def restore(self, ref: SnapshotRef) -> GUIEnv:
        try:
            state, owner = self._states[ref.id]
        except KeyError:
            raise SnapshotError(f"memory snapshot {ref.id} is not held by this process") from None
        return owner.branch(state)

    def holds(self, ref: SnapshotRef) -> bool:
        return ref.id in self._states

    def release(self, ref: SnapshotRef) -> None:
        self._states.pop(ref.id, None)

    def close(self) -> None:
        self._states.clear()
