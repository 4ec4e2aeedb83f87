"""Checkpoints ``c_t = (task, history, observation, snapshot)`` along verified expert trajectories.

A checkpoint is saved *before* expert action ``a_t^E`` and records it. The store is one JSONL
file (one checkpoint per line) written atomically, so it reloads without a live environment;
its snapshot references are rebuilt on demand (see :mod:`adaroll.rollout.snapshots`) because
in-process snapshot images do not outlive the process that took them.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adaroll.actions import Action
from adaroll.envs.base import Observation, TaskSpec
from adaroll.io import atomic_write_text


@dataclass(frozen=True)
class Checkpoint:
    """The state before step ``step`` of a verified trajectory of ``task``: an expert's, or with
    ``origin`` other than ``expert`` the policy's own (:mod:`adaroll.training.self_pool`), whose
    ``expert_action`` is then the action the successful policy took."""

    task: TaskSpec
    step: int
    instruction: str
    history: tuple[Action, ...]
    observation: Observation
    expert_action: Action
    trajectory_length: int
    origin: str = "expert"
    device: str | None = None
    """The device profile the trajectory was recorded on (None: an env without profiles);
    restoring on another profile is refused."""

    @property
    def id(self) -> str:
        base = f"{self.task.id}@{self.step}"
        # Several trajectories may pass step t of one task: only expert ids keep the short form.
        return base if self.origin == "expert" else f"{base}~{self.origin}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task.id,
            "step": self.step,
            "instruction": self.instruction,
            "history": [a.to_dict() for a in self.history],
            "observation": self.observation.to_dict(),
            "expert_action": self.expert_action.to_dict(),
            "trajectory_length": self.trajectory_length,
            **({} if self.origin == "expert" else {"origin": self.origin}),
            **({} if self.device is None else {"device": self.device}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Checkpoint:
        """Rebuild a checkpoint from :meth:`to_dict`'s output; any malformed field raises
        :class:`ValueError` saying which (see :func:`validate_record`)."""
        validate_record(d)
        return cls(
            TaskSpec.from_id(d["task"]),
            d["step"],
            d["instruction"],
            tuple(Action.from_dict(a) for a in d["history"]),
            Observation.from_dict(d["observation"]),
            Action.from_dict(d["expert_action"]),
            d["trajectory_length"],
            d.get("origin", "expert"),
            d.get("device"),
        )


class CheckpointFileError(ValueError):
    """A checkpoint file that cannot be loaded (not UTF-8, not JSON, a malformed or duplicate
    record): the one error :meth:`CheckpointStore.load` raises for a file's content. The message
    names the file and the line."""


_RECORD_FIELDS = frozenset(
    {
        "task",
        "step",
        "instruction",
        "history",
        "observation",
        "expert_action",
        "trajectory_length",
        "origin",
        "device",
    }
)
_OPTIONAL_FIELDS = frozenset({"origin", "device"})
_ELEMENT_FIELDS = frozenset({"id", "role", "text", "bounds", "flags"})


def _need(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return abs(value) < 2**1000 if isinstance(value, int) else math.isfinite(value)


def validate_record(d: Any) -> None:
    """Check one checkpoint record's structure and types (raise ValueError naming the field):
    the fields of :meth:`Checkpoint.to_dict` and no others; ``step`` in
    ``[0, trajectory_length)``; ``history`` holding exactly ``step`` actions; an observation of
    well-formed elements (integer id, string role/text/flags, four finite bounds) and a positive
    integer screen size. Actions are validated by :meth:`Action.from_dict`."""
    _need(isinstance(d, dict), f"a record must be a JSON object, got {type(d).__name__}")
    missing = sorted(_RECORD_FIELDS - _OPTIONAL_FIELDS - set(d))
    _need(not missing, f"missing field(s) {missing}")
    unknown = sorted(set(d) - _RECORD_FIELDS)
    _need(not unknown, f"unknown field(s) {unknown}")
    _need(isinstance(d["task"], str), f"task must be a task id string, got {d['task']!r}")
    for name in ("step", "trajectory_length"):
        _need(_is_int(d[name]) and d[name] >= 0, f"{name} must be an int >= 0, got {d[name]!r}")
    _need(
        d["step"] < d["trajectory_length"],
        f"step {d['step']} is not below trajectory_length {d['trajectory_length']}",
    )
    _need(isinstance(d["instruction"], str), "instruction must be a string")
    _need(isinstance(d.get("origin", "expert"), str), "origin must be a string")
    _need(isinstance(d.get("device", ""), str), "device must be a string")
    for name in ("history", "expert_action"):
        actions = d[name] if name == "history" else [d[name]]
        _need(isinstance(actions, list), f"{name} must be a list of actions")
        _need(all(isinstance(a, dict) for a in actions), f"{name}: an action must be a JSON object")
    _need(
        len(d["history"]) == d["step"],
        f"history holds {len(d['history'])} actions, step {d['step']} needs {d['step']}",
    )
    obs = d["observation"]
    _need(
        isinstance(obs, dict) and set(obs) == {"elements", "screen_size"},
        "observation must be an object with exactly elements and screen_size",
    )
    size = obs["screen_size"]
    _need(
        isinstance(size, list) and len(size) == 2 and all(_is_int(v) and v > 0 for v in size),
        f"observation.screen_size must be two positive ints, got {size!r}",
    )
    _need(isinstance(obs["elements"], list), "observation.elements must be a list")
    for i, e in enumerate(obs["elements"]):
        where = f"observation.elements[{i}]"
        _need(
            isinstance(e, dict)
            and set(e) <= _ELEMENT_FIELDS
            and set(e) >= _ELEMENT_FIELDS - {"flags"},
            f"{where} must be an object with id, role, text, bounds (and flags)",
        )
        _need(_is_int(e["id"]), f"{where}.id must be an int, got {e['id']!r}")
        _need(
            isinstance(e["role"], str) and isinstance(e["text"], str),
            f"{where}: role and text must be strings",
        )
        bounds = e["bounds"]
        _need(
            isinstance(bounds, list) and len(bounds) == 4 and all(_is_number(v) for v in bounds),
            f"{where}.bounds must be four finite numbers, got {bounds!r}",
        )
        flags = e.get("flags", [])
        _need(
            isinstance(flags, list) and all(isinstance(f, str) for f in flags),
            f"{where}.flags must be a list of strings",
        )


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
        self,
        task: TaskSpec,
        instruction: str,
        observations: list[Observation],
        actions: list[Action],
        device: str | None = None,
    ) -> list[Checkpoint]:
        """Checkpoints before every action of one verified trajectory (recorded on ``device``)."""
        if len(observations) != len(actions):
            raise ValueError("need one observation before each action")
        made = [
            Checkpoint(
                task,
                t,
                instruction,
                tuple(actions[:t]),
                observations[t],
                actions[t],
                len(actions),
                device=device,
            )
            for t in range(len(actions))
        ]
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
        """Read ``checkpoints.jsonl``. A missing file raises :class:`FileNotFoundError`; any
        problem with its content raises :class:`CheckpointFileError` naming file and line."""
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(
                f"checkpoint file {path} does not exist (run `adaroll experts collect`)"
            )
        store = cls()
        for lineno, raw in enumerate(path.read_bytes().split(b"\n"), 1):
            if not raw.strip():
                continue
            try:
                store.add(Checkpoint.from_dict(json.loads(raw.decode("utf-8"))))
            except (ValueError, RecursionError) as exc:  # also JSON, UTF-8 and ActionError
                problem = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
                raise CheckpointFileError(
                    f"{path}:{lineno}: invalid checkpoint record: {problem}"
                ) from None
        return store
