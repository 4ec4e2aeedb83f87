"""Routing, frontier and promotion rules of the hybrid scheduler, with scripted outcomes."""

from __future__ import annotations

import pytest

from adaroll.config import GRPOConfig, SchedulerConfig
from adaroll.envs.base import TaskSpec
from adaroll.rollout.jobs import Group, Job
from adaroll.training.scheduler import (
    HybridScheduler,
    Stage1Scheduler,
    VanillaScheduler,
    route_for,
)

TASK = TaskSpec("line", "walk", 0)
PIVOTS = {TASK.id: [f"{TASK.id}@1", f"{TASK.id}@3", f"{TASK.id}@5"]}


def outcome(job: Job, successes: int) -> Group:
    rewards = [1.0] * successes + [0.0] * (job.group_size - successes)
    return Group(job, [[] for _ in rewards], rewards)


def make(tau_suffix: float = 0.75, pivots=PIVOTS, **sched) -> HybridScheduler:
    cfg = SchedulerConfig(
        routing="thresholds", tau_suffix=tau_suffix, tasks_per_iteration=1, **sched
    )
    return HybridScheduler([TASK], cfg, GRPOConfig(), pivots)


def route_with(p_successes: int, probes: int = 4) -> HybridScheduler:
    s = make(routing_probes=probes)
    (job,) = s.plan(1)
    assert job.purpose == "routing" and job.kind == "root" and job.group_size == probes
    s.observe([outcome(job, p_successes)], 1)
    return s


@pytest.mark.parametrize(
    ("p", "mode"),
    [
        (0.0, "local"),
        (0.2499, "local"),
        (0.25, "suffix"),
        (0.5, "suffix"),
        (0.75, "suffix"),
        (0.7501, "root"),
        (1.0, "root"),
    ],
)
def test_route_boundaries_are_inclusive_for_suffix(p: float, mode: str) -> None:
    assert route_for(p, 0.25, 0.75) == mode


@pytest.mark.parametrize(
    ("successes", "mode"), [(0, "local"), (1, "suffix"), (3, "suffix"), (4, "root")]
)
def test_initial_routing_from_four_probes(successes: int, mode: str) -> None:
    assert route_with(successes).routes[TASK.id].mode == mode


def test_local_trains_onestep_on_every_pivot_and_reevaluates_on_cadence() -> None:
    s = make(local_reeval_every=2)
    (probe,) = s.plan(1)
    s.observe([outcome(probe, 0)], 1)
    jobs = s.plan(2)  # visit 2: the cadence is due
    assert [j.kind for j in jobs] == ["onestep"] * 3 + ["root"]
    assert [j.checkpoint_id for j in jobs[:3]] == PIVOTS[TASK.id]
    assert jobs[-1].purpose == "reeval"  # a re-evaluation, told apart from the first probes
    assert [j.kind for j in s.plan(3)] == ["onestep"] * 3


def test_suffix_frontier_starts_deepest_and_moves_only_above_tau_suffix() -> None:
    s = route_with(2)
    (job,) = s.plan(2)
    assert job.kind == "suffix" and job.checkpoint_id == PIVOTS[TASK.id][-1] and job.group_size == 8
    s.observe([outcome(job, 6)], 2)  # 0.75 is not > 0.75: stays
    assert s.routes[TASK.id].frontier == 2
    (job,) = s.plan(3)
    s.observe([outcome(job, 7)], 3)
    assert s.routes[TASK.id].frontier == 1
    assert s.plan(4)[0].checkpoint_id == PIVOTS[TASK.id][1]


def test_tau_suffix_half_moves_on_five_of_eight() -> None:
    s = make(tau_suffix=0.5)
    (probe,) = s.plan(1)
    s.observe([outcome(probe, 2)], 1)
    (job,) = s.plan(2)
    s.observe([outcome(job, 4)], 2)
    assert s.routes[TASK.id].frontier == 2
    (job,) = s.plan(3)
    s.observe([outcome(job, 5)], 3)
    assert s.routes[TASK.id].frontier == 1


def test_promotion_to_root_past_first_pivot_and_never_back() -> None:
    s = route_with(2)
    for it in range(2, 5):
        (job,) = s.plan(it)
        s.observe([outcome(job, 8)], it)
    assert s.routes[TASK.id].mode == "root"
    (job,) = s.plan(5)
    assert job.kind == "root" and job.group_size == 2 and job.purpose == "train"
    # A later routing outcome of 0 never demotes.
    s.observe([outcome(Job("root", TASK, 4, purpose="routing"), 0)], 6)
    assert s.routes[TASK.id].mode == "root"
    assert [m for _, m in s.routes[TASK.id].transitions] == ["suffix", "root"]


def test_local_promotes_when_reevaluation_succeeds() -> None:
    s = make(local_reeval_every=1)
    (probe,) = s.plan(1)
    s.observe([outcome(probe, 0)], 1)
    jobs = s.plan(2)
    s.observe([outcome(jobs[-1], 4)], 2)
    assert s.routes[TASK.id].mode == "root"


def test_task_without_checkpoints_goes_to_root() -> None:
    s = make(pivots={})
    (probe,) = s.plan(1)
    s.observe([outcome(probe, 0)], 1)
    assert s.routes[TASK.id].mode == "root"


def test_state_round_trip() -> None:
    s = route_with(2)
    (job,) = s.plan(2)
    s.observe([outcome(job, 8)], 2)
    t = make()
    t.load_state_dict(s.state_dict())
    assert t.routes == s.routes and t.plan(3) == s.plan(3)


def test_vanilla_and_stage1_plans() -> None:
    tasks = [TaskSpec("line", "walk", i) for i in range(3)]
    v = VanillaScheduler(tasks, SchedulerConfig(tasks_per_iteration=2), GRPOConfig())
    assert [(j.task.seed, j.kind, j.group_size, j.ledger_mode) for j in v.plan(1)] == [
        (0, "root", 8, "vanilla"),
        (1, "root", 8, "vanilla"),
    ]
    assert [j.task.seed for j in v.plan(2)] == [2, 0]
    pivots = {t.id: [f"{t.id}@0"] for t in tasks}
    s1 = Stage1Scheduler(tasks, SchedulerConfig(pivots_per_iteration=2), GRPOConfig(), pivots)
    assert [(j.kind, j.checkpoint_id) for j in s1.plan(1)] == [
        ("onestep", f"{tasks[0].id}@0"),
        ("onestep", f"{tasks[1].id}@0"),
    ]
