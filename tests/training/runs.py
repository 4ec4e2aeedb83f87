"""Helpers for the trainer tests: a collector that keeps the groups it returned, a scheduler of
fixed jobs, a kill at an iteration, and the checks that a run ledgered what it collected and
that a resumed run equals an uninterrupted one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
import torch

from adaroll.rollout.collector import Collector
from adaroll.rollout.jobs import Group, Job
from adaroll.training.ledger import Ledger
from adaroll.training.scheduler import Scheduler
from adaroll.training.trainer import Trainer


class RecordingCollector(Collector):
    """The real collector, keeping every group it returned (to check the ledger against)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.groups: list[Group] = []

    def collect(self, jobs: Sequence[Job], *, seed: int | None = None) -> list[Group]:
        groups = super().collect(jobs, seed=seed)
        self.groups.extend(groups)
        return groups


class FixedJobs(Scheduler):
    """The same jobs every iteration (to pin what the trainer bills for them)."""

    def __init__(self, jobs: list[Job]) -> None:
        self.jobs = jobs

    def plan(self, iteration: int) -> list[Job]:
        return list(self.jobs)

    def route_counts(self) -> dict[str, int]:
        return {}

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass


def recorded(trainer: Trainer) -> list[Group]:
    """The groups a trainer's :class:`RecordingCollector` returned, in order."""
    assert isinstance(trainer.collector, RecordingCollector)
    return trainer.collector.groups


def assert_equal_weights(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert got.keys() == want.keys()
    for key in want:
        assert torch.equal(got[key], want[key]), key


def killed_at(trainer: Trainer, iteration: int) -> None:
    """Train until ``iteration`` starts, then die as a killed process would (the state of
    ``iteration - 1`` is saved by then)."""
    plan = trainer.scheduler.plan

    def crash(i: int) -> list[Job]:
        if i == iteration:
            raise KeyboardInterrupt
        return plan(i)

    trainer.scheduler.plan = crash  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        trainer.train()


def billed_counts(ledger: Ledger) -> dict[str, int]:
    """The training bill's counters (the measured seconds left out)."""
    cost = ledger.training_cost()
    return {name: value for name, value in vars(cost).items() if not name.endswith("seconds")}


def assert_ledger_matches_groups(trainer: Trainer, groups: Sequence[Group]) -> None:
    """The phase's bill is exactly the sum of the groups it collected; every rollout sample
    is one decision, and every valid decision one env step; one-step groups step no env."""
    assert groups
    bill = billed_counts(trainer.ledger)
    for name in ("policy_samples", "env_steps", "restores", "invalid_samples", "faults"):
        assert bill[name] == sum(getattr(g.cost, name) for g in groups), name
    assert bill["records"] == len(groups)
    for g in groups:
        decisions = sum(len(d) for d in g.decisions)
        assert len(g.decisions) == len(g.rewards) == g.job.group_size
        assert g.cost.policy_samples == decisions
        if g.job.kind == "onestep":
            assert decisions == g.job.group_size and g.cost.env_steps == 0
        else:
            assert g.cost.env_steps == decisions - g.cost.invalid_samples
        assert g.cost.restores == (g.job.group_size if g.job.kind == "suffix" else 0)
    rows = [m for m in trainer.metrics if m["kind"] == "iteration"]
    assert rows[-1]["env_steps"] == bill["env_steps"]
    assert rows[-1]["train_samples"] == bill["training_samples"]


def assert_same_run(resumed: Trainer, straight: Trainer) -> None:
    """A resumed run equals the uninterrupted one: weights, bill, metrics and scheduler state.
    (The restarted process rebuilt the snapshot images it had: overhead, never billed.)"""
    assert_equal_weights(resumed.policy.state_dict(), straight.policy.state_dict())
    assert billed_counts(resumed.ledger) == billed_counts(straight.ledger)
    assert list(resumed.metrics) == list(straight.metrics)
    assert resumed.scheduler.state_dict() == straight.scheduler.state_dict()
    assert resumed.iteration == straight.iteration and resumed.best == straight.best


def line_trainer(
    tmp: Any, store: Any, cfg: Any, *, theta: float = 0.0, seed: int = 3, **scheduler: Any
) -> Trainer:
    """A trainer of ``cfg`` on the corridor env (tests.fakes) with a one-parameter policy, its
    pivots every checkpoint of ``store``, evaluated on the suite's train and val splits
    (``scheduler``: more keywords for the scheduler, e.g. its routing estimator)."""
    from adaroll.snapshots.memory import MemorySnapshots
    from adaroll.training.scheduler import SCHEDULERS
    from tests.fakes import GoPolicy, LineEnv, LineSuite

    suite, policy = LineSuite(), GoPolicy(theta)
    tasks = suite.split("train")
    pivots = {t: [c.id for c in store.for_task(t)] for t in store.task_ids()}
    scheduler = SCHEDULERS.get(cfg.algorithm)(
        tasks=tasks, sched=cfg.scheduler, grpo=cfg.grpo, pivots=pivots, **scheduler
    )
    collector = Collector(policy, LineEnv, store, MemorySnapshots(), history_window=2)
    evals = {"train": tasks, "val": suite.split("val")}
    return Trainer(
        cfg.algorithm,
        tmp,
        cfg,
        policy,
        scheduler,
        collector,
        LineEnv,
        evals,
        seed=seed,
        history_window=2,
        progress=False,
    )
