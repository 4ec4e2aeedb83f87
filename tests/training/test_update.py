"""The GRPO update: mini-batches and epochs (the clip acts), statistics over every
micro-batch, the KL reference, and which purposes train."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from adaroll.config import (
    BudgetConfig,
    ConfigError,
    EvalConfig,
    GRPOConfig,
    SchedulerConfig,
    TrainConfig,
    load_config,
)
from adaroll.experts import collect_experts
from adaroll.rollout.collector import Collector
from adaroll.rollout.jobs import Job
from adaroll.snapshots.memory import MemorySnapshots
from adaroll.training.scheduler import SCHEDULERS
from adaroll.training.trainer import Trainer
from adaroll.training.update import grpo_update
from tests.fakes import GoPolicy, LineEnv, LineSuite
from tests.training.runs import line_trainer

SUITE = LineSuite()


@pytest.fixture(scope="module")
def store():
    return collect_experts(LineEnv, SUITE, SUITE.split("train"), progress=False).store


def groups_of(store, *, purpose: str = "train", n_tasks: int = 4):
    """Root groups of 8 from a policy at p(go) = 0.5 (outcomes differ in almost every group)."""
    policy = GoPolicy(0.0)
    torch.manual_seed(0)
    collector = Collector(policy, LineEnv, store, MemorySnapshots(), history_window=2)
    jobs = [Job("root", t, 8, purpose=purpose) for t in SUITE.split("train")[:n_tasks]]
    return collector.collect(jobs, seed=5)


def update(groups, theta: float = 0.0, **grpo):
    policy = GoPolicy(theta)
    cfg = GRPOConfig(lr=0.5, **grpo)
    return policy, grpo_update(
        policy, torch.optim.Adam(policy.parameters(), lr=cfg.lr), groups, cfg
    )


def test_one_pass_one_step_keeps_the_ratio_at_one(store) -> None:
    _, result = update(groups_of(store))
    assert result.optimizer_steps == 1
    assert result.stats["clip_frac"] == 0.0 and result.stats["ratio_mean"] == pytest.approx(1.0)


def test_epochs_times_mini_batches_steps_and_the_clip_acts(store) -> None:
    groups = groups_of(store)
    used = sum(1 for g in groups if len(set(g.rewards)) > 1)
    assert used >= 2
    _, result = update(groups, ppo_epochs=3, mini_batches=2)
    assert result.optimizer_steps == 3 * 2
    # after the first step the weights moved: the ratio leaves 1 and, at lr 0.5, gets clipped
    assert result.stats["ratio_max"] > 1.0 and result.stats["clip_frac"] > 0.0
    assert result.stats["approx_kl"] > 0.0


def test_more_mini_batches_than_groups_makes_one_step_per_group(store) -> None:
    groups = groups_of(store, n_tasks=2)
    used = sum(1 for g in groups if len(set(g.rewards)) > 1)
    _, result = update(groups, mini_batches=8)
    assert result.optimizer_steps == used


def test_statistics_cover_every_micro_batch_not_the_last(store) -> None:
    groups = groups_of(store)
    _, whole = update(groups, ppo_epochs=2, micro_batch=4096)
    _, split = update(groups, ppo_epochs=2, micro_batch=3)
    # same gradients (micro-batches accumulate to the whole pass), so the same statistics
    for key in ("clip_frac", "approx_kl", "ratio_mean", "factors", "samples", "loss"):
        assert split.stats[key] == pytest.approx(whole.stats[key], rel=1e-5, abs=1e-7), key
    assert split.stats["factors"] == sum(split.training_samples.values())


def test_kl_needs_the_reference_and_pulls_towards_it(store) -> None:
    groups = groups_of(store)
    with pytest.raises(ValueError, match="reference"):
        update(groups, kl_coef=0.5)
    free, _ = update(groups, ppo_epochs=4)
    held = GoPolicy(0.0)
    cfg = GRPOConfig(lr=0.5, ppo_epochs=4, kl_coef=5.0)
    result = grpo_update(
        held, torch.optim.Adam(held.parameters(), lr=cfg.lr), groups, cfg, reference=GoPolicy(0.0)
    )
    assert result.stats["kl_loss"] > 0.0
    assert abs(float(held.theta.detach())) < abs(float(free.theta.detach()))


def test_routing_probes_train_only_when_asked(store) -> None:
    probes = groups_of(store, purpose="routing")
    assert any(len(set(g.rewards)) > 1 for g in probes)
    policy, ignored = update(probes)
    assert (
        ignored.groups_used == 0
        and ignored.optimizer_steps == 0
        and float(policy.theta.detach()) == 0.0
    )
    policy = GoPolicy(0.0)
    cfg = GRPOConfig(lr=0.5)
    trained = grpo_update(
        policy,
        torch.optim.Adam(policy.parameters(), lr=cfg.lr),
        probes,
        cfg,
        train_purposes=("train", "routing"),
    )
    differing = [g for g, group in enumerate(probes) if len(set(group.rewards)) > 1]
    assert trained.groups_used == len(differing) and float(policy.theta.detach()) != 0.0
    assert all(trained.training_samples[g] > 0 for g in differing)


def hybrid_trainer(tmp: Path, store, *, train_probes: bool) -> Trainer:
    cfg = TrainConfig(
        algorithm="hybrid",
        budget=BudgetConfig(iterations=3),
        grpo=GRPOConfig(lr=0.2),
        eval=EvalConfig(k=2, every=None, final_splits=("train",)),
        scheduler=SchedulerConfig(tasks_per_iteration=4, train_probes=train_probes),
    )
    return line_trainer(tmp, store, cfg)


@pytest.mark.parametrize("train_probes", [False, True])
def test_routing_probes_are_billed_and_train_only_with_the_option(
    tmp_path: Path, store, train_probes: bool
) -> None:
    trainer = hybrid_trainer(tmp_path, store, train_probes=train_probes)
    trainer.train()
    routing = trainer.ledger.totals(purpose="routing")
    # probes always cost: their env steps are on the phase's bill
    assert routing.env_steps > 0 and routing.policy_samples > 0
    assert trainer.ledger.training_cost().env_steps >= routing.env_steps
    first = next(m for m in trainer.metrics if m["kind"] == "iteration")
    probes = first["episodes"]["root/routing"]
    assert 0 < probes["successes"] < probes["samples"]  # the first visit's probes differ
    if train_probes:
        assert routing.training_samples > 0 and first["groups_used"] > 0
        assert first["optimizer_steps"] >= 1
    else:
        assert routing.training_samples == 0 and first["groups_used"] == 0
        assert first["optimizer_steps"] == 0


def test_kl_phase_keeps_its_start_policy_as_reference(tmp_path: Path, store) -> None:
    policy = GoPolicy(-1.0)
    cfg = TrainConfig(
        algorithm="vanilla",
        budget=BudgetConfig(iterations=2),
        grpo=GRPOConfig(lr=0.2, kl_coef=0.1, ppo_epochs=2),
        eval=EvalConfig(k=1, every=None, final_splits=("train",)),
        scheduler=SchedulerConfig(tasks_per_iteration=4),
    )
    tasks = SUITE.split("train")
    scheduler = SCHEDULERS.get("vanilla")(tasks=tasks, sched=cfg.scheduler, grpo=cfg.grpo)
    collector = Collector(policy, LineEnv, store, MemorySnapshots(), history_window=2)
    trainer = Trainer(
        "vanilla",
        tmp_path,
        cfg,
        policy,
        scheduler,
        collector,
        LineEnv,
        {"train": tasks, "val": SUITE.split("val")},
        seed=1,
        history_window=2,
        progress=False,
    )
    result = trainer.train()
    assert float(trainer.reference.theta.detach()) == -1.0  # frozen
    assert result.final["optimizer_steps"] == trainer.optimizer_steps > 0
    rows = [m for m in trainer.metrics if m["kind"] == "iteration" and m["groups_used"]]
    assert rows and any(m["kl_loss"] > 0 for m in rows)


@pytest.mark.parametrize(
    "override, field",
    [
        ("rl.grpo.ppo_epochs=0", "rl.grpo.ppo_epochs"),
        ("rl.grpo.mini_batches=0", "rl.grpo.mini_batches"),
        ("rl.grpo.mini_batches=9", "grpo.mini_batches"),
        ("stage1.grpo.mini_batches=65", "grpo.mini_batches"),
    ],
)
def test_recipe_out_of_range_is_a_config_error_naming_the_field(override: str, field: str) -> None:
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        load_config(None, [override])


def vanilla_trainer(tmp: Path, store, **grpo) -> Trainer:  # type: ignore[no-untyped-def]
    cfg = TrainConfig(
        algorithm="vanilla",
        budget=BudgetConfig(iterations=4),
        grpo=GRPOConfig(lr=0.2, ppo_epochs=2, mini_batches=2, **grpo),
        eval=EvalConfig(k=1, every=None, final_splits=("train",)),
        scheduler=SchedulerConfig(tasks_per_iteration=4),
    )
    return line_trainer(tmp, store, cfg)


def test_without_a_quota_vanillas_optimizer_steps_are_the_recipes(tmp_path: Path, store) -> None:
    """The quota is off by default, and off it changes nothing: every updating iteration makes
    ppo_epochs x min(mini_batches, groups used) steps, whatever its decisions."""
    assert GRPOConfig().decision_quota is None
    trainer = vanilla_trainer(tmp_path / "off", store)
    trainer.train()
    rows = [m for m in trainer.metrics if m["kind"] == "iteration"]
    made = [
        b["optimizer_steps"] - a["optimizer_steps"]
        for a, b in zip([{"optimizer_steps": 0}, *rows[:-1]], rows, strict=True)
    ]
    assert made == [2 * min(2, r["groups_used"]) for r in rows] and sum(made) > 0
    # a quota every batch meets twice over keeps Vanilla's steps and weights exactly
    met = vanilla_trainer(tmp_path / "met", store, decision_quota=1)
    met.train()
    assert met.optimizer_steps == trainer.optimizer_steps
    assert float(met.policy.theta.detach()) == float(trainer.policy.theta.detach())


def test_a_quota_sizes_the_steps_by_the_decisions_with_a_gradient(store) -> None:
    groups = groups_of(store)
    used = [g for g in groups if len(set(g.rewards)) > 1]
    decisions = sum(len(d) for g in used for d in g.decisions)
    assert len(used) >= 2 and decisions >= 4
    _, full = update(groups, ppo_epochs=2, mini_batches=2, decision_quota=decisions // 2)
    assert full.optimizer_steps == 2 * 2  # two mini-batches of at least the quota each
    _, small = update(groups, ppo_epochs=2, mini_batches=2, decision_quota=decisions // 2 + 1)
    assert small.optimizer_steps == 2 * 1  # not enough for two: one step per pass
    _, short = update(groups, ppo_epochs=2, mini_batches=2, decision_quota=10 * decisions)
    assert short.optimizer_steps == 2  # below the quota a pass still makes its one step
    assert sum(small.training_samples.values()) == decisions  # every decision still trains


@pytest.mark.parametrize(
    "override, message",
    [
        # 64 pivots x 8 samples x 1 decision: a Stage I batch never holds more than 512
        ("stage1.grpo.decision_quota=513", r"stage1: .*grpo\.decision_quota \(513\) is more"),
        ("rl.grpo.decision_quota=0", r"rl\.grpo\.decision_quota: Input should be greater"),
    ],
)
def test_a_quota_no_batch_can_meet_is_refused_at_load(override: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(None, [override])
    load_config(None, ["stage1.grpo.decision_quota=512"])  # every sample's decision: met


def test_a_rollout_phase_quota_above_its_largest_batch_is_refused_before_any_work(
    tmp_path: Path,
) -> None:
    """Stage II and Vanilla batches are bounded by the train tasks' step limit: the run refuses
    a quota above it when it starts (before experts run), naming the field."""
    from adaroll.training.pipeline import Pipeline
    from adaroll.training.presets import QUICK_OVERRIDES

    cfg = load_config(None, [*QUICK_OVERRIDES, "rl.grpo.decision_quota=100000000"])
    with pytest.raises(ConfigError, match=r"rl\.grpo\.decision_quota \(100000000\) is more"):
        Pipeline(cfg, tmp_path / "run", progress=False).check_names()
    assert not (tmp_path / "run").exists()
    fine = load_config(None, [*QUICK_OVERRIDES, "rl.grpo.decision_quota=64"])
    Pipeline(fine, tmp_path / "run", progress=False).check_names()
