"""Distributed rollouts on a local Ray instance (2 CPUs): a Ray run equals the single-process
run (groups, ledger, final weights), survives killed workers and crashing envs, and discards
stale results. These tests need the `ray` extra (installed by `make setup`): they fail, not
skip, without it."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
import ray  # a missing `ray` must fail this module, not skip it
import ray.cloudpickle
import torch

import tests.fakes
from adaroll.config import (
    BudgetConfig,
    EvalConfig,
    GRPOConfig,
    SchedulerConfig,
    TrainConfig,
    load_config,
)
from adaroll.experts import collect_experts
from adaroll.rollout.collector import Collector
from adaroll.rollout.distributed import slot_for
from adaroll.rollout.jobs import Group, Job
from adaroll.rollout.ray_workers import RayCollector, RolloutFailed
from adaroll.snapshots.memory import MemorySnapshots
from adaroll.training.scheduler import SCHEDULERS
from adaroll.training.trainer import Trainer
from tests.fakes import GoPolicy, LineEnv, LineSuite

SUITE = LineSuite()
COUNTERS = (
    "records",
    "training_samples",
    "policy_samples",
    "env_steps",
    "restores",
    "replayed_steps",
    "invalid_samples",
    "faults",
)


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    # The test fakes and this module's envs travel by value: a worker need not import this
    # checkout's `tests` namespace package, which an installed top-level `tests` package shadows.
    for module in (tests.fakes, sys.modules[__name__]):
        ray.cloudpickle.register_pickle_by_value(module)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def store():
    return collect_experts(LineEnv, SUITE, SUITE.split("train"), progress=False).store


class CrashOnceEnv(LineEnv):
    """A LineEnv whose process dies (like a segfaulting emulator) on the first step taken
    after ``marker`` appears; the marker is removed first, so it crashes exactly once."""

    def __init__(self, marker: str) -> None:
        super().__init__()
        self.marker = marker

    def step(self, action):
        if os.path.exists(self.marker):
            os.unlink(self.marker)
            os._exit(3)
        return super().step(action)

    def branch(self, state):
        env = CrashOnceEnv(self.marker)
        env.state = state
        return env


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
    )


def mixed_jobs(store) -> list[Job]:
    tasks = SUITE.split("train")
    jobs = []
    for t in tasks:
        ckpts = store.for_task(t.id)
        jobs += [
            Job("suffix", t, 4, checkpoint_id=ckpts[1].id),
            Job("root", t, 4),
            Job("onestep", t, 8, checkpoint_id=ckpts[0].id),
        ]
    return jobs


def make_trainer(tmp: Path, store, collector_kind: str, iterations: int = 6, **ray_kw):
    policy = GoPolicy(-1.0)
    cfg = TrainConfig(
        algorithm="hybrid",
        budget=BudgetConfig(iterations=iterations),
        grpo=GRPOConfig(lr=0.2),
        eval=EvalConfig(k=2, every=3, final_splits=("train",)),
        scheduler=SchedulerConfig(routing="thresholds", tasks_per_iteration=4),
    )
    tasks = SUITE.split("train")
    pivots = {t: [c.id for c in store.for_task(t)] for t in store.task_ids()}
    scheduler = SCHEDULERS.get("hybrid")(
        tasks=tasks, sched=cfg.scheduler, grpo=cfg.grpo, pivots=pivots
    )
    if collector_kind == "local":
        collector = Collector(policy, LineEnv, store, MemorySnapshots(), history_window=2)
    else:
        collector = RayCollector(
            policy, LineEnv, store, "memory", history_window=2, workers=2, **ray_kw
        )
    trainer = Trainer(
        "hybrid",
        tmp,
        cfg,
        policy,
        scheduler,
        collector,
        LineEnv,
        {"train": tasks, "val": tasks},
        seed=7,
        history_window=2,
        progress=False,
    )
    return trainer, collector


def totals(trainer: Trainer) -> dict:
    t = trainer.ledger.training_cost()
    return {n: getattr(t, n) for n in COUNTERS}


def set_theta(*collectors, value: float) -> None:
    for c in collectors:
        with torch.no_grad():
            c.policy.theta.fill_(value)


@pytest.fixture(scope="class")
def remote(store):
    """Two workers shared by the tests of one class (actor start-up is the slow part), closed
    before the other tests start their own: the instance has 2 CPUs, one per worker."""
    collector = RayCollector(
        GoPolicy(0.3), LineEnv, store, "memory", history_window=2, workers=2, local_onestep=False
    )
    yield collector
    collector.close()


class TestSharedWorkers:
    def test_ray_groups_equal_local_groups(self, store, remote) -> None:
        jobs = mixed_jobs(store)
        local = Collector(GoPolicy(0.3), LineEnv, store, MemorySnapshots(), history_window=2)
        set_theta(remote, value=0.3)
        want = [outcome(g) for g in local.collect(jobs, seed=21)]
        got = remote.collect(jobs, seed=21)
        assert [outcome(g) for g in got] == want
        assert all(
            g.job is j for g, j in zip(got, jobs, strict=True)
        )  # the learner's own Job objects
        assert remote.builds.overhead_steps == local.builds.overhead_steps > 0
        assert remote.stats["remote_jobs"] == len(jobs) and remote.stats["faults"] == 0
        # Both workers own checkpoints: each suffix job ran where its snapshot lives.
        assert len({slot_for(j.checkpoint_id, 2) for j in jobs if j.kind == "suffix"}) == 2
        # New weights go out with the next collection and the workers sample with them.
        version = remote.version
        set_theta(local, remote, value=-2.0)
        assert [outcome(g) for g in remote.collect(jobs, seed=22)] == [
            outcome(g) for g in local.collect(jobs, seed=22)
        ]
        assert remote.version == version + 1
        assert remote.builds.overhead_steps == local.builds.overhead_steps  # built once each

    def test_stale_results_are_discarded_counted_and_rerun(self, store, remote) -> None:
        jobs = [Job("root", t, 4) for t in SUITE.split("train")]
        local = Collector(GoPolicy(0.0), LineEnv, store, MemorySnapshots(), history_window=2)
        set_theta(remote, value=0.0)
        stale_before = remote.stats["stale"]
        moved_on = []

        def new_version_after_first_dispatch(slot: int, job: int) -> None:
            if not moved_on:  # the learner publishes a new version while job 0 is in flight
                moved_on.append(remote.broadcast())

        remote.on_submit = new_version_after_first_dispatch
        try:
            groups = remote.collect(jobs, seed=4)
        finally:
            remote.on_submit = None
        assert remote.stats["stale"] == stale_before + 1 and groups[0].cost.faults == 1
        assert [g.cost.faults for g in groups[1:]] == [0] * (len(jobs) - 1)
        assert [outcome(g) for g in groups] == [outcome(g) for g in local.collect(jobs, seed=4)]


@pytest.fixture(scope="module")
def single(tmp_path_factory, store) -> Trainer:
    """The reference: the same hybrid run, single-process."""
    trainer, _ = make_trainer(tmp_path_factory.mktemp("local"), store, "local")
    trainer.train()
    return trainer


def test_hybrid_run_on_two_workers_matches_single_process(tmp_path: Path, store, single) -> None:
    distributed, collector = make_trainer(tmp_path / "ray", store, "ray")
    try:
        distributed.train()
    finally:
        collector.close()
    assert collector.stats["remote_jobs"] > 0 and collector.stats["local_jobs"] > 0
    assert totals(distributed) == totals(single)
    assert totals(single)["restores"] > 0  # suffix groups (restored snapshots) were part of it
    assert torch.equal(distributed.policy.theta, single.policy.theta)
    assert list(distributed.metrics) == list(single.metrics)


def test_killed_worker_is_replaced_and_its_job_retried(tmp_path: Path, store, single) -> None:
    distributed, collector = make_trainer(tmp_path / "ray", store, "ray")
    submitted = []

    def kill_mid_run(slot: int, job: int) -> None:
        submitted.append(job)
        if len(submitted) == 5:  # in iteration 2 or 3, with the job just sent to the actor
            ray.kill(collector.actor(slot))

    collector.on_submit = kill_mid_run
    try:
        distributed.train()
    finally:
        collector.close()
    assert collector.stats["replaced"] == 1 and collector.stats["faults"] >= 1
    got, want = totals(distributed), totals(single)
    assert got["faults"] == collector.stats["faults"] and want["faults"] == 0
    faulty = [r for r in distributed.ledger.records if r.faults]
    assert faulty and all(r.mode in ("suffix", "root") for r in faulty)
    # A replacement actor rebuilds its slot's snapshots (extra replay); everything else - and
    # the policy - is exactly what the fault-free single-process run produced.
    assert got["replayed_steps"] >= want["replayed_steps"]
    for name in ("training_samples", "policy_samples", "env_steps", "restores", "invalid_samples"):
        assert got[name] == want[name], name
    assert torch.equal(distributed.policy.theta, single.policy.theta)


class HangOnceEnv(CrashOnceEnv):
    """A LineEnv that hangs (no env time limit catches it) on the first step taken after
    ``marker`` appears."""

    def step(self, action):
        if os.path.exists(self.marker):
            os.unlink(self.marker)
            time.sleep(3600)
        return LineEnv.step(self, action)

    def branch(self, state):
        env = HangOnceEnv(self.marker)
        env.state = state
        return env


class _OnceFactory:
    def __init__(self, env: type[CrashOnceEnv], marker: str) -> None:
        self.env, self.marker = env, marker

    def __call__(self) -> CrashOnceEnv:
        return self.env(self.marker)


@pytest.mark.parametrize(
    ("env", "limits"),
    [(CrashOnceEnv, {}), (HangOnceEnv, {"job_timeout_s": 5})],
    ids=["env-crash", "hang-outside-env-limits"],
)
def test_a_dead_or_hung_worker_is_replaced_and_its_jobs_retried(
    tmp_path: Path, store, env, limits
) -> None:
    marker = tmp_path / "once"
    jobs = [Job("root", t, 4) for t in SUITE.split("train")]
    remote = RayCollector(
        GoPolicy(0.0),
        _OnceFactory(env, str(marker)),
        store,
        "memory",
        history_window=2,
        workers=2,
        **limits,
    )
    local = Collector(GoPolicy(0.0), LineEnv, store, MemorySnapshots(), history_window=2)
    try:
        remote.collect(jobs[:2], seed=1)  # workers up
        marker.touch()
        groups = remote.collect(jobs, seed=2)
    finally:
        remote.close()
    assert not marker.exists() and remote.stats["replaced"] == 1
    assert 1 <= sum(g.cost.faults for g in groups) <= remote.inflight_per_worker
    assert [outcome(g) for g in groups] == [outcome(g) for g in local.collect(jobs, seed=2)]


def test_a_job_that_always_fails_raises_after_its_retries(store) -> None:
    task = SUITE.split("train")[0]
    remote = RayCollector(
        GoPolicy(0.0), LineEnv, store, "memory", history_window=2, workers=1, max_retries=0
    )
    try:
        with pytest.raises(RolloutFailed, match="failed on 1 attempt"):
            remote.collect([Job("suffix", task, 2, checkpoint_id="no-such-checkpoint")], seed=0)
    finally:
        remote.close()


def test_pipeline_picks_the_collector_from_the_config(tmp_path: Path, store) -> None:
    from adaroll.training.pipeline import Pipeline

    cfg = load_config(None, ["rollout.backend=ray", "rollout.workers=3"])
    pipeline = Pipeline(cfg, tmp_path, progress=False, say=lambda _: None)
    pipeline.store = lambda split: store  # type: ignore[method-assign]
    collector = pipeline.collector(GoPolicy(0.0))
    assert isinstance(collector, RayCollector) and collector.workers == 3
    assert collector._slots == []  # actors start lazily, on the first remote job
    local = Pipeline(load_config(), tmp_path, progress=False, say=lambda _: None)
    local.store = lambda split: store  # type: ignore[method-assign]
    assert isinstance(local.collector(GoPolicy(0.0)), Collector)


def test_process_snapshot_backend_inside_a_worker(store) -> None:
    """A worker builds its own backend by name: the fork-server backend (processes forked from
    the actor) restores the same branches there as in the learner's process."""
    from adaroll.snapshots.base import SNAPSHOT_BACKENDS

    tasks = SUITE.split("train")
    jobs = [Job("suffix", t, 4, checkpoint_id=store.for_task(t.id)[1].id) for t in tasks[:2]]
    local = Collector(
        GoPolicy(0.2),
        LineEnv,
        store,
        SNAPSHOT_BACKENDS.get("forkserver")(make_env=LineEnv),
        history_window=2,
    )
    remote = RayCollector(GoPolicy(0.2), LineEnv, store, "forkserver", history_window=2, workers=1)
    try:
        want = [outcome(g) for g in local.collect(jobs, seed=3)]
        assert [outcome(g) for g in remote.collect(jobs, seed=3)] == want
        assert remote.builds.overhead_steps == local.builds.overhead_steps > 0
    finally:
        remote.close()
        local.close()
        local.snapshots.close()
