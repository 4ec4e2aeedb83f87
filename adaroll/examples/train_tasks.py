"""What the examples train on, whatever the framework: an env's train tasks and their verified
expert checkpoints, AdaRoll's Stage II scheduler under the paper's thresholds with one group
size for every job, and the starts the framework's samples open."""

# --- docs:train-tasks begin ---
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from adaroll.checkpoints import CheckpointStore
from adaroll.config import GRPOConfig, PivotConfig, RolloutConfig, SchedulerConfig
from adaroll.envs import get_suite, make_env_factory
from adaroll.envs.base import GUIEnv, TaskSpec
from adaroll.experts import collect_experts
from adaroll.policies.base import Policy
from adaroll.rollout.collector import Collector
from adaroll.rollout.sessions import Starts
from adaroll.snapshots.memory import MemorySnapshots
from adaroll.training.pivot_scoring import PivotSet, score_checkpoints
from adaroll.training.scheduler import SCHEDULERS, Scheduler


@dataclass
class TrainTasks:
    """An env's train tasks and the verified expert checkpoints on them."""

    make_env: Callable[[], GUIEnv]
    train: list[TaskSpec]
    store: CheckpointStore

    def starts(self) -> Starts:
        """The rollout layer's starts (Local, Suffix, Root) on these tasks, showing the last two
        actions."""
        return Starts(self.make_env, self.store, MemorySnapshots(), self.train, history_window=2)


def train_tasks(
    env: str = "mobile",
    env_options: dict[str, Any] | None = None,
    *,
    tasks: int,
    seed: int = 0,
    store: CheckpointStore | None = None,
) -> TrainTasks:
    """``tasks`` train tasks of env ``env`` (any registered env: ``env`` and ``env_options`` are
    what a run config's ``env.name`` and ``env.options`` say; ``mobile``, the embedded phone, by
    default) and the scripted experts' verified trajectories on them (or ``store``, saved by an
    earlier call: the experts are not run again)."""
    env_options = dict(env_options or {})
    suite = get_suite(
        env,
        env_options,
        seed=seed,
        n_train=tasks,
        n_val=0,
        n_heldout=0,
        n_heldout_templates=0,
        n_pretrain=0,
    )
    make_env = make_env_factory(env, **env_options)
    train = list(suite.split("train"))
    if store is None:
        store = collect_experts(make_env, suite, train, progress=False).store
    return TrainTasks(make_env, train, store)


def scored_pivots(policy: Policy, tasks: TrainTasks, seed: int = 0) -> PivotSet:
    """The paper's Stage I scoring with a model that already acts (``score_checkpoints``): 8
    samples at every checkpoint, a pivot where two samples differ with probability above
    ``tau_dis = 0.45``."""
    collector = Collector.from_config(
        RolloutConfig(),
        policy,
        tasks.make_env,
        tasks.store,
        MemorySnapshots(make_env=tasks.make_env),
    )
    try:
        return score_checkpoints(policy, collector, tasks.store, PivotConfig(), seed=seed)
    finally:
        collector.close()


def hybrid_scheduler(
    tasks: TrainTasks,
    *,
    group_size: int,
    thresholds: tuple[float, float] = (0.25, 0.75),
    pivots: PivotSet | None = None,
    seed: int = 0,
) -> Scheduler:
    """AdaRoll's Stage II scheduler: routing probes measure each task's p(x), which sends it to
    Local (p < tau_low: one action at its pivots), Suffix or Root (p > tau_high). ``pivots``:
    a model's scored pivots (``score_checkpoints``); None makes every checkpoint a pivot (a
    model that does not act yet cannot score them). A framework draws the same number of samples
    for every row, so probes and training groups all have ``group_size``."""
    sched = SchedulerConfig(
        tasks_per_iteration=len(tasks.train),
        tau_low=thresholds[0],
        tau_high=thresholds[1],
        routing_probes=group_size,
        root_probes=group_size,
    )
    every = {t.id: [c.id for c in tasks.store.for_task(t.id)] for t in tasks.train}
    return SCHEDULERS.get("hybrid")(
        tasks=tasks.train,
        sched=sched,
        grpo=GRPOConfig(group_size=group_size),
        pivots=pivots.pivots if pivots is not None else every,
        pivot_weights=pivots.weights if pivots is not None else None,
        seed=seed,
    )


# --- docs:train-tasks end ---
