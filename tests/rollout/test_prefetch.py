"""Prefetched snapshot branches (CPU, fake env): the bounded background restorer, and a
collection with prefetching equal to one without, through faults and stale branches, with
every branch closed at the end. (The same on CRIU and Chromium: tests/snapshots/criu/test_criu_prefetch.py.)"""

from __future__ import annotations

import threading

import pytest

from adaroll.envs.base import EnvFault, Observation, UIElement
from adaroll.experts import collect_experts
from adaroll.rollout.collector import Collector
from adaroll.rollout.jobs import Group, Job
from adaroll.rollout.prefetch import BranchPrefetcher
from adaroll.snapshots.fallback import Restored
from adaroll.snapshots.memory import MemorySnapshots
from tests.fakes import GoPolicy, LineEnv, LineSuite

SUITE = LineSuite()


class Branch:
    def __init__(self, key: str) -> None:
        self.key, self.closed = key, False

    def close(self) -> None:
        self.closed = True


def test_prefetcher_restores_in_plan_order_within_its_bound_and_closes_what_was_not_taken() -> None:
    made: list[Branch] = []
    gate = threading.Semaphore(0)

    def restore(key: str) -> Restored:
        gate.acquire()  # one restore per release: the test paces the thread
        made.append(Branch(key))
        return Restored(made[-1])  # type: ignore[arg-type]

    prefetcher = BranchPrefetcher(restore, capacity=2)
    prefetcher.plan(["a", "a", "b", "c"])
    for _ in range(4):
        gate.release()
    while len(made) < 2:  # both "a" restored; then the bound stops the thread
        threading.Event().wait(0.01)
    threading.Event().wait(0.05)
    assert len(made) == 2
    first = prefetcher.take("a")
    assert first is not None and first.env.key == "a"  # type: ignore[attr-defined]
    # the thread never held more than 2: "b" could start only once the first "a" was taken
    second = prefetcher.take("a")
    assert second is not None and prefetcher.take("b") is not None
    assert prefetcher.peak == 2 and [b.key for b in made][:3] == ["a", "a", "b"]
    assert prefetcher.take("zzz") is None  # never planned: the caller restores it
    while len(made) < 4:  # "c" has room now
        threading.Event().wait(0.01)
    prefetcher.close()
    assert [b.key for b in made] == ["a", "a", "b", "c"]
    assert made[3].closed and not any(b.closed for b in made[:3])  # only "c" was never taken
    assert prefetcher.taken == 3


def test_a_planned_key_nobody_restores_yet_is_handed_back_to_the_caller() -> None:
    gate = threading.Event()

    def restore(key: str) -> Restored:
        gate.wait()
        return Restored(Branch(key))  # type: ignore[arg-type]

    with BranchPrefetcher(restore, capacity=1) as prefetcher:
        prefetcher.plan(["a", "b"])
        assert prefetcher.take("b") is None  # "a" is restoring, "b" is not started: cancelled
        gate.set()
        assert prefetcher.take("a") is not None
        assert prefetcher.take("b") is None  # its planned restore was cancelled above


def test_what_a_prefetched_restore_raised_is_raised_to_the_start_that_takes_it() -> None:
    def restore(key: str) -> Restored:
        raise EnvFault(f"browser of {key} died")

    with BranchPrefetcher(restore, capacity=3) as prefetcher:
        prefetcher.plan(["a"])
        with pytest.raises(EnvFault, match="browser of a died"):
            prefetcher.take("a")


class ThreadedLineEnv(LineEnv):
    """A LineEnv that claims to take calls from threads (as browsers do), so the collector
    prefetches; counts live envs and can spoil chosen prefetched branches after their
    verification (their first observation), i.e. while they wait to be taken."""

    live: set[int] = set()
    opened = 0
    prefetched = 0
    break_branch: set[int] = set()
    """Prefetched branches (numbered in the order the prefetch thread made them) that then
    stop answering (observe raises an EnvFault)."""
    change_branch: set[int] = set()
    """Prefetched branches that then move one step on their own (a stale branch)."""
    concurrent_calls = True

    def __init__(self) -> None:
        super().__init__()
        ThreadedLineEnv.opened += 1
        self.number = ThreadedLineEnv.opened
        ThreadedLineEnv.live.add(self.number)
        self.spoil = ""
        self.observed = 0

    def branch(self, state):
        env = ThreadedLineEnv()
        env.state = state
        if threading.current_thread().name == "adaroll-prefetch":
            ThreadedLineEnv.prefetched += 1
            n = ThreadedLineEnv.prefetched
            env.spoil = (
                "break" if n in self.break_branch else "change" if n in self.change_branch else ""
            )
        return env

    def observe(self):
        self.observed += 1
        if self.observed >= 2 and self.spoil == "break":
            raise EnvFault(f"env {self.number} stopped answering")
        obs = super().observe()
        if self.observed >= 2 and self.spoil == "change":  # e.g. a page timer opened a popup
            popup = UIElement(2, "dialog", "popup", (0.1, 0.1, 0.2, 0.2), frozenset())
            obs = Observation((*obs.elements, popup), obs.screen_size)
        return obs

    def close(self) -> None:
        ThreadedLineEnv.live.discard(self.number)
        super().close()

    @classmethod
    def arm(cls, broken=(), changed=()) -> None:
        cls.live, cls.opened, cls.prefetched = set(), 0, 0
        cls.break_branch, cls.change_branch = set(broken), set(changed)


@pytest.fixture(scope="module")
def store():
    return collect_experts(LineEnv, SUITE, SUITE.split("train"), progress=False).store


def jobs_for(store) -> list[Job]:
    jobs = []
    for t in SUITE.split("train")[:3]:
        ckpt = store.for_task(t.id)[1].id
        jobs += [
            Job("suffix", t, 3, checkpoint_id=ckpt),
            Job("root", t, 2),
            Job("suffix", t, 2, checkpoint_id=ckpt),
        ]
    return jobs


def outcome(group: Group) -> tuple:
    actions = tuple(tuple(d.sample.action for d in sample) for sample in group.decisions)
    return group.job, actions, tuple(group.rewards), group.cost.restores


def collect(store, *, prefetch: int, batch: bool = False, **arm) -> tuple[list[Group], Collector]:
    ThreadedLineEnv.arm(**arm)
    collector = Collector(
        GoPolicy(0.3),
        ThreadedLineEnv,
        store,
        MemorySnapshots(),
        history_window=2,
        prefetch_branches=prefetch,
        batch_across_jobs=batch,
    )
    try:
        return collector.collect(jobs_for(store), seed=7), collector
    finally:
        collector.close()


@pytest.mark.parametrize("batch", [False, True])
def test_prefetched_collection_equals_one_without_and_closes_every_branch(store, batch) -> None:
    plain, _ = collect(store, prefetch=0, batch=batch)
    assert ThreadedLineEnv.live == set()
    groups, collector = collect(store, prefetch=4, batch=batch)
    assert [outcome(g) for g in groups] == [outcome(g) for g in plain]
    assert ThreadedLineEnv.live == set()  # taken branches closed with their episodes, and the rest
    assert len(collector.branch_waits) == sum(
        j.group_size for j in jobs_for(store) if j.kind == "suffix"
    )
    assert sum(g.cost.restores for g in groups) == len(collector.branch_waits)


def test_stale_and_dead_prefetched_branches_are_replaced_and_change_no_group(store) -> None:
    plain, _ = collect(store, prefetch=0)
    groups, collector = collect(store, prefetch=3, broken={2}, changed={1, 4})
    assert [outcome(g) for g in groups] == [outcome(g) for g in plain]
    assert sum(g.cost.faults + g.cost.restore_fallbacks for g in groups) == 0
    assert collector.stats["faults"] == 0
    assert ThreadedLineEnv.live == set()


def test_no_prefetching_for_envs_that_compute_in_this_process(store) -> None:
    collector = Collector(
        GoPolicy(0.3), LineEnv, store, MemorySnapshots(), history_window=2, prefetch_branches=4
    )
    assert collector._prefetch_capacity(jobs_for(store)) == 0
    collector.close()


def test_prefetching_leaves_room_for_a_whole_group_in_the_backends_branch_pool(store) -> None:
    backend = MemorySnapshots()
    backend.max_branches = 5  # type: ignore[attr-defined]
    collector = Collector(
        GoPolicy(0.3), ThreadedLineEnv, store, backend, history_window=2, prefetch_branches=8
    )
    try:
        assert collector._prefetch_capacity(jobs_for(store)) == 5 - 3  # the largest group is 3
        assert collector._prefetch_capacity([j for j in jobs_for(store) if j.kind == "root"]) == 0
    finally:
        collector.close()


def test_several_prefetch_threads_stay_within_the_bound_and_hand_out_every_branch() -> None:
    running, most = [0], [0]
    lock = threading.Lock()

    def restore(key: str) -> Restored:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        threading.Event().wait(0.02)
        with lock:
            running[0] -= 1
        return Restored(Branch(key))  # type: ignore[arg-type]

    keys = [k for k in "abcd" for _ in range(3)]
    with BranchPrefetcher(restore, capacity=4, workers=2) as prefetcher:
        prefetcher.plan(keys)
        while prefetcher.peak < 4:  # the threads fill the bound, then wait
            threading.Event().wait(0.01)
        threading.Event().wait(0.05)
        assert prefetcher.peak == 4 and most[0] <= 2
        got = [prefetcher.take(k) for k in keys]
    assert all(r is not None and r.env.key == k for r, k in zip(got, keys, strict=True))  # type: ignore[union-attr]
    assert prefetcher.peak == 4 and prefetcher.taken == len(keys)
