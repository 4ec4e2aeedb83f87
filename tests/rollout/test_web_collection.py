"""The local collector on MiniWoB++ in Chromium, at full speed: Root groups of an untrained small
policy collected with the browsers of a group reset and stepped at once (threads), two jobs at
once (``parallel_jobs``) and pages reused across episodes equal the groups collected one browser
call at a time with a reload on every reset.

Needs Chromium (a failure under CI, a skip elsewhere: tests/components.py)."""

from __future__ import annotations

import pytest

from adaroll.checkpoints import CheckpointStore
from adaroll.config import PolicyConfig
from adaroll.envs.base import TaskSpec
from adaroll.policies import make_policy
from adaroll.rollout.collector import Collector
from adaroll.rollout.jobs import Group, Job
from adaroll.snapshots.memory import MemorySnapshots
from tests.components import require_chromium

pytestmark = [pytest.mark.web, pytest.mark.usefixtures("module_one_torch_thread")]


def outcome(group: Group) -> tuple:
    actions = tuple(tuple(d.sample.action for d in sample) for sample in group.decisions)
    return (
        group.job,
        actions,
        tuple(group.rewards),
        group.cost.env_steps,
        group.cost.invalid_samples,
    )


def test_fast_collection_equals_one_call_at_a_time() -> None:
    require_chromium()
    from adaroll.envs.web import WebEnv

    class OneAtATimeWebEnv(WebEnv):
        concurrent_calls = False

    cfg = PolicyConfig()
    policy = make_policy(cfg, seed=0)
    tasks = [
        TaskSpec("web", "click-button", 0),
        TaskSpec("web", "click-button", 1),
        TaskSpec("web", "click-checkboxes", 0),
    ]
    jobs = [Job("root", task, 3) for task in tasks]

    def collector(make_env, **kw) -> Collector:
        return Collector(
            policy, make_env, CheckpointStore(), MemorySnapshots(), history_window=cfg.history, **kw
        )

    slow = collector(lambda: OneAtATimeWebEnv(reuse_page=False))
    try:
        expected = [outcome(g) for g in slow.collect(jobs, seed=5)]
    finally:
        slow.close()
    fast = collector(WebEnv, parallel_jobs=2)
    try:
        fast.collect(jobs[:2], seed=99)  # the pages of click-button stay loaded in idle envs
        assert [outcome(g) for g in fast.collect(jobs, seed=5)] == expected
        assert sum(env.reset_counts["reused"] for env in fast.pool._idle) > 0  # type: ignore[attr-defined]
    finally:
        fast.close()
    assert sum(e[3] for e in expected) > 0  # the episodes did step


def test_waves_reuse_each_page_and_equal_waves_with_reloads() -> None:
    """``episodes_per_env``: a group of 4 with 4 episodes per env plays on one browser that
    loads the page once and starts the other three episodes in it - the same groups as the same
    waves with a reload before every episode."""
    require_chromium()
    from adaroll.envs.web import WebEnv

    cfg = PolicyConfig()
    policy = make_policy(cfg, seed=0)
    jobs = [
        Job("root", TaskSpec("web", "click-button", 2), 4),
        Job("root", TaskSpec("web", "click-checkboxes", 1), 4),
    ]

    def collect(make_env) -> tuple[list[tuple], list]:
        collector = Collector(
            policy,
            make_env,
            CheckpointStore(),
            MemorySnapshots(),
            history_window=cfg.history,
            parallel_jobs=2,
            episodes_per_env=4,
        )
        try:
            groups = [outcome(g) for g in collector.collect(jobs, seed=7)]
            return groups, [dict(env.reset_counts) for env in collector.pool._idle]  # type: ignore[attr-defined]
        finally:
            collector.close()

    reloaded, reload_counts = collect(lambda: WebEnv(reuse_page=False))
    reused, counts = collect(WebEnv)
    assert reused == reloaded
    assert all(len(g[2]) == 4 for g in reused)
    # one browser per job (and the one that told the collector its envs take threads)
    assert sorted((c["loaded"], c["reused"]) for c in counts if c["loaded"]) == [(1, 3), (1, 3)]
    assert all(c["reused"] == 0 for c in reload_counts)
