"""The trainer loop with real components: the embedded mobile env (``make_env_factory("mobile")``),
its scripted experts and the small torch policy, for every algorithm (Stage I, Vanilla,
Hybrid, one-step). Each trains a few iterations, changes the parameters, bills exactly the
groups it collected, and a killed-then-resumed run equals an uninterrupted one
(tests/training/test_trainer.py shows the same on the fake corridor env)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from adaroll.config import BudgetConfig, EvalConfig, GRPOConfig, SchedulerConfig, TrainConfig
from adaroll.policies.base import Policy
from adaroll.policies.small import SmallPolicy
from adaroll.snapshots.memory import MemorySnapshots
from adaroll.training.scheduler import SCHEDULERS
from adaroll.training.trainer import Trainer
from tests.real_mobile import HISTORY, MAKE_ENV, SUITE, small_policy
from tests.training.runs import (
    RecordingCollector,
    assert_equal_weights,
    assert_ledger_matches_groups,
    assert_same_run,
    killed_at,
    recorded,
)

ITERATIONS = 3
GROUP = 8
PIVOTS_PER_ITERATION = 8

pytestmark = pytest.mark.usefixtures("module_one_torch_thread")


def make_trainer(directory: Path, store, algorithm: str, policy: Policy) -> Trainer:
    # tau_low = 0, tau_high = 1: every probed Hybrid task goes to Suffix (restored snapshots)
    cfg = TrainConfig(
        algorithm=algorithm,
        budget=BudgetConfig(iterations=ITERATIONS),
        grpo=GRPOConfig(group_size=GROUP, lr=3e-3),
        eval=EvalConfig(k=1, every=2, splits=("val",), final_splits=("val",)),
        scheduler=SchedulerConfig(
            tasks_per_iteration=3,
            pivots_per_iteration=PIVOTS_PER_ITERATION,
            tau_low=0.0,
            tau_high=1.0,
            routing_probes=2,
        ),
    )
    tasks = SUITE.split("train")
    pivots = {t: [c.id for c in store.for_task(t)] for t in store.task_ids()}  # every checkpoint
    scheduler = SCHEDULERS.get(algorithm)(
        tasks=tasks, sched=cfg.scheduler, grpo=cfg.grpo, pivots=pivots, seed=1
    )
    collector = RecordingCollector(
        policy, MAKE_ENV, store, MemorySnapshots(), history_window=HISTORY
    )
    return Trainer(
        algorithm,
        directory,
        cfg,
        policy,
        scheduler,
        collector,
        MAKE_ENV,
        {"val": SUITE.split("val")},
        seed=5,
        history_window=HISTORY,
        progress=False,
    )


@pytest.fixture(scope="module", params=["stage1", "vanilla", "hybrid", "onestep"])
def straight(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    mobile_store,
    mobile_base: Path,
) -> Trainer:
    """An uninterrupted run of one algorithm from the cloned policy."""
    trainer = make_trainer(
        tmp_path_factory.mktemp(request.param),
        mobile_store,
        request.param,
        SmallPolicy.load(mobile_base),
    )
    trainer.train()
    return trainer


def test_training_changes_the_policy_and_bills_the_collected_groups(
    straight: Trainer, mobile_base: Path
) -> None:
    algorithm = straight.cfg.algorithm
    assert straight.iteration == ITERATIONS
    rows = [m for m in straight.metrics if m["kind"] == "iteration"]
    assert sum(r["groups_used"] for r in rows) > 0
    start = SmallPolicy.load(mobile_base).state_dict()
    trained = straight.policy.state_dict()
    assert any(not torch.equal(start[k], trained[k]) for k in start)
    groups = recorded(straight)
    assert_ledger_matches_groups(straight, groups)
    bill = straight.ledger.training_cost()
    kinds = {g.job.kind for g in groups}
    if algorithm in ("stage1", "onestep"):
        assert kinds == {"onestep"} and bill.env_steps == 0
        assert bill.policy_samples == ITERATIONS * PIVOTS_PER_ITERATION * GROUP
    elif algorithm == "vanilla":
        assert (
            kinds == {"root"} and straight.ledger.totals(mode="vanilla").records == ITERATIONS * 3
        )
        assert bill.env_steps > 0
    else:  # iteration 1 probes every task; then each one rolls out from its frontier pivot
        assert [g.job.purpose for g in groups[:3]] == ["routing"] * 3
        assert kinds == {"root", "suffix"} and bill.restores > 0
        assert rows[-1]["routes"]["suffix"] + rows[-1]["routes"]["root"] == 3
    if algorithm == "stage1":  # the best policy by val Avg@1 (evaluations 0, 2 and 3: selections)
        assert (straight.dir / "best").exists() and straight.ledger.selection_cost().records == 3


def test_killed_then_resumed_run_equals_the_uninterrupted_one(
    straight: Trainer, tmp_path: Path, mobile_store, mobile_base: Path
) -> None:
    algorithm = straight.cfg.algorithm
    killed_at(
        make_trainer(tmp_path, mobile_store, algorithm, SmallPolicy.load(mobile_base)), ITERATIONS
    )
    # a fresh process: other start weights, which the saved state must replace
    resumed = make_trainer(tmp_path, mobile_store, algorithm, small_policy(seed=99))
    resumed.train(resume=True)
    # the resumed process collected the last iteration only, the same jobs as the straight run
    redone, straight_jobs = [g.job for g in recorded(resumed)], [g.job for g in recorded(straight)]
    assert 0 < len(redone) < len(straight_jobs) and redone == straight_jobs[-len(redone) :]
    assert_same_run(resumed, straight)
    if algorithm == "stage1":
        assert_equal_weights(
            SmallPolicy.load(tmp_path / "best").state_dict(),
            SmallPolicy.load(straight.dir / "best").state_dict(),
        )
