"""A BrowserGym browser killed during a collector run goes through the env-fault path: the
fault is counted, the env replaced, the group re-run, and the groups returned equal those of a
fault-free run with the same seed (no episode of the broken browser reaches them)."""

from __future__ import annotations

import os
import signal

import pytest

from adaroll.checkpoints import CheckpointStore
from adaroll.envs.base import TaskSpec
from adaroll.envs.browsergym import BrowserGymEnv
from adaroll.rollout.collector import Collector
from adaroll.rollout.jobs import Group, Job
from adaroll.snapshots.replay import ReplaySnapshots
from tests.components import require_browsergym
from tests.envs.browsergym.conftest import FAST
from tests.fakes import TapPolicy
from tests.processes import left_behind, live_processes

pytestmark = pytest.mark.web

TASK = TaskSpec("browsergym", "miniwob.click-test-2", 4)


class Injector:
    """Env factory keeping its envs, and a policy that SIGKILLs one task-page browser started
    since ``before`` at its first sample when ``kill`` is set."""

    def __init__(self, kill: bool) -> None:
        self.kill = kill
        self.envs: list[BrowserGymEnv] = []
        self.before = live_processes()
        self.killed: list[int] = []

    def make_env(self) -> BrowserGymEnv:
        env = BrowserGymEnv(**FAST)
        env.max_live = 0  # one env per episode, so the retry needs fresh ones
        self.envs.append(env)
        return env

    def policy(self) -> TapPolicy:
        injector = self

        class Killer(TapPolicy):
            def sample(self, contexts, n, *, greedy=False):
                if injector.kill and not injector.killed:
                    pid = next(
                        p
                        for p, cmd in live_processes().items()
                        if p not in injector.before
                        and "OverlayScrollbars" in cmd
                        and "--type=" not in cmd
                    )
                    os.kill(pid, signal.SIGKILL)
                    injector.killed.append(pid)
                return super().sample(contexts, n, greedy=greedy)

        return Killer()


def collect(injector: Injector) -> tuple[Collector, list[Group]]:
    collector = Collector(
        injector.policy(),
        injector.make_env,
        CheckpointStore(),
        ReplaySnapshots(make_env=injector.make_env),
        history_window=2,
    )
    return collector, collector.collect([Job("root", TASK, 2)], seed=5)


def outcome(group: Group) -> tuple:
    return (
        group.job.task,
        tuple(tuple(d.sample.action for d in s) for s in group.decisions),
        tuple(group.rewards),
    )


def test_killed_browsergym_browser_is_replaced_and_its_group_rerun() -> None:
    require_browsergym()
    _, clean = collect(Injector(kill=False))
    injector = Injector(kill=True)
    collector, groups = collect(injector)
    assert len(injector.killed) == 1
    assert [outcome(g) for g in groups] == [outcome(g) for g in clean]
    assert [g.cost.faults for g in groups] == [1]
    assert collector.stats["faults"] == 1 and len(injector.envs) == 4
    assert left_behind(injector.before, "playwright_chromiumdev_profile") == {}
