"""Pivot options beyond the paper: adaptive per-task gates, continuous pivot weights in the
schedulers, and the self-generated pivot pool."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from adaroll.actions import PAPER_MATCHER, Action
from adaroll.algos.pivots import soft_gate
from adaroll.checkpoints import Checkpoint, CheckpointStore
from adaroll.config import (
    BudgetConfig,
    EvalConfig,
    GRPOConfig,
    PivotConfig,
    SchedulerConfig,
    TrainConfig,
)
from adaroll.envs.base import Observation, TaskSpec, UIElement, replay
from adaroll.experts import collect_experts
from adaroll.rollout.collector import Collector
from adaroll.rollout.jobs import Group, Job
from adaroll.snapshots.memory import MemorySnapshots
from adaroll.training.pivot_scoring import PivotSet, select
from adaroll.training.scheduler import HybridScheduler, Stage1Scheduler
from adaroll.training.self_pool import SelfPivotPool
from adaroll.training.trainer import Trainer
from tests.fakes import GoPolicy, LineEnv, LineSuite

SUITE = LineSuite()
A, B = SUITE.split("train")[:2]
SCHED = SchedulerConfig(routing="thresholds", tasks_per_iteration=2, pivots_per_iteration=3)
GRPO = GRPOConfig(group_size=4)


class PosLineEnv(LineEnv):
    """LineEnv whose screen also shows the position, so the UI tree identifies the state (the
    self pool deduplicates by tree hash) and a "stop" tap - a no-op - revisits the same state."""

    def observe(self) -> Observation:
        base = super().observe()
        assert self.state is not None
        label = UIElement(2, "text", f"screen {self.state.position}", (0.1, 0.0, 0.9, 0.1))
        return Observation((*base.elements, label), base.screen_size)


def _env() -> PosLineEnv:
    return PosLineEnv(length=3, max_steps=8)


@pytest.fixture(scope="module")
def expert_store() -> CheckpointStore:
    """Expert checkpoints for task A only: B is a task whose expert failed."""
    return collect_experts(_env, SUITE, [A], progress=False).store


def _fresh(store: CheckpointStore) -> CheckpointStore:
    return CheckpointStore(list(store))


# -- adaptive gates and weights in selection -------------------------------------------------------


def _scored_store(
    scores_by_task: dict[TaskSpec, list[float]],
) -> tuple[CheckpointStore, dict[str, float]]:
    obs = Observation((), (10, 10))
    store, scores = CheckpointStore(), {}
    for task, values in scores_by_task.items():
        for step, value in enumerate(values):
            c = Checkpoint(
                task,
                step,
                "x",
                (Action.press("back"),) * step,
                obs,
                Action.press("back"),
                len(values),
            )
            store.add(c)
            scores[c.id] = value
    return store, scores


def test_task_quantile_gate_gives_each_task_its_own_top_share() -> None:
    store, scores = _scored_store({A: [0.0, 0.1, 0.2, 0.3, 0.35], B: [0.5, 0.6, 0.7, 0.8, 0.9]})
    fixed = select(store, scores, PivotConfig(fallback_top_k=0))
    assert fixed.pivots == {A.id: [], B.id: [f"{B.id}@{i}" for i in range(5)]}
    adaptive = select(store, scores, PivotConfig(threshold="task_quantile", task_quantile=0.6))
    assert adaptive.pivots == {A.id: [f"{A.id}@3", f"{A.id}@4"], B.id: [f"{B.id}@3", f"{B.id}@4"]}
    assert adaptive.thresholds[A.id] == pytest.approx(0.24) and adaptive.thresholds[
        B.id
    ] == pytest.approx(0.74)
    assert fixed.weights == {} and adaptive.weights == {}


def test_temperature_gives_soft_gate_weights_that_round_trip(tmp_path: Path) -> None:
    store, scores = _scored_store({A: [0.25, 0.4286, 0.4643, 0.6]})
    chosen = select(store, scores, PivotConfig(temperature=0.05), policy_samples=32)
    assert chosen.pivots[A.id] == [f"{A.id}@2", f"{A.id}@3"]  # the hard set is unchanged
    expected = {cid: soft_gate(s, 0.45, 0.05) for cid, s in scores.items()}
    assert chosen.weights[A.id] == pytest.approx(expected)
    chosen.save(tmp_path / "p.json")
    assert PivotSet.load(tmp_path / "p.json") == chosen


# -- continuous weights in the schedulers ------------------------------------------------------------


WEIGHTS = {A.id: {"a0": 0.0, "a1": 0.2, "a2": 0.9}, B.id: {"b0": 0.5}}


def test_stage1_draws_in_proportion_to_weight_and_reproducibly() -> None:
    sched = Stage1Scheduler(
        [A, B], SCHED, GRPO, pivots={A.id: ["a2"]}, pivot_weights=WEIGHTS, seed=4
    )
    again = Stage1Scheduler(
        [A, B], SCHED, GRPO, pivots={A.id: ["a2"]}, pivot_weights=WEIGHTS, seed=4
    )
    seen: Counter[str] = Counter()
    for it in range(1, 301):
        jobs = sched.plan(it)
        assert [j.checkpoint_id for j in jobs] == [j.checkpoint_id for j in again.plan(it)]
        assert len(jobs) == 3 and len({j.checkpoint_id for j in jobs}) == 3
        first = jobs[0].checkpoint_id
        assert first is not None
        seen[first] += 1
    assert seen["a0"] == 0 and seen["a1"] < seen["b0"] < seen["a2"]
    plain = Stage1Scheduler([A, B], SCHED, GRPO, pivots={A.id: ["a2"]})
    assert [j.checkpoint_id for j in plain.plan(1)] == ["a2"]  # no weights: the paper's round robin


def _route_local(sched: HybridScheduler, task: TaskSpec, it: int = 1) -> None:
    sched.observe([Group(Job("root", task, 4, purpose="routing"), [[]] * 4, [0.0] * 4)], it)


def test_local_visits_redraw_their_pivots_by_weight() -> None:
    sched = HybridScheduler(
        [A, B], SCHED, GRPO, pivots={A.id: ["a2"], B.id: ["b0"]}, pivot_weights=WEIGHTS, seed=1
    )
    sched.plan(0)
    _route_local(sched, A)
    assert sched.routes[A.id].mode == "local"
    seen: Counter[str] = Counter()
    visits = 600
    for _ in range(visits):
        for job in sched._jobs_for(A.id):
            if job.kind == "onestep":
                assert job.checkpoint_id is not None
                seen[job.checkpoint_id] += 1
    assert seen["a0"] == 0
    assert seen["a1"] / visits == pytest.approx(
        0.2 + 0.8 * 0.1 * 0.2 / 1.1, abs=0.05
    )  # + at-least-one
    assert seen["a2"] / visits == pytest.approx(0.9 + 0.8 * 0.1 * 0.9 / 1.1, abs=0.05)
    state = sched.state_dict()
    copy = HybridScheduler([A, B], SCHED, GRPO, pivots={}, seed=1)
    copy.load_state_dict(state)
    assert copy.routes[A.id].weights == WEIGHTS[A.id]
    assert [j.checkpoint_id for j in copy._jobs_for(A.id)] == [
        j.checkpoint_id for j in sched._jobs_for(A.id)
    ]


# -- self-generated pivots ---------------------------------------------------------------------------


def _successful_root_groups(
    policy: GoPolicy, collector: Collector, task: TaskSpec, purpose: str = "train"
) -> list[Group]:
    groups = collector.collect([Job("root", task, 8, purpose=purpose)], seed=7)  # type: ignore[arg-type]
    group = groups[0]
    assert 0 < sum(group.rewards) < 8, "the seed should give a mix of successes and failures"
    assert any(r and len(d) > 3 for d, r in zip(group.decisions, group.rewards, strict=True)), (
        "some success should loop (a 'stop' tap revisits its screen)"
    )
    return groups


def _successful_paths(groups: list[Group], task: TaskSpec) -> list[tuple[Action, ...]]:
    """The action paths of ``task``'s successful samples."""
    return [
        tuple(d.sample.action for d in decisions if d.sample.action is not None)
        for group in groups
        if group.job.task == task
        for decisions, reward in zip(group.decisions, group.rewards, strict=True)
        if reward > 0
    ]


def _tapped(obs: Observation, action: Action) -> str:
    """The text of the element ``action`` taps."""
    assert action.x is not None and action.y is not None
    return next(
        e.text
        for e in obs.elements
        if e.bounds[0] <= action.x <= e.bounds[2] and e.bounds[1] <= action.y <= e.bounds[3]
    )


def test_harvest_dedups_by_state_and_ignores_failures_and_expert_tasks(
    expert_store: CheckpointStore,
) -> None:
    store = _fresh(expert_store)
    policy = GoPolicy(-0.5)
    collector = Collector(policy, _env, store, MemorySnapshots(), history_window=2)
    groups = _successful_root_groups(policy, collector, B)
    groups += collector.collect([Job("root", A, 4)], seed=8)  # A has expert checkpoints: ignored
    pool = SelfPivotPool(store, [B.id], PivotConfig(), PAPER_MATCHER)
    made = pool.harvest(groups)
    # Every success walks screens 0, 1, 2 (with "stop" loops in between): three states, once each.
    assert sorted(c.observation.elements[2].text for c in made) == [
        "screen 0",
        "screen 1",
        "screen 2",
    ]
    assert all(c.task == B and c.origin.startswith("self-") for c in made)
    assert len({c.id for c in made}) == 3 and all(store.get(c.id) == c for c in made)
    # Each label is the action a successful rollout took to leave the state for good - a "go"
    # tap, never the looping "stop" that the rollouts here tapped on their first visits - and the
    # checkpoint's prefix is that rollout's real path up to it.
    paths = _successful_paths(groups, B)
    for c in made:
        assert _tapped(c.observation, c.expert_action) == "go"
        assert any(
            p[: c.step + 1] == (*c.history, c.expert_action) and len(p) == c.trajectory_length
            for p in paths
        )
    assert pool.harvest(groups) == []  # the same states again: nothing new
    # Each checkpoint's prefix replays to its state, so any snapshot backend can restore it.
    env = _env()
    for c in made:
        assert replay(env, B, c.history).element_tree_hash() == c.observation.element_tree_hash()


def test_failed_rollouts_add_nothing(expert_store: CheckpointStore) -> None:
    store = _fresh(expert_store)
    collector = Collector(GoPolicy(-8.0), _env, store, MemorySnapshots(), history_window=2)
    groups = collector.collect([Job("root", B, 4)], seed=1)
    assert sum(groups[0].rewards) == 0
    assert SelfPivotPool(store, [B.id], PivotConfig(), PAPER_MATCHER).harvest(groups) == []


def test_a_task_without_expert_gets_pivots_after_a_successful_rollout(
    expert_store: CheckpointStore,
) -> None:
    store = _fresh(expert_store)
    policy = GoPolicy(-0.5)
    collector = Collector(policy, _env, store, MemorySnapshots(), history_window=2)
    pivots = {A.id: [c.id for c in store.for_task(A.id)]}
    sched = HybridScheduler([A, B], SCHED, GRPO, pivots=pivots)
    # Without pivots, a failed-expert task is sent to Root whatever its p(x) ...
    sched.plan(1)
    sched.observe([Group(Job("root", B, 4, purpose="routing"), [[]] * 4, [1.0, 0.0, 0.0, 0.0])], 1)
    assert sched.routes[B.id].mode == "root" and sched.routes[B.id].p == 0.25
    # ... its successful probe now yields checkpoints, scored and selected like the expert's.
    pool = SelfPivotPool(store, [B.id], PivotConfig(), PAPER_MATCHER)
    grown = pool.grow(_successful_root_groups(policy, collector, B), policy, collector, seed=0)
    assert grown is not None and list(grown.pivots) == [B.id] and grown.policy_samples == 3 * 8
    sched.add_pivots(B.id, grown.pivots[B.id], grown.weights.get(B.id, {}), 2)
    route = sched.routes[B.id]
    assert route.mode == "suffix" and route.pivots == grown.pivots[B.id]  # routed by p = 0.25
    assert route.transitions[-1] == (2, "suffix") and B.id not in pool.eligible
    # The Suffix job from a self checkpoint restores through the snapshot backend and runs.
    (job,) = sched._jobs_for(B.id)
    assert job.kind == "suffix" and job.checkpoint_id == route.pivots[-1]
    (group,) = collector.collect([job], seed=3)
    assert group.cost.restores == 4 and len(group.rewards) == 4
    # A resumed process rebuilds the pool's checkpoints into a store that lacks them.
    fresh = _fresh(expert_store)
    SelfPivotPool(fresh, [], PivotConfig(), PAPER_MATCHER).load_state_dict(pool.state_dict())
    assert fresh.get(job.checkpoint_id) == store.get(job.checkpoint_id)


def test_self_pivots_survive_a_gate_that_drops_every_checkpoint(
    expert_store: CheckpointStore,
) -> None:
    store = _fresh(expert_store)
    policy = GoPolicy(-0.5)
    collector = Collector(policy, _env, store, MemorySnapshots(), history_window=2)
    strict = PivotConfig(tau_dis=1.0, fallback_top_k=0, budget_top_k=1)
    pool = SelfPivotPool(store, [B.id], strict, PAPER_MATCHER)
    grown = pool.grow(_successful_root_groups(policy, collector, B), policy, collector, seed=0)
    assert grown is not None and len(grown.pivots[B.id]) == 1  # the best one, at least


def test_add_pivots_leaves_tasks_with_pivots_and_earned_root_alone() -> None:
    sched = HybridScheduler([A, B], SCHED, GRPO, pivots={A.id: ["a0"]})
    sched.add_pivots(A.id, ["x"], {}, 1)
    assert sched.routes[A.id].pivots == ["a0"]
    sched.plan(1)
    sched.observe([Group(Job("root", B, 4, purpose="routing"), [[]] * 4, [1.0] * 4)], 1)
    sched.add_pivots(B.id, ["b@1~self-x"], {}, 2)
    assert sched.routes[B.id].mode == "root"  # p = 1: Root on its merits


def test_trainer_grows_the_pool_and_ledgers_its_scoring(
    tmp_path: Path, expert_store: CheckpointStore
) -> None:
    store = _fresh(expert_store)
    policy = GoPolicy(-0.5)
    cfg = TrainConfig(
        algorithm="hybrid",
        budget=BudgetConfig(iterations=2),
        grpo=GRPOConfig(lr=0.1),
        pivots=PivotConfig(self_pool=True),
        scheduler=SCHED,
        eval=EvalConfig(k=1, every=5, splits=(), final_splits=()),
    )
    sched = HybridScheduler(
        [A, B], SCHED, cfg.grpo, pivots={A.id: [c.id for c in store.for_task(A.id)]}
    )
    collector = Collector(policy, _env, store, MemorySnapshots(), history_window=2)
    pool = SelfPivotPool(store, [B.id], cfg.pivots, PAPER_MATCHER)
    trainer = Trainer(
        "hybrid",
        tmp_path,
        cfg,
        policy,
        sched,
        collector,
        _env,
        {},
        seed=5,
        history_window=2,
        progress=False,
        self_pool=pool,
    )
    trainer.train()
    assert sched.routes[B.id].pivots and all("~self-" in c for c in sched.routes[B.id].pivots)
    scoring = [r for r in trainer.ledger if r.mode == "onestep" and r.purpose == "routing"]
    assert len(scoring) == 1 and scoring[0].policy_samples == 8 * len(pool.added)
    meta: dict[str, Any] = json.loads((tmp_path / "state" / "meta.json").read_text())
    assert len(meta["self_pool"]["added"]) == len(pool.added)


def test_self_pool_is_refused_on_ray_workers() -> None:
    from adaroll.config import ConfigError, load_config

    assert load_config(overrides=["rl.pivots.self_pool=true"]).rl.pivots.self_pool
    with pytest.raises(ConfigError, match="self_pool needs rollout.backend=local"):
        load_config(overrides=["rl.pivots.self_pool=true", "rollout.backend=ray"])
