"""A Hybrid that spends its budget learning (issue 40, items 3, 4 and 6): routing from a
zero-env-cost estimate, re-evaluation only near tau_low, Root probe-then-expand. Each is off by
default; whatever probes run are billed."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from adaroll.algos.route_estimate import (
    calibrated,
    fit_gamma,
    product_estimate,
    smoothed_share,
    spearman,
)
from adaroll.config import (
    BudgetConfig,
    ConfigError,
    EvalConfig,
    GRPOConfig,
    SchedulerConfig,
    TrainConfig,
    load_config,
)
from adaroll.envs.base import TaskSpec
from adaroll.experts import collect_experts
from adaroll.rollout.collector import Collector
from adaroll.rollout.jobs import Group, Job
from adaroll.snapshots.memory import MemorySnapshots
from adaroll.training.route_estimate import RouteEstimator, expert_checkpoints, match_factors
from adaroll.training.scheduler import HybridScheduler
from tests.fakes import GoPolicy, LineEnv, LineSuite
from tests.training.runs import RecordingCollector, line_trainer, recorded

TASKS = [TaskSpec("line", "walk", i) for i in range(4)]
PIVOTS = {t.id: [f"{t.id}@1", f"{t.id}@3"] for t in TASKS}


def outcome(job: Job, successes: int) -> Group:
    rewards = [1.0] * successes + [0.0] * (job.group_size - successes)
    return Group(job, [[] for _ in rewards], rewards)


def estimator(shares: dict[str, float]) -> RouteEstimator:
    """Two expert checkpoints per task, each taken with chance sqrt(share): raw = share."""
    return RouteEstimator(
        {t: {c: math.sqrt(shares[t]) for c in PIVOTS[t]} for t in PIVOTS if t in shares}
    )


def make(shares: dict[str, float] | None = None, **sched) -> HybridScheduler:
    cfg = SchedulerConfig(**{"routing": "thresholds", "tasks_per_iteration": 1, **sched})
    est = estimator(shares) if shares is not None else None
    return HybridScheduler(TASKS, cfg, GRPOConfig(), PIVOTS, estimator=est)


# -- the estimate's arithmetic -------------------------------------------------------------------
def test_the_estimate_is_a_product_of_smoothed_shares_calibrated_by_probes() -> None:
    assert smoothed_share(8, 8) == pytest.approx(8.5 / 9) and smoothed_share(0, 8) > 0
    assert product_estimate([0.5, 0.5, 0.8]) == pytest.approx(0.2)
    assert product_estimate([0.0]) > 0  # floored: no estimate is exactly impossible
    # probes that succeed as raw ** 0.5 does: the fit recovers an exponent near 0.5
    observations = [(r, round(100 * r**0.5), 100) for r in (0.04, 0.09, 0.25, 0.5, 0.81)]
    gamma = fit_gamma(observations)
    assert gamma == pytest.approx(0.5, rel=0.05) and fit_gamma([]) == 1.0
    assert calibrated(0.25, gamma) == pytest.approx(0.5, rel=0.05)
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(4.5 / math.sqrt(22.5))  # ties
    assert spearman([1, 1], [1, 2]) is None


def test_match_factors_follow_the_expert_chain() -> None:
    suite = LineSuite()
    store = collect_experts(LineEnv, suite, suite.split("train"), progress=False).store
    matches = {c.id: 0.5 for c in store}
    collector = Collector(GoPolicy(0.0), LineEnv, store, MemorySnapshots(), history_window=2)
    factors = match_factors(expert_checkpoints(store, GoPolicy(0.0), collector), matches, 8)
    task = next(iter(store.task_ids()))
    assert list(factors[task]) == [c.id for c in sorted(store.for_task(task), key=lambda c: c.step)]
    assert set(factors[task].values()) == {smoothed_share(4, 8)}


# -- routing from the estimate ---------------------------------------------------------------------
def test_calibration_tasks_are_probed_then_the_estimate_routes_and_the_visit_trains() -> None:
    s = make(
        {t.id: p for t, p in zip(TASKS, (0.5, 0.01, 0.9, 0.5), strict=True)},
        routing_estimate="match",
        routing_calibration=1,
    )
    (probe,) = s.plan(1)  # the calibration task: probed as the paper does
    assert (probe.task, probe.purpose, probe.group_size) == (TASKS[0], "routing", 4)
    s.observe([outcome(probe, 2)], 1)
    assert s.estimator.observations == [(pytest.approx(0.5), 2, 4)]
    jobs = s.plan(2)  # routed by its estimate at once: its first visit already trains
    route = s.routes[TASKS[1].id]
    assert (
        route.estimated and route.mode == "local" and route.p == s.estimator.estimate(TASKS[1].id)
    )
    assert [j.kind for j in jobs] == ["onestep", "onestep"] and all(
        j.purpose == "train" for j in jobs
    )
    (job,) = s.plan(3)
    assert s.routes[TASKS[2].id].mode == "root" and job.kind == "root" and job.group_size == 2
    # the task's own one-step groups move its estimate (a running update)
    before = s.estimator.estimate(TASKS[1].id)
    s.observe([outcome(j, 8) for j in jobs], 2)
    assert s.estimator.estimate(TASKS[1].id) > before


def test_tasks_visited_before_the_calibration_is_back_are_probed() -> None:
    s = make(
        {t.id: 0.5 for t in TASKS},
        routing_estimate="match",
        routing_calibration=1,
        tasks_per_iteration=2,
    )
    jobs = s.plan(1)
    assert [j.purpose for j in jobs] == ["routing", "routing"]
    assert not any(r.estimated for r in s.routes.values())


@pytest.mark.parametrize("kind", ["match", "likelihood"])
def test_an_estimate_asked_of_a_task_without_checkpoints_is_a_config_error(kind: str) -> None:
    shares = {t.id: 0.5 for t in TASKS[:3]}  # the fourth task has no expert checkpoints
    with pytest.raises(ConfigError, match=rf"rl\.scheduler\.routing_estimate={kind}: 1 train task"):
        make(shares, routing_estimate=kind)
    make(shares)  # probes route it: no estimate asked


def test_a_calibration_subset_larger_than_the_split_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"rl\.scheduler\.routing_calibration \(5\) is larger"):
        make({t.id: 0.5 for t in TASKS}, routing_estimate="match", routing_calibration=5)
    with pytest.raises(ConfigError, match="routing_calibration calibrates an estimate"):
        load_config(None, ["rl.scheduler.routing_calibration=4"])
    from adaroll.training.pipeline import Pipeline
    from adaroll.training.presets import QUICK_OVERRIDES

    cfg = load_config(
        None,
        [
            *QUICK_OVERRIDES,
            "rl.scheduler.routing_estimate=match",
            "rl.scheduler.routing_calibration=500",
        ],
    )
    with pytest.raises(ConfigError, match=r"rl\.scheduler\.routing_calibration \(500\)"):
        Pipeline(cfg, tmp_path / "run", progress=False).check_names()


def test_the_options_are_off_by_default_and_never_read_by_the_bandit() -> None:
    sched = SchedulerConfig()
    assert (sched.routing_estimate, sched.reeval, sched.root_expand) == (
        "probes",
        "periodic",
        False,
    )
    assert GRPOConfig().decision_quota is None
    with pytest.raises(ValueError, match="routing=bandit never reads routing_estimate"):
        SchedulerConfig(routing="bandit", routing_estimate="match")
    with pytest.raises(ValueError, match="root_expand_below acts with root_expand"):
        SchedulerConfig(root_expand_below=0.5)


def small_run(tmp: Path, store, shares: float, **sched):  # type: ignore[no-untyped-def]
    cfg = TrainConfig(
        algorithm="hybrid",
        budget=BudgetConfig(iterations=6),
        grpo=GRPOConfig(lr=0.2, group_size=4),
        eval=EvalConfig(k=1, every=None, final_splits=("train",)),
        scheduler=SchedulerConfig(tasks_per_iteration=2, local_reeval_every=1, **sched),
    )
    est = RouteEstimator({t: {c.id: shares for c in store.for_task(t)} for t in store.task_ids()})
    trainer = line_trainer(tmp, store, cfg, estimator=est)
    trainer.collector = RecordingCollector(
        trainer.policy, LineEnv, store, MemorySnapshots(), history_window=2
    )
    trainer.train()
    return trainer


@pytest.fixture(scope="module")
def store():
    suite = LineSuite()
    return collect_experts(LineEnv, suite, suite.split("train"), progress=False).store


def test_an_estimate_routed_run_bills_every_probe_it_runs(tmp_path: Path, store) -> None:
    """Estimate routing saves the probes it does not run, never the bill of those it does:
    the calibration probes, the probes of tasks visited before calibration ended and every
    later re-evaluation are on the ledger, env step for env step."""
    trainer = small_run(
        tmp_path,
        store,
        0.05,
        routing_estimate="match",
        routing_calibration=2,
        tau_low=0.9,
        tau_high=1.0,
    )
    groups = recorded(trainer)
    routes = trainer.scheduler.routes
    assert any(r.estimated for r in routes.values()) and not all(
        r.estimated for r in routes.values()
    )
    probes = [g for g in groups if g.job.purpose in ("routing", "reeval")]
    assert any(g.job.purpose == "reeval" and routes[g.job.task.id].estimated for g in probes)
    for purpose in ("routing", "reeval"):
        steps = sum(g.cost.env_steps for g in probes if g.job.purpose == purpose)
        assert steps > 0 and trainer.ledger.training_cost(purpose=purpose).env_steps == steps
    assert trainer.ledger.training_cost().env_steps == sum(g.cost.env_steps for g in groups)
    # the routing pass was only the calibration's: fewer probes than one per task
    assert sum(g.job.purpose == "routing" for g in groups) == 2


# -- re-evaluation near the threshold --------------------------------------------------------------
def local_task(shares: float, **sched) -> tuple[HybridScheduler, str]:
    """One task, routed Local by its probes, its estimate held at ``shares`` (neither its
    probes nor its one-step groups move it here)."""
    cfg = SchedulerConfig(routing="thresholds", tasks_per_iteration=1, reeval="near", **sched)
    task = TASKS[0]
    s = HybridScheduler([task], cfg, GRPOConfig(), PIVOTS, estimator=estimator({task.id: shares}))
    s.estimator.observe_probe = lambda *_: None  # type: ignore[method-assign]
    s.estimator.observe_onestep = lambda *_: None  # type: ignore[method-assign]
    (probe,) = s.plan(1)
    s.observe([outcome(probe, 0)], 1)
    assert s.routes[task.id].mode == "local"
    return s, task.id


def test_a_local_task_far_from_tau_low_is_not_reprobed() -> None:
    s, task = local_task(0.001, local_reeval_every=1)
    for it in range(2, 30):
        jobs = s.plan(it)
        assert [j.kind for j in jobs] == ["onestep", "onestep"]
        s.observe([outcome(j, 0) for j in jobs], it)


def test_near_tau_low_probes_run_one_per_visit_and_stop_at_the_first_promoting_success() -> None:
    s, task = local_task(0.2, local_reeval_every=1)  # within the margin (0.1) of tau_low
    script = iter([0, 0, 1])  # the task's probes: a failure, a failure, then a success
    probes = []
    for it in range(2, 10):
        jobs = s.plan(it)
        reeval = [j for j in jobs if j.purpose == "reeval"]
        probes.append(len(reeval))
        s.observe([outcome(j, next(script) if j.purpose == "reeval" else 0) for j in jobs], it)
        if s.routes[task].mode != "local":
            break
    assert probes == [1, 1, 1]  # one per visit; the third, a success, promoted it at once
    assert s.routes[task].mode == "suffix" and s.routes[task].p == 0.25
    assert [j.kind for j in s.plan(10)] == ["suffix"]  # no probe left over


def test_a_failed_reevaluation_backs_off() -> None:
    s, task = local_task(0.2, local_reeval_every=1)
    route, probed = s.routes[task], []
    for it in range(2, 60):
        jobs = s.plan(it)
        if any(j.purpose == "reeval" for j in jobs):
            probed.append(route.visits)
        s.observe([outcome(j, 0) for j in jobs], it)
    # four failed probes end a re-evaluation; the next one waits 2, then 4, then 8 visits
    assert probed[:4] == list(range(probed[0], probed[0] + 4)) and route.mode == "local"
    gaps = [b - a for a, b in zip(probed, probed[1:], strict=False) if b - a > 1]
    assert gaps[:3] == [2, 4, 8] and route.reeval_misses >= 3
    assert route.p == 0.0


def test_periodic_reevaluation_is_unchanged_when_the_option_is_off() -> None:
    s = make({t.id: 0.001 for t in TASKS}, local_reeval_every=2)
    (probe,) = s.plan(1)
    s.observe([outcome(probe, 0)], 1)
    s.routes[TASKS[0].id].visits = 1
    assert [j.purpose for j in s._jobs_for(TASKS[0].id, 2)][-1] == "reeval"  # visit 2: due


# -- Root probe-then-expand ----------------------------------------------------------------------
def root_groups(s: HybridScheduler, successes: int) -> list[Group]:
    (probe,) = s.plan(1)
    s.observe([outcome(probe, 4)], 1)  # Root
    s.plan(2), s.plan(3), s.plan(4)
    (job,) = s.plan(5)
    assert job.kind == "root" and job.purpose == "train" and job.group_size == 2
    return [outcome(job, successes)]


def test_a_root_visit_grows_to_a_group_when_its_probes_differ() -> None:
    s = make(None, root_expand=True)
    (extra,) = s.expand(root_groups(s, 1)).values()
    assert extra.group_size == GRPOConfig().group_size - 2 and extra.purpose == "train"
    s = make(None, root_expand=True)
    assert s.expand(root_groups(s, 2)) == {}  # both succeeded: nothing to learn, no growth
    s = make({t.id: 0.04 for t in TASKS}, root_expand=True, root_expand_below=0.5)
    s.estimator.observe_probe = lambda *_: None  # type: ignore[method-assign]
    assert s.expand(root_groups(s, 2))  # the estimate says the agreement may be luck
    s = make(None)
    assert s.expand(root_groups(s, 1)) == {}  # off: the paper's two probes


def test_expanded_root_visits_train_as_whole_groups_and_their_rollouts_are_billed(
    tmp_path: Path, store
) -> None:
    trainer = small_run(tmp_path, store, 0.9, root_expand=True, tau_low=0.0, tau_high=0.0)
    groups = recorded(trainer)
    ledger = [r for r in trainer.ledger if r.mode == "root" and r.purpose == "train"]
    assert ledger
    grown = [r for r in ledger if r.policy_samples > 2]
    assert grown, "some Root visit must have grown"
    # every collected rollout (probes and their expansions) is on the bill
    assert trainer.ledger.training_cost().env_steps == sum(g.cost.env_steps for g in groups)
    rows = [m for m in trainer.metrics if m["kind"] == "iteration"]
    root = [m["episodes"]["root/train"] for m in rows if "root/train" in m["episodes"]]
    assert sum(r["env_steps"] for r in root) == sum(r.env_steps for r in ledger)


def test_a_run_with_every_option_resumes_as_if_never_killed(tmp_path: Path, store) -> None:
    """The estimate's calibration and factors, the re-evaluations under way and their backoff
    are scheduler state: a killed run resumes to the uninterrupted one, expansions included."""
    from tests.training.runs import assert_same_run, killed_at

    def trainer(directory: Path):  # type: ignore[no-untyped-def]
        cfg = TrainConfig(
            algorithm="hybrid",
            budget=BudgetConfig(iterations=8),
            grpo=GRPOConfig(lr=0.2, group_size=4, decision_quota=4, mini_batches=2),
            eval=EvalConfig(k=1, every=None, final_splits=("train",)),
            scheduler=SchedulerConfig(
                tasks_per_iteration=2,
                local_reeval_every=1,
                routing_estimate="match",
                routing_calibration=2,
                reeval="near",
                root_expand=True,
                tau_low=0.5,
            ),
        )
        est = RouteEstimator({t: {c.id: 0.8 for c in store.for_task(t)} for t in store.task_ids()})
        return line_trainer(directory, store, cfg, estimator=est)

    straight = trainer(tmp_path / "a")
    straight.train()
    killed_at(trainer(tmp_path / "b"), 5)
    resumed = trainer(tmp_path / "b")
    resumed.train(resume=True)
    assert_same_run(resumed, straight)
    assert straight.scheduler.estimator.observations  # the calibration was part of the state
