"""The snapshot protocol: save a live env state once, restore it into many independent branches.

Every :class:`SnapshotRef` carries the task and the action prefix that reached the state, so
any ref can be rebuilt by replay when its backend's image is gone (e.g. after a restart).
Backends are registered by name in :data:`SNAPSHOT_BACKENDS`:

* ``memory`` - in-process exact copy, for envs implementing :class:`SupportsStateCopy`;
* ``replay`` - reset with the same task and re-execute the prefix (works for every env);
* ``criu``   - process-level snapshot of a real browser (web environment);
* ``app-criu`` - the same of a browser with its app servers and their databases (apps env).
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from adaroll.actions import Action
from adaroll.envs.base import GUIEnv, TaskSpec
from adaroll.registry import Registry


@dataclass(frozen=True)
class SnapshotRef:
    """An immutable, serialisable reference to a saved environment state."""

    id: str
    backend: str
    task: TaskSpec
    prefix: tuple[Action, ...]
    element_tree_hash: str = ""
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "backend": self.backend,
            "task": self.task.id,
            "prefix": [a.to_dict() for a in self.prefix],
            "element_tree_hash": self.element_tree_hash,
            "meta": self.meta,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SnapshotRef:
        return cls(
            str(d["id"]),
            str(d["backend"]),
            TaskSpec.from_id(d["task"]),
            tuple(Action.from_dict(a) for a in d["prefix"]),
            str(d.get("element_tree_hash", "")),
            dict(d.get("meta", {})),
        )


class SnapshotError(RuntimeError):
    """A snapshot could not be saved or restored (missing/corrupt image, dead process, ...)."""


@runtime_checkable
class SupportsStateCopy(Protocol):
    """Envs whose whole state can be captured in-process (e.g. the embedded mobile simulator)."""

    def get_state(self) -> Any:
        """An immutable value capturing the complete episode state."""

    def branch(self, state: Any) -> GUIEnv:
        """A new, independent env in exactly ``state``."""


class SnapshotBackend(ABC):
    """Saves env states and restores them into independent branches."""

    name: str = ""
    replays_prefix: bool = False
    """Whether a restore replays the saved prefix in a fresh env (its steps are then the
    restore's cost, and a failed restore has no replay to fall back on)."""
    max_restores: int = 1
    """Restores the backend runs at once (threads restoring ahead of need use this many)."""
    max_branches: int | None = None
    """Most branches alive at once (a pool of live browsers); None: no limit."""

    @abstractmethod
    def save(self, env: GUIEnv, prefix: tuple[Action, ...]) -> SnapshotRef:
        """Capture ``env``'s current state, reached from reset by ``prefix``."""

    @abstractmethod
    def restore(self, ref: SnapshotRef) -> GUIEnv:
        """A new env branch in the saved state; the caller closes it. Branches never interfere."""

    def release(self, ref: SnapshotRef) -> None:  # noqa: B027 - optional hook
        """Drop the backend's resources for ``ref`` (a no-op for backends that hold none)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release everything the backend holds."""


SNAPSHOT_BACKENDS: Registry[Callable[..., SnapshotBackend]] = Registry(
    "snapshot backend",
    builtin={
        "criu": "adaroll.snapshots.criu",
        "app-criu": "adaroll.snapshots.criu.apps",
    },
)
"""``criu`` snapshots web-environment browsers and ``app-criu`` a browser with its app servers
and their databases as one unit (the apps env); their packages register them when first looked
up."""

_ids = itertools.count()


def new_snapshot_id(prefix: str) -> str:
    return f"{prefix}-{next(_ids)}"
