"""Expert collection: run the scripted expert on a task split, keep only verified successes,
write one JSONL row per step and the checkpoints before every expert action."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adaroll.actions import Action
from adaroll.checkpoints import Checkpoint, CheckpointStore
from adaroll.envs.base import GUIEnv, Observation, TaskSpec, TaskSuite
from adaroll.io import atomic_write_text
from adaroll.progress_bar import progress_bar


@dataclass
class ExpertRun:
    task: TaskSpec
    instruction: str
    observations: list[Observation]
    actions: list[Action]
    success: bool
    perturbations: dict[str, int] = field(default_factory=dict)
    """Device perturbations met on the way (envs with device profiles only)."""


@dataclass(frozen=True)
class ExpertCollection:
    runs: list[ExpertRun]
    store: CheckpointStore

    @property
    def verified(self) -> list[ExpertRun]:
        return [r for r in self.runs if r.success]

    @property
    def verified_rate(self) -> float:
        return len(self.verified) / max(1, len(self.runs))

    def rate_by_template(self) -> dict[str, float]:
        total = Counter(r.task.template for r in self.runs)
        ok = Counter(r.task.template for r in self.runs if r.success)
        return {t: ok[t] / n for t, n in sorted(total.items())}

    @property
    def env_steps(self) -> int:
        return sum(len(r.actions) for r in self.runs)

    def perturbations(self) -> dict[str, Any]:
        """Perturbations by kind over all runs and the share of runs that met any."""
        by_kind: Counter[str] = Counter()
        for r in self.runs:
            by_kind.update(r.perturbations)
        perturbed = sum(any(r.perturbations.values()) for r in self.runs)
        return {"by_kind": dict(by_kind), "episode_share": perturbed / max(1, len(self.runs))}


def run_expert_recorded(env: GUIEnv, suite: TaskSuite, task: TaskSpec) -> ExpertRun:
    """The expert's trajectory with the observation before each of its actions."""
    obs, info = env.reset(options={"task": task})
    run = ExpertRun(task, str(info.get("instruction", env.instruction)), [], [], False)
    while True:
        action = suite.expert_action(env)
        run.observations.append(obs)
        run.actions.append(action)
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            run.success = bool(info.get("success", False))
            run.perturbations = dict(info.get("perturbations", {}))
            return run


def collect_experts(
    make_env: Callable[[], GUIEnv],
    suite: TaskSuite,
    tasks: Sequence[TaskSpec],
    *,
    progress: bool = True,
) -> ExpertCollection:
    env = make_env()
    device = env.device_name
    runs = []
    try:
        for task in progress_bar(tasks, desc="experts", disable=not progress, leave=False):
            runs.append(run_expert_recorded(env, suite, task))
    finally:
        env.close()
    store = CheckpointStore()
    for run in runs:
        if run.success:
            store.add_trajectory(run.task, run.instruction, run.observations, run.actions, device)
    return ExpertCollection(runs, store)


def replay_on_device(
    store: CheckpointStore, make_env: Callable[[], GUIEnv], *, progress: bool = True
) -> tuple[CheckpointStore, int]:
    """Old demonstrations on a new device: replay each trajectory's actions in ``make_env``'s
    env and take a checkpoint before each, with that device's observation and the recorded
    (possibly stale) action, until the episode ends. Returns the store and the env steps."""
    env = make_env()
    device = env.device_name
    out, steps = CheckpointStore(), 0
    try:
        for task_id in progress_bar(
            store.task_ids(), desc="replay demos", disable=not progress, leave=False
        ):
            last = store.for_task(task_id)[-1]
            actions = (*last.history, last.expert_action)
            obs, _ = env.reset(options={"task": last.task})
            for t, action in enumerate(actions):
                out.add(
                    Checkpoint(
                        last.task,
                        t,
                        last.instruction,
                        actions[:t],
                        obs,
                        action,
                        len(actions),
                        device=device,
                    )
                )
                obs, _, terminated, truncated, _ = env.step(action)
                steps += 1
                if terminated or truncated:
                    break
    finally:
        env.close()
    return out, steps


def save_collection(collection: ExpertCollection, directory: Path) -> None:
    """``trajectories.jsonl`` (one row per step, verified runs only), ``checkpoints.jsonl`` and
    ``experts.json`` (verified rate overall and per template)."""
    directory.mkdir(parents=True, exist_ok=True)
    rows = []
    for run in collection.verified:
        for t, (obs, action) in enumerate(zip(run.observations, run.actions, strict=True)):
            rows.append(
                json.dumps(
                    {
                        "task": run.task.id,
                        "step": t,
                        "instruction": run.instruction,
                        "observation": obs.to_dict(),
                        "action": action.to_dict(),
                        "trajectory_length": len(run.actions),
                    }
                )
            )
    atomic_write_text(directory / "trajectories.jsonl", "".join(r + "\n" for r in rows))
    collection.store.save(directory / "checkpoints.jsonl")
    summary = {
        "tasks": len(collection.runs),
        "verified": len(collection.verified),
        "verified_rate": collection.verified_rate,
        "env_steps": collection.env_steps,
        "by_template": collection.rate_by_template(),
        "perturbations": collection.perturbations(),
    }
    atomic_write_text(directory / "experts.json", json.dumps(summary, indent=1))
