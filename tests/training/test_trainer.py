"""The trainer loop on the corridor env with a one-parameter policy: it learns, it ledgers
exactly what ran, and a resumed run equals an uninterrupted one."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
import torch

from adaroll.config import BudgetConfig, EvalConfig, GRPOConfig, SchedulerConfig, TrainConfig
from adaroll.experts import collect_experts
from adaroll.gc_tuning import TRAINING_THRESHOLDS
from adaroll.rollout.collector import Collector
from adaroll.rollout.jobs import Job
from adaroll.snapshots.memory import MemorySnapshots
from adaroll.training.scheduler import SCHEDULERS
from adaroll.training.trainer import Trainer
from tests.fakes import GoPolicy, LineEnv, LineSuite
from tests.training.runs import FixedJobs, killed_at

SUITE = LineSuite()


@pytest.fixture(scope="module")
def store():
    collection = collect_experts(LineEnv, SUITE, SUITE.split("train"), progress=False)
    assert collection.verified_rate == 1.0
    return collection.store


def make_trainer(tmp: Path, store, algorithm: str, iterations: int, theta: float = -1.0):
    policy = GoPolicy(theta)
    cfg = TrainConfig(
        algorithm=algorithm,
        budget=BudgetConfig(iterations=iterations),
        grpo=GRPOConfig(lr=0.2),
        eval=EvalConfig(k=2, every=2, final_splits=("train",)),
        scheduler=SchedulerConfig(tasks_per_iteration=2),
    )
    tasks = SUITE.split("train")
    pivots = {t: [c.id for c in store.for_task(t)] for t in store.task_ids()}
    scheduler = SCHEDULERS.get(algorithm)(
        tasks=tasks, sched=cfg.scheduler, grpo=cfg.grpo, pivots=pivots
    )
    collector = Collector(policy, LineEnv, store, MemorySnapshots(), history_window=2)
    return Trainer(
        algorithm,
        tmp,
        cfg,
        policy,
        scheduler,
        collector,
        LineEnv,
        {"train": tasks, "val": SUITE.split("val")},
        seed=3,
        history_window=2,
        progress=False,
    )


def test_onestep_costs_no_env_steps_and_rollouts_count_every_step(store) -> None:
    policy = GoPolicy(0.0)
    collector = Collector(policy, LineEnv, store, MemorySnapshots(), history_window=2)
    task = SUITE.split("train")[0]
    ckpt = store.for_task(task.id)[1]
    one, suffix, root = collector.collect(
        [
            Job("onestep", task, 8, checkpoint_id=ckpt.id),
            Job("suffix", task, 4, checkpoint_id=ckpt.id),
            Job("root", task, 3),
        ]
    )
    assert one.cost.env_steps == 0 and one.cost.policy_samples == 8 and one.cost.restores == 0
    assert all(len(d) == 1 for d in one.decisions)
    assert suffix.cost.restores == 4 and suffix.cost.replayed_steps == 0
    assert (
        suffix.cost.env_steps == sum(len(d) for d in suffix.decisions) == suffix.cost.policy_samples
    )
    assert root.cost.env_steps == sum(len(d) for d in root.decisions) and root.cost.restores == 0
    # Suffix episodes start at the checkpoint: at most max_steps - step decisions remain.
    assert all(len(d) <= 6 - ckpt.step for d in suffix.decisions)


@pytest.mark.parametrize("algorithm", ["vanilla", "hybrid", "stage1"])
def test_training_raises_the_go_probability(tmp_path: Path, store, algorithm: str) -> None:
    trainer = make_trainer(tmp_path, store, algorithm, iterations=8)
    before = float(trainer.policy.theta.detach())
    result = trainer.train()
    assert float(trainer.policy.theta.detach()) > before + 0.5
    assert result.final["iteration"] == 8
    ledger = trainer.ledger
    onestep = ledger.totals(mode="onestep")
    assert onestep.env_steps == 0
    if algorithm == "stage1":
        assert ledger.training_cost().env_steps == 0
        assert (tmp_path / "best").exists()
    evals = [m for m in trainer.metrics if m["kind"] == "eval"]
    assert evals[0]["iteration"] == 0 and evals[-1]["iteration"] == 8


def test_ledger_matches_collected_groups(tmp_path: Path, store) -> None:
    trainer = make_trainer(tmp_path, store, "vanilla", iterations=2)
    trainer.train()
    train = trainer.ledger.training_cost()
    rows = [m for m in trainer.metrics if m["kind"] == "iteration"]
    assert rows[-1]["env_steps"] == train.env_steps
    # Vanilla: 2 tasks x 8 samples per iteration, every decision an env step.
    assert trainer.ledger.totals(mode="vanilla").records == 2 * 2
    assert train.policy_samples == train.env_steps


def test_resume_equals_uninterrupted(tmp_path: Path, store) -> None:
    straight = make_trainer(tmp_path / "a", store, "hybrid", iterations=6)
    straight.train()
    killed_at(
        make_trainer(tmp_path / "b", store, "hybrid", iterations=6), 4
    )  # after iteration 3's save
    resumed = make_trainer(tmp_path / "b", store, "hybrid", iterations=6, theta=5.0)
    resumed.train(resume=True)
    assert torch.equal(resumed.policy.theta, straight.policy.theta)
    # The bill is the same; the restarted process rebuilt the images it had before the kill,
    # which is overhead of the execution (recorded apart, never billed).
    counts = [n for n in vars(straight.ledger.training_cost()) if not n.endswith("seconds")]
    for name in counts:
        assert getattr(resumed.ledger.training_cost(), name) == getattr(
            straight.ledger.training_cost(), name
        )
    overhead = [
        r.replayed_steps
        for r in (straight.ledger, resumed.ledger)
        for r in [r.totals(purpose="overhead")]
    ]
    assert overhead[1] > overhead[0] > 0
    assert list(resumed.metrics) == list(straight.metrics)


# -- what each phase is billed -----------------------------------------------------------------
def fixed_trainer(tmp: Path, store, jobs: list[Job], budget: BudgetConfig, **eval_) -> Trainer:
    policy = GoPolicy(0.0)
    cfg = TrainConfig(
        algorithm="hybrid",
        budget=budget,
        grpo=GRPOConfig(lr=0.2),
        eval=EvalConfig(k=1, final_splits=("val",), **eval_),
    )
    collector = Collector(policy, LineEnv, store, MemorySnapshots(), history_window=2)
    return Trainer(
        "fixed",
        tmp,
        cfg,
        policy,
        FixedJobs(jobs),
        collector,
        LineEnv,
        {"val": SUITE.split("val")},
        seed=3,
        history_window=2,
        progress=False,
    )


def test_a_snapshot_image_is_billed_once_per_checkpoint_and_phase(tmp_path: Path, store) -> None:
    task = SUITE.split("train")[0]
    shallow, deep = store.for_task(task.id)[1:3]
    jobs = [
        Job("suffix", task, 2, checkpoint_id=deep.id),
        Job("suffix", task, 2, checkpoint_id=shallow.id),
    ]
    trainer = fixed_trainer(tmp_path, store, jobs, BudgetConfig(iterations=3))
    final = trainer.train().final
    assert (
        trainer.ledger.training_cost().replayed_steps
        == deep.step + shallow.step
        == final["replay_steps"]
    )
    assert final["phase_env_steps"] == final["env_steps"] + final["replay_steps"]
    assert trainer.ledger.totals(purpose="overhead").replayed_steps == deep.step + shallow.step


def test_only_evaluations_that_select_are_billed(tmp_path: Path, store) -> None:
    stage1 = make_trainer(tmp_path / "s", store, "stage1", iterations=4)
    final = stage1.train().final
    selection = stage1.ledger.selection_cost()
    # iterations 0 and 2 on val select; the final evaluation is on train here: it only reports
    assert selection.records == 2 and selection.env_steps > 0
    assert stage1.ledger.eval_cost().records == 1
    assert final["selection_env_steps"] == selection.env_steps
    assert final["phase_env_steps"] == selection.env_steps  # one-step groups: no env steps
    assert (
        final["policy_samples"]
        == stage1.ledger.training_cost().policy_samples + selection.policy_samples
    )
    assert final["best"]["split"] == "val"
    vanilla = make_trainer(tmp_path / "v", store, "vanilla", iterations=4)
    final = vanilla.train().final
    assert vanilla.ledger.selection_cost().records == 0 < vanilla.ledger.eval_cost().env_steps
    assert final["selection_env_steps"] == 0 and final["phase_env_steps"] == final["env_steps"]


@pytest.mark.parametrize(
    ("budget", "limit"),
    [
        (BudgetConfig(env_steps=40, policy_samples=10_000), "env_steps"),
        (BudgetConfig(env_steps=10_000, policy_samples=40), "policy_samples"),
        (BudgetConfig(iterations=2, env_steps=10_000), "iterations"),
    ],
)
def test_a_phase_ends_on_the_first_limit_spent_and_says_which(
    tmp_path: Path, store, budget, limit
) -> None:
    task = SUITE.split("train")[0]
    trainer = fixed_trainer(tmp_path, store, [Job("root", task, 8)], budget)
    final = trainer.train().final
    assert final["stopped_by"] == limit
    spent = {
        "env_steps": final["phase_env_steps"],
        "policy_samples": final["policy_samples"],
        "iterations": final["iteration"],
    }
    assert spent[limit] >= (getattr(budget, limit))
    assert final["iteration"] >= 1


def test_evaluations_fall_on_the_first_iteration_past_each_cost_mark(tmp_path: Path, store) -> None:
    task = SUITE.split("train")[0]
    trainer = fixed_trainer(
        tmp_path,
        store,
        [Job("root", task, 4)],
        BudgetConfig(iterations=6),
        every=None,
        every_env_steps=30,
    )
    trainer.train()
    rows = [m for m in trainer.metrics if m["kind"] == "iteration"]
    spent = {0: 0, **{r["iteration"]: r["phase_env_steps"] for r in rows}}
    due = [i for i in range(1, 6) if spent[i] // 30 > spent[i - 1] // 30]
    evals = [m["iteration"] for m in trainer.metrics if m["kind"] == "eval"]
    assert evals == [0, *due, 6] and due


def test_the_loop_runs_with_training_gc_thresholds_and_restores_them(
    tmp_path: Path, store, monkeypatch: pytest.MonkeyPatch
) -> None:
    trainer = make_trainer(tmp_path, store, "vanilla", iterations=2)
    seen: list[tuple[int, int, int]] = []
    plan = trainer.scheduler.plan
    monkeypatch.setattr(
        trainer.scheduler, "plan", lambda k: (seen.append(gc.get_threshold()), plan(k))[1]
    )
    before = gc.get_threshold()
    trainer.train()
    assert seen == [max_thresholds(TRAINING_THRESHOLDS, before)] * 2
    assert gc.get_threshold() == before


def max_thresholds(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(max(x, y) for x, y in zip(a, b, strict=True))
