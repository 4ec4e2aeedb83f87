"""Ray workers with real environments (docs/ray.md: results equal the single-process run for
the same seed): on the embedded mobile env with the small policy, the groups two workers
collect - OneStep, Suffix from their own snapshots, Root - and the GRPO update that follows
equal the local collector's; on MiniWoB++ in Chromium, two workers each run Root groups in
their own browser, equal to the local collector's, and leave no browser behind.

These tests need the `ray` extra (they fail, not skip, without it); the web test needs
Chromium (a failure under CI, a skip elsewhere: tests/components.py)."""

from __future__ import annotations

import pytest
import ray
import torch

from adaroll.checkpoints import CheckpointStore
from adaroll.config import GRPOConfig, PolicyConfig
from adaroll.envs.base import TaskSpec
from adaroll.policies import make_policy
from adaroll.policies.base import Policy
from adaroll.policies.small import SmallPolicy
from adaroll.rollout.collector import Collector
from adaroll.rollout.distributed import EnvFactory
from adaroll.rollout.jobs import Group, Job
from adaroll.rollout.ray_workers import RayCollector
from adaroll.snapshots.memory import MemorySnapshots
from adaroll.snapshots.replay import ReplaySnapshots
from adaroll.training.update import grpo_update
from tests.components import require_chromium
from tests.processes import left_behind, live_processes
from tests.real_mobile import HISTORY, MAKE_ENV, SUITE
from tests.training.runs import assert_equal_weights

pytestmark = pytest.mark.usefixtures("module_one_torch_thread")


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def outcome(group: Group) -> tuple:
    """Everything a group holds: job, actions, rewards and cost counters (not seconds)."""
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
        c.restore_fallbacks,
    )


def on_two_workers(
    policy: Policy, env: str, store: CheckpointStore, backend: str, jobs: list[Job], seed: int
) -> tuple[list[Group], set[int], int]:
    """The groups of ``jobs`` collected by two Ray workers (every job remote), the worker slots
    that ran jobs, and the snapshot-building replay steps the workers paid."""
    remote = RayCollector(
        policy,
        EnvFactory(env),
        store,
        backend,
        history_window=HISTORY,
        workers=2,
        local_onestep=False,
        inflight_per_worker=1,
    )
    slots: set[int] = set()
    remote.on_submit = lambda slot, job: slots.add(slot)
    try:
        groups = remote.collect(jobs, seed=seed)
        assert remote.stats["remote_jobs"] == len(jobs) and remote.stats["faults"] == 0
        pids = {ray.get(remote.actor(s).pid.remote()) for s in range(2)}
        assert len(pids) == 2  # two worker processes
    finally:
        remote.close()
    return groups, slots, remote.builds.overhead_steps


def test_ray_groups_and_the_update_after_them_equal_the_local_ones_on_mobile(
    mobile_store, mobile_base
) -> None:
    jobs = []
    for task in SUITE.split("train"):
        checkpoints = mobile_store.for_task(task.id)
        jobs += [
            Job("onestep", task, 8, checkpoint_id=checkpoints[0].id),
            Job("root", task, 4),
            Job("suffix", task, 4, checkpoint_id=checkpoints[len(checkpoints) // 2].id),
        ]
    learner, reference = SmallPolicy.load(mobile_base), SmallPolicy.load(mobile_base)
    local = Collector(reference, MAKE_ENV, mobile_store, MemorySnapshots(), history_window=HISTORY)
    want = local.collect(jobs, seed=13)
    got, slots, replayed = on_two_workers(learner, "mobile", mobile_store, "memory", jobs, seed=13)
    assert [outcome(g) for g in got] == [outcome(g) for g in want]
    assert slots == {0, 1} and replayed == local.builds.overhead_steps > 0
    assert sum(g.cost.env_steps for g in got) > 0 and sum(g.cost.restores for g in got) == 3 * 4
    # the update that follows: the same groups give the same new weights
    cfg = GRPOConfig(lr=3e-3)
    updates = [
        grpo_update(p, torch.optim.Adam(p.parameters(), lr=cfg.lr), groups, cfg)
        for p, groups in ((learner, got), (reference, want))
    ]
    assert updates[0].training_samples == updates[1].training_samples and updates[0].groups_used > 0
    assert_equal_weights(learner.state_dict(), reference.state_dict())
    start = SmallPolicy.load(mobile_base).state_dict()
    assert any(not torch.equal(start[k], learner.state_dict()[k]) for k in start)


@pytest.mark.web
def test_two_ray_workers_run_web_root_groups_in_their_own_browsers() -> None:
    require_chromium()
    before = live_processes()
    jobs = [Job("root", TaskSpec("web", "click-button", seed), 2) for seed in (0, 1)]
    policy = make_policy(PolicyConfig(history=HISTORY), seed=0)
    reference = make_policy(PolicyConfig(history=HISTORY), seed=0)
    store = CheckpointStore()  # Root groups start at a reset: no checkpoint, no snapshot
    factory = EnvFactory("web")
    local = Collector(
        reference, factory, store, ReplaySnapshots(make_env=factory), history_window=HISTORY
    )
    try:
        want = local.collect(jobs, seed=4)
    finally:
        local.close()
    got, slots, _ = on_two_workers(policy, "web", store, "replay", jobs, seed=4)
    assert slots == {0, 1}  # one job per worker process, each driving the browser it launched
    assert [outcome(g) for g in got] == [outcome(g) for g in want]
    assert all(g.cost.env_steps > 0 and len(g.rewards) == 2 for g in got)
    assert left_behind(before, "chromium") == {}
