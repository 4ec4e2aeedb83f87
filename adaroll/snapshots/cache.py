"""The snapshots of one collector's checkpoints: built on first use, restored into verified
branches, rebuilt after a failed restore, and what building them cost.

A :class:`SnapshotCache` holds one live :class:`~adaroll.snapshots.base.SnapshotRef` per
checkpoint. The first restore of a checkpoint builds its snapshot: a fresh env replays the
checkpoint's action prefix (after checking that the env runs the device profile the checkpoint
was recorded on), must reach the recorded element tree, and is saved by the backend. Every
restore is verified (:func:`~adaroll.snapshots.fallback.restore_verified`); a branch that fails
is replaced by a replay of the prefix and the snapshot is dropped, so that the next restore
builds it afresh.

Build cost has two views, both kept by :class:`BuildCosts`:

* **overhead**: every build this process made (each worker, each restarted process builds its
  own images), recorded in the ledger as purpose ``overhead`` and on no bill;
* **billed**: one build per checkpoint per phase, at the first group that restores from it
  (how often images are rebuilt depends on the execution, the bill must not).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from adaroll.checkpoints import Checkpoint, CheckpointStore
from adaroll.envs.base import GUIEnv, replay
from adaroll.snapshots.base import SnapshotBackend, SnapshotError, SnapshotRef
from adaroll.snapshots.fallback import Restored, restore_verified


class BuildCosts:
    """Replayed steps spent building snapshot images: what the execution spent (``overhead``)
    and what a phase is billed (the first use of each checkpoint's image)."""

    def __init__(self, prefix_length: Callable[[str], int]) -> None:
        self._prefix_length = prefix_length
        self.overhead_steps = 0
        """Steps replayed by builds since :meth:`take_overhead` last took them."""
        self.billed: set[str] = set()
        """Checkpoints whose image the phase has paid for (one replay of the prefix)."""

    def add_build(self, replayed_steps: int) -> None:
        self.overhead_steps += replayed_steps

    def take_overhead(self) -> int:
        """The replayed steps of the builds since the last call (and zero them)."""
        steps, self.overhead_steps = self.overhead_steps, 0
        return steps

    def bill_first_use(self, checkpoint_id: str | None, restores: int) -> int:
        """Replay steps that building the image of a group's checkpoint costs, billed at its first
        use in the phase (restores from a snapshot need the image; later uses share it)."""
        if restores == 0 or checkpoint_id is None or checkpoint_id in self.billed:
            return 0
        self.billed.add(checkpoint_id)
        return self._prefix_length(checkpoint_id)

    def state_dict(self) -> list[str]:
        return sorted(self.billed)

    def load_state_dict(self, billed: Iterable[str]) -> None:
        self.billed = set(billed)


class SnapshotCache:
    """One live snapshot per checkpoint of ``checkpoints``, saved by ``backend`` from envs made by
    ``make_env`` (see the module docstring)."""

    def __init__(
        self, backend: SnapshotBackend, checkpoints: CheckpointStore, make_env: Callable[[], GUIEnv]
    ) -> None:
        self.backend = backend
        self.checkpoints = checkpoints
        self.make_env = make_env
        self.costs = BuildCosts(self.prefix_length)
        self._refs: dict[str, SnapshotRef] = {}
        self._lock = threading.Lock()
        """One build at a time (prefetch threads build snapshots too)."""

    @property
    def replays_prefix(self) -> bool:
        """Whether every restore replays the checkpoint's prefix (the replay backend)."""
        return self.backend.replays_prefix

    @property
    def max_restores(self) -> int:
        return self.backend.max_restores

    @property
    def max_branches(self) -> int | None:
        return self.backend.max_branches

    def prefix_length(self, checkpoint_id: str) -> int:
        """Actions from the task's reset to a checkpoint: what replaying it once costs."""
        return len(self.checkpoints.get(checkpoint_id).history)

    def restore(self, checkpoint_id: str) -> Restored:
        """A verified branch of the checkpoint's snapshot (built first when missing)."""
        return restore_verified(
            self.backend, self.ref(self.checkpoints.get(checkpoint_id)), self.make_env
        )

    def ref(self, checkpoint: Checkpoint) -> SnapshotRef:
        """The live snapshot of a checkpoint, built by replaying its prefix when missing."""
        with self._lock:
            ref = self._refs.get(checkpoint.id)
            if ref is None:
                ref = self._refs[checkpoint.id] = self._build(checkpoint)
            return ref

    def _build(self, checkpoint: Checkpoint) -> SnapshotRef:
        env = self.make_env()
        try:
            device = env.device_name
            if checkpoint.device is not None and device is not None and checkpoint.device != device:
                raise SnapshotError(
                    f"checkpoint {checkpoint.id} was recorded on device profile "
                    f"{checkpoint.device!r}, this env runs {device!r}: collect the experts "
                    f"on this device, or set expert.device=clean to replay them here"
                )
            obs = replay(env, checkpoint.task, checkpoint.history)
            if obs.element_tree_hash() != checkpoint.observation.element_tree_hash():
                raise SnapshotError(f"replaying {checkpoint.id} did not reach the recorded state")
            ref = self.backend.save(env, checkpoint.history)
        finally:
            env.close()
        self.costs.add_build(len(checkpoint.history))
        return ref

    def forget(self, checkpoint_id: str) -> None:
        """Drop a checkpoint's snapshot (after a failed restore): the next use rebuilds it."""
        with self._lock:  # (queued prefetches restore from the rebuilt snapshot)
            ref = self._refs.pop(checkpoint_id, None)
        if ref is not None:
            self.backend.release(ref)

    def close(self) -> None:
        """Release every snapshot (the backend itself stays open: its owner closes it)."""
        for ref in self._refs.values():
            self.backend.release(ref)
        self._refs.clear()
