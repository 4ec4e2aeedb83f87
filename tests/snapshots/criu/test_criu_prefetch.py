"""Prefetched CRIU branches in Chromium, for real (issue 17, item 3): Suffix groups whose
branches were restored in the background while a Root group ran equal the groups restored at
each start, also when a prefetched browser is killed while it waits; no branch is left running.

Under CI (``CI=true``) missing CRIU/Chromium/root FAIL these tests (``tests.components.require_criu_stack``)."""

from __future__ import annotations

import threading

import pytest

from adaroll.envs.base import TaskSpec
from adaroll.rollout.collector import Collector
from adaroll.rollout.jobs import Group, Job
from tests.components import require_criu_stack
from tests.fakes import TapPolicy
from tests.processes import kill_and_wait, left_behind, live_processes

pytestmark = [pytest.mark.criu, pytest.mark.web]

TASK = TaskSpec("web", "login-user", 3)


def outcome(group: Group) -> tuple:
    actions = tuple(tuple(d.sample.action for d in sample) for sample in group.decisions)
    return (
        group.job,
        actions,
        tuple(group.rewards),
        group.cost.restores,
        group.cost.restore_fallbacks,
    )


def test_prefetched_branches_equal_restores_at_each_start_and_none_is_left_running() -> None:
    require_criu_stack()
    from adaroll.envs.base import SUITES
    from adaroll.envs.web import WebEnv
    from adaroll.experts import collect_experts
    from adaroll.snapshots.criu import CriuSnapshots

    before = live_processes()
    store = collect_experts(WebEnv, SUITES.get("web")(), [TASK], progress=False).store
    ckpts = store.for_task(TASK.id)
    jobs = [
        Job("suffix", TASK, 2, checkpoint_id=ckpts[2].id),
        Job("root", TASK, 2),
        Job("suffix", TASK, 2, checkpoint_id=ckpts[1].id),
    ]
    backend = CriuSnapshots(max_branches=4)
    try:
        plain = Collector(TapPolicy(), WebEnv, store, backend, history_window=2)
        try:
            expected = [outcome(g) for g in plain.collect(jobs, seed=3)]
        finally:
            plain.close()
        assert backend.live_branches() == 0

        fast = Collector(TapPolicy(), WebEnv, store, backend, history_window=2, prefetch_branches=3)
        restore, killed, first = fast.cache.restore, [], threading.Lock()

        def restore_then_kill_the_first(checkpoint_id):  # a branch dies while it waits
            restored = restore(checkpoint_id)
            with first:
                if threading.current_thread().name == "adaroll-prefetch" and not killed:
                    killed.append(restored.env.browser.pid)
                    kill_and_wait(killed[0])  # dead before a start can take it
            return restored

        fast.cache.restore = restore_then_kill_the_first  # type: ignore[method-assign]
        try:
            assert fast._prefetch_capacity(jobs) == 2  # 4-branch pool, groups of 2
            got = [outcome(g) for g in fast.collect(jobs, seed=3)]
        finally:
            fast.close()
        assert got == expected
        assert killed and fast.stats["faults"] == 0
        assert len(fast.branch_waits) == 4
        assert backend.live_branches() == 0  # every prefetched branch was taken or closed
    finally:
        backend.close()
    assert left_behind(before, "chromium", "criu") == {}
