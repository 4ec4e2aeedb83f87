"""Scheduler options with scripted outcomes: forgetting monitor and demotion, replay of mastered
tasks, the learning-progress frontier and bandit routing (each off by default: the paper's
thresholds route)."""

from __future__ import annotations

import json
import random

import pytest

from adaroll.config import GRPOConfig, SchedulerConfig
from adaroll.envs.base import TaskSpec
from adaroll.rollout.jobs import Cost, Group, Job
from adaroll.routes import Route
from adaroll.training.bandit_scheduler import Arm, BanditScheduler
from adaroll.training.scheduler import SCHEDULERS, HybridScheduler, Scheduler

TASK = TaskSpec("line", "walk", 0)
PIVOTS = {TASK.id: [f"{TASK.id}@1", f"{TASK.id}@3", f"{TASK.id}@5"]}


def outcome(job: Job, successes: int, env_steps: int = 0, samples: int = 0) -> Group:
    rewards = [1.0] * successes + [0.0] * (job.group_size - successes)
    return Group(
        job, [[] for _ in rewards], rewards, Cost(policy_samples=samples, env_steps=env_steps)
    )


def hybrid(pivots=PIVOTS, tasks=(TASK,), **sched) -> HybridScheduler:
    cfg = SchedulerConfig(**{"routing": "thresholds", "tasks_per_iteration": 1, **sched})
    return HybridScheduler(list(tasks), cfg, GRPOConfig(), pivots)


def routed(successes: int, **sched) -> HybridScheduler:
    """A one-task scheduler after its first routing probe of 4."""
    s = hybrid(**sched)
    (probe,) = s.plan(1)
    s.observe([outcome(probe, successes)], 1)
    return s


def json_round_trip(s: Scheduler, fresh: Scheduler) -> Scheduler:
    fresh.load_state_dict(json.loads(json.dumps(s.state_dict())))  # as the trainer stores it
    return fresh


# -- forgetting monitor and demotion ------------------------------------------------------------
def test_scripted_collapse_demotes_root_to_suffix_then_local() -> None:
    s = routed(4, demotion=True, monitor_every=2)
    route = s.routes[TASK.id]
    assert route.mode == "root"
    for it in range(2, 6):  # mastered: 2 of 2 probes
        (job,) = s.plan(it)
        s.observe([outcome(job, 2)], it)
    assert route.mode == "root" and route.outcomes == [1] * 8
    it = 6
    while route.mode == "root":  # collapse: every probe fails
        (job,) = s.plan(it)
        assert job.kind == "root" and job.purpose == "train"
        s.observe([outcome(job, 0)], it)
        it += 1
        assert it < 20, "a collapse to 0 must be detected"
    # Window of 12: with 4 of 12 left the Wilson bound is 0.57, with 2 of 12 it is 0.40 < 0.5.
    assert it - 6 == 5 and route.mode == "suffix" and route.frontier == 2 and route.outcomes == []
    while route.mode == "suffix":  # Suffix groups stay mediocre, monitor probes fail
        jobs = s.plan(it)
        assert jobs[0].kind == "suffix"
        assert [j.purpose for j in jobs[1:]] == (["reeval"] if route.visits % 2 == 0 else [])
        s.observe([outcome(jobs[0], 3)] + [outcome(j, 0) for j in jobs[1:]], it)
        it += 1
        assert it < 40
    assert route.mode == "local"
    assert [m for _, m in route.transitions] == ["root", "suffix", "local"]


def test_noise_around_a_good_rate_never_demotes() -> None:
    rng = random.Random(0)
    s = routed(4, demotion=True)
    for it in range(2, 400):
        (job,) = s.plan(it)
        s.observe([outcome(job, sum(rng.random() < 0.75 for _ in range(job.group_size)))], it)
    assert s.routes[TASK.id].mode == "root"


def test_without_demotion_a_collapse_changes_nothing() -> None:
    s = routed(4)
    for it in range(2, 30):
        (job,) = s.plan(it)
        s.observe([outcome(job, 0)], it)
    assert s.routes[TASK.id].mode == "root" and s.routes[TASK.id].outcomes == []


def test_a_demoted_task_is_promoted_again_and_rootless_tasks_never_demote() -> None:
    s = routed(4, demotion=True)
    for it in range(2, 6):
        (job,) = s.plan(it)
        s.observe([outcome(job, 0)], it)
    assert s.routes[TASK.id].mode == "suffix"
    for it in range(6, 9):  # the frontier walks back to the root as in the paper
        (job, *_) = s.plan(it)
        s.observe([outcome(job, 8)], it)
    assert s.routes[TASK.id].mode == "root"
    bare = routed(0, pivots={}, demotion=True)  # no checkpoints: Root is the only mode
    for it in range(2, 10):
        (job,) = bare.plan(it)
        bare.observe([outcome(job, 0)], it)
    assert bare.routes[TASK.id].mode == "root"


# -- replay of mastered tasks -------------------------------------------------------------------
def test_replay_trains_onestep_on_root_tasks_round_robin() -> None:
    tasks = [TaskSpec("line", "walk", i) for i in range(4)]
    pivots = {t.id: [f"{t.id}@1", f"{t.id}@2"] for t in tasks}

    def make(**sched) -> HybridScheduler:
        return hybrid(pivots=pivots, tasks=tasks, tasks_per_iteration=2, **sched)

    def run(s: HybridScheduler, iterations: int) -> list[int | None]:
        replayed = []
        for it in range(1, iterations + 1):
            jobs = s.plan(it)
            replay = [j for j in jobs if j.kind == "onestep" and s.routes[j.task.id].mode == "root"]
            assert all(j.purpose == "train" for j in replay)
            assert len({j.task.id for j in replay}) <= 1
            if replay:
                assert [j.checkpoint_id for j in replay] == pivots[replay[0].task.id]
            replayed.append(replay[0].task.seed if replay else None)
            # Root probes of tasks 0-2 succeed (so they reach and stay at Root); task 3 fails.
            s.observe(
                [outcome(j, j.group_size * (j.task.seed < 3) * (j.kind == "root")) for j in jobs],
                it,
            )
        return replayed

    s = make(replay_share=0.5)  # one replayed task per iteration
    # Tasks 0 and 1 reach Root at iteration 1, task 2 at iteration 2; task 3 stays Local.
    assert run(s, 5) == [None, 0, 1, 2, 0]
    t = json_round_trip(s, make(replay_share=0.5))
    assert t.replay_cursor == s.replay_cursor == 1 and t.plan(6) == s.plan(6)
    assert run(make(), 5) == [None] * 5  # off by default


# -- learning-progress frontier -----------------------------------------------------------------
def lp_scheduler(**sched) -> HybridScheduler:
    return routed(2, frontier="progress", lp_window=3, lp_min_slope=0.05, **sched)


def feed(s: HybridScheduler, successes: list[int], start: int = 2) -> list[int]:
    """Suffix groups with the given successes; the frontier after each."""
    frontiers = []
    for it, k in enumerate(successes, start):
        job, *probes = s.plan(it)  # with demotion: a monitor probe on its cadence
        assert (
            job.kind == "suffix"
            and job.checkpoint_id == PIVOTS[TASK.id][s.routes[TASK.id].frontier]
        )
        s.observe([outcome(job, k)] + [outcome(p, 2) for p in probes], it)
        frontiers.append(s.routes[TASK.id].frontier)
    return frontiers


def test_lp_frontier_stays_while_success_climbs_even_above_tau_suffix() -> None:
    s = lp_scheduler()
    assert feed(s, [2, 4, 7, 7]) == [2, 2, 2, 2]  # slope 0.27, then 0.19 per group: still learning


def test_lp_frontier_moves_shallower_on_a_high_plateau_and_deeper_on_a_low_one() -> None:
    s = lp_scheduler()
    assert feed(s, [5, 5, 5]) == [2, 2, 1]  # plateau at 5/8 >= 0.5: shallower (harder)
    assert feed(s, [2, 3, 2], start=5) == [1, 1, 2]  # plateau at ~0.3: deeper (easier)
    assert feed(s, [2, 2, 3], start=8) == [2, 2, 2]  # slope 1/16 per group > 0.05: stays


def test_lp_frontier_moves_at_once_on_groups_without_gradient() -> None:
    s = lp_scheduler()
    assert feed(s, [8, 0, 8, 8]) == [1, 2, 1, 0]
    assert feed(s, [0, 0], start=6) == [1, 2]
    assert feed(s, [0], start=8) == [2]  # already at the deepest pivot: stays
    assert feed(s, [8, 8, 8], start=9) == [1, 0, 0]
    assert s.routes[TASK.id].mode == "root"  # past the first pivot


def test_threshold_frontier_is_unchanged_by_default() -> None:
    s = routed(2)
    assert feed(s, [8, 0, 0, 0, 7]) == [1, 1, 1, 1, 0]


def test_lp_state_round_trip_mid_window() -> None:
    s = lp_scheduler(demotion=True)
    feed(s, [5, 5])
    assert s.routes[TASK.id].progress == [0.625, 0.625]
    t = json_round_trip(s, hybrid(frontier="progress", lp_window=3, demotion=True))
    assert t.routes == s.routes
    assert feed(t, [5], start=4) == feed(s, [5], start=4) == [1]


# -- bandit routing -----------------------------------------------------------------------------
def bandit(pivots=PIVOTS, **sched) -> BanditScheduler:
    cfg = SchedulerConfig(routing="bandit", tasks_per_iteration=1, **sched)
    built = SCHEDULERS.get("hybrid")(tasks=[TASK], sched=cfg, grpo=GRPOConfig(), pivots=pivots)
    assert isinstance(built, BanditScheduler)
    return built


# arm -> (successes per group of 8 or of the 2 root rollouts, env steps, policy samples) per group
ARMS = {
    "local": (4, 0, 8),
    "suffix:2": (4, 8, 8),
    "suffix:1": (4, 16, 16),
    "suffix:0": (4, 48, 48),
    "root": (1, 12, 12),
}


def visit(s: BanditScheduler, it: int, success_from_start) -> str:
    """One visit: the task's probe (if due) succeeds ``success_from_start(arms pulled so far)``
    of 4 times; the pulled arm gets its scripted outcome. Returns the arm pulled, by name."""
    jobs = s.plan(it)
    (pulled,) = {s._arm_of(j) for j in jobs if j.purpose == "train"}
    assert pulled is not None
    arm = str(pulled)
    groups = []
    for job in jobs:
        if job.purpose in ("routing", "reeval"):
            assert (job.kind, job.group_size) == ("root", s.sched.routing_probes)
            groups.append(outcome(job, success_from_start(s.history)))
        else:
            successes, steps, samples = ARMS[arm]
            groups.append(outcome(job, successes, steps, samples))
    s.observe(groups, it)
    s.history.append(arm)
    return arm


def run_bandit(visits: int, success_from_start, **sched) -> list[str]:
    s = bandit(**sched)
    s.history = []  # type: ignore[attr-defined]
    return [visit(s, it, success_from_start) for it in range(1, visits + 1)]


def test_a_local_arm_whose_root_success_stays_flat_loses_its_pull() -> None:
    # Local's expert-match rewards are 4 of 8 on every pull (the most gradient a group can
    # carry), but success from the start never moves: Local must not keep winning.
    pulls = run_bandit(60, lambda history: 2)
    assert pulls[:5] == ["local", "suffix:2", "suffix:1", "suffix:0", "root"]  # each tried once
    later = pulls[20:]
    assert later.count("local") <= len(later) // 3
    assert len(set(later)) >= 3  # flat everywhere: it keeps exploring


def test_the_arm_followed_by_rising_success_from_the_start_wins() -> None:
    def success(history: list[str]) -> int:  # each suffix:1 pull adds to the root success
        return min(4, history.count("suffix:1"))

    pulls = run_bandit(24, success, bandit_probe_every=1)
    assert pulls[5:12].count("suffix:1") >= 4


def test_bandit_probes_are_counted_routing_jobs_and_first_visits_probe() -> None:
    s = bandit(root_probes=3, routing_probes=4, bandit_probe_every=3)
    kinds = [(j.kind, j.purpose, j.group_size) for j in s.plan(1)]
    assert kinds[0] == ("root", "routing", 4)
    assert kinds[1:] == [("onestep", "train", 8)] * 3
    bare = bandit(pivots={}, root_probes=3)
    assert [(j.kind, j.purpose) for j in bare.plan(1)] == [("root", "routing"), ("root", "train")]
    bare.add_pivots(TASK.id, ["x@1"], {}, 2)  # self-generated pivots open Local and Suffix arms
    assert list(bare.stats[TASK.id]) == [Arm(Route.LOCAL), Arm(Route.SUFFIX, 0), Arm(Route.ROOT)]


def test_bandit_untried_arms_borrow_the_pooled_statistics_of_their_kind() -> None:
    other = TaskSpec("line", "walk", 1)
    pivots = {**PIVOTS, other.id: [f"{other.id}@2", f"{other.id}@4", f"{other.id}@6"]}
    cfg = SchedulerConfig(routing="bandit", tasks_per_iteration=1, bandit_probe_every=1)
    s = BanditScheduler([TASK, other], cfg, GRPOConfig(), pivots)
    s.history = []  # type: ignore[attr-defined]
    for it in range(1, 13):  # only TASK is visited (the round robin is pinned for the test)
        s.order.cursor = 0
        visit(s, it, lambda history: min(4, history.count("suffix:1")))
    # The other task has tried nothing, yet goes straight to the second-deepest pivot.
    chosen = s.choose(other.id)
    assert chosen == Arm(Route.SUFFIX, 1) and s.stats[other.id][chosen][0] == 0
    assert bandit().choose(TASK.id) == Arm(Route.LOCAL)  # nothing pooled: untried kinds go first


def test_bandit_state_round_trip() -> None:
    s = bandit()
    s.history = []  # type: ignore[attr-defined]
    for it in range(1, 10):
        visit(s, it, lambda history: len(history) % 3)
    t = json_round_trip(s, bandit())
    t.history = list(s.history)  # type: ignore[attr-defined]
    assert t.stats == s.stats and t.pending == s.pending and t.success == s.success
    assert [visit(t, it, len) for it in range(10, 20)] == [
        visit(s, it, len) for it in range(10, 20)
    ]


def test_bandit_arms_are_typed_and_written_by_their_names() -> None:
    for name, arm in [
        ("local", Arm(Route.LOCAL)),
        ("root", Arm(Route.ROOT)),
        ("suffix:0", Arm(Route.SUFFIX, 0)),
        ("suffix:12", Arm(Route.SUFFIX, 12)),
    ]:
        assert str(arm) == name and Arm.parse(name) == arm
    assert Arm(Route.SUFFIX, 2).pool_key(depth=3) == "suffix-0"  # the deepest pivot pools as 0
    assert Arm(Route.LOCAL).pool_key(depth=3) == "local"
    for bad in ("unrouted", "suffix", "suffix:", "suffix:-1", "suffix:x", "local:1", "oracle"):
        with pytest.raises(ValueError, match="valid: local, suffix:K"):
            Arm.parse(bad)
    with pytest.raises(ValueError, match="pivot index"):
        Arm(Route.SUFFIX)


def test_bandit_resumes_from_a_state_written_by_the_string_arm_code() -> None:
    # A state as the bandit wrote it when its arms were bare strings (JSON, as the trainer
    # stores it): it loads into typed arms, writes back byte for byte, and plans from it.
    old = {
        "cursor": 0,
        "pivots": PIVOTS,
        "stats": {
            TASK.id: {
                "local": [1.9, 0.1, 15.2],
                "suffix:2": [0.95, 0.0, 15.2],
                "suffix:1": [0.0, 0.0, 0.0],
                "suffix:0": [0.0, 0.0, 0.0],
                "root": [0.0, 0.0, 0.0],
            }
        },
        "pooled": {"local": [1.9, 0.1, 15.2], "suffix-0": [0.95, 0.0, 15.2]},
        "modes": {TASK.id: "suffix"},
        "visits": {TASK.id: 2},
        "success": {TASK.id: 0.5},
        "pending": {TASK.id: [["suffix:2", 16.0]]},
    }
    s = bandit()
    s.load_state_dict(json.loads(json.dumps(old)))
    assert s.pending[TASK.id] == [(Arm(Route.SUFFIX, 2), 16.0)]
    assert s.modes[TASK.id] is Route.SUFFIX
    assert json.dumps(s.state_dict()) == json.dumps(old)
    assert s.route_counts()["suffix"] == 1
    (job,) = s.plan(3)  # no probe due: the untried, unpooled suffix:1 is pulled
    assert (job.kind, job.checkpoint_id) == ("suffix", PIVOTS[TASK.id][1])


def test_unknown_routing_is_rejected() -> None:
    with pytest.raises(ValueError):
        SchedulerConfig(routing="oracle")  # type: ignore[arg-type]


def test_the_paper_thresholds_are_the_default_stage2_router() -> None:
    s = SCHEDULERS.get("hybrid")(
        tasks=[TASK], sched=SchedulerConfig(), grpo=GRPOConfig(), pivots=PIVOTS
    )
    assert isinstance(s, HybridScheduler)
    assert isinstance(bandit(), BanditScheduler)


@pytest.mark.parametrize(
    "setting",
    [
        {"tau_low": 0.3},
        {"tau_suffix": 0.5},
        {"local_reeval_every": 8},
        {"demotion": True},
        {"replay_share": 0.125},
        {"frontier": "progress"},
    ],
)
def test_threshold_settings_under_the_bandit_are_an_error(setting: dict) -> None:
    (name,) = setting
    with pytest.raises(ValueError, match=f"never reads {name}.*routing=thresholds"):
        SchedulerConfig(routing="bandit", **setting)
    SchedulerConfig(**setting)  # valid under the default router
