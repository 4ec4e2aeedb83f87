"""The start classes, imported and driven directly (issue 41): each opens a job's sessions and
accounts its own cost; BranchStart re-checks a prefetched branch and forgets a snapshot that
fell back; the one bill writer bills groups with their counters and the image's first build;
the framework opener (rollout/sessions.Starts) runs the same starts one session at a time."""

from __future__ import annotations

from dataclasses import replace

import pytest

from adaroll.actions import PAPER_MATCHER, Action
from adaroll.envs.base import EnvFault
from adaroll.rollout.env_pool import EnvPool
from adaroll.rollout.jobs import Cost, Group, Job
from adaroll.rollout.prefetch import BranchPrefetcher
from adaroll.rollout.session import Outcome
from adaroll.rollout.sessions import StartError, Starts
from adaroll.rollout.starts import BranchStart, OneStepStart, ResetStart, StartTable
from adaroll.routes import StartKind
from adaroll.snapshots.cache import SnapshotCache
from adaroll.snapshots.memory import MemorySnapshots
from adaroll.training import ledger as ledger_mod
from adaroll.training.bill import bill_groups
from adaroll.training.ledger import Ledger, read_ledger
from tests.fakes import LineEnv, LineSuite

SUITE = LineSuite()
TASK = SUITE.split("train")[0]


def counts() -> tuple[dict[str, int], object]:
    seen: dict[str, int] = {}

    def count(**n: int) -> None:
        for name, k in n.items():
            seen[name] = seen.get(name, 0) + k

    return seen, count


def test_onestep_opens_g_sessions_at_the_checkpoint_rewarded_by_the_expert_match(line_store):
    checkpoint = line_store.for_task(TASK.id)[1]
    start = OneStepStart(line_store, PAPER_MATCHER, history_window=1)
    started = start.open(Job(StartKind.ONESTEP, TASK, 3, checkpoint_id=checkpoint.id))
    assert started.fault is None and started.cost == Cost() and len(started.sessions) == 3
    first, second, third = started.sessions
    assert first.context(1).history == checkpoint.history[-1:] and first.steps_left == 1
    assert first.act(checkpoint.expert_action).outcome is Outcome.MATCHED
    assert second.act(Action.tap(0.99, 0.01)).outcome is Outcome.MATCHED
    assert third.act(None).outcome is Outcome.INVALID
    assert [s.reward() for s in started.sessions] == [1.0, 0.0, 0.0]
    assert sum((s.cost for s in started.sessions), Cost()) == Cost(
        policy_samples=3, invalid_samples=1
    )
    assert all(s.steps_left == 0 and s.env is None for s in started.sessions)


def test_reset_opens_envs_reset_to_the_task_and_counts_envs_that_fault():
    seen, count = counts()
    start = ResetStart(EnvPool(LineEnv), count)
    started = start.open(Job(StartKind.ROOT, TASK, 2))
    assert started.fault is None and len(started.sessions) == 2 and seen == {"replaced_envs": 0}
    session = started.sessions[0]
    assert session.history == [] and session.instruction == "walk to the end"
    go = next(e for e in session.observation.elements if e.text == "go")
    assert session.act(Action.tap(*go.center)).outcome is Outcome.STEPPED
    assert session.cost == Cost(policy_samples=1, env_steps=1) and len(session.history) == 1

    class Broken(LineEnv):
        def reset(self, *, seed=None, options=None):
            raise EnvFault("the env did not come up")

    broken = ResetStart(EnvPool(Broken), count).open(Job(StartKind.ROOT, TASK, 2))
    assert isinstance(broken.fault, EnvFault) and broken.sessions == []
    assert seen == {"replaced_envs": 1}  # one after another: the first fault stops the start


def test_branch_restores_verified_branches_and_bills_each_restore(line_store):
    seen, count = counts()
    checkpoint = line_store.for_task(TASK.id)[2]
    cache = SnapshotCache(MemorySnapshots(), line_store, LineEnv)
    start = BranchStart(line_store, cache, count)
    started = start.open(Job(StartKind.SUFFIX, TASK, 2, checkpoint_id=checkpoint.id))
    assert started.fault is None and len(started.sessions) == 2
    assert started.cost.restores == 2 and started.cost.replayed_steps == 0
    assert cache.costs.take_overhead() == len(checkpoint.history)  # the image, built once
    for session in started.sessions:
        assert session.history == list(checkpoint.history)
        tree = session.observation.element_tree_hash()
        assert tree == checkpoint.observation.element_tree_hash()
    assert start.waits is not None and len(start.waits) == 2


def test_a_prefetched_branch_that_changed_is_replaced_and_a_fallback_is_forgotten(line_store):
    seen, count = counts()
    checkpoint = line_store.for_task(TASK.id)[1]
    cache = SnapshotCache(MemorySnapshots(), line_store, LineEnv)
    start = BranchStart(line_store, cache, count)
    moved = []

    def restore_then_move(key: str):
        restored = cache.restore(key)
        if not moved:  # the first prefetched branch changes while it waits
            env, want = restored.env, checkpoint.observation.element_tree_hash()
            for position in range(env.length):
                env.state = replace(env.state, position=position)
                if env.observe().element_tree_hash() != want:
                    break
            moved.append(env)
        return restored

    with BranchPrefetcher(restore_then_move, capacity=2) as prefetcher:
        start.prefetcher = prefetcher
        prefetcher.plan([checkpoint.id, checkpoint.id])
        started = start.open(Job(StartKind.SUFFIX, TASK, 2, checkpoint_id=checkpoint.id))
    assert moved and moved[0].closed  # closed, and restored afresh
    assert all(
        s.observation.element_tree_hash() == checkpoint.observation.element_tree_hash()
        for s in started.sessions
    )
    # a restore that fell back to replaying the prefix drops the snapshot: the next use rebuilds
    ref = cache.ref(checkpoint)
    cache.backend.release(ref)  # the image is gone: the verified restore falls back
    start.prefetcher = None
    again = start.open(Job(StartKind.SUFFIX, TASK, 1, checkpoint_id=checkpoint.id))
    assert again.cost.restore_fallbacks == 1 and seen["restore_fallbacks"] == 1
    assert again.cost.replayed_steps == len(checkpoint.history)
    assert cache.ref(checkpoint) is not ref  # forgotten, then built again


def test_the_start_table_looks_each_kind_up_once(line_store):
    cache = SnapshotCache(MemorySnapshots(), line_store, LineEnv)
    table = StartTable(
        line_store,
        cache,
        EnvPool(LineEnv),
        matcher=PAPER_MATCHER,
        history_window=2,
        count=lambda **_: None,
    )
    assert [type(table[kind]) for kind in StartKind] == [OneStepStart, BranchStart, ResetStart]
    assert [table[kind].kind for kind in StartKind] == list(StartKind)


def test_the_bill_writer_bills_counters_overhead_and_each_image_once(
    line_store, tmp_path, monkeypatch
):
    checkpoint = line_store.for_task(TASK.id)[2]
    cache = SnapshotCache(MemorySnapshots(), line_store, LineEnv)
    cache.ref(checkpoint)  # one image built: overhead
    suffix = Job(StartKind.SUFFIX, TASK, 2, checkpoint_id=checkpoint.id)
    cost = Cost(policy_samples=4, env_steps=3, restores=2, restore_seconds=0.5, faults=1)
    groups = [
        Group(suffix, [], [1.0, 0.0], cost),
        Group(suffix, [], [0.0, 0.0], cost),
        Group(Job(StartKind.ROOT, TASK, 2, purpose="routing", baseline=True), [], [0.0, 1.0]),
    ]
    ledger = Ledger(tmp_path / "ledger.jsonl")
    synced: list[int] = []
    monkeypatch.setattr(ledger_mod.os, "fsync", synced.append)
    bill_groups(ledger, groups, cache.costs, training_samples=[4, 0, 0], stage="s", iteration=3)
    assert len(synced) == 1  # the call's four records are committed together
    assert read_ledger(tmp_path / "ledger.jsonl").records == list(ledger.records)
    built, first, second, probe = ledger.records
    prefix = len(checkpoint.history)
    assert (built.mode, built.purpose, built.replayed_steps) == ("suffix", "overhead", prefix)
    assert (first.training_samples, first.replayed_steps, first.faults) == (4, prefix, 1)
    assert (first.policy_samples, first.env_steps, first.restores) == (4, 3, 2)
    assert second.replayed_steps == 0  # the image is billed at its first use only
    assert (probe.mode, probe.purpose, probe.task_id) == ("vanilla", "routing", TASK.id)
    assert {r.iteration for r in ledger.records} == {3} and {r.stage for r in ledger} == {"s"}


def test_the_framework_opener_runs_the_same_starts_one_session_at_a_time(line_store):
    starts = Starts(LineEnv, line_store, MemorySnapshots(), SUITE.split("train"), history_window=1)
    checkpoint = line_store.for_task(TASK.id)[1]
    job = starts.job("suffix", TASK.id, checkpoint.id, group_size=2)
    starts.prefetch(job)
    session = starts.open(job)
    assert session.cost.restores == 1 and session.history == list(checkpoint.history)
    assert starts.prefetcher.taken == 1
    with pytest.raises(StartError, match="start kind 'middle' is not one of onestep, suffix"):
        starts.job("middle", TASK.id)
    with pytest.raises(StartError, match="needs a checkpoint_id"):
        starts.job("onestep", TASK.id)
    session.close()
    starts.close()
