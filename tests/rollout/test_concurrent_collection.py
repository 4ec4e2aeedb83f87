"""Concurrent collection (CPU, fake env): envs that take calls from threads are reset and stepped
at once, and with ``parallel_jobs`` several Root jobs run at once - yet every group equals the
one-after-another collection, faults included (the faulted group is re-run with its seed)."""

from __future__ import annotations

import dataclasses
import threading
import time

import pytest
import torch

from adaroll.envs.base import EnvFault
from adaroll.rollout.collector import Collector
from adaroll.rollout.concurrent import EnvBudget, call_each
from adaroll.rollout.jobs import Group, Job
from adaroll.snapshots.memory import MemorySnapshots
from tests.fakes import GoPolicy, LineEnv, LineSuite

SUITE = LineSuite()


class StatefulGoPolicy(GoPolicy):
    """GoPolicy samples from torch's global RNG; this one can hand that state over, which is
    what lets the collector run jobs in parallel."""

    def sampling_state(self):
        return torch.get_rng_state()

    def set_sampling_state(self, state) -> None:
        torch.set_rng_state(state)


class ThreadedLineEnv(LineEnv):
    """A LineEnv whose calls take a moment, as a browser's do, and may come from threads. It
    records how many of its kind were busy at once, and breaks on the first step of every task
    in ``fail_once`` (once per task, whichever instance gets there first)."""

    concurrent_calls = True
    lock = threading.Lock()
    busy = 0
    most_busy = 0
    fail_once: set[str] = set()

    def _busy(self, seconds: float) -> None:
        cls = ThreadedLineEnv
        with cls.lock:
            cls.busy += 1
            cls.most_busy = max(cls.most_busy, cls.busy)
        time.sleep(seconds)
        with cls.lock:
            cls.busy -= 1

    def reset(self, *, seed=None, options=None):
        self._busy(0.002)
        return super().reset(seed=seed, options=options)

    def step(self, action):
        self._busy(0.002)
        with ThreadedLineEnv.lock:
            fail = self.task.id in ThreadedLineEnv.fail_once
            ThreadedLineEnv.fail_once.discard(self.task.id)
        if fail:
            raise EnvFault(f"browser of {self.task.id} died")
        return super().step(action)

    @classmethod
    def arm(cls, fail_once: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        cls.busy, cls.most_busy, cls.fail_once = 0, 0, set(fail_once)


@pytest.fixture(scope="module")
def store(line_store):
    return line_store


def jobs_for(store) -> list[Job]:
    """Root jobs among OneStep and Suffix ones (which run one after another). Parallel jobs
    take one task template after another: two templates here (the line env ignores them)."""
    tasks = SUITE.split("train")
    ckpt = store.for_task(tasks[0].id)[1]
    other = [dataclasses.replace(t, template="other") for t in tasks]
    return [
        Job("root", tasks[1], 6),
        Job("onestep", tasks[0], 4, checkpoint_id=ckpt.id),
        Job("root", other[2], 5),
        Job("suffix", tasks[0], 3, checkpoint_id=ckpt.id),
        Job("root", tasks[0], 6),
        Job("root", other[3], 4),
    ]


def outcome(group: Group) -> tuple:
    actions = tuple(tuple(d.sample.action for d in sample) for sample in group.decisions)
    c = group.cost
    return group.job, actions, tuple(group.rewards), c.policy_samples, c.env_steps, c.restores


def collect(store, make_env, jobs, **kw) -> tuple[list[Group], Collector]:
    collector = Collector(
        StatefulGoPolicy(0.3), make_env, store, MemorySnapshots(), history_window=2, **kw
    )
    try:
        groups = collector.collect(jobs, seed=21)
        after = torch.rand(3)  # the learner's RNG after collecting is the same everywhere
        return groups, collector, after  # type: ignore[return-value]
    finally:
        collector.close()


def test_threads_and_parallel_jobs_collect_the_same_groups(store) -> None:
    jobs = jobs_for(store)
    alone, _, after_alone = collect(store, LineEnv, jobs)
    for parallel_jobs in (1, 3, 12):
        ThreadedLineEnv.arm()
        groups, _, after = collect(store, ThreadedLineEnv, jobs, parallel_jobs=parallel_jobs)
        assert [outcome(g) for g in groups] == [outcome(g) for g in alone]
        assert torch.equal(after, after_alone)
        # the envs did work at once: a group's envs (threads), and with room for two groups'
        # envs (12), two groups
        assert ThreadedLineEnv.most_busy > (6 if parallel_jobs == 12 else 1)


def test_parallel_jobs_hold_at_most_parallel_jobs_envs(store) -> None:
    """Root groups of 4-6 single-episode envs and room for 10: two groups at once at most
    (6 + 4), never three; the groups are the one-after-another ones."""
    jobs = jobs_for(store)
    alone, _, _ = collect(store, LineEnv, jobs)
    ThreadedLineEnv.arm()
    groups, _, _ = collect(store, ThreadedLineEnv, jobs, parallel_jobs=10)
    assert [outcome(g) for g in groups] == [outcome(g) for g in alone]
    assert 6 < ThreadedLineEnv.most_busy <= 10


def test_an_env_budget_lets_a_job_larger_than_it_run_alone() -> None:
    budget = EnvBudget(3)
    order: list[str] = []

    def small_job() -> None:
        with budget.hold(1):
            order.append("small")

    with budget.hold(5):  # more than the budget: takes all of it
        order.append("big")
        blocked = threading.Thread(target=small_job)
        blocked.start()
        blocked.join(timeout=0.2)
        assert blocked.is_alive() and order == ["big"]  # waits while the big job runs
    blocked.join(timeout=5)
    assert order == ["big", "small"]
    with pytest.raises(ValueError, match=">= 1"):
        EnvBudget(0)


def test_a_fault_under_parallel_jobs_reruns_only_its_group(store) -> None:
    jobs = jobs_for(store)
    clean, _, _ = collect(store, LineEnv, jobs)
    ThreadedLineEnv.arm(fail_once={jobs[2].task.id})
    groups, collector, _ = collect(store, ThreadedLineEnv, jobs, parallel_jobs=3)
    assert [outcome(g)[:3] for g in groups] == [outcome(g)[:3] for g in clean]
    assert [g.cost.faults for g in groups] == [0, 0, 1, 0, 0, 0]
    assert collector.stats["faults"] == 1 and collector.stats["replaced_envs"] == 1


def test_call_each_keeps_order_and_raises_after_every_call_finished() -> None:
    finished: list[int] = []

    def work(i: int) -> int:
        time.sleep(0.001 * (5 - i))
        if i == 1:
            raise ValueError("one")
        finished.append(i)
        return i * i

    assert call_each(lambda i: i * i, [3, 1, 2], concurrent=True) == [9, 1, 4]
    with pytest.raises(ValueError, match="one"):
        call_each(work, list(range(5)), concurrent=True)
    assert sorted(finished) == [0, 2, 3, 4]


def test_parallel_jobs_must_be_positive(store) -> None:
    with pytest.raises(ValueError, match="parallel_jobs must be >= 1"):
        Collector(GoPolicy(), LineEnv, store, MemorySnapshots(), history_window=2, parallel_jobs=0)
