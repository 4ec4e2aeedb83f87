"""Checkpoints ``c_t = (task, history, observation, snapshot)`` along verified expert trajectories.

A checkpoint is saved *before* expert action ``a_t^E`` and records it. The store is one JSONL
file (one checkpoint per line) written atomically, so it reloads without a live environment;
its snapshot references are rebuilt on demand (see :mod:`adaroll.rollout.snapshots`) because
in-process snapshot images do not outlive the process that took them.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adaroll.actions import Action, ActionError
from adaroll.envs.base import Observation, TaskSpec
from adaroll.io import atomic_write_text


@dataclass(frozen=True)
class Checkpoint:
    """The state before step ``step`` of a verified expert trajectory of ``task``."""

    task: TaskSpec
    step: int
    instruction: str
    history: tuple[Action, ...]
    observation: Observation
    expert_action: Action
    trajectory_length: int

    @property
    def id(self) -> str:
        return f"{self.task.id}@{self.step}"

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task.id, "step": self.step, "instruction": self.instruction,
                "history": [a.to_dict() for a in self.history],
                "observation": self.observation.to_dict(),
                "expert_action": self.expert_action.to_dict(),
                "trajectory_length": self.trajectory_length}  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Checkpoint:
        return cls(TaskSpec.from_id(d["task"]), int(d["step"]), str(d["instruction"]),
                   tuple(Action.from_dict(a) for a in d["history"]),
                   Observation.from_dict(d["observation"]), Action.from_dict(d["expert_action"]),
                   int(d["trajectory_length"]))  # fmt: skip


class CheckpointStore:
    """Checkpoints grouped by task, ordered by step; persisted as ``checkpoints.jsonl``."""

    def __init__(self, checkpoints: Iterable[Checkpoint] = ()) -> None:
        self._by_task: dict[str, list[Checkpoint]] = defaultdict(list)
        self._by_id: dict[str, Checkpoint] = {}
        for c in checkpoints:
            self.add(c)

    def add(self, checkpoint: Checkpoint) -> None:
        if checkpoint.id in self._by_id:
            raise ValueError(f"duplicate checkpoint {checkpoint.id}")
        self._by_id[checkpoint.id] = checkpoint
        steps = self._by_task[checkpoint.task.id]
        steps.append(checkpoint)
        steps.sort(key=lambda c: c.step)

    def add_trajectory(
        self, task: TaskSpec, instruction: str, observations: list[Observation], actions: list[Action]
    ) -> list[Checkpoint]:
        """Checkpoints before every action of one verified trajectory."""
        if len(observations) != len(actions):
            raise ValueError("need one observation before each action")
        made = [Checkpoint(task, t, instruction, tuple(actions[:t]), observations[t], actions[t],
                           len(actions)) for t in range(len(actions))]  # fmt: skip
        for c in made:
            self.add(c)
        return made

    def get(self, checkpoint_id: str) -> Checkpoint:
        try:
            return self._by_id[checkpoint_id]
        except KeyError:
            raise KeyError(f"no checkpoint {checkpoint_id!r} in the store") from None

    def for_task(self, task_id: str) -> list[Checkpoint]:
        return list(self._by_task.get(task_id, ()))

    def task_ids(self) -> list[str]:
        return sorted(self._by_task)

    def __iter__(self) -> Iterator[Checkpoint]:
        for task_id in self.task_ids():
            yield from self._by_task[task_id]

    def __len__(self) -> int:
        return len(self._by_id)

    def save(self, path: Path) -> None:
        atomic_write_text(path, "".join(json.dumps(c.to_dict()) + "\n" for c in self))

    @classmethod
    def load(cls, path: Path) -> CheckpointStore:
        if not path.exists():
            raise FileNotFoundError(f"checkpoint file {path} does not exist (run `adaroll experts collect`)")
        store = cls()
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                store.add(Checkpoint.from_dict(json.loads(line)))
            except (ValueError, KeyError, TypeError, ActionError) as exc:
                raise ValueError(f"{path}:{lineno}: invalid checkpoint record: {exc}") from None
        return store
