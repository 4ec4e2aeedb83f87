"""Fault injection on real browsers (issue 10): a SIGKILLed browser and a SIGSTOPped (hung)
one during a local-collector run on two MiniWoB++ tasks. The run completes, the faults are
counted, and the groups returned are exactly those of a fault-free run with the same seed -
so no group holds an episode of a broken browser. Also: a hung env call ends with
``EnvTimeout`` within its configured bound, and a broken env refuses further calls."""

from __future__ import annotations

import os
import signal
import time

import pytest

from adaroll.checkpoints import CheckpointStore
from adaroll.envs.base import EnvFault, EnvTimeout, TaskSpec
from adaroll.envs.web import WebEnv
from adaroll.envs.web.browser import pid_alive
from adaroll.rollout.collector import Collector
from adaroll.rollout.jobs import Group, Job
from adaroll.snapshots.replay import ReplaySnapshots
from tests.fakes import TapPolicy
from tests.processes import chromium_main, kill_and_wait

pytestmark = pytest.mark.web

STEP_TIMEOUT_S = 1.5
TASKS = [TaskSpec("web", "click-button", 1), TaskSpec("web", "click-link", 2)]


class Injector:
    """An env factory that keeps every env it made, and a policy whose ``sample`` (called once
    per lockstep step) first sends ``signal`` to env ``victim``'s browser at the first step
    after ``made`` envs exist - a crash or hang from outside, as in production."""

    def __init__(self, plan: dict[int, tuple[int, signal.Signals]]) -> None:
        self.plan = dict(plan)
        self.envs: list[WebEnv] = []
        self.sent: list[tuple[int, int, float]] = []

    def make_env(self) -> WebEnv:
        env = WebEnv(step_timeout_s=STEP_TIMEOUT_S)
        # one browser per episode (no reuse by the collector), so that the plan can name its
        # victims by creation order; reuse is tested in tests/rollout/test_collector.py
        env.max_live = 0
        self.envs.append(env)
        return env

    def policy(self) -> TapPolicy:
        injector = self

        class Faulty(TapPolicy):
            def sample(self, contexts, n, *, greedy=False):
                hit = injector.plan.pop(len(injector.envs), None)
                if hit is not None:
                    victim, sig = hit
                    os.kill(chromium_main(injector.envs[victim].browser), sig)
                    injector.sent.append((victim, int(sig), time.monotonic()))
                return super().sample(contexts, n, greedy=greedy)

        return Faulty()


def outcome(group: Group) -> tuple:
    actions = tuple(tuple(d.sample.action for d in sample) for sample in group.decisions)
    return group.job.task, actions, tuple(group.rewards)


def collect(injector: Injector) -> tuple[Collector, list[Group]]:
    jobs = [Job("root", task, 2) for task in TASKS]
    # Root jobs only: no checkpoints, and the snapshot backend is never asked for a restore
    collector = Collector(
        injector.policy(),
        injector.make_env,
        CheckpointStore(),
        ReplaySnapshots(make_env=injector.make_env),
        history_window=2,
    )
    return collector, collector.collect(jobs, seed=21)


def test_killed_and_hung_browsers_are_replaced_and_their_groups_rerun(browser):
    clean_injector = Injector({})
    _, clean = collect(clean_injector)
    # envs 0,1: click-button (env 0 SIGKILLed at its first step) -> retried in envs 2,3;
    # envs 4,5: click-link (env 4 SIGSTOPped at its first step) -> retried in envs 6,7
    injector = Injector({2: (0, signal.SIGKILL), 6: (4, signal.SIGSTOP)})
    began = time.monotonic()
    collector, groups = collect(injector)
    seconds = time.monotonic() - began
    assert [victim for victim, _, _ in injector.sent] == [0, 4]
    assert [outcome(g) for g in groups] == [outcome(g) for g in clean]
    assert [g.cost.faults for g in groups] == [1, 1]
    assert collector.stats["faults"] == 2 and collector.stats["timeouts"] == 1
    assert collector.stats["replaced_envs"] == 2 and len(injector.envs) == 8
    # every browser is gone, the stopped one too (SIGKILL reaches a stopped process)
    assert not any(pid_alive(env.browser.pid) for env in injector.envs)
    # the hang cost about one step bound, not the DevTools default of 30 s
    assert seconds < 30, seconds


def test_a_hung_call_times_out_within_its_bound_and_poisons_the_env(browser):
    env = WebEnv(step_timeout_s=STEP_TIMEOUT_S)
    try:
        obs, _ = env.reset(options={"task": TASKS[0]})
        os.kill(chromium_main(env.browser), signal.SIGSTOP)
        began = time.monotonic()
        with pytest.raises(EnvTimeout, match=rf"step did not finish within {STEP_TIMEOUT_S:g} s"):
            env.step(_tap(obs))
        waited = time.monotonic() - began
        assert STEP_TIMEOUT_S <= waited < STEP_TIMEOUT_S + 1.0, waited
        assert env.fault is not None
        # even once it answers again, it stays broken
        os.kill(chromium_main(env.browser), signal.SIGCONT)
        with pytest.raises(EnvFault, match="unusable after an earlier fault"):
            env.observe()
    finally:
        env.close()
    assert not pid_alive(env.browser.pid)


def test_a_killed_browser_is_reported_at_once(browser):
    env = WebEnv(step_timeout_s=30.0)
    try:
        obs, _ = env.reset(options={"task": TASKS[1]})
        kill_and_wait(env.browser.pid)  # dead before the step is sent
        began = time.monotonic()
        with pytest.raises(
            EnvFault, match=r"step failed \(browser pid \d+ \w+\): DevTools connection"
        ) as info:
            env.step(_tap(obs))
        assert not isinstance(info.value, EnvTimeout)
        assert time.monotonic() - began < 5.0  # the closed connection, not a timeout
    finally:
        env.close()


def _tap(obs):
    from adaroll.actions import Action

    return Action.tap(*obs.elements[0].center)
