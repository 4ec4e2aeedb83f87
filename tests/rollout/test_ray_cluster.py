"""Rollouts on a real multi-node Ray cluster on one machine: a head raylet (the learner's) and a
worker raylet that alone offers the custom resource the env workers ask for
(``rollout.ray_worker_resources``), started with ``ray.cluster_utils.Cluster`` - separate
raylet processes, object transfer between them, and a node that can be lost. The run equals the
single-process run; losing the worker node mid-run is a counted fault whose groups are re-run on
a restarted node; bad cluster input is a clear, bounded error. Needs the `ray` extra: fails, not
skips, without it."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import ray
import ray.cloudpickle
import torch
from ray.cluster_utils import Cluster

import tests.fakes
from adaroll.experts import collect_experts
from adaroll.rollout.distributed import check_reachable
from adaroll.rollout.jobs import Job, RolloutFailed
from adaroll.rollout.ray_workers import RayCollector
from tests.fakes import GoPolicy, LineEnv, LineSuite
from tests.rollout.test_ray_workers import make_trainer, totals
from tests.training.runs import killed_at

SUITE = LineSuite()
ENV_NODE = "adaroll_env_node"
"""The custom resource only the worker raylet has: env workers can run nowhere else."""
FAST_FAILURE_DETECTION = {
    "health_check_initial_delay_ms": 0,
    "health_check_period_ms": 500,
    "health_check_failure_threshold": 4,
}
"""A lost raylet is declared dead after about 2 s instead of Ray's default 15-30 s."""


@pytest.fixture(scope="module")
def cluster():
    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 1,
            "include_dashboard": False,
            "_system_config": FAST_FAILURE_DETECTION,
        },
    )
    cluster.add_node(num_cpus=2, resources={ENV_NODE: 2})
    # The test fakes (policy, env) travel by value: a worker need not import this checkout's
    # `tests` namespace package, which any installed top-level `tests` package would shadow.
    ray.cloudpickle.register_pickle_by_value(tests.fakes)
    ray.init(address=cluster.address, log_to_driver=False)
    cluster.wait_for_nodes()
    yield cluster
    ray.shutdown()
    cluster.shutdown()


@pytest.fixture(scope="module")
def store():
    return collect_experts(LineEnv, SUITE, SUITE.split("train"), progress=False).store


@pytest.fixture(scope="module")
def single(tmp_path_factory, store):
    trainer, _ = make_trainer(tmp_path_factory.mktemp("local"), store, "local")
    trainer.train()
    return trainer


def ledger(trainer) -> list[dict]:
    """The ledger's records without the clock readings (wall seconds, time written)."""
    return [
        {k: v for k, v in r.to_dict().items() if "seconds" not in k and k != "ts"}
        for r in trainer.ledger.records
    ]


def worker_node(cluster: Cluster):
    return next(n for n in cluster.worker_nodes)


def test_two_raylet_run_equals_the_single_process_run(
    cluster, tmp_path: Path, store, single
) -> None:
    assert len([n for n in ray.nodes() if n["Alive"]]) == 2
    distributed, collector = make_trainer(
        tmp_path / "ray", store, "ray", ray_address=cluster.address, worker_resources={ENV_NODE: 1}
    )
    try:
        distributed.train()
        head = ray.get_runtime_context().get_node_id()
        nodes = {ray.get(collector.actor(s).node_id.remote()) for s in range(collector.workers)}
    finally:
        collector.close()
    # every env worker ran on the worker raylet, none beside the learner on the head
    assert nodes == {worker_node(cluster).node_id} and head not in nodes
    assert collector.stats["remote_jobs"] > 0 and collector.stats["faults"] == 0
    assert totals(distributed) == totals(single) and totals(single)["restores"] > 0
    assert torch.equal(distributed.policy.theta, single.policy.theta)
    assert list(distributed.metrics) == list(single.metrics)
    assert ledger(distributed) == ledger(single)


def test_losing_the_worker_node_mid_run_is_a_counted_fault_and_the_run_resumes(
    cluster, tmp_path: Path, store, single
) -> None:
    """The worker raylet dies during a Root dispatch (iteration 2 or 3), a new node takes over,
    the learner is then killed at iteration 5 and resumed: the finished run equals the
    uninterrupted single-process run but for the counted faults (and replayed overhead)."""
    run_dir = tmp_path / "ray"
    ray_kw = {
        "ray_address": cluster.address,
        "worker_resources": {ENV_NODE: 1},
        "start_timeout_s": 60,
    }
    first, collector = make_trainer(run_dir, store, "ray", **ray_kw)
    lost = []

    def kill_node_during_a_root_job(slot: int, job: int) -> None:
        if lost or collector.stats["remote_jobs"] < 6 or collector.current_jobs[job].kind != "root":
            return
        node = worker_node(cluster)
        lost.append(node.node_id)
        cluster.remove_node(node, allow_graceful=False)  # SIGKILL the raylet and its workers
        cluster.add_node(num_cpus=2, resources={ENV_NODE: 2})  # a restarted node takes over

    collector.on_submit = kill_node_during_a_root_job
    try:
        killed_at(first, 5)  # the learner dies too, after iteration 4's save
        nodes = {
            ray.get(collector.actor(s).node_id.remote())
            for s in range(collector.workers)
            if collector.actor(s) is not None
        }
    finally:
        collector.close()
    assert lost and lost[0] not in nodes and nodes <= {worker_node(cluster).node_id}
    assert collector.stats["replaced"] >= 1 and collector.stats["faults"] >= 1
    resumed, collector = make_trainer(run_dir, store, "ray", **ray_kw)
    try:
        resumed.train(resume=True)
    finally:
        collector.close()
    got, want = totals(resumed), totals(single)
    assert got["faults"] >= 1 and want["faults"] == 0  # the lost node's faults stay in the ledger
    assert any(r.mode == "root" for r in resumed.ledger.records if r.faults)
    # no group trained twice: exactly the single-process run's samples, updates and policy
    for name in (
        "training_samples",
        "policy_samples",
        "env_steps",
        "restores",
        "invalid_samples",
        "records",
    ):
        assert got[name] == want[name], name
    assert torch.equal(resumed.policy.theta, single.policy.theta)
    assert list(resumed.metrics) == list(single.metrics)


def test_a_cluster_without_the_requested_resource_is_a_clear_error(cluster, store) -> None:
    remote = RayCollector(
        GoPolicy(0.0),
        LineEnv,
        store,
        "memory",
        history_window=2,
        workers=1,
        ray_address=cluster.address,
        worker_resources={"gpu_browser_node": 1},
    )
    try:
        with pytest.raises(RolloutFailed, match=r"rollout.ray_worker_resources .*gpu_browser_node"):
            remote.collect([Job("root", SUITE.split("train")[0], 2)], seed=0)
    finally:
        remote.close()


def test_a_worker_that_cannot_be_placed_is_bounded_by_the_start_timeout(cluster, store) -> None:
    # the cluster has 2 units of the resource: a third worker can never be placed
    remote = RayCollector(
        GoPolicy(0.0),
        LineEnv,
        store,
        "memory",
        history_window=2,
        workers=3,
        ray_address=cluster.address,
        worker_resources={ENV_NODE: 1},
        start_timeout_s=3,
        job_timeout_s=None,
    )
    try:
        with pytest.raises(RolloutFailed, match=r"rollout.ray_start_timeout_s = 3 s"):
            remote.collect([Job("root", SUITE.split("train")[0], 2)], seed=0)
    finally:
        remote.close()


def test_an_unreachable_address_fails_within_the_start_timeout() -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # (what connect() checks before ray.init; this module's process is already connected)
    with pytest.raises(
        RolloutFailed, match=r"rollout.ray_address '127.0.0.1:\d+'.*ray_start_timeout_s = 1 s"
    ):
        check_reachable(f"127.0.0.1:{port}", timeout_s=1)
