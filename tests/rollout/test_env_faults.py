"""Env faults in the local collector (CPU, fake env): a crashed env's group is re-run from its
start with the same seed, so the returned groups equal a fault-free collection; faults and
snapshot fallbacks are counted in the group costs, the ledger and the phase summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from adaroll.config import BudgetConfig, EvalConfig, GRPOConfig, SchedulerConfig, TrainConfig
from adaroll.envs.base import EnvFault, EnvTimeout
from adaroll.experts import collect_experts
from adaroll.rollout.collector import Collector
from adaroll.rollout.jobs import Group, Job, RolloutFailed
from adaroll.snapshots.memory import MemorySnapshots
from adaroll.snapshots.replay import ReplaySnapshots
from adaroll.training.scheduler import SCHEDULERS
from adaroll.training.trainer import Trainer
from tests.fakes import GoPolicy, LineEnv, LineSuite

SUITE = LineSuite()


class FaultyLineEnv(LineEnv):
    """A LineEnv that breaks on chosen calls: ``plan`` maps a global call number (counted over
    every instance's steps, or resets) to the fault raised there."""

    plan: dict[tuple[str, int], EnvFault] = {}
    calls = {"step": 0, "reset": 0}
    closed_broken = 0

    def __init__(self) -> None:
        super().__init__()
        self.broken = False

    def _maybe_fail(self, kind: str) -> None:
        FaultyLineEnv.calls[kind] += 1
        fault = FaultyLineEnv.plan.get((kind, FaultyLineEnv.calls[kind]))
        if fault is not None:
            self.broken = True
            raise fault

    def reset(self, *, seed=None, options=None):
        self._maybe_fail("reset")
        return super().reset(seed=seed, options=options)

    def step(self, action):
        self._maybe_fail("step")
        return super().step(action)

    def branch(self, state):
        env = FaultyLineEnv()
        env.state = state
        return env

    def close(self) -> None:
        FaultyLineEnv.closed_broken += self.broken
        super().close()

    @classmethod
    def arm(cls, plan: dict[tuple[str, int], EnvFault]) -> None:
        cls.plan, cls.calls, cls.closed_broken = dict(plan), {"step": 0, "reset": 0}, 0


@pytest.fixture(scope="module")
def store():
    return collect_experts(LineEnv, SUITE, SUITE.split("train"), progress=False).store


def jobs_for(store) -> list[Job]:
    tasks = SUITE.split("train")[:2]
    jobs = []
    for t in tasks:
        jobs += [Job("root", t, 4), Job("suffix", t, 4, checkpoint_id=store.for_task(t.id)[1].id)]
    return jobs


def outcome(group: Group) -> tuple:
    actions = tuple(tuple(d.sample.action for d in sample) for sample in group.decisions)
    return group.job, actions, tuple(group.rewards)


def collector(store, **kw) -> Collector:
    return Collector(GoPolicy(0.2), FaultyLineEnv, store, MemorySnapshots(), history_window=2, **kw)


def test_faulted_groups_are_rerun_and_equal_a_fault_free_collection(store) -> None:
    jobs = jobs_for(store)
    FaultyLineEnv.arm({})
    clean = collector(store).collect(jobs, seed=11)
    FaultyLineEnv.arm(
        {
            ("step", 3): EnvFault("browser died"),
            ("step", 40): EnvTimeout("hung"),
            ("reset", 6): EnvFault("crashed while resetting"),
        }
    )
    faulty = collector(store)
    groups = faulty.collect(jobs, seed=11)
    assert [outcome(g) for g in groups] == [outcome(g) for g in clean]
    assert all(len(g.decisions) == len(g.rewards) == g.job.group_size for g in groups)
    assert sum(g.cost.faults for g in groups) == 3
    assert faulty.stats["faults"] == 3 and faulty.stats["timeouts"] == 1
    # every env that broke was closed (and so replaced by the retry's fresh envs)
    assert faulty.stats["replaced_envs"] == 3 == FaultyLineEnv.closed_broken
    # the failed attempts' work is cost too: never less than the clean run's
    for g, c in zip(groups, clean, strict=True):
        assert (
            g.cost.env_steps >= c.cost.env_steps and g.cost.policy_samples >= c.cost.policy_samples
        )
        assert (g.cost.faults > 0) == (
            g.cost.env_steps > c.cost.env_steps
            or g.cost.policy_samples > c.cost.policy_samples
            or g.cost.restores > c.cost.restores
        )


def test_batched_collection_reruns_only_the_faulted_groups(store) -> None:
    jobs = jobs_for(store)
    FaultyLineEnv.arm({("step", 5): EnvFault("browser died")})
    c = collector(store, batch_across_jobs=True)
    groups = c.collect(jobs, seed=3)
    assert sum(g.cost.faults for g in groups) == 1
    assert all(len(g.decisions) == g.job.group_size for g in groups)


def test_a_group_that_keeps_failing_raises_after_max_retries(store) -> None:
    jobs = [Job("root", SUITE.split("train")[0], 2)]
    FaultyLineEnv.arm({("reset", n): EnvFault(f"crash {n}") for n in range(1, 10)})
    with pytest.raises(RolloutFailed, match=r"failed on 3 attempt\(s\); last: crash 3"):
        collector(store, max_retries=2).collect(jobs, seed=0)
    assert FaultyLineEnv.calls["reset"] == 3


def test_a_corrupt_snapshot_falls_back_to_replay_and_is_rebuilt(store) -> None:
    task = SUITE.split("train")[0]
    job = Job("suffix", task, 3, checkpoint_id=store.for_task(task.id)[2].id)
    FaultyLineEnv.arm({})
    clean = collector(store).collect([job], seed=5)
    c = collector(store)
    ref = c.cache.ref(store.get(job.checkpoint_id))
    # corrupt the saved state: restores now come back at the task's start, not the checkpoint
    state, owner = c.snapshots._states[ref.id]
    c.snapshots._states[ref.id] = (type(state)(state.task, 0, 0), owner)
    (group,) = c.collect([job], seed=5)
    assert outcome(group) == outcome(clean[0])
    # the first restore fell back to replay; the snapshot was then rebuilt for the other two
    assert group.cost.restore_fallbacks == 1 == c.stats["restore_fallbacks"]
    assert group.cost.replayed_steps == len(store.get(job.checkpoint_id).history)
    assert group.cost.restores == 3 and group.cost.faults == 0
    assert c.builds.overhead_steps == 2 * len(store.get(job.checkpoint_id).history)


def test_replay_backend_mismatch_is_an_error_not_a_loop(store) -> None:
    task = SUITE.split("train")[0]
    ckpt = store.for_task(task.id)[1]
    backend = ReplaySnapshots(make_env=LineEnv)
    c = Collector(GoPolicy(0.2), LineEnv, store, backend, history_window=2)
    ref = c.cache.ref(ckpt)
    import dataclasses

    c.cache._refs[ckpt.id] = dataclasses.replace(ref, element_tree_hash="0" * 16)
    with pytest.raises(Exception, match="replay backend.*element tree"):
        c.collect([Job("suffix", task, 2, checkpoint_id=ckpt.id)], seed=0)


def test_phase_summary_reports_the_ledgered_faults(tmp_path: Path, store) -> None:
    FaultyLineEnv.arm({("step", 7): EnvFault("browser died"), ("step", 90): EnvTimeout("hung")})
    policy = GoPolicy(-1.0)
    cfg = TrainConfig(
        algorithm="vanilla",
        budget=BudgetConfig(iterations=2),
        grpo=GRPOConfig(lr=0.2),
        eval=EvalConfig(k=1, every=5, final_splits=()),
        scheduler=SchedulerConfig(tasks_per_iteration=2),
    )
    tasks = SUITE.split("train")
    scheduler = SCHEDULERS.get("vanilla")(
        tasks=tasks, sched=cfg.scheduler, grpo=cfg.grpo, pivots={}
    )
    col = Collector(policy, FaultyLineEnv, store, MemorySnapshots(), history_window=2)
    trainer = Trainer(
        "vanilla",
        tmp_path,
        cfg,
        policy,
        scheduler,
        col,
        LineEnv,
        {"train": tasks, "val": tasks},
        seed=1,
        history_window=2,
        progress=False,
    )
    final = trainer.train().final
    ledgered = trainer.ledger.training_cost().faults
    assert ledgered == col.stats["faults"] == 2
    assert final["faults"]["faults"] == 2 and final["faults"]["restore_fallbacks"] == 0
    assert sum(v["faults"] for v in final["faults"]["by"].values()) == 2
