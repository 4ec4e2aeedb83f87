"""Per-job deterministic collection (the default): a group depends on (weights, job, seed) only,
so any process - or a Ray worker - that runs the job alone reproduces it."""

from __future__ import annotations

import pytest
import torch

from adaroll.experts import collect_experts
from adaroll.rollout.collector import Collector, job_seed
from adaroll.rollout.jobs import Group, Job
from adaroll.rollout.planning import root_waves
from adaroll.snapshots.memory import MemorySnapshots
from tests.fakes import GoPolicy, LineEnv, LineSuite

SUITE = LineSuite()


@pytest.fixture(scope="module")
def store():
    return collect_experts(LineEnv, SUITE, SUITE.split("train"), progress=False).store


def jobs_for(store) -> list[Job]:
    tasks = SUITE.split("train")
    ckpt = store.for_task(tasks[0].id)[1]
    return [
        Job("onestep", tasks[0], 8, checkpoint_id=ckpt.id),
        Job("suffix", tasks[0], 4, checkpoint_id=ckpt.id),
        Job("root", tasks[1], 6),
        Job("root", tasks[2], 6, purpose="routing", baseline=True),
    ]


def outcome(group: Group) -> tuple:
    actions = tuple(tuple(d.sample.action for d in sample) for sample in group.decisions)
    c = group.cost
    return (
        group.job,
        actions,
        tuple(group.rewards),
        c.policy_samples,
        c.env_steps,
        c.restores,
        c.replayed_steps,
        c.invalid_samples,
        c.faults,
    )


def collector(store, **kw) -> Collector:
    return Collector(GoPolicy(0.0), LineEnv, store, MemorySnapshots(), history_window=2, **kw)


def test_a_job_collected_alone_equals_the_same_job_in_a_batch(store) -> None:
    jobs = jobs_for(store)
    batch = collector(store).collect(jobs, seed=11)
    for j, job in enumerate(jobs):
        alone = collector(store).collect_job(job, job_seed(11, j))
        assert outcome(alone) == outcome(batch[j])
    # and a different seed draws different samples somewhere
    other = collector(store).collect(jobs, seed=12)
    assert [outcome(g) for g in other] != [outcome(g) for g in batch]


def test_same_seed_same_groups_and_after_collect_state(store) -> None:
    jobs = jobs_for(store)
    first = [outcome(g) for g in collector(store).collect(jobs, seed=5)]
    after_all = torch.rand(())
    assert [outcome(g) for g in collector(store).collect(jobs, seed=5)] == first
    # the random state after collecting does not depend on what was collected (or where)
    collector(store).collect(jobs[:1], seed=5)
    assert torch.rand(()) == after_all


def test_without_seed_collection_follows_torch_global_seed(store) -> None:
    jobs = jobs_for(store)
    torch.manual_seed(1)
    first = [outcome(g) for g in collector(store).collect(jobs)]
    torch.manual_seed(1)
    assert [outcome(g) for g in collector(store).collect(jobs)] == first


def test_batch_across_jobs_keeps_order_and_costs(store) -> None:
    jobs = jobs_for(store)
    groups = collector(store, batch_across_jobs=True).collect(jobs, seed=3)
    assert [g.job for g in groups] == jobs
    assert groups[0].cost.env_steps == 0 and groups[0].cost.policy_samples == 8
    assert groups[1].cost.restores == 4
    for g in groups[1:]:
        assert g.cost.env_steps == sum(len(d) for d in g.decisions)


class CountedEnv(LineEnv):
    made: list[CountedEnv] = []

    def __init__(self) -> None:
        super().__init__()
        CountedEnv.made.append(self)
        self.closed = False


def test_root_envs_are_reused_across_jobs_and_closed_with_the_collector(store) -> None:
    """A browser costs a second to start: Root episodes reuse the envs of earlier clean
    attempts (a reset starts the task afresh), with the same groups as fresh envs."""
    CountedEnv.made = []
    jobs = [Job("root", t, 6) for t in SUITE.split("train")]
    fresh = Collector(GoPolicy(0.0), LineEnv, store, MemorySnapshots(), history_window=2)
    reused = Collector(GoPolicy(0.0), CountedEnv, store, MemorySnapshots(), history_window=2)
    assert [outcome(g) for g in reused.collect(jobs, seed=3)] == [
        outcome(g) for g in fresh.collect(jobs, seed=3)
    ]
    assert len(CountedEnv.made) == 6  # one group's worth, not one env per episode
    assert not any(env.closed for env in CountedEnv.made)
    reused.close()
    assert all(env.closed for env in CountedEnv.made)


def test_root_waves_split_a_group_over_fewer_envs() -> None:
    task = SUITE.split("train")[0]
    root = Job("root", task, 8)
    assert [j.group_size for j in root_waves(root, 3)] == [3, 3, 2]  # 3 envs, 3 episodes at most
    assert [j.group_size for j in root_waves(root, 8)] == [1] * 8
    assert [j.group_size for j in root_waves(root, 20)] == [1] * 8
    assert root_waves(root, 1) == [root]
    suffix = Job("suffix", task, 8, checkpoint_id="c")
    assert root_waves(suffix, 4) == [suffix]  # a branch is restored per episode anyway


def test_episodes_per_env_plays_a_group_in_waves_on_the_same_envs(store) -> None:
    """A Root group of 6 with 3 episodes per env: 2 envs, 6 episodes, the costs of all waves,
    reproducible from the seed (and alone equal to in a batch), samples of its own."""
    CountedEnv.made = []
    jobs = [Job("root", t, 6) for t in SUITE.split("train")]
    waves = Collector(
        GoPolicy(0.3), CountedEnv, store, MemorySnapshots(), history_window=2, episodes_per_env=3
    )
    groups = waves.collect(jobs, seed=3)
    assert len(CountedEnv.made) == 2
    assert all(
        len(g.rewards) == len(g.decisions) == 6 and g.job == job
        for g, job in zip(groups, jobs, strict=True)
    )
    assert all(g.cost.env_steps == sum(map(len, g.decisions)) for g in groups)
    again = Collector(
        GoPolicy(0.3), LineEnv, store, MemorySnapshots(), history_window=2, episodes_per_env=3
    )
    assert [outcome(g) for g in again.collect(jobs, seed=3)] == [outcome(g) for g in groups]
    assert outcome(again.collect_job(jobs[1], job_seed(3, 1))) == outcome(groups[1])
    whole = Collector(GoPolicy(0.3), LineEnv, store, MemorySnapshots(), history_window=2)
    assert [outcome(g) for g in whole.collect(jobs, seed=3)] != [outcome(g) for g in groups]
    waves.close()
    with pytest.raises(ValueError, match="episodes_per_env"):
        Collector(
            GoPolicy(0.0), LineEnv, store, MemorySnapshots(), history_window=2, episodes_per_env=0
        )
